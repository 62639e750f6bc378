/*
 * nccl_size.c - NCCL's sizing of a call applied to the built phases
 * (coll_internal.h; nccl_rules.h; docs/collectives.md, "Channels per
 * size").  It runs last among the families and writes, on every phase NCCL
 * runs as a ring or a tree (the ring, the tree, hier's three calls and the
 * tree of peers), the channels its communicator has, the bytes a channel
 * needs under each protocol, and LL's bandwidth: half of Simple's payload
 * (or the network's fitted ll_eff where the network binds), capped at
 * NCCL's llMaxBw for rings.  NVLS and CollNet keep no per-size reduction
 * (NCCL has none for NVLS, TUNING-FACTS A6).
 *
 * Cost: one pass over host 0's GPUs and their links.
 */
#include "cost/coll_internal.h"
#include "cost/collective.h"
#include "cost/nccl_rules.h"

/* The least compute capability of the window's GPUs (0 when one is not
 * named: NCCL would know it, the model does not). */
static int least_cc(const coll_build *b)
{
    const cp_topo *t = b->win;
    int i, lo = 1000;
    for (i = 0; i < t->ngpus; i++) {
        int cc = cp_nccl_gpu_cc(t->nodes[t->gpus[i]].model);
        lo = cc < lo ? cc : lo;
    }
    return t->ngpus > 0 ? lo : 0;
}

/* 1 when every hop of every used one-host ring is NVLink only (NCCL's
 * rings then stay on NVLink: typeIntra NVL). */
static int rings_nvlink(const coll_build *b)
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
    return b->nrings > 0;
}

/* What NCCL's search sees of host 0: GPU 0's NVLink total and the widest
 * NVLink path to another GPU, in NCCL's units; NVLink when the rings
 * are. */
static void host_view(const coll_build *b, cp_nccl_topo *v)
{
    const cp_topo *t = b->win;
    double unit = cp_nccl_nvlink_unit(v->cc), eff = t->calib.kind[CP_NVLINK].bw_eff;
    int q, j, g0 = b->g[0];
    v->gpus = b->n;
    v->nvlink = b->n >= 2 && rings_nvlink(b);
    for (q = t->adj_off[g0]; q < t->adj_off[g0 + 1]; q++) {
        const cp_link *l = &t->links[t->adj_arc[q] >> 1];
        if (l->kind == CP_NVLINK)
            v->intra_gbs += l->gbs[0] * unit;
    }
    for (j = 1; j < b->n; j++) {
        const cp_route *r = coll_r0(b, 0, j);
        if (r->kinds == 1u << CP_NVLINK && r->gbs / eff * unit > v->pair_gbs)
            v->pair_gbs = r->gbs / eff * unit;
    }
}

/* The widest NIC line rate of window host 0, GB/s. */
static double nic_gbs(const coll_build *b)
{
    double best = 0;
    int i;
    for (i = 0; i < b->nn; i++)
        if (b->win->nodes[b->nic[i]].net_gbs > best)
            best = b->win->nodes[b->nic[i]].net_gbs;
    return best;
}

/* Mark a phase: NCCL's channels and per-channel bytes for `ranks` ranks
 * (tree: 640 threads, no LL scaling by ranks), LL's bandwidth (across the
 * network at ll_eff of the network where it is fitted), capped at `ll_max`
 * (0: no cap). */
static void size_phase(const coll_build *b, cp_phase *ph, int nc, int ranks, int tree, int net,
                       double ll_max)
{
    const cp_coll *c = b->c;
    const cp_calib_kind *k = &b->win->calib.kind[CP_NET];
    int p;
    if (!(ph->bw_gbs > 0))
        return;
    ph->nc_max = nc;
    for (p = 0; p < 3; p++)
        ph->chan_bytes[p] = cp_nccl_chan_bytes(p, tree, ranks);
    ph->ll_net = net;
    ph->ll_cap_gbs = ll_max;
    if (ll_max > 0) /* rings: a CTA polls LL's flags at NCCL's one-host cap per channel */
        ph->ll_ch_gbs = cp_nccl_ll_channel_gbs(c->nccl_cc);
    cp_coll_phase_ll(ph, k);
}

void cp_coll_phase_ll(cp_phase *ph, const cp_calib_kind *net)
{
    ph->ll_raw_gbs = ph->bw_gbs * CP_LL_EFF;
    if (ph->ll_net && net->ll_eff > 0)
        ph->ll_raw_gbs = ph->bw_gbs * net->ll_eff / net->bw_eff;
    ph->ll_bw_gbs = ph->ll_raw_gbs;
    if (ph->ll_cap_gbs > 0 && ph->ll_bw_gbs > ph->ll_cap_gbs)
        ph->ll_bw_gbs = ph->ll_cap_gbs;
    if (ph->ll_ch_gbs > 0 && ph->ll_bw_gbs > ph->nc_max * ph->ll_ch_gbs)
        ph->ll_bw_gbs = ph->nc_max * ph->ll_ch_gbs; /* every channel polling at its rate */
}

int coll_nccl_size_build(coll_build *b)
{
    cp_coll *c = b->c;
    cp_nccl_topo host = {0}, all, peers;
    int op, k, H = b->H, n = b->n;
    const int *near;
    int nnear = 0;
    double ll1, llH;
    host.cc = least_cc(b);
    host.hosts = 1;
    if (n >= 2)
        host_view(b, &host);
    all = host;
    all.hosts = H;
    all.nics = b->nn;
    all.nic_gbs = nic_gbs(b);
    c->nccl_cc = host.cc;
    c->nccl_channels_host = cp_nccl_channels(&host);
    c->nccl_channels = H > 1 ? cp_nccl_channels(&all) : c->nccl_channels_host;
    c->nccl = H > 1 ? all : host;
    /* NCCL's LL caps are per GPU generation: a GPU the topology does not
     * name gets none (as it gets no LL128) */
    ll1 = host.cc > 0 ? cp_nccl_ll_max_gbs(host.cc, 1) : 0;
    llH = host.cc > 0 ? cp_nccl_ll_max_gbs(host.cc, H) : 0;
    for (op = 0; op < CP_OPS; op++) {
        cp_alg_cost *r = &c->cost[op][CP_ALG_RING];
        for (k = 0; r->available && k < r->nphases; k++)
            size_phase(b, &r->phase[k], c->nccl_channels, b->N, 0, H > 1, llH);
    }
    {
        cp_alg_cost *t = &c->cost[CP_OP_ALLREDUCE][CP_ALG_TREE];
        cp_alg_cost *h = &c->cost[CP_OP_ALLREDUCE][CP_ALG_HIER];
        for (k = 0; t->available && k < t->nphases; k++)
            size_phase(b, &t->phase[k], c->nccl_channels, b->N, 1, H > 1, 0);
        if (H > 1 && h->available && h->nphases == 3) {
            /* hier's peer rings: one GPU a host, over that GPU's nearest NICs */
            peers = all;
            peers.gpus = 1;
            coll_nic_choices(b, 0, &near, &nnear);
            peers.nics = b->nn > 0 ? nnear : 0;
            size_phase(b, &h->phase[0], c->nccl_channels_host, n, 0, 0, ll1);
            size_phase(b, &h->phase[1], cp_nccl_channels(&peers), H, 0, 1, llH);
            size_phase(b, &h->phase[2], c->nccl_channels_host, n, 0, 0, ll1);
            size_phase(b, &c->peers_tree, cp_nccl_channels(&peers), H, 1, 1, 0);
        }
    }
    return CP_OK;
}
