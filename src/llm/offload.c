/*
 * offload.c - memory tiers beyond the GPU (see offload.h; docs/model.md
 * eq. T1-T3).
 *
 * Host DRAM's rates are the collective model's host copies (cost/ps.c:
 * every GPU of a host copying to its nearest socket at once, packed over
 * the PCIe tree; the sockets' streaming rate 3 x reduce_gbs summed).  The
 * pool's: one GPU's copy engine against the host's share of its pool ports
 * and the devices' share of every host (eq. T3), from the topology's pool
 * nodes and links.
 */
#include <string.h>

#include "cost/collective.h"
#include "llm/offload.h"

const char *cp_tier_name(cp_tier t)
{
    static const char *const n[] = {"gpu", "host", "pool"};
    return t >= CP_TIER_GPU && t <= CP_TIER_POOL ? n[t] : "?";
}

/* The pool as one GPU of `per_host` sees it when all `hosts` hosts use it
 * (eq. T3): the host's links to the pool's switch shared by its GPUs, the
 * devices' read and write rates shared by every GPU of every host, one
 * copy engine per direction (the GPU's own PCIe link).  A pool without
 * capacity is no tier (and, for the search, no data-parallel route: the
 * gradients it would reduce need room). */
static void pool_rates(const cp_topo *t, int hosts, int per_host, cp_tier_rates *r)
{
    double port = 0, rd = 0, wr = 0, cap = 0, gpu_link = 0, lat = 0;
    int i;
    for (i = 0; i < t->nlinks; i++) {
        const cp_link *l = &t->links[i];
        const cp_node *a = &t->nodes[l->a], *b = &t->nodes[l->b];
        if ((a->kind == CP_CXL_SWITCH) != (b->kind == CP_CXL_SWITCH) &&
            a->kind != CP_MEMDEV && b->kind != CP_MEMDEV) {
            port += l->gbs[0] < l->gbs[1] ? l->gbs[0] : l->gbs[1]; /* a host's port */
            if (l->lat_us > lat)
                lat = l->lat_us;
        }
        if ((a->kind == CP_GPU || b->kind == CP_GPU) && l->kind == CP_PCIE && gpu_link == 0)
            gpu_link = l->gbs[0] < l->gbs[1] ? l->gbs[0] : l->gbs[1];
    }
    for (i = 0; i < t->nnodes; i++)
        if (t->nodes[i].kind == CP_MEMDEV && t->nodes[i].host < 0) {
            rd += t->nodes[i].read_gbs > 0 ? t->nodes[i].read_gbs : t->nodes[i].mem_gbs;
            wr += t->nodes[i].write_gbs > 0 ? t->nodes[i].write_gbs : t->nodes[i].mem_gbs;
            cap += t->nodes[i].capacity_gb;
        }
    if (port <= 0 || rd <= 0 || wr <= 0 || cap <= 0) /* no room: neither tier nor route */
        return;
    r->available = 1;
    {
        double share_port = port / per_host, gpus = (double)per_host * hosts;
        double w = share_port, rr = share_port;
        if (gpu_link > 0 && gpu_link < w)
            w = rr = gpu_link;
        if (wr / gpus < w)
            w = wr / gpus;
        if (rd / gpus < rr)
            rr = rd / gpus;
        r->d2h_gbs = w;
        r->h2d_gbs = rr;
        /* the step streams through the host's ports, bounded by its share of
         * the devices (reads and writes together) */
        r->step_gbs = port < (rd + wr) / hosts ? port : (rd + wr) / hosts;
        r->lat_us = lat;
        r->capacity_gb = cap / hosts;
    }
}

/* The host's DRAM: its sockets' capacity_gb (0 when none is given). */
static double host_capacity_gb(const cp_topo *t)
{
    double cap = 0;
    int i;
    for (i = 0; i < t->nnodes; i++)
        if (t->nodes[i].kind == CP_CPU)
            cap += t->nodes[i].capacity_gb;
    return cap;
}

int cp_tiers_build(const cp_topo *host, int hosts, cp_tiers *out, cp_err *e)
{
    cp_coll c;
    int rc;
    memset(out, 0, sizeof *out);
    if ((rc = cp_coll_build(host, 1, &c, e)))
        return rc;
    if (c.d2h_gbs > 0 && c.h2d_gbs > 0 && c.host_mem_gbs > 0) {
        cp_tier_rates *h = &out->t[CP_TIER_HOST];
        h->available = 1;
        h->d2h_gbs = c.d2h_gbs;
        h->h2d_gbs = c.h2d_gbs;
        h->lat_us = c.host_lat_us;
        h->step_gbs = c.host_mem_gbs;
        h->capacity_gb = host_capacity_gb(host);
    }
    cp_coll_free(&c);
    pool_rates(host, hosts > 0 ? hosts : 1, host->ngpus > 0 ? host->ngpus : 1,
               &out->t[CP_TIER_POOL]);
    return CP_OK;
}

double cp_offload_opt_ms(const cp_tier_rates *r, double params, double grad_bytes, int per_host)
{
    double out_us, step_us, back_us;
    if (!r->available || r->d2h_gbs <= 0 || r->h2d_gbs <= 0 || r->step_gbs <= 0)
        return -1;
    out_us = r->lat_us + params * grad_bytes / (r->d2h_gbs * 1e3);
    step_us = params * per_host * 28 / (r->step_gbs * 1e3);
    back_us = r->lat_us + params * 2 / (r->h2d_gbs * 1e3);
    return (out_us + step_us + back_us) / 1e3;
}

void cp_offload_act_us(const cp_tier_rates *r, double bytes, double fwd_us, double bwd_us,
                       double *extra_fwd_us, double *extra_bwd_us)
{
    double out = r->lat_us + bytes / (r->d2h_gbs * 1e3);
    double in = r->lat_us + bytes / (r->h2d_gbs * 1e3);
    *extra_fwd_us = out > fwd_us ? out - fwd_us : 0;
    *extra_bwd_us = in > bwd_us ? in - bwd_us : 0;
}
