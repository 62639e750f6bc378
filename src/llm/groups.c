/*
 * groups.c - a layout's communication groups as machines of their own,
 * priced by the collective model (see groups.h; docs/model.md eq. L7).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/alltoall.h"
#include "llm/groups.h"
#include "paths/route.h"

/* The host the machine is made of: the replica's source, or the machine
 * itself when it is one host.  NULL for a multi-host file. */
static const cp_topo *base_host(const cp_topo *t)
{
    if (t->rep_base)
        return t->rep_base;
    return t->nhosts <= 1 ? t : NULL;
}

/* How much of each NIC of host `host` of t serves the GPUs with member[]
 * set: every GPU's nearest NICs (the widest routes, ties shared equally, as
 * NCCL binds a GPU to its closest NIC) split that GPU's use among them;
 * scale[nic] = members' use / all GPUs' use, 0 when no member uses it. */
static int nic_shares(const cp_topo *t, int host, const int *member, double *scale, cp_err *e)
{
    double *all = calloc((size_t)t->nnodes + 1, sizeof *all);
    double *mine = calloc((size_t)t->nnodes + 1, sizeof *mine);
    double *w = calloc((size_t)t->nnodes + 1, sizeof *w);
    int i, j, rc = CP_OK;
    if (!all || !mine || !w) {
        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
        goto done;
    }
    for (i = 0; i < t->ngpus; i++) {
        int g = t->gpus[i], near = 0;
        double best = 0;
        if (t->nodes[g].host != host)
            continue;
        for (j = 0; j < t->nnodes; j++) {
            cp_route r;
            cp_err tmp;
            w[j] = 0;
            if (t->nodes[j].kind != CP_NIC || t->nodes[j].host != host)
                continue;
            /* widest first, then fewest hops (NCCL's path types: a NIC under
             * the GPU's own PCIe switch before one across the socket) */
            if (cp_route_find(t, g, j, NULL, &r, &tmp) == CP_OK)
                w[j] = r.gbs * (1 - 1e-6 * r.narcs);
            if (w[j] > best)
                best = w[j];
        }
        for (j = 0; j < t->nnodes; j++)
            near += best > 0 && w[j] >= best * (1 - 1e-12);
        for (j = 0; j < t->nnodes; j++)
            if (best > 0 && w[j] >= best * (1 - 1e-12)) {
                all[j] += 1.0 / near;
                if (member[g])
                    mine[j] += 1.0 / near;
            }
    }
    for (j = 0; j < t->nnodes; j++)
        scale[j] = all[j] > 0 ? mine[j] / all[j] : 0;
done:
    free(all);
    free(mine);
    free(w);
    return rc;
}

/* One host of `src` (host 0) with only the group's GPUs (local indices
 * shape->idx), its NICs scaled to the group's share (dropped when the
 * group uses none), every other node kept. */
