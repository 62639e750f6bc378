/*
 * nccl_rules.h - the rules by which NCCL sizes a call (NCCL 2.30.7,
 * ../shared/data/nccl-tests/TUNING-FACTS.md; docs/collectives.md, "Channels
 * per size"): how many channels its topology search gives a communicator,
 * how many of them a call of a given size runs on, the LL bandwidth caps of
 * its tuner, and the size of its LL buffer.  Pure functions of plain
 * numbers; the collective model (collective.c, nccl_build.c) applies them.
 */
#ifndef CP_NCCL_RULES_H
#define CP_NCCL_RULES_H

/* NCCL_STEPS slots of LL buffer per channel, each 32 KiB of data (64 KiB of
 * 16-byte lines, half flags): 8 lines x 512 threads x 16 B a step
 * (TUNING-FACTS A6). */
#define CP_NCCL_STEPS 8
#define CP_NCCL_LL_STEP_DATA 32768.0

/* What NCCL's search sees of a machine (TUNING-FACTS A7), in NCCL's units
 * (GB/s as NCCL credits links: an NVLink brick of a V100 is 20, not 25). */
typedef struct cp_nccl_topo {
    int cc;               /* least compute capability x 10 of the GPUs; 0 unknown */
    int gpus;             /* GPUs per host */
    int hosts;
    double intra_gbs;     /* one GPU's NVLink total (or its PCIe link), NCCL's units */
    double pair_gbs;      /* the widest path between two GPUs of a host, NCCL's units */
    int nvlink;           /* 1 when the GPUs of a host reach each other over NVLink */
    int nics;             /* NICs a host's channels spread over (several hosts) */
    double nic_gbs;       /* one NIC's line rate, GB/s */
} cp_nccl_topo;

/* Compute capability x 10 from a GPU's part name ("Tesla V100-SXM2-16GB":
 * 70); 0 when unknown. */
int cp_nccl_gpu_cc(const char *model);

/* NCCL's GB/s per NVLink brick for compute capability cc over the brick's
 * nominal GB/s per direction (src/graph/topo.h: SM60 18 of 20, SM70 and
 * SM80 20 of 25, SM90 20.6 of 25, SM100 40.1 of 50); 0.8 when unknown. */
double cp_nccl_nvlink_unit(int cc);

/* The channels of a communicator (comm->nChannels): the ring search's
 * channel count at the first speed of NCCL's ladder its links allow,
 * duplicated as ncclTopoDupChannels does, doubled for the tree pairs
 * (TUNING-FACTS A6, A7).  At least 2, at most 64.  The search's own result,
 * which NCCL's tuner multiplies (A4), to *graph and *speed when not NULL. */
int cp_nccl_search(const cp_nccl_topo *t, int *graph, double *speed);

/* cp_nccl_search's comm->nChannels alone. */
int cp_nccl_channels(const cp_nccl_topo *t);

/* NCCL's tuner estimate of an AllReduce of `bytes` (TUNING-FACTS A2, A4,
 * A5), us: alg 0 tree, 1 ring; proto in cp_proto's order (0 LL, 1 Simple,
 * 2 LL128); from the search's channels and speed, the 0.92 and 0.85
 * factors, the per-channel caps of the GPU generation, the tree correction
 * factors and the ring plateau.  NCCL chooses the least. */
double cp_nccl_tuner_us(const cp_nccl_topo *t, int alg, int proto, double bytes);

/* Bytes per channel below which NCCL drops a channel (TUNING-FACTS A6):
 * threads x per-thread threshold, LL 512 x 8 (ring: x ranks), LL128 640 x 8,
 * Simple 512 x 64; the tree runs 640 threads.  proto: 0 LL, 1 Simple, 2
 * LL128 (cp_proto's order). */
double cp_nccl_chan_bytes(int proto, int tree, int ranks);

/* Channels a call of `bytes` runs on: NCCL's reduction (while bytes <
 * nc x chan_bytes, nc--), from nc_max, never below 1. */
int cp_nccl_nc(double bytes, double chan_bytes, int nc_max);

/* NCCL's cap on LL's bus bandwidth (llMaxBws, TUNING-FACTS A3), GB/s: on
 * one host by compute capability (Volta 39, Ampere 87.7, Hopper 141,
 * Blackwell 282), across hosts 39 on two and 20.4 on more (Intel rows). */
double cp_nccl_ll_max_gbs(int cc, int hosts);

/* LL's rate per channel, GB/s of bus bandwidth: NCCL's one-host cap
 * (cp_nccl_ll_max_gbs) over the channels NCCL gives that generation's
 * 8-GPU board (DGX-1 V100 12, DGX A100 and HGX H100 24: cp_nccl_channels),
 * the rate one CTA polls LL's flags at.  Volta 39 / 12 = 3.25. */
double cp_nccl_ll_channel_gbs(int cc);

#endif
