/*
 * alltoall.c - the expert all-to-all on the EP group's links (see
 * alltoall.h; docs/model.md eq. E7, E8).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llm/alltoall.h"

void cp_a2a_free(cp_a2a *a)
{
    if (!a)
        return;
    cp_p2p_free(&a->p2p);
    free(a->load);
    if (a->have_mu)
        pthread_mutex_destroy(&a->mu);
    if (a->have_pool)
        cp_pool_free(&a->pool);
    cp_topo_free(a->pool_topo);
    memset(a, 0, sizeof *a);
}

int cp_a2a_build(cp_a2a *a, const cp_topo *host, const cp_topo *window, int hosts, int local,
                 cp_err *e)
{
    int rc;
    memset(a, 0, sizeof *a);
    a->hosts = hosts;
    a->local = local;
    a->net = hosts > 1 && window ? window : host;
    if ((rc = cp_p2p_build(a->net, &a->p2p, e)))
        return rc;
    if (!(a->load = calloc(2 * (size_t)a->net->nlinks + 1, sizeof *a->load))) {
        cp_a2a_free(a);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    if (hosts > 1 && cp_pool_present(host)) {
        /* the pool is shared by every host of the group: the H-host machine */
        if ((rc = cp_topo_replicate(host, hosts, &a->pool_topo, e)) ||
            (rc = cp_pool_build(a->pool_topo, NULL, &a->pool, e))) {
            cp_a2a_free(a);
            return rc;
        }
        a->have_pool = 1;
    }
    pthread_mutex_init(&a->mu, NULL);
    a->have_mu = 1;
    return CP_OK;
}

/* The name of a link kind as the all-to-all's binding resource. */
static const char *arc_name(const cp_topo *t, int arc)
{
    switch (arc < 0 ? CP_LINK_KINDS : t->links[arc >> 1].kind) {
    case CP_NVLINK: return "nvlink";
    case CP_PCIE: return "pcie";
    case CP_NET: return "network";
    case CP_CXL: return "cxl";
    case CP_SOCKET: return "socket";
    default: return "-";
    }
}

/* The arc from node u to node v, or -1. */
static int arc_to(const cp_topo *t, int u, int v)
{
    int k;
    for (k = t->adj_off[u]; k < t->adj_off[u + 1]; k++)
        if (cp_arc_head(t, t->adj_arc[k]) == v)
            return t->adj_arc[k];
    return -1;
}

/* Eq. E7's NVSwitch rule: two GPUs joined through NVSwitch chips send over
 * every chip they share, in proportion to the narrower of their two links
 * to it (the NVLink fabric spreads a GPU's traffic over all its links, as
 * one switch); 0 when they share none (the widest route carries it). */
static int spray(cp_a2a *a, int u, int v, double piece)
{
    const cp_topo *t = a->net;
    double total = 0;
    int pass, k;
    for (pass = 0; pass < 2; pass++) {
        if (pass == 1 && total <= 0)
            return 0;
        for (k = t->adj_off[u]; k < t->adj_off[u + 1]; k++) {
            int out = t->adj_arc[k], sw = cp_arc_head(t, out), in;
            double w;
            if (t->nodes[sw].kind != CP_NVSWITCH || (in = arc_to(t, sw, v)) < 0)
                continue;
            w = fmin(cp_arc_gbs(t, out), cp_arc_gbs(t, in));
            if (pass == 0)
                total += w;
            else {
                a->load[out] += piece * w / total;
                a->load[in] += piece * w / total;
            }
        }
    }
    return 1;
}

/* Eq. E7: every pair's piece on its route's arcs (sprayed over shared
 * NVSwitch chips), pairs across hosts scaled from the window's one remote
 * host to the group's H - 1. */
static double net_us(cp_a2a *a, double same, double cross, cp_a2a_why *why);