static int group_host(const cp_topo *src, const cp_group_shape *sh, double net_gbs,
                      cp_topo **out, double *share, cp_err *e)
{
    int *keep = calloc((size_t)src->nnodes + 1, sizeof *keep);
    double *scale = calloc((size_t)src->nnodes + 1, sizeof *scale);
    char name[300];
    int i, rc, k = 0, nic_used = 0;
    *out = NULL;
    *share = 0;
    if (!keep || !scale) {
        free(keep);
        free(scale);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    for (i = 0; i < src->ngpus && k < sh->local; i++) /* GPUs of host 0 in file order */
        if (src->nodes[src->gpus[i]].host == 0) {
            int local = i, j;
            for (j = 0; j < sh->local; j++)
                if (sh->idx[j] == local)
                    keep[src->gpus[i]] = 1;
        }
    if ((rc = nic_shares(src, 0, keep, scale, e)))
        goto done;
    for (i = 0; i < src->nnodes; i++) {
        const cp_node *n = &src->nodes[i];
        if (n->kind == CP_GPU)
            continue;
        if (n->host > 0)
            continue;
        if (n->kind == CP_NIC) {
            keep[i] = scale[i] > 0;
            nic_used |= keep[i];
        } else {
            keep[i] = 1;
        }
    }
    snprintf(name, sizeof name, "%s %s group", src->name,
             sh->kind == CP_G_TP ? "tp" : sh->kind == CP_G_CP ? "cp" :
             sh->kind == CP_G_PP ? "pp" : sh->kind == CP_G_EP ? "ep" :
             sh->kind == CP_G_ETP ? "etp" : sh->kind == CP_G_EDP ? "edp" : "dp");
    if ((rc = cp_topo_pick(src, keep, scale, name, out, e)))
        goto done;
    for (i = 0; i < (*out)->nnodes; i++) {
        cp_node *n = &(*out)->nodes[i];
        if (n->kind != CP_NIC)
            continue;
        if (net_gbs > 0) { /* --net-gbs: the line rate, times the group's share */
            double f = 0;
            int j;
            for (j = 0; j < src->nnodes; j++)
                if (!strcmp(src->nodes[j].id, n->id))
                    f = scale[j];
            n->net_gbs = net_gbs * f;
        }
        *share += n->net_gbs;
    }
    if (sh->local > 0)
        *share /= sh->local;
    (void)nic_used;
done:
    free(keep);
    free(scale);
    return rc;
}

/* The pool as this group sees it when every group of every host uses it at
 * once (eq. L8): the host's ports to the pool's switch carry local /
 * per_host of the host's traffic (port_share), and each device's rate is
 * divided by the extra GPUs that copy to it at once (dev_share). */
static void share_pool(cp_topo *w, double port_share, double dev_share)
{
    int i;
    for (i = 0; i < w->nnodes; i++) {
        cp_node *n = &w->nodes[i];
        if (n->kind == CP_MEMDEV && n->host < 0) {
            n->read_gbs *= dev_share;
            n->write_gbs *= dev_share;
            n->mem_gbs *= dev_share;
            n->reduce_gbs *= dev_share;
        }
    }
    for (i = 0; i < w->nlinks; i++) {
        cp_link *l = &w->links[i];
        const cp_node *a = &w->nodes[l->a], *b = &w->nodes[l->b];
        double f;
        if ((a->kind == CP_CXL_SWITCH) == (b->kind == CP_CXL_SWITCH))
            continue;
        f = a->kind == CP_MEMDEV || b->kind == CP_MEMDEV ? dev_share : port_share;
        l->gbs[0] *= f;
        l->gbs[1] *= f;
    }
}

/* The group's pool model, where the machine has a pool. */
static int build_pool(const cp_topo *base, const cp_group_shape *sh, int machine_hosts,
                      cp_group_model *m, cp_err *e)
{
    cp_topo *w = m->window ? m->window : m->host;
    int per_host = base->ngpus, wh = sh->hosts > 1 ? 2 : 1, rc;
    double all = (double)per_host * (machine_hosts > 0 ? machine_hosts : 1);
    if (!cp_pool_present(w))
        return CP_OK;
    {   /* a copy goes to one device: the window's own GPUs already share
         * them (max(1, gw / ndev) a device), the machine's all put all / ndev
         * on each */
        double ndev = 0, gw = (double)wh * sh->local, own, load;
        int i;
        for (i = 0; i < w->nnodes; i++)
            ndev += w->nodes[i].kind == CP_MEMDEV && w->nodes[i].host < 0;
        own = gw > ndev ? gw / ndev : 1;
        load = all > ndev ? all / ndev : 1;
        share_pool(w, (double)sh->local / per_host, own / load);
    }
    if ((rc = cp_pool_build(w, &m->coll, &m->pool, e)))
        return rc;
    m->have_pool = 1;
    pthread_mutex_init(&m->pool_mu, NULL);
    return CP_OK;
}

static int build_model(const cp_topo *base, const cp_group_shape *sh, double net_gbs,
                       int machine_hosts, cp_group_model *m, cp_err *e)
{
    int rc, bad, peer, via;
    memset(m, 0, sizeof *m);
    m->shape = *sh;
    m->active = 1;
    m->machine_hosts = machine_hosts;
    if ((rc = group_host(base, sh, net_gbs, &m->host, &m->nic_share, e)))
        return rc;
    if ((bad = cp_topo_unreachable_gpu(m->host, &peer, &via)) != -1) {
        if (bad == -2)
            return cp_fail(e, CP_EINTERNAL, "out of memory");
        return cp_fail_at(e, CP_EINPUT, base->src_path, 0, 0, NULL,
                          "gpu \"%s\" cannot reach gpu \"%s\" of its group without the GPUs "
                          "outside it (routes never pass through a GPU)",
                          m->host->nodes[bad].id, peer >= 0 ? m->host->nodes[peer].id : "?");
    }
    if (sh->hosts > 1) {
        if ((rc = cp_topo_replicate(m->host, 2, &m->window, e)))
            return rc;
        rc = cp_coll_build_hosts(m->window, sh->hosts, 1, &m->coll, e);
    } else {
        rc = cp_coll_build(m->host, 1, &m->coll, e);
    }
    if (rc)
        return rc;
    m->have_coll = 1;
    if (sh->hosts == 1)
        m->nic_share = 0;
    return build_pool(base, sh, machine_hosts, m, e);
}

/* Why: a plan for one group (plan with a layout, docs/planner.md "Large-
 * model layouts") needs the group as a machine of its own that the planner
 * and the simulator both rebuild from the plan: the group's GPUs on one
 * host with their NIC share (group_host, as the collective model prices
 * the group), the pool's ports and devices divided as every group of every
 * host would use them (share_pool, eq. L8, the whole group's GPUs on the
 * devices), then replicated over the hosts the group spans. */
int cp_groups_machine(const cp_topo *t, const cp_layout *l, cp_group_kind k, double net_gbs,
                      cp_topo **out, cp_err *e)
{
    const cp_topo *base = base_host(t);
    cp_group_shape sh;
    cp_topo *host = NULL;
    double share;
    int rc, bad, peer, via;
    *out = NULL;
    if (!base)
        return cp_fail_at(e, CP_EINPUT, t->src_path, 0, 0, NULL,
                          "large-model layouts need a topology of one host (replicated with "
                          "--hosts); this file describes %d hosts", t->nhosts);
    cp_layout_group(l, k, &sh);
    if (sh.size < 2 || !sh.uniform)
        return cp_fail(e, CP_EINPUT, "the %s group of %d GPU%s %s", k == CP_G_TP ?
                       "tensor-parallel" : "data-parallel", sh.size, sh.size == 1 ? "" : "s",
                       sh.size < 2 ? "has nothing to synchronise" :
                       "spreads unevenly over hosts");
    if ((rc = group_host(base, &sh, net_gbs, &host, &share, e)))
        return rc;
    if ((bad = cp_topo_unreachable_gpu(host, &peer, &via)) != -1) {
        rc = bad == -2 ? cp_fail(e, CP_EINTERNAL, "out of memory")
                       : cp_fail_at(e, CP_EINPUT, base->src_path, 0, 0, NULL,
                                    "gpu \"%s\" cannot reach gpu \"%s\" of its group without "
                                    "the GPUs outside it", host->nodes[bad].id,
                                    peer >= 0 ? host->nodes[peer].id : "?");
        cp_topo_free(host);
        return rc;
    }
    if (cp_pool_present(host)) { /* as build_pool, with the whole group on the devices */
        double ndev = 0, gw = (double)sh.hosts * sh.local, own, load;
        double all = (double)base->ngpus * (l->hosts > 0 ? l->hosts : 1);
        int i;
        for (i = 0; i < host->nnodes; i++)
            ndev += host->nodes[i].kind == CP_MEMDEV && host->nodes[i].host < 0;
        own = ndev > 0 && gw > ndev ? gw / ndev : 1;
        load = ndev > 0 && all > ndev ? all / ndev : 1;
        share_pool(host, (double)sh.local / base->ngpus, own / load);
    }
    if (sh.hosts <= 1) {
        *out = host;
        return CP_OK;
    }
    rc = cp_topo_replicate(host, sh.hosts, out, e);
    cp_topo_free(host);
    return rc;
}

static void model_free(cp_group_model *m)
{
    cp_a2a_free(m->a2a);
    free(m->a2a);
    if (m->have_pool) {
        cp_pool_free(&m->pool);
        pthread_mutex_destroy(&m->pool_mu);
    }
    if (m->have_coll)
        cp_coll_free(&m->coll);
    cp_topo_free(m->window);
    cp_topo_free(m->host);
    memset(m, 0, sizeof *m);
}

/* Two shapes price alike: the same local GPUs on the same number of hosts. */
static int same_shape(const cp_group_shape *a, const cp_group_shape *b)
{
    return a->hosts == b->hosts && a->local == b->local &&
           memcmp(a->idx, b->idx, (size_t)a->local * sizeof *a->idx) == 0;
}

void cp_group_cache_free(cp_group_cache *c)
{
    int i;
    for (i = 0; i < c->n; i++) {
        model_free(c->m[i]);
        free(c->m[i]);
    }
    free(c->m);
    free(c->net);
    memset(c, 0, sizeof *c);
}

/* The cache's model of shape sh, built and added when missing; NULL with
 * *rc set on failure. */
static cp_group_model *cached(cp_group_cache *c, const cp_topo *base,
                                    const cp_group_shape *sh, double net_gbs,
                                    int machine_hosts, int *rc, cp_err *e)
{
    cp_group_model *m;
    int i;
    for (i = 0; i < c->n; i++)
        if (c->net[i] == net_gbs && c->m[i]->machine_hosts == machine_hosts &&
            same_shape(&c->m[i]->shape, sh))
            return c->m[i];
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        cp_group_model **ms = realloc(c->m, (size_t)cap * sizeof(void *));
        double *net = ms ? realloc(c->net, (size_t)cap * sizeof *net) : NULL;
        if (ms)
            c->m = ms;
        if (!ms || !net) {
            *rc = cp_fail(e, CP_EINTERNAL, "out of memory");
            return NULL;
        }
        c->net = net;
        c->cap = cap;
    }
    if (!(m = calloc(1, sizeof *m))) {
        *rc = cp_fail(e, CP_EINTERNAL, "out of memory");
        return NULL;
    }
    if ((*rc = build_model(base, sh, net_gbs, machine_hosts, m, e))) {
        model_free(m);
        free(m);
        return NULL;
    }
    c->net[c->n] = net_gbs;
    c->m[c->n++] = m;
    return m;
}

