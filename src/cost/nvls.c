/*
 * nvls.c - the in-switch and in-network reduction family of the collective
 * model (coll_internal.h, docs/collectives.md eqs. C9 and C12): NVLS, where
 * NVSwitches that reduce sum the GPUs' data and multicast the result (one
 * host; across hosts NVLS inside each host and the ring of peers of hier.c
 * between them), and CollNet, where network switches that reduce sum every
 * GPU's shard over the hosts.  Both run Simple only, as in NCCL.
 *
 * NVLS from what it does (docs/collectives.md, "NVLS"): each GPU owns 1/n
 * of the buffer; for its part it issues multimem loads that the switch
 * answers with the sum over all n GPUs (the switch reads the part from every
 * GPU: S out of each GPU in all, S/n back to the issuer) and multimem stores
 * that the switch multicasts (S/n out, S into every GPU).  Each GPU's
 * switch links thus carry (1 + 1/n) S each way, at the NVLink rate times
 * calibration.nvls_eff, fitted on the one-node p5 table
 * (docs/calibration.md; NCCL's own figure is nvlsEfficiency 0.85 on Hopper
 * times (nCh-1)/nCh of its 8 heads, TUNING-FACTS A3, A4, A12).  Its latency
 * is NCCL's, 25 us (hwLat[NVLINK][NVLS][Simple], A1), which replaces the
 * base latency as in NCCL's tuner (A2): the multimem kernel's fixed cost,
 * not a sum of hops.
 *
 * Cost: closed forms over the GPUs' switch links; no LP.
 */
#include <stdlib.h>
#include <string.h>

#include "cost/coll_internal.h"
#include "cost/collective.h"

/* NCCL 2.30's latency of an NVLS call over NVLink under Simple, us
 * (src/graph/tuning.cc hwLatencies, TUNING-FACTS A1); across hosts half of
 * it goes to each in-host phase. */
#define NVLS_LAT_US 25.0

/* NVLS on one host: per-unit arc loads and the switches' reduce limit.
 * Returns 0 when the host's GPUs are not all attached to reducing switches. */
static int nvls_limits(coll_build *b, double *bw_reduce, double *bw_bcast, double *hop_us,
                       cp_packing *bind)
{
    const cp_topo *t = b->win;
    int k, q, n = b->n;
    double *share_sum = calloc((size_t)t->nnodes, sizeof *share_sum);
    double arcmin = -1;
    int arcbind = -1;
    *bw_reduce = *bw_bcast = -1;
    *hop_us = 0;
    memset(bind, 0, sizeof *bind);
    if (!share_sum)
        return -1;
    for (k = 0; k < n; k++) {
        int v = b->g[k];
        double tot = 0;
        for (q = t->adj_off[v]; q < t->adj_off[v + 1]; q++) {
            int a = t->adj_arc[q], sw = cp_arc_head(t, a);
            if (t->nodes[sw].kind == CP_NVSWITCH && t->nodes[sw].reduce_gbs > 0)
                tot += cp_arc_cap(t, a);
        }
        if (tot <= 0) {
            free(share_sum);
            return 0;
        }
        for (q = t->adj_off[v]; q < t->adj_off[v + 1]; q++) {
            int a = t->adj_arc[q], sw = cp_arc_head(t, a);
            double sh, lim;
            if (t->nodes[sw].kind != CP_NVSWITCH || t->nodes[sw].reduce_gbs <= 0)
                continue;
            sh = cp_arc_cap(t, a) / tot;
            share_sum[sw] += sh;
            lim = cp_arc_cap(t, a) / sh; /* = tot, both directions alike */
            if (arcmin < 0 || lim < arcmin) {
                arcmin = lim;
                arcbind = a;
            }
            if (2 * t->links[a >> 1].lat_us + t->calib.kind[CP_NVLINK].step_us > *hop_us)
                *hop_us = 2 * t->links[a >> 1].lat_us + t->calib.kind[CP_NVLINK].step_us;
        }
    }
    *bw_reduce = *bw_bcast = arcmin;
    for (k = 0; k < t->nnodes; k++) {
        if (share_sum[k] > 0 && t->nodes[k].reduce_gbs / share_sum[k] < *bw_reduce) {
            *bw_reduce = t->nodes[k].reduce_gbs / share_sum[k];
        }
    }
    free(share_sum);
    bind->bind_arc = malloc(sizeof *bind->bind_arc);
    bind->bind_dual = malloc(sizeof *bind->bind_dual);
    if (!bind->bind_arc || !bind->bind_dual) {
        free(bind->bind_arc);
        free(bind->bind_dual);
        bind->bind_arc = NULL;
        bind->bind_dual = NULL;
        return -1;
    }
    bind->nbind = 1;
    bind->bind_arc[0] = arcbind;
    bind->bind_dual[0] = 1;
    return 1;
}

/* The least reduce rate of the window's network switches; 0 when one of
 * them does not reduce (or there is none). */
static double net_reduce_gbs(const coll_build *b)
{
    const cp_topo *t = b->win;
    double r = -1;
    int v;
    for (v = 0; v < t->nnodes; v++)
        if (t->nodes[v].kind == CP_NET_SWITCH && (r < 0 || t->nodes[v].reduce_gbs < r))
            r = t->nodes[v].reduce_gbs;
    return r > 0 ? r : 0;
}

/* CollNet (eq. C12): reduce-scatter inside each host, every GPU's shard up
 * through its NIC to the switches that sum it over the hosts and back down,
 * all-gather inside.  The shard's trip loads the arcs the ring of peers
 * does per unit (ipk: GPU -> NIC -> switch and back), S/n each way instead
 * of 2(H-1)/H x S/n; the switches sum H x S bytes, so their rate R caps the
 * phase at R / (n H) per unit of factor 1/n.  Simple only, as in NCCL. */
