/*
 * offload.h - memory tiers beyond the GPU (docs/model.md eq. T1-T3): the
 * optimizer states and fp32 master weights held in host DRAM or in a CXL
 * pool shared by the hosts and stepped there (ZeRO-Offload's scheme), and
 * saved activations moved out during forward and fetched back for
 * backward instead of being recomputed.  Each tier is priced over what it
 * crosses: the GPU's copy engines and PCIe (every GPU of a host copying at
 * once, so the GPUs behind one switch share its uplink), the host's pool
 * ports and the pool's devices, shared by every host.
 *
 * Pure arithmetic on rates built once per machine (cp_tiers_build).
 */
#ifndef CP_LLM_OFFLOAD_H
#define CP_LLM_OFFLOAD_H

#include "llm/layout.h"
#include "topo/topo.h"

/* Where a tier's bytes go; CP_TIER_GPU: not offloaded. */
typedef enum cp_tier { CP_TIER_GPU, CP_TIER_HOST, CP_TIER_POOL } cp_tier;

const char *cp_tier_name(cp_tier t); /* "gpu", "host", "pool" */

/* A tier as one GPU sees it when every GPU of every host uses it at once. */
typedef struct cp_tier_rates {
    int available;        /* the machine has this tier */
    double d2h_gbs;       /* GB/s one GPU writes to it ... */
    double h2d_gbs;       /* ... and reads from it */
    double lat_us;        /* a copy's fixed cost */
    double step_gbs;      /* GB/s of memory traffic the tier's owner (the host's CPUs) streams
                             for the optimizer step, per host */
    double capacity_gb;   /* per host; 0: not given (not checked) */
} cp_tier_rates;

typedef struct cp_tiers {
    cp_tier_rates t[3];   /* indexed by cp_tier (GPU unused) */
} cp_tiers;

/* The tiers of one host of a machine (host DRAM from its sockets; the pool
 * from its pool block, shared by `hosts` hosts).  CP_EINPUT naming the
 * topology when a host tier is asked for and nothing reaches a socket. */
int cp_tiers_build(const cp_topo *host, int hosts, cp_tiers *out, cp_err *e);

/* Optimizer offload (eq. T1), ms: the reduced gradient shard copied out
 * (`params` after TP and sharding, in the gradient type), the step on the
 * tier's side (28 bytes of memory traffic a parameter: read the gradient,
 * read and write the master weight and both moments, write the 16-bit
 * weight), the updated 16-bit shard copied back; `per_host` GPUs share the
 * host's step. */
double cp_offload_opt_ms(const cp_tier_rates *r, double params, double grad_bytes, int per_host);

/* Activation offload of one chunk and micro-batch (eq. T2): `bytes` saved
 * out during a forward of fwd_us and fetched back during a backward of
 * bwd_us, on the copy engines beside the compute; what the copies take
 * beyond it, us. */
void cp_offload_act_us(const cp_tier_rates *r, double bytes, double fwd_us, double bwd_us,
                       double *extra_fwd_us, double *extra_bwd_us);

#endif
