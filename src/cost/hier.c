/*
 * hier.c - the hierarchical family of the collective model
 * (coll_internal.h, docs/collectives.md eq. C8): the ring of peers across
 * hosts (GPU k of every host with GPU k of the others, all n rings at once,
 * each on S/n) and Horovod's hierarchical AllReduce built on it:
 * reduce-scatter inside each host, the ring of peers, all-gather inside.
 *
 * The ring of peers is shared: NVLS across hosts and CollNet (nvls.c) run
 * their middle phase on its packing, so coll_peers_build runs before them.
 *
 * Cost: one pattern and one closed-form packing (cp_pack of one pattern).
 */
#include <math.h>
#include <stdlib.h>

#include "cost/coll_internal.h"
#include "cost/collective.h"
#include "cost/dtree.h"

/* The inter-host step of the hierarchical scheme: GPU k of every host in a
 * ring with its peers, all n rings at once, each carrying S/n (eq. C8).
 * Each GPU spreads its share evenly over its nearest NICs, as NCCL spreads
 * a GPU's channels over the NICs it is closest to: 4 on a p5, whose GPUs
 * have 4 EFA each; where GPUs share their nearest NICs (two GPUs and two
 * NICs on a switch) every NIC carries the same as with one NIC a GPU. */
static int inter_pattern(coll_build *b, cp_pattern *p, double *hop_us)
{
    int k, q, n = b->n;
    *hop_us = 0;
    coll_clear_load(b);
    for (k = 0; k < n; k++) {
        const int *nics;
        int nc;
        coll_nic_choices(b, k, &nics, &nc);
        for (q = 0; q < nc; q++) {
            double x = coll_add_inter(b, 0, k, nics[q], 1, k, nics[q], 1.0 / nc);
            double y = coll_add_inter(b, 1, k, nics[q], 0, k, nics[q], 1.0 / nc);
            if (x == -2 || y == -2)
                return coll_oom(b);
            if (x < 0 || y < 0)
                return cp_fail(b->e, CP_EINPUT, "GPU %s has no route to its peer on host 1",
                               b->win->nodes[b->g[k]].id);
            if (x > *hop_us)
                *hop_us = x;
        }
    }
    return coll_make_pattern(b, NULL, 0, *hop_us, p);
}

/* Several hosts: the ring of peers packed into b->peers, with its hop
 * latency and Simple's step cost; nothing on one host. */
int coll_peers_build(coll_build *b)
{
    cp_pattern ip;
    int rc;
    if (b->H == 1)
        return CP_OK;
    rc = inter_pattern(b, &ip, &b->peer_hop_us);
    if (rc == CP_OK) {
        rc = cp_pack(b->win, &ip, 1, &b->peers, b->e);
        b->peer_simple_us = coll_simple_step(b, &ip, 1, NULL);
        cp_pattern_free(&ip);
    }
    return rc;
}

/* Horovod's hierarchical AllReduce on several hosts: the one-host rings'
 * reduce-scatter, the ring of peers on each GPU's 1/n, the one-host rings'
 * all-gather, one after another (not NCCL's: asked for by name).  The peers
 * as a double binary tree go to c->peers_tree for hybrid sharding
 * (cp_coll_peers_us). */
int coll_hier_build(coll_build *b)
{
    cp_coll *c = b->c;
    if (b->H > 1) {
        double n = b->n, H = b->H, ihop = b->peer_hop_us, isp = b->peer_simple_us;
        cp_alg_cost *h = &c->cost[CP_OP_ALLREDUCE][CP_ALG_HIER];
        double Lr = b->intra_lat, Bi = b->intra.total;
        double sp = coll_simple_step(b, b->ringpat, b->nrings, &b->intra);
        h->available = 1;
        h->ll = 1;
        h->nphases = 3;
        coll_set_phase(&h->phase[0], "reduce-scatter in each host", (n - 1) / n * Lr, sp,
                       (n - 1) / n, Bi, b->n - 1, &b->intra);
        coll_set_phase(&h->phase[1], "ring of peers across hosts", 2 * (H - 1) * ihop, isp,
                       2 * (H - 1) / (H * n), b->peers.total, 2 * (b->H - 1), &b->peers);
        coll_set_phase(&h->phase[2], "all-gather in each host", (n - 1) / n * Lr, sp, (n - 1) / n,
                       Bi, b->n - 1, &b->intra);
        { /* the peers as a double binary tree (eq. C6, one GPU a host): its
           * busiest host moves f(H) network bytes per byte of the S/n shard
           * each way (dtree.h: 1 on two hosts, 2 on 2^k >= 4) */
            int depth = (int)ceil(log2(H));
            coll_set_phase(&c->peers_tree, "double binary tree of peers across hosts",
                           2 * depth * ihop, isp, cp_dtree_net_factor(b->H, NULL) / n,
                           b->peers.total, 2 * depth, &b->peers);
        }
    }
    coll_unavailable(c, CP_ALG_HIER, b->H > 1 ? "hier is an AllReduce algorithm"
                                              : "hierarchical AllReduce needs several hosts");
    return CP_OK;
}