/* Group kind k of layout l: its shape, and the model it prices with. */
static int build_group(cp_groups *G, const cp_layout *l, cp_group_kind k, double net_gbs,
                       cp_group_cache *cache, cp_err *e)
{
    cp_group_shape *sh = &G->shape[k];
    int j, rc = CP_OK, kk = (int)k;
    cp_layout_group(l, k, sh);
    G->active[k] = sh->size > 1;
    if (!G->active[k])
        return CP_OK;
    if (!sh->uniform)
        return cp_fail(e, CP_EINPUT, "the %s group of %d GPUs spreads unevenly over hosts of "
                       "%d GPUs", k == CP_G_TP ? "tensor-parallel" :
                       k == CP_G_EP ? "expert-parallel" : "data-parallel",
                       sh->size, l->per_host);
    if (!G->base)
        return cp_fail_at(e, CP_EINPUT, G->machine->src_path, 0, 0, NULL,
                          "large-model layouts need a topology of one host (replicated with "
                          "--hosts); this file describes %d hosts", G->machine->nhosts);
    for (j = 0; j < kk; j++) /* DP x CP is DP when CP is 1; CP and PP pairs often alike */
        if (G->use[j] && same_shape(&G->use[j]->shape, sh)) {
            G->use[k] = G->use[j];
            return CP_OK;
        }
    if (cache) {
        G->use[k] = cached(cache, G->base, sh, net_gbs, l->hosts, &rc, e);
        return rc;
    }
    if (!(G->own[k] = calloc(1, sizeof *G->own[k])))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    if ((rc = build_model(G->base, sh, net_gbs, l->hosts, G->own[k], e)))
        return rc;
    G->use[k] = G->own[k];
    return CP_OK;
}