/* The remembered answer to the same question, or -1; under a->mu. */
static double recall(const cp_a2a *a, int pool, double x, double y, cp_a2a_why *why)
{
    int i, n = a->nmemo < CP_A2A_MEMO ? a->nmemo : CP_A2A_MEMO;
    for (i = 0; i < n; i++) {
        const cp_a2a_memo *m = &a->memo[i];
        if (m->pool == pool && m->a == x && m->b == y) {
            if (why)
                *why = m->why;
            return m->us;
        }
    }
    return -1;
}

/* Store an answer over the oldest; under a->mu. */
static void remember(cp_a2a *a, int pool, double x, double y, double us, const cp_a2a_why *why)
{
    cp_a2a_memo *m = &a->memo[a->nmemo++ % CP_A2A_MEMO];
    m->pool = pool, m->a = x, m->b = y, m->us = us, m->why = *why;
}

double cp_a2a_net_us(cp_a2a *a, double same, double cross, cp_a2a_why *why)
{
    cp_a2a_why w;
    double us;
    pthread_mutex_lock(&a->mu);
    if ((us = recall(a, 0, same, cross, why)) < 0) {
        us = net_us(a, same, cross, &w);
        remember(a, 0, same, cross, us, &w);
        if (why)
            *why = w;
    }
    pthread_mutex_unlock(&a->mu);
    return us;
}

/* cp_a2a_net_us under the lock: the arcs' loads in a->load. */
static double net_us(cp_a2a *a, double same, double cross, cp_a2a_why *why)
{
    const cp_topo *t = a->net;
    const cp_p2p *p = &a->p2p;
    int n = p->nranks, narcs = 2 * t->nlinks, i, j, k, bind = -1;
    double lat = 0, worst = 0, scale = a->hosts > 1 ? a->hosts - 1 : 0, us;
    memset(a->load, 0, (size_t)narcs * sizeof *a->load);
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            int far = t->nodes[t->gpus[i]].host != t->nodes[t->gpus[j]].host;
            double piece = far ? cross * scale : same;
            if (i == j || piece <= 0)
                continue;
            lat = fmax(lat, p->lat_us[i * n + j]);
            if (!far && spray(a, t->gpus[i], t->gpus[j], piece))
                continue;
            for (k = p->route_off[i * n + j]; k < p->route_off[i * n + j + 1]; k++)
                a->load[p->route_arc[k]] += piece;
        }
    for (k = 0; k < narcs; k++) {
        const cp_link *l = &t->links[k >> 1];
        if (a->load[k] <= 0)
            continue;
        us = a->load[k] / (l->gbs[k & 1] * t->calib.kind[l->kind].bw_eff * 1e3);
        if (us > worst) {
            worst = us;
            bind = k;
        }
    }
    us = n > 1 ? p->launch_us + lat + worst : 0;
    if (why) {
        memset(why, 0, sizeof *why);
        why->path = a->hosts > 1 ? "network" : "nvlink";
        why->bind = arc_name(t, bind);
        why->launch_us = n > 1 ? p->launch_us : 0;
        why->lat_us = lat;
        why->wire_us = worst;
    }
    return us;
}

double cp_a2a_pool_us(cp_a2a *a, double bytes, cp_a2a_why *why)
{
    cp_pool_why pw;
    cp_a2a_why w;
    double us;
    if (!a->have_pool)
        return -1;
    pthread_mutex_lock(&a->mu);
    if ((us = recall(a, 1, bytes, 0, why)) < 0) {
        us = cp_pool_time_us(&a->pool, CP_XOP_ALLTOALL, bytes, &pw);
        memset(&w, 0, sizeof w);
        w.path = "pool";
        w.bind = cp_pool_res_name(pw.bind);
        w.launch_us = pw.launch_us;
        w.lat_us = pw.fill_us;
        w.wire_us = pw.res_us[pw.bind];
        remember(a, 1, bytes, 0, us, &w);
        if (why)
            *why = w;
    }
    pthread_mutex_unlock(&a->mu);
    return us;
}
