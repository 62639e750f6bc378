/*
 * mpi.h - MPI AllReduce staged through host memory, as TensorFlow and
 * Horovod ran it without NCCL (the COARSE paper's baseline).
 *
 * Open MPI's coll/accelerator takes a device buffer, copies it to host
 * memory (every GPU at once over its PCIe path), runs the host all-reduce
 * and copies the result back (../shared/data/nccl-tests/TUNING-FACTS.md
 * B1).  On one host the all-reduce is coll/tuned's fixed decision (B3:
 * recursive doubling, ring or Rabenseifner by ranks and bytes) over shared
 * memory; across hosts it is HAN's pipeline of 512 KiB segments (B6).  Each
 * step of the shared-memory algorithms is priced by what it moves: a copy
 * reads the sender's socket and writes the receiver's, a sum reads two
 * operands and writes one, every socket streams at 3 x reduce_gbs (the
 * rate its reduce_gbs was derived from), and bytes between ranks of
 * different sockets cross the socket link (docs/model.md eq. P12).
 *
 * Ownership: a cp_mpi is a plain value (no pointers); copy it freely.
 */
#ifndef CP_MPI_H
#define CP_MPI_H

#include "topo/topo.h"

/* What the collective model hands over (cp_coll's fields of the same
 * names): the ranks and, for the staging copies, every GPU of a host
 * copying to (d2h) or from (h2d) its socket at once, and the slowest
 * route's latency.  A struct of its own so that mpi.c need not include
 * collective.h, which includes this header. */
typedef struct cp_mpi_in {
    int nranks, nhosts, per_host;
    double d2h_gbs, h2d_gbs, host_lat_us;
} cp_mpi_in;

/* Most GPUs of a host and CPU sockets the model places ranks on. */
#define CP_MPI_MAX_RANKS 64
#define CP_MPI_MAX_SOCK 8

/* Open MPI's allreduce algorithm ids (TUNING-FACTS B2). */
typedef enum cp_mpi_alg {
    CP_MPI_NONOVERLAP = 2, CP_MPI_RECDBL = 3, CP_MPI_RING = 4, CP_MPI_SEGRING = 5,
    CP_MPI_RABENSEIFNER = 6
} cp_mpi_alg;

typedef struct cp_mpi {
    int available;
    char why_not[160];
    int nranks, nhosts, per_host;
    int nsock;                          /* CPU sockets of host 0 that stream memory */
    int rank_sock[CP_MPI_MAX_RANKS];    /* local rank -> socket index (nearest) */
    double sock_gbs[CP_MPI_MAX_SOCK];   /* memory streaming rate, 3 x reduce_gbs */
    double link_gbs;                    /* socket link per direction (calibrated); 0 none */
    double link_lat_us;
    double d2h_gbs, h2d_gbs;            /* per GPU, all copying at once (cp_coll) */
    double copy_us;                     /* one synchronous cudaMemcpy: launch + completion
                                         * wait + the PCIe route's round trip */
    double sync_us;                     /* the host's wait for the gradient's stream */
    double net_gbs, net_lat_us;         /* a host leader's NIC, several hosts */
} cp_mpi;

/* Per-message cost of Open MPI's shared-memory transport, us: ASSUMPTION,
 * the order of osu_latency between two cores of one node (0.3-1 us; no
 * measurement in ../shared/data), docs/model.md eq. P12. */
#define CP_MPI_STEP_US 1.0

/* HAN's allreduce segment, bytes (coll_han_allreduce_segsize, B6). */
#define CP_MPI_HAN_SEG 524288.0

/* Build the model from what the collective model gives, in (the ranks and
 * the host-copy rates), and the topology its arcs refer to, t (the machine
 * or its two-host window; the builder's).  A machine without a host memory path is not an
 * error: m->available 0 and the reason.  CP_OK or an error. */
int cp_mpi_build(const cp_topo *t, const cp_mpi_in *c, cp_mpi *m, cp_err *e);

/* Open MPI's fixed choice for a commutative allreduce of `bytes` among p
 * ranks of one node (B3), segmented ring folded into ring (B2). */
cp_mpi_alg cp_mpi_choose(int p, double bytes);

/* Time in us of the host all-reduce alone (no copies), with the algorithm
 * chosen for one host, or HAN across hosts; *alg when not NULL (HAN: 0). */
double cp_mpi_host_us(const cp_mpi *m, double bytes, int *alg);

/* Time in us of one MPI_Allreduce of `bytes` from device buffers: copy to
 * host, host all-reduce, copy back; negative when unavailable. */
double cp_mpi_allreduce_us(const cp_mpi *m, double bytes);

/* "recursive-doubling", "ring", "rabenseifner", "reduce+bcast", "han". */
const char *cp_mpi_alg_name(int alg);

#endif