int cp_groups_build_kinds(cp_groups *G, const cp_topo *t, const cp_layout *l, double net_gbs,
                          cp_group_cache *cache, unsigned mask, cp_err *e)
{
    int k, rc = CP_OK;
    G->machine = t;
    G->base = base_host(t);
    G->a2a = NULL;
    for (k = 0; k < CP_G_KINDS; k++) {
        G->active[k] = 0;
        G->own[k] = NULL;
        G->use[k] = NULL;
    }
    for (k = 0; k < CP_G_KINDS && rc == CP_OK; k++)
        if (mask & (1u << k))
            rc = build_group(G, l, (cp_group_kind)k, net_gbs, cache, e);
    if (rc == CP_OK && G->active[CP_G_EP]) {
        /* the experts' all-to-all (alltoall.h), built once for its model
         * (a search's layouts share a few EP shapes); serial, as the
         * models are built */
        cp_group_model *m = G->use[CP_G_EP];
        if (!m->a2a) {
            if (!(m->a2a = calloc(1, sizeof *m->a2a)))
                rc = cp_fail(e, CP_EINTERNAL, "out of memory");
            else if ((rc = cp_a2a_build(m->a2a, m->host, m->window, m->shape.hosts,
                                        m->shape.local, e))) {
                free(m->a2a);
                m->a2a = NULL;
            }
        }
        G->a2a = m->a2a;
    }
    if (rc)
        cp_groups_free(G);
    return rc;
}

