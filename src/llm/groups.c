/*
 * groups.c - a layout's communication groups as machines of their own,
 * priced by the collective model (see groups.h; docs/model.md eq. L7).
 */
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
            if (cp_route_find(t, g, j, NULL, &r, &tmp) == CP_OK)
                w[j] = r.gbs;
            if (w[j] > best)
                best = w[j];
        }
        for (j = 0; j < t->nnodes; j++)
            near += best > 0 && w[j] >= best * (1 - 1e-9);
        for (j = 0; j < t->nnodes; j++)
            if (best > 0 && w[j] >= best * (1 - 1e-9)) {
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

/* Build group kind k's machine and collective model. */
static int build_group(cp_groups *G, const cp_layout *l, cp_group_kind k, double net_gbs,
                       cp_err *e)
{
    cp_group_model *m = &G->g[k];
    int rc, bad;
    cp_layout_group(l, k, &m->shape);
    m->active = m->shape.size > 1;
    if (!m->active)
        return CP_OK;
    if (!m->shape.uniform)
        return cp_fail(e, CP_EINPUT, "the %s group of %d GPUs spreads unevenly over hosts of "
                       "%d GPUs", k == CP_G_TP ? "tensor-parallel" :
                       k == CP_G_EP ? "expert-parallel" : "data-parallel",
                       m->shape.size, l->per_host);
    if (!G->base)
        return cp_fail_at(e, CP_EINPUT, G->machine->src_path, 0, 0, NULL,
                          "large-model layouts need a topology of one host (replicated with "
                          "--hosts) or of alike hosts given by --hosts; this file describes %d "
                          "hosts", G->machine->nhosts);
    if ((rc = group_host(G->base, &m->shape, net_gbs, &m->host, &m->nic_share, e)))
        return rc;
    if ((bad = cp_topo_unreachable_gpu(m->host)) != -1) {
        if (bad == -2)
            return cp_fail(e, CP_EINTERNAL, "out of memory");
        return cp_fail_at(e, CP_EINPUT, G->base->src_path, 0, 0, NULL,
                          "gpu \"%s\" cannot reach the rest of its group without the GPUs "
                          "outside it (routes never pass through a GPU)",
                          m->host->nodes[bad].id);
    }
    if (m->shape.hosts > 1) {
        if ((rc = cp_topo_replicate(m->host, 2, &m->window, e)))
            return rc;
        rc = cp_coll_build_hosts(m->window, m->shape.hosts, 1, &m->coll, e);
    } else {
        rc = cp_coll_build(m->host, 1, &m->coll, e);
    }
    if (rc)
        return rc;
    m->have_coll = 1;
    if (m->shape.hosts == 1)
        m->nic_share = 0;
    return CP_OK;
}

int cp_groups_build(cp_groups *G, const cp_topo *t, const cp_layout *l, double net_gbs,
                    cp_err *e)
{
    int k, rc = CP_OK;
    memset(G, 0, sizeof *G);
    G->machine = t;
    G->base = base_host(t);
    for (k = 0; k < CP_G_KINDS && rc == CP_OK; k++)
        rc = build_group(G, l, (cp_group_kind)k, net_gbs, e);
    if (rc == CP_OK && G->g[CP_G_EP].active) { /* the experts' all-to-all (alltoall.h) */
        const cp_group_model *m = &G->g[CP_G_EP];
        if (!(G->a2a = calloc(1, sizeof *G->a2a)))
            rc = cp_fail(e, CP_EINTERNAL, "out of memory");
        else
            rc = cp_a2a_build(G->a2a, m->host, m->window, m->shape.hosts, m->shape.local, e);
    }
    if (rc)
        cp_groups_free(G);
    return rc;
}

void cp_groups_free(cp_groups *G)
{
    int k;
    cp_a2a_free(G->a2a);
    free(G->a2a);
    G->a2a = NULL;
    for (k = 0; k < CP_G_KINDS; k++) {
        cp_group_model *m = &G->g[k];
        if (m->have_coll)
            cp_coll_free(&m->coll);
        cp_topo_free(m->window);
        cp_topo_free(m->host);
        memset(m, 0, sizeof *m);
    }
}

const cp_coll *cp_groups_coll(const cp_groups *G, cp_group_kind k)
{
    return G->g[k].have_coll ? &G->g[k].coll : NULL;
}

double cp_groups_us(const cp_groups *G, cp_group_kind k, cp_comm_kind op, double bytes,
                    cp_coll_alg alg, cp_coll_alg *used)
{
    const cp_group_model *m = &G->g[k];
    cp_coll_op cop;
    double us;
    if (used)
        *used = CP_ALGS;
    if (!m->active || bytes <= 0)
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
        cp_coll_alg a = cp_coll_best(&m->coll, cop, bytes, &us);
        if (used)
            *used = a;
        return us;
    }
    if (used)
        *used = alg;
    return cp_coll_time_us(&m->coll, cop, alg, bytes);
}
