/*
 * tree.c - the tree family of the collective model (coll_internal.h,
 * docs/collectives.md eqs. C5, C6 and "Trees"): NCCL's tree AllReduce, built
 * from the packed one-host rings of rings.c cut into chains, each chain's
 * head attached through its nearest NICs to the other hosts.
 *
 * Cost: one pattern per used ring, cut point and nearest NIC, packed by one
 * LP (cp_pack).
 */
#include <math.h>
#include <stdlib.h>

#include "cost/coll_internal.h"
#include "cost/collective.h"
#include "cost/dtree.h"

/* One tree channel: chain arcs both ways once (eq. C5) and, across hosts,
 * the head's network hop both ways `net` times through NIC a.  Its
 * latency; -1 without a route, -2 out of memory. */
static double tree_load(coll_build *b, const int *chain, int a, double net)
{
    int k, n = b->n;
    double up = 0;
    int depth = (int)ceil(log2((double)b->H));
    coll_clear_load(b);
    for (k = 0; k + 1 < n; k++) {
        cp_route_add_load(coll_r0(b, chain[k], chain[k + 1]), 1.0, b->load);
        cp_route_add_load(coll_r0(b, chain[k + 1], chain[k]), 1.0, b->load);
    }
    if (b->H > 1) {
        double down;
        up = coll_add_inter(b, 0, chain[0], a, 1, chain[0], a, net);
        down = up < 0 ? up : coll_add_inter(b, 1, chain[0], a, 0, chain[0], a, net);
        if (up == -2 || down == -2)
            return -2;
        if (up < 0 || down < 0)
            return -1;
    }
    return 2 * (coll_chain_lat(b, chain, n) + depth * up); /* eq. C6 */
}

/* Chain patterns for the tree: every used one-host ring cut at every hop,
 * headed by its first GPU, through each of that GPU's nearest NICs. */
static int tree_patterns(coll_build *b, cp_pattern **out, int *count, double *lat_max)
{
    int i, j, q, n = b->n, np = 0, rc, cap = b->nrings * n * (b->nn + 1) + 1;
    int *chain = malloc((size_t)n * sizeof *chain);
    cp_pattern *p = calloc((size_t)cap, sizeof *p);
    /* Network bytes per byte of buffer through the busiest host's NICs, each
     * way, from NCCL's own construction of the two trees (dtree.h): 1 on two
     * hosts (root of one tree, leaf of the other), 2 on 2^k >= 4 hosts
     * (docs/collectives.md, "Trees across hosts"). */
    double net = cp_dtree_net_factor(b->H, NULL);
    *lat_max = 0;
    if (!chain || !p) {
        free(chain);
        free(p);
        return coll_oom(b);
    }
    for (i = 0; i < b->nrings; i++) {
        if (b->intra.rate[i] <= 0)
            continue;
        for (j = 0; j < n; j++) {
            const int *nics;
            int nc;
            coll_chain_of(b, b->rings + (size_t)i * n, j, chain);
            coll_nic_choices(b, chain[0], &nics, &nc);
            for (q = 0; q < nc && np < cap; q++) {
                double lat = tree_load(b, chain, nics[q], net);
                if (lat == -2) {
                    coll_free_patterns(p, np);
                    free(chain);
                    return coll_oom(b);
                }
                if (lat < 0)
                    continue;
                if ((rc = coll_make_pattern(b, chain, n, lat, &p[np]))) {
                    coll_free_patterns(p, np);
                    free(chain);
                    return rc;
                }
                if (lat > *lat_max)
                    *lat_max = lat;
                np++;
            }
        }
    }
    free(chain);
    *out = p;
    *count = np;
    return CP_OK;
}

/* NCCL's tree AllReduce on host 0's GPUs with two GPUs or more: a chain
 * inside a host; across hosts a double binary tree over the hosts, each
 * host a chain below its head (eqs. C5, C6).  The only operation is
 * AllReduce. */
int coll_tree_build(coll_build *b)
{
    cp_pattern *p = NULL;
    cp_packing pk;
    int np = 0, rc;
    double lat, sp;
    cp_alg_cost *ar = &b->c->cost[CP_OP_ALLREDUCE][CP_ALG_TREE];
    if (b->n < 2) { /* no chain to cut from a host's ring (issue 24, item 7: say so) */
        coll_unavailable(b->c, CP_ALG_TREE,
                         "one GPU on each host: the tree model cuts its chains from a "
                         "host's GPUs (two or more); NCCL's tree across single-GPU hosts is "
                         "not modelled (ring is)");
        return CP_OK;
    }
    rc = tree_patterns(b, &p, &np, &lat);
    if (rc)
        return rc;
    if (np == 0) {
        coll_free_patterns(p, np);
        coll_unavailable(b->c, CP_ALG_TREE, "no chain of GPUs reaches the network");
        return CP_OK;
    }
    rc = cp_pack(b->win, p, np, &pk, b->e);
    sp = rc ? 0 : coll_simple_step(b, p, np, &pk);
    coll_free_patterns(p, np);
    if (rc)
        return rc;
    ar->available = 1;
    ar->ll = 1;
    ar->nphases = 1;
    coll_set_phase(&ar->phase[0], b->H > 1 ? "double binary tree" : "chain", lat, sp, 1.0,
                   pk.total, 2 * (b->n - 1 + (int)ceil(log2((double)b->H))), &pk);
    cp_packing_free(&pk);
    coll_unavailable(b->c, CP_ALG_TREE, "tree is an AllReduce algorithm");
    return CP_OK;
}
