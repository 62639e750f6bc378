/*
 * ll128.c - NCCL's LL128 protocol in the collective model (coll_internal.h,
 * docs/collectives.md eq. C11, "LL128"): where NCCL enables it, and what it
 * costs.  It runs last among the families and marks the ring, tree and
 * hierarchical phases (all NCCL rings and trees underneath) that may run it.
 *
 * Where (NCCL 2.30 src/graph/tuning.cc:440-541, TUNING-FACTS A8): LL128 is
 * on by default ("auto") when the GPUs are Volta or later with one compute
 * capability (or all Hopper or later), every intra-node hop of the rings is
 * NVLink (typeIntra <= NVB: PCIe-only hosts never get it), and across hosts
 * every GPU reaches its NIC through PCIe switches only (typeInter <= PXB),
 * or also through another GPU over NVLink on Hopper and later (PXN).  A GPU
 * whose model the topology does not name disables it (NCCL would know).
 *
 * What: its lines carry 120 bytes of data in 128 (CP_LL128_EFF, in
 * collective.c).  Its latency is LL's plus NCCL's difference of base
 * latencies (Ring 14.0 - 6.6, Tree 14.0 - 6.8 us, TUNING-FACTS A1) plus a
 * share of Simple's calibrated per-step cost: the share NCCL's own per-step
 * latencies put between LL and Simple, (LL128 - LL) / (Simple - LL) of
 * hwLatencies, on NVLink Ring (1.9 - 0.6) / (3.4 - 0.6) = 0.464, Tree
 * (1.25 - 0.6) / (4.0 - 0.6) = 0.191; over the network Ring (4.0 - 2.7) /
 * (14 - 2.7) = 0.115, Tree (8.5 - 5.0) / (14 - 5.0) = 0.389.  NCCL's
 * per-channel LL128 caps (perChMaxRingLL128Bws, A3) are not applied: the
 * model's channels are packed rates, not NCCL's channel count.
 *
 * Cost: one pass over the used rings' hops and each GPU's NIC route.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/units.h"
#include "cost/coll_internal.h"
#include "cost/collective.h"
#include "cost/nccl_rules.h"

/* Base latency LL128 adds to LL's (us, TUNING-FACTS A1). */
#define RING_BASE_US (14.0 - 6.6)
#define TREE_BASE_US (14.0 - 6.8)

/* Share of Simple's per-step cost an LL128 step pays (see above). */
#define RING_NVL_SHARE ((1.9 - 0.6) / (3.4 - 0.6))
#define TREE_NVL_SHARE ((1.25 - 0.6) / (4.0 - 0.6))
#define RING_NET_SHARE ((4.0 - 2.7) / (14.0 - 2.7))
#define TREE_NET_SHARE ((8.5 - 5.0) / (14.0 - 5.0))

/* NCCL's compute-capability rule: Volta or later, and one capability or
 * all Hopper or later.  *min_cc gets the least. */
static int cc_ok(const coll_build *b, int *min_cc)
{
    const cp_topo *t = b->win;
    int i, lo = 1000, hi = 0;
    for (i = 0; i < t->ngpus; i++) {
        int cc = cp_nccl_gpu_cc(t->nodes[t->gpus[i]].model);
        lo = cc < lo ? cc : lo;
        hi = cc > hi ? cc : hi;
    }
    *min_cc = lo;
    return lo >= 70 && (lo == hi || lo >= 90);
}

/* typeIntra <= NVB: every hop of every used one-host ring is NVLink only. */
static int intra_nvlink(const coll_build *b)
{
    int i, k, n = b->n;
    for (i = 0; i < b->nrings; i++) {
        const int *o = b->rings + (size_t)i * n;
        if (!(b->intra.rate[i] > 0))
            continue;
        for (k = 0; k < n; k++)
            if (coll_r0(b, o[k], o[(k + 1) % n])->kinds != 1u << CP_NVLINK)
                return 0;
    }
    return 1;
}

