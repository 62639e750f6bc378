/*
 * ps.c - the host-memory family of the collective model (coll_internal.h,
 * docs/collectives.md eq. C10): a parameter server in CPU memory, where the
 * CPU sockets that reduce sum what every GPU pushes and every GPU pulls the
 * sums back, and the rates at which a host's GPUs copy to and from their
 * nearest socket (optimizer offload, ZeRO-Offload: cp_coll.d2h_gbs ...).
 *
 * Cost: one pattern packed in closed form per quantity.
 */
#include <stdlib.h>

#include "cost/coll_internal.h"
#include "cost/collective.h"

/* ------------------------------------------------------------------------ */
/* Parameter server in CPU memory (eq. C10)                                  */

/* CPU sockets of window host h that can reduce (reduce_gbs > 0). */
static int host_servers(const coll_build *b, int h, int *out)
{
    int i, k = 0;
    for (i = 0; i < b->win->nnodes; i++)
        if (b->win->nodes[i].kind == CP_CPU && b->win->nodes[i].host == h &&
            b->win->nodes[i].reduce_gbs > 0)
            out[k++] = i;
    return k;
}

/* BytePS-style summation service: every GPU pushes 1/(K H) of its gradient
 * to each of the K sockets of every host, the sockets sum the N pushes, and
 * every GPU pulls the sums back; push, sum and pull pipeline over chunks, so
 * the slowest of the three sets the pace.  In the two-host window, the other
 * host's sockets stand for all H-1 remote hosts (shares scaled by H-1). */
int coll_ps_build(coll_build *b)
{
    cp_alg_cost *ps = &b->c->cost[CP_OP_ALLREDUCE][CP_ALG_PS];
    int *srv = malloc((size_t)b->win->nnodes * sizeof *srv), K, h, j, k, q, rc = CP_OK;
    double hop = 0, red = -1, n = b->n, H = b->H;
    cp_pattern p;
    cp_packing pk;
    if (!srv)
        return coll_oom(b);
    K = host_servers(b, 0, srv);
    for (q = 0; q < K; q++)
        if (red < 0 || b->win->nodes[srv[q]].reduce_gbs < red)
            red = b->win->nodes[srv[q]].reduce_gbs;
    if (K == 0) {
        free(srv);
        coll_unavailable(b->c, CP_ALG_PS, "needs CPU sockets with reduce_gbs (a parameter server "
                                          "sums in host memory)");
        return CP_OK;
    }
    coll_clear_load(b);
    for (h = 0; h < b->Hw && rc == CP_OK; h++) {
        for (j = 0; j < b->Hw && rc == CP_OK; j++) {
            int ks = host_servers(b, j, srv);
            double share = (j == h ? 1.0 : (H - 1) / (b->Hw - 1)) / (ks * H);
            for (k = 0; k < b->n && rc == CP_OK; k++)
                for (q = 0; q < ks; q++) {
                    double up = coll_add_route(b, b->g[h * b->n + k], srv[q], share);
                    double down = coll_add_route(b, srv[q], b->g[h * b->n + k], share);
                    if (up == -2 || down == -2) {
                        rc = cp_fail(b->e, CP_EINTERNAL, "out of memory");
                        break;
                    }
                    if (up < 0 || down < 0) {
                        rc = cp_fail(b->e, CP_EINPUT, "GPU %s cannot reach CPU %s",
                                     b->win->nodes[b->g[h * b->n + k]].id,
                                     b->win->nodes[srv[q]].id);
                        break;
                    }
                    if (up + down > hop)
                        hop = up + down;
                }
        }
    }
    free(srv);
    if (rc == CP_OK)
        rc = coll_make_pattern(b, NULL, 0, hop, &p);
    if (rc)
        return rc;
    rc = cp_pack(b->win, &p, 1, &pk, b->e);
    cp_pattern_free(&p);
    if (rc)
        return rc;
    /* each socket sums n x (1/K) bytes per byte of gradient: K red / n GB/s */
    ps->available = 1;
    ps->nphases = 1;
    coll_set_phase(&ps->phase[0], "push, sum in host memory, pull", hop, 0, 1.0,
                   pk.total < K * red / n ? pk.total : K * red / n, 2, &pk);
    if (K * red / n < pk.total)
        ps->phase[0].nbind = 0; /* the sockets' summation binds, not a link */
    cp_packing_free(&pk);
    coll_unavailable(b->c, CP_ALG_PS, "the parameter server is an AllReduce strategy");
    return CP_OK;
}

/* ------------------------------------------------------------------------ */
/* Host copies of optimizer offload                                          */

/* The packed rate of every GPU of host 0 copying one unit to (up) or from
 * its nearest socket of srv[0..K-1] at once; *lat the slowest route's
 * latency.  CP_OK or an error. */
static int host_copy_rate(coll_build *b, const int *srv, int K, int up, double *gbs, double *lat)
{
    cp_pattern p;
    cp_packing pk;
    int k, q, rc;
    coll_clear_load(b);
    *lat = 0;
    for (k = 0; k < b->n; k++) {
        cp_route r, best;
        cp_err tmp;
        int found = 0, frc = CP_OK;
        for (q = 0; q < K && frc != CP_EINTERNAL; q++) /* the widest route, then the nearest */
            if ((frc = up ? cp_route_find(b->win, b->g[k], srv[q], NULL, &r, &tmp)
                          : cp_route_find(b->win, srv[q], b->g[k], NULL, &r, &tmp)) == CP_OK &&
                (!found || r.gbs > best.gbs * (1 + 1e-9) ||
                 (r.gbs > best.gbs * (1 - 1e-9) && cp_route_hop_us(&r) < cp_route_hop_us(&best)))) {
                best = r;
                found = 1;
            }
        if (frc == CP_EINTERNAL) /* out of memory is not "no route" (issue 24, item 5) */
            return cp_fail(b->e, CP_EINTERNAL, "out of memory");
        if (!found)
            return cp_fail(b->e, CP_EINPUT, "GPU %s reaches no CPU socket",
                           b->win->nodes[b->g[k]].id);
        cp_route_add_load(&best, 1.0, b->load);
        if (cp_route_hop_us(&best) > *lat)
            *lat = cp_route_hop_us(&best);
    }
    if ((rc = coll_make_pattern(b, NULL, 0, *lat, &p)))
        return rc;
    rc = cp_pack(b->win, &p, 1, &pk, b->e);
    cp_pattern_free(&p);
    if (rc)
        return rc;
    *gbs = pk.total;
    cp_packing_free(&pk);
    return CP_OK;
}

/* Optimizer offload's host side (cp_coll.d2h_gbs ...): unknown (0) when
 * no socket of host 0 says how fast it streams memory. */
int coll_host_memory_build(coll_build *b)
{
    int *srv = malloc((size_t)b->win->nnodes * sizeof *srv), K, q, rc = CP_OK;
    double lat_up = 0, lat_down = 0;
    if (!srv)
        return coll_oom(b);
    K = host_servers(b, 0, srv);
    if (K > 0 && ((rc = host_copy_rate(b, srv, K, 1, &b->c->d2h_gbs, &lat_up)) == CP_OK) &&
        (rc = host_copy_rate(b, srv, K, 0, &b->c->h2d_gbs, &lat_down)) == CP_OK) {
        b->c->host_lat_us = lat_up > lat_down ? lat_up : lat_down;
        for (q = 0; q < K; q++)
            b->c->host_mem_gbs += 3 * b->win->nodes[srv[q]].reduce_gbs;
    }
    free(srv);
    return rc;
}
