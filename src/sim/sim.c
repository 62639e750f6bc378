/*
 * sim.c - event-driven replay of a plan with max-min fair sharing of links
 * and reducers (see sim.h).
 *
 * Units inside: time in ms, bytes, rates in bytes per ms (1 GB/s = 1e6).
 * Cost: every event recomputes rates by progressive filling over the
 * operations in flight, O(events x in-flight x resources per operation).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/collective.h"
#include "plan/families.h"
#include "sim/sim.h"

typedef struct op {
    int bucket, stream;
    double bytes, left;     /* total and remaining */
    double lat_ms;          /* before bytes flow */
    int nuse;
    int *res;
    double *use;            /* resource load per byte */
    double max_rate;        /* bytes/ms cap of its own (0: none) */
    double eligible, flow_from, finish; /* times; finish < 0 until done */
    double rate;
    int state;              /* 0 waiting, 1 latency, 2 flowing, 3 done */
} op;

typedef struct sim {
    const cpl_plan *plan;
    const cp_topo *t;
    cp_families fams;
    cp_coll coll;
    op *ops;
    int nops;
    int *stream_next;       /* per stream: index of the next op in its queue */
    int **queue;            /* per stream: op indices in order */
    int *qlen;
    double *residual;
    cp_sim_result *r;
} sim;

static int kind_index(const char *kind)
{
    static const char *const k[CP_FAMS] = {"allreduce", "proxy-bw", "proxy-lat", "proxy-ring",
                                           "ps", "pool"};
    int i;
    for (i = 0; i < CP_FAMS; i++)
        if (strcmp(kind, k[i]) == 0)
            return i;
    return -1;
}

/* 1 when the plan's GPU-side routes are MPI's AllReduce (plan
 * --gpu-collective mpi writes algorithm "mpi"). */
static int plan_uses_mpi(const cpl_plan *plan)
{
    size_t b, k;
    for (b = 0; b < cpl_bucket_count(plan); b++) {
        cpl_bucket bk;
        cpl_get_bucket(plan, b, &bk);
        for (k = 0; k < bk.nroutes; k++) {
            cpl_route r;
            cpl_get_route(plan, b, k, &r);
            if (strcmp(r.kind, "allreduce") == 0 && strcmp(r.algorithm, "mpi") == 0)
                return 1;
        }
    }
    return 0;
}

/* Copy a dense load vector into an op's sparse arrays, scaled. */
static int set_uses(op *o, const double *load, int n, double scale)
{
    int i, k = 0;
    for (i = 0; i < n; i++)
        k += load[i] > 0;
    o->res = malloc((size_t)(k ? k : 1) * sizeof *o->res);
    o->use = malloc((size_t)(k ? k : 1) * sizeof *o->use);
    if (!o->res || !o->use)
        return -1;
    for (i = 0; i < n; i++)
        if (load[i] > 0) {
            o->res[o->nuse] = i;
            o->use[o->nuse++] = load[i] * scale;
        }
    return 0;
}

/* An operation's per-byte loads and latency from its route kind.  The rate
 * an operation gets is left to the fair sharing of the links it loads, at
 * the topology's capacities (gbs x bw_eff, cp_res_cap): no family's cost
 * function caps it, except where the replay has no links to load (AllReduce
 * across hosts, whose rings the collective model packs on a two-host window)
 * and the pool's copy engines, which are not links (docs/planner.md,
 * "Simulation"). */