static void collnet(coll_build *b, const cp_packing *ipk, double ihop, double isp)
{
    cp_alg_cost *a = &b->c->cost[CP_OP_ALLREDUCE][CP_ALG_COLLNET];
    double n = b->n, H = b->H, R = net_reduce_gbs(b), Lr = b->intra_lat;
    double bw, sp = coll_simple_step(b, b->ringpat, b->nrings, &b->intra);
    if (!(R > 0) || !(ipk->total > 0))
        return;
    bw = ipk->total < R / (n * H) ? ipk->total : R / (n * H);
    a->available = 1;
    a->ll = 0;
    a->pipelined = 1;
    a->pipe_factor = 2 * (n - 1) / n; /* reduce-scatter and all-gather rings, both ways */
    a->pipe_bw = b->intra.total;
    a->nphases = 3;
    coll_set_phase(&a->phase[0], "reduce-scatter in each host", (n - 1) / n * Lr, sp, (n - 1) / n,
                   b->intra.total, b->n - 1, &b->intra);
    coll_set_phase(&a->phase[1], "in-network reduction (up, sum in the switches, down)", ihop, isp,
                   1 / n, bw, 2, ipk);
    if (bw < ipk->total)
        a->phase[1].nbind = 0; /* the switches' summation binds, not a link */
    coll_set_phase(&a->phase[2], "all-gather in each host", (n - 1) / n * Lr, sp, (n - 1) / n,
                   b->intra.total, b->n - 1, &b->intra);
}

/* NVLS: one host eq. C9; several hosts: NVLS inside, ring of peers across. */
int coll_nvls_build(coll_build *b)
{
    cp_coll *c = b->c;
    double red, bc, hop, n = b->n, H = b->H, ihop = b->peer_hop_us, isp = b->peer_simple_us;
    double nsp = 0; /* NVLS runs Simple only, and NCCL's 25 us includes its handshakes */
    cp_packing nb;
    int have = nvls_limits(b, &red, &bc, &hop, &nb);
    cp_alg_cost *ar = &c->cost[CP_OP_ALLREDUCE][CP_ALG_NVLS];
    if (have < 0)
        return coll_oom(b);
    red *= b->win->calib.nvls_eff; /* multimem traffic at the calibrated fraction */
    bc *= b->win->calib.nvls_eff;
    hop = NVLS_LAT_US / 2;         /* NCCL's NVLS latency, half per pass (reduce, multicast) */
    if (have) {
        /* AllReduce per GPU and direction: (1 + 1/n) x S; reduce-scatter and
         * all-gather alone: S.  bw below is per unit of that load.  The
         * switches sum only what the multimem loads read (S per GPU's
         * shares), not the multicast stores: per unit of the AllReduce's
         * (1 + 1/n) S their limit is red x (1 + 1/n) (docs/collectives.md,
         * B_nvls; issue 24 item 6: it was red, charging the stores too). */
        double red_ar = red * (1 + 1 / n);
        double bw_ar = red_ar < bc ? red_ar : bc;
        cp_alg_cost *rs = &c->cost[CP_OP_REDUCESCATTER][CP_ALG_NVLS];
        cp_alg_cost *ag = &c->cost[CP_OP_ALLGATHER][CP_ALG_NVLS];
        if (b->H == 1) {
            ar->nphases = rs->nphases = ag->nphases = 1;
            coll_set_phase(&ar->phase[0], "nvls (in-switch reduce + multicast)", 2 * hop, nsp,
                           1 + 1 / n, bw_ar, 2, &nb);
            coll_set_phase(&rs->phase[0], "nvls reduce", hop, nsp, 1, red, 1, &nb);
            coll_set_phase(&ag->phase[0], "nvls multicast", hop, nsp, 1, bc, 1, &nb);
            rs->available = ag->available = 1;
        } else {
            ar->nphases = 3;
            ar->pipelined = 1;
            ar->pipe_factor = 1 + 1 / n; /* as eq. C9: reduce out, multicast in */
            ar->pipe_bw = bw_ar;
            coll_set_phase(&ar->phase[0], "nvls reduce-scatter in each host", hop, nsp, 1, red, 1,
                           &nb);
            coll_set_phase(&ar->phase[1], "ring of peers across hosts", 2 * (H - 1) * ihop, isp,
                           2 * (H - 1) / (H * n), b->peers.total, 2 * (b->H - 1), &b->peers);
            coll_set_phase(&ar->phase[2], "nvls all-gather in each host", hop, nsp, 1, bc, 1, &nb);
        }
        ar->available = 1;
    }
    coll_unavailable(c, CP_ALG_NVLS,
                     have ? "NVLS covers allreduce, reducescatter and allgather on one host"
                          : "needs NVSwitches with reduce_gbs (in-switch reduction)");
    cp_packing_free(&nb);
    return CP_OK;
}

/* CollNet on several hosts whose network switches reduce; otherwise why
 * not. */
int coll_collnet_build(coll_build *b)
{
    cp_coll *c = b->c;
    if (b->H > 1)
        collnet(b, &b->peers, b->peer_hop_us, b->peer_simple_us);
    coll_unavailable(c, CP_ALG_COLLNET,
                     b->H > 1 ? "collnet needs network switches that reduce (a net_switch with "
                                "reduce_gbs, or fabric.reduce_gbs with --hosts), and is an "
                                "AllReduce algorithm"
                              : "CollNet reduces in the network: it needs several hosts");
    return CP_OK;
}