/* typeInter <= PXB (PXN on Hopper and later): each GPU's route to its
 * nearest NIC crosses no CPU and only PCIe (also NVLink when pxn). */
static int inter_ok(const coll_build *b, int pxn)
{
    const cp_topo *t = b->win;
    unsigned allowed = 1u << CP_PCIE | (pxn ? 1u << CP_NVLINK : 0);
    int k, a;
    for (k = 0; k < b->n; k++) {
        cp_route r;
        cp_err tmp;
        if (b->near_off[k + 1] == b->near_off[k])
            return 0;
        if (cp_route_find(t, b->g[k], b->nic[b->near[b->near_off[k]]], NULL, &r, &tmp) != CP_OK ||
            (r.kinds & ~allowed))
            return 0;
        for (a = 0; a < r.narcs; a++)
            if (t->nodes[cp_arc_head(t, r.arc[a])].kind == CP_CPU)
                return 0;
    }
    return 1;
}

/* LL128's extra latency on a phase: the base difference and the share of
 * Simple's per-step cost. */
static void price(cp_phase *ph, double base, double share)
{
    ph->ll128_us = base + share * ph->simple_us;
}

/* Mark an available ring/tree/hier cost LL128-capable and price its phases;
 * net: phase k crosses the network (bit k). */
static void enable(cp_alg_cost *a, double base, double nvl, double net, unsigned netmask)
{
    int k;
    if (!a->available || !a->ll)
        return;
    a->ll128 = 1;
    for (k = 0; k < a->nphases; k++)
        price(&a->phase[k], base, netmask >> k & 1u ? net : nvl);
}

int coll_ll128_build(coll_build *b)
{
    cp_coll *c = b->c;
    int op, min_cc = 0;
    unsigned net = b->H > 1 ? 1u : 0u; /* one-phase ring and tree: across hosts or not */
    if (b->n < 2 && b->H < 2)
        return CP_OK;
    if (!cc_ok(b, &min_cc) || (b->n >= 2 && !intra_nvlink(b)) ||
        (b->H > 1 && !inter_ok(b, min_cc >= 90)))
        return CP_OK;
    for (op = 0; op < CP_OPS; op++)
        enable(&c->cost[op][CP_ALG_RING], RING_BASE_US, RING_NVL_SHARE, RING_NET_SHARE, net);
    enable(&c->cost[CP_OP_ALLREDUCE][CP_ALG_TREE], TREE_BASE_US, TREE_NVL_SHARE, TREE_NET_SHARE,
           net);
    enable(&c->cost[CP_OP_ALLREDUCE][CP_ALG_HIER], RING_BASE_US, RING_NVL_SHARE, RING_NET_SHARE,
           2u); /* its middle phase, the ring of peers, crosses the network */
    if (c->cost[CP_OP_ALLREDUCE][CP_ALG_HIER].ll128)
        price(&c->peers_tree, TREE_BASE_US, TREE_NET_SHARE);
    return CP_OK;
}

/* The protocol auto runs at each octave, written as ranges: the switch is
 * placed at the first octave of the next protocol. */
void cp_coll_proto_ranges(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, char *buf,
                          size_t len)
{
    cp_proto cur = CP_PROTOS, p;
    int k;
    size_t used = 0;
    char sz[32];
    buf[0] = 0;
    for (k = 0; k <= 36 && used < len; k++) { /* 1 B .. 64 GiB */
        double s = ldexp(1.0, k);
        if (cp_coll_time_proto_us(c, op, alg, s, &p) < 0)
            return;
        if (p == cur)
            continue;
        if (cur != CP_PROTOS) {
            cp_fmt_bytes(s / 2, sz, sizeof sz);
            used += (size_t)snprintf(buf + used, len - used, "%s up to %s, ", cp_proto_name(cur),
                                     sz);
        }
        cur = p;
    }
    if (used < len)
        snprintf(buf + used, len - used, "%s above", cp_proto_name(cur));
}