static int describe(sim *s, op *o, int kind, const char *dev, double *scratch)
{
    const cp_topo *t = s->t;
    int n = CP_NRES(t), k;
    const cp_family *f = &s->fams.f[kind];
    memset(scratch, 0, (size_t)n * sizeof *scratch);
    o->lat_ms = (f->lat_us > 0 ? f->lat_us : 0) / 1e3;
    if (kind == CP_FAM_ALLREDUCE) {
        double factor = 2.0 * (t->ngpus - 1) / t->ngpus;
        const char *how;
        if (s->fams.gpu_mpi) { /* staged through host memory: PCIe to the socket and back */
            for (k = 0; k < f->load.nuse; k++)
                scratch[f->load.arc[k]] = f->load.use[k];
            o->lat_ms = cp_family_time_us(&s->fams, CP_FAM_ALLREDUCE, 0, &how) / 1e3;
        } else if (s->coll.ring_use) {
            /* NCCL's rings on their links: every GPU sends 2 (n-1)/n of the
             * bucket to its successor.  Latency: the launch, 2 (n-1) steps of
             * the rings' hops (route latency and calibrated step) and what
             * Simple adds per step on the slowest kind the rings cross */
            double simple = 0;
            for (k = 0; k < 2 * t->nlinks; k++)
                if (s->coll.ring_use[k] > 0) {
                    scratch[k] = factor * s->coll.ring_use[k];
                    simple = fmax(simple, t->calib.kind[t->links[k >> 1].kind].simple_us);
                }
            o->lat_ms = (s->coll.launch_us + factor * s->coll.ring_lat_us +
                         2.0 * (t->ngpus - 1) * simple) / 1e3;
        } else { /* across hosts: no loads; the collective model's time */
            double us = cp_family_time_us(&s->fams, CP_FAM_ALLREDUCE, o->bytes, &how);
            double lat = cp_family_time_us(&s->fams, CP_FAM_ALLREDUCE, 0, &how);
            o->lat_ms = lat / 1e3;
            if (us > lat)
                o->max_rate = o->bytes / ((us - lat) / 1e3);
        }
        return set_uses(o, scratch, n, 1.0);
    }
    if (dev) {
        int v = cp_topo_find(t, dev);
        double lat;
        if (v < 0 || cp_device_load(t, v, scratch, &lat))
            return -2;
        o->lat_ms = lat / 1e3;
        return set_uses(o, scratch, n, 1.0);
    }
    for (k = 0; k < f->load.nuse; k++)
        scratch[f->load.arc[k]] = f->load.use[k];
    if (kind == CP_FAM_PS || kind == CP_FAM_POOL) { /* no route latency of their own */
        const char *how;
        o->lat_ms = cp_family_time_us(&s->fams, (cp_fam_kind)kind, 0, &how) / 1e3;
    }
    if (kind == CP_FAM_POOL) { /* the copy engines are no links: the pool model's rate */
        const char *how;
        double us = cp_family_time_us(&s->fams, CP_FAM_POOL, o->bytes, &how);
        if (us > o->lat_ms * 1e3)
            o->max_rate = o->bytes / (us / 1e3 - o->lat_ms);
    }
    return set_uses(o, scratch, n, 1.0);
}