int cp_groups_build(cp_groups *G, const cp_topo *t, const cp_layout *l, double net_gbs,
                    cp_group_cache *cache, cp_err *e)
{
    return cp_groups_build_kinds(G, t, l, net_gbs, cache, ~0u, e);
}

void cp_groups_free(cp_groups *G)
{
    int k;
    G->a2a = NULL; /* its model's */
    for (k = 0; k < CP_G_KINDS; k++) {
        if (G->own[k]) { /* only what it built itself: shared ones are the cache's */
            model_free(G->own[k]);
            free(G->own[k]);
        }
        G->own[k] = NULL;
        G->use[k] = NULL;
        G->active[k] = 0;
    }
}

const cp_group_model *cp_groups_model(const cp_groups *G, cp_group_kind k)
{
    return G->active[k] ? G->use[k] : NULL;
}

const cp_coll *cp_groups_coll(const cp_groups *G, cp_group_kind k)
{
    const cp_group_model *m = cp_groups_model(G, k);
    return m && m->have_coll ? &m->coll : NULL;
}

double cp_groups_us(const cp_groups *G, cp_group_kind k, cp_comm_kind op, double bytes,
                    cp_coll_alg alg, cp_coll_alg *used)
{
    const cp_coll *c = cp_groups_coll(G, k);
    cp_coll_op cop;
    double us;
    if (used)
        *used = CP_ALGS;
    if (!c || bytes <= 0)
        return 0;
    switch (op) {
    case CP_CM_AR:
        cop = CP_OP_ALLREDUCE;
        break;
    case CP_CM_RS:
        cop = CP_OP_REDUCESCATTER;
        break;
    case CP_CM_AG:
        cop = CP_OP_ALLGATHER;
        break;
    case CP_CM_P2P: /* a send between two GPUs: a broadcast of two ranks */
        cop = CP_OP_BROADCAST;
        break;
    default:
        return -1;
    }
    if (alg == CP_ALGS) {
        cp_coll_alg a = cp_coll_best(c, cop, bytes, &us);
        if (used)
            *used = a;
        return us;
    }
    if (used)
        *used = alg;
    return cp_coll_time_us(c, cop, alg, bytes);
}

double cp_groups_pool_us(const cp_groups *G, cp_group_kind k, cp_comm_kind op, double bytes)
{
    /* the pool model is the cache's, shared by the threads; its memo is
     * written under its lock */
    cp_group_model *mm = G->active[k] ? G->use[k] : NULL;
    const cp_group_model *m = mm;
    cp_xop xop;
    double us;
    if (!m)
        return 0;
    if (!m->have_pool)
        return -1;
    if (bytes <= 0)
        return 0;
    switch (op) {
    case CP_CM_AR:
        xop = CP_XOP_ALLREDUCE;
        break;
    case CP_CM_RS:
        xop = CP_XOP_REDUCESCATTER;
        break;
    case CP_CM_AG:
        xop = CP_XOP_ALLGATHER;
        break;
    default:
        return -1;
    }
    pthread_mutex_lock(&mm->pool_mu);
    {
        int i, n = mm->nmemo < 16 ? mm->nmemo : 16;
        for (i = 0; i < n; i++)
            if (mm->memo[i][0] == (double)xop && mm->memo[i][1] == bytes) {
                us = mm->memo[i][2];
                pthread_mutex_unlock(&mm->pool_mu);
                return us;
            }
    }
    us = cp_pool_time_us(&mm->pool, xop, bytes, NULL);
    mm->memo[mm->nmemo % 16][0] = (double)xop;
    mm->memo[mm->nmemo % 16][1] = bytes;
    mm->memo[mm->nmemo % 16][2] = us;
    mm->nmemo++;
    pthread_mutex_unlock(&mm->pool_mu);
    return us;
}