/* Operations from the plan, and one queue per stream in global order. */
static int make_ops(sim *s, cp_err *e)
{
    size_t b, k, total = 0;
    double *scratch = malloc((size_t)CP_NRES(s->t) * sizeof *scratch);
    int f;
    if (!scratch)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    for (b = 0; b < cpl_bucket_count(s->plan); b++) {
        cpl_bucket bk;
        cpl_get_bucket(s->plan, b, &bk);
        total += bk.nroutes;
    }
    s->ops = calloc(total + 1, sizeof *s->ops);
    s->queue = calloc(CP_FAMS, sizeof *s->queue);
    s->qlen = calloc(CP_FAMS, sizeof *s->qlen);
    s->stream_next = calloc(CP_FAMS, sizeof *s->stream_next);
    if (!s->ops || !s->queue || !s->qlen || !s->stream_next) {
        free(scratch);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    for (f = 0; f < CP_FAMS; f++)
        if (!(s->queue[f] = malloc((total + 1) * sizeof **s->queue))) {
            free(scratch);
            return cp_fail(e, CP_EINTERNAL, "out of memory");
        }
    for (b = 0; b < cpl_bucket_count(s->plan); b++) {
        cpl_bucket bk;
        cpl_get_bucket(s->plan, b, &bk);
        for (k = 0; k < bk.nroutes; k++) {
            cpl_route r;
            op *o = &s->ops[s->nops];
            int kind, rc;
            cpl_get_route(s->plan, b, k, &r);
            kind = kind_index(r.kind);
            if (kind < 0 || !s->fams.f[kind].available) {
                free(scratch);
                return cp_fail(e, CP_EINPUT, "route %d (%s) cannot run on %s: %s", r.order, r.kind,
                               s->t->name, kind < 0 ? "unknown kind" : s->fams.f[kind].why_not);
            }
            o->bucket = (int)b;
            o->stream = kind;
            o->bytes = o->left = (double)r.bytes;
            o->finish = -1;
            rc = describe(s, o, kind, r.ndevices == 1 && kind != CP_FAM_PS && kind != CP_FAM_PROXY_RING &&
                                      kind != CP_FAM_POOL
                                          ? cpl_route_device(s->plan, b, k, 0)
                                          : NULL,
                          scratch);
            if (rc) {
                free(scratch);
                return rc == -2 ? cp_fail(e, CP_EINPUT, "route %d names device %s, which %s "
                                          "does not have or cannot reach", r.order,
                                          cpl_route_device(s->plan, b, k, 0), s->t->name)
                                : cp_fail(e, CP_EINTERNAL, "out of memory");
            }
            s->queue[kind][s->qlen[kind]++] = s->nops;
            s->nops++;
        }
    }
    free(scratch);
    return CP_OK;
}

/* Start the next group (same bucket) of each idle stream. */
static void admit(sim *s, double now)
{
    int f;
    for (f = 0; f < CP_FAMS; f++) {
        int i = s->stream_next[f], busy = 0, k;
        /* the stream is busy while any op of its current group is unfinished */
        for (k = 0; k < i; k++)
            busy |= s->ops[s->queue[f][k]].state != 3;
        if (busy || i >= s->qlen[f])
            continue;
        {
            int b = s->ops[s->queue[f][i]].bucket;
            cpl_bucket bk;
            cpl_get_bucket(s->plan, (size_t)b, &bk);
            if (bk.ready_ms > now)
                continue; /* not yet: an arrival event will come back */
            while (i < s->qlen[f] && s->ops[s->queue[f][i]].bucket == b) {
                op *o = &s->ops[s->queue[f][i]];
                o->state = 1;
                o->eligible = now;
                o->flow_from = now + o->lat_ms;
                i++;
            }
            s->stream_next[f] = i;
        }
    }
}

/* Max-min fair rates of the flowing ops (progressive filling). */
static void share(sim *s)
{
    int i, k, nres = CP_NRES(s->t), active = 0;
    char *frozen = calloc((size_t)s->nops + 1, 1);
    double *demand = calloc((size_t)nres + 1, sizeof *demand);
    for (k = 0; k < nres; k++)
        s->residual[k] = cp_res_cap(s->t, k) * 1e6;
    for (i = 0; i < s->nops; i++) {
        s->ops[i].rate = 0;
        if (s->ops[i].state == 2)
            active++;
        else
            frozen[i] = 1;
    }
    while (active > 0) {
        double delta = -1;
        memset(demand, 0, (size_t)nres * sizeof *demand);
        for (i = 0; i < s->nops; i++)
            if (!frozen[i])
                for (k = 0; k < s->ops[i].nuse; k++)
                    demand[s->ops[i].res[k]] += s->ops[i].use[k];
        for (k = 0; k < nres; k++)
            if (demand[k] > 0 && (delta < 0 || s->residual[k] / demand[k] < delta))
                delta = s->residual[k] / demand[k];
        for (i = 0; i < s->nops; i++)
            if (!frozen[i] && s->ops[i].max_rate > 0 &&
                (delta < 0 || s->ops[i].max_rate - s->ops[i].rate < delta))
                delta = s->ops[i].max_rate - s->ops[i].rate;
        if (delta < 0)
            delta = 0; /* an op with no resource and no cap: should not happen */
        for (i = 0; i < s->nops; i++)
            if (!frozen[i]) {
                s->ops[i].rate += delta;
                for (k = 0; k < s->ops[i].nuse; k++)
                    s->residual[s->ops[i].res[k]] -= delta * s->ops[i].use[k];
            }
        for (i = 0; i < s->nops; i++) {
            int sat = s->ops[i].max_rate > 0 && s->ops[i].rate >= s->ops[i].max_rate * (1 - 1e-12);
            if (frozen[i])
                continue;
            for (k = 0; k < s->ops[i].nuse && !sat; k++)
                sat = s->residual[s->ops[i].res[k]] <= 1e-9 * cp_res_cap(s->t, s->ops[i].res[k]) * 1e6;
            if (sat || delta == 0) {
                frozen[i] = 1;
                active--;
            }
        }
    }
    free(frozen);
    free(demand);
}

static int run(sim *s)
{
    double now = 0;
    int done = 0, guard = 0;
    cp_sim_result *r = s->r;
    r->first_ms = -1;
    admit(s, now);
    while (done < s->nops && guard++ < 10 * s->nops + 1000) {
        double next = -1;
        int i, k, fin;
        for (i = 0; i < s->nops; i++)
            if (s->ops[i].state == 1 && s->ops[i].flow_from <= now + 1e-12)
                s->ops[i].state = 2;
        share(s);
        r->events++;
        /* next event: a finish, a latency ending, a bucket becoming ready */
        for (i = 0; i < s->nops; i++) {
            op *o = &s->ops[i];
            double t = -1;
            if (o->state == 2 && o->rate > 0)
                t = now + o->left / o->rate;
            else if (o->state == 1)
                t = o->flow_from;
            if (t >= 0 && (next < 0 || t < next))
                next = t;
        }
        for (i = 0; i < CP_FAMS; i++)
            if (s->stream_next[i] < s->qlen[i]) {
                cpl_bucket bk;
                cpl_get_bucket(s->plan, (size_t)s->ops[s->queue[i][s->stream_next[i]]].bucket, &bk);
                if (bk.ready_ms > now && (next < 0 || bk.ready_ms < next))
                    next = bk.ready_ms;
            }
        if (next < 0)
            break; /* nothing can move: the plan cannot complete */
        for (i = 0; i < s->nops; i++) {
            op *o = &s->ops[i];
            if (o->state != 2)
                continue;
            if (r->first_ms < 0 || o->flow_from < r->first_ms)
                r->first_ms = o->flow_from;
            for (k = 0; k < o->nuse; k++)
                r->busy[o->res[k]] += o->rate * (next - now) * o->use[k];
            /* done when its own finish is this event (tested on the times, not
             * on the bytes left: at hundreds of ms a rounding of the clock
             * leaves a few ulps of bytes that would never drain) */
            fin = o->rate > 0 && now + o->left / o->rate <= next;
            o->left -= o->rate * (next - now);
            if (fin || o->left <= o->bytes * 1e-12 + 1e-9) {
                o->left = 0;
                o->state = 3;
                o->finish = next;
                done++;
            }
        }
        now = next;
        admit(s, now);
    }
    r->completed = done;
    r->last_ms = now;
    return done == s->nops ? CP_OK : CP_EINPUT;
}

void cp_sim_result_free(cp_sim_result *r)
{
    free(r->busy);
    free(r->cap);
    memset(r, 0, sizeof *r);
}

double cp_sim_util(const cp_sim_result *r, int res)
{
    double span = r->last_ms - r->first_ms;
    if (span <= 0 || r->cap[res] <= 0)
        return 0;
    return r->busy[res] / (r->cap[res] * 1e6 * span);
}

int cp_simulate(const cpl_plan *plan, const cp_topo *t, cp_sim_result *r, cp_err *e)
{
    sim s;
    int rc, i, f;
    memset(&s, 0, sizeof s);
    memset(r, 0, sizeof *r);
    s.plan = plan;
    s.t = t;
    s.r = r;
    r->nres = CP_NRES(t);
    r->busy = calloc((size_t)r->nres + 1, sizeof *r->busy);
    r->cap = calloc((size_t)r->nres + 1, sizeof *r->cap);
    s.residual = calloc((size_t)r->nres + 1, sizeof *s.residual);
    if (!r->busy || !r->cap || !s.residual) {
        free(s.residual);
        cp_sim_result_free(r);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    for (i = 0; i < r->nres; i++)
        r->cap[i] = cp_res_cap(t, i);
    if (cpl_gpu_count(plan) != t->ngpus) {
        free(s.residual);
        cp_sim_result_free(r);
        return cp_fail(e, CP_EINPUT, "the plan is for %d GPUs; %s has %d", cpl_gpu_count(plan),
                       t->name, t->ngpus);
    }
    rc = cp_coll_build(t, 1, &s.coll, e);
    if (rc == CP_OK) {
        rc = cp_families_build(t, &s.coll, &s.fams, e);
        if (rc == CP_OK && plan_uses_mpi(plan)) /* --gpu-collective mpi */
            rc = cp_families_use_mpi(&s.fams, e);
        if (rc == CP_OK) {
            rc = make_ops(&s, e);
            if (rc == CP_OK) {
                rc = run(&s);
                if (rc)
                    cp_fail(e, CP_EINPUT, "the replay stopped with %d of %d operations done: the "
                                          "plan cannot complete", r->completed, s.nops);
            }
            cp_families_free(&s.fams);
        }
        cp_coll_free(&s.coll);
    }
    if (rc == CP_OK) {
        r->nops = s.nops;
        r->compute_ms = cp_planfile_compute_ms(plan);
        r->tail_ms = cp_planfile_tail_ms(plan);
        r->iteration_ms = r->compute_ms;
        /* eq. Q9 with the replayed finishes: the next forward waits for each
         * bucket where it first needs it, and the tail the plan charges after
         * the synchronisation (DDP's copy back) comes on top */
        for (i = 0; i < s.nops; i++) {
            double late = s.ops[i].finish - cp_planfile_need_ms(plan, (size_t)s.ops[i].bucket) +
                          r->tail_ms;
            if (late > r->iteration_ms)
                r->iteration_ms = late;
        }
    }
    for (i = 0; i < s.nops; i++) {
        free(s.ops[i].res);
        free(s.ops[i].use);
    }
    for (f = 0; s.queue && f < CP_FAMS; f++)
        free(s.queue[f]);
    free(s.queue);
    free(s.qlen);
    free(s.stream_next);
    free(s.ops);
    free(s.residual);
    if (rc)
        cp_sim_result_free(r);
    return rc;
}
