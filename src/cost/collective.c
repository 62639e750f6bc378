/*
 * collective.c - the collective cost model (see collective.h and
 * docs/collectives.md, whose equation numbers the comments cite): the
 * builder that runs the algorithm families in order, and the answer to
 * "time of operation X with algorithm A at size S".
 *
 * Build order: the context (the window, its GPUs and NICs, the routes among
 * one host's GPUs, coll_ctx.c), then the families of the table below, one
 * file each: rings (search and packing of one host's rings; the ring
 * algorithm on one host and across hosts), trees, the ring of peers across
 * hosts with the hierarchical scheme, NVLS and CollNet, the parameter
 * server and the host copies.  A new algorithm is one new file with its
 * builder and one line in that table (docs/architecture.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/coll_internal.h"
#include "cost/collective.h"

static const char *const op_names[CP_OPS] = {"allreduce", "reducescatter", "allgather",
                                             "broadcast"};
static const char *const alg_names[CP_ALGS] = {"ring", "tree", "nvls", "hier", "ps", "collnet"};

const char *cp_coll_op_name(cp_coll_op op)
{
    return (unsigned)op < CP_OPS ? op_names[op] : "?";
}

const char *cp_coll_alg_name(cp_coll_alg alg)
{
    return (unsigned)alg < CP_ALGS ? alg_names[alg] : "?";
}

double cp_coll_busbw_factor(cp_coll_op op, int n)
{
    if (n <= 1)
        return 1;
    switch (op) {
    case CP_OP_ALLREDUCE: return 2.0 * (n - 1) / n;
    case CP_OP_REDUCESCATTER:
    case CP_OP_ALLGATHER: return (double)(n - 1) / n;
    default: return 1;
    }
}

/* ------------------------------------------------------------------------ */
/* Building                                                                  */

/* The algorithm families, in the order they are built: each fills its
 * algorithm's cp_alg_cost entries (or says why not) and may use what an
 * earlier one left in the context (coll_internal.h says what). */
static const struct coll_family {
    const char *name;
    int (*build)(coll_build *b);
} families[] = {
    {"ring", coll_ring_build},       /* rings.c: the rings every later family reuses */
    {"tree", coll_tree_build},       /* tree.c */
    {"peers", coll_peers_build},     /* hier.c: the ring of peers across hosts */
    {"nvls", coll_nvls_build},       /* nvls.c */
    {"hier", coll_hier_build},       /* hier.c */
    {"collnet", coll_collnet_build}, /* nvls.c */
    {"ps", coll_ps_build},           /* ps.c */
    {"host copies", coll_host_memory_build}, /* ps.c: cp_coll.d2h_gbs ... */
    {"ll128", coll_ll128_build},     /* ll128.c: where NCCL enables LL128, its costs */
};

/* One GPU in all: nothing to move. */
static void single_rank(cp_coll *c)
{
    int op, alg;
    for (op = 0; op < CP_OPS; op++)
        for (alg = 0; alg < CP_ALGS; alg++) {
            c->cost[op][alg].available = alg == CP_ALG_RING;
            c->cost[op][alg].nphases = 0;
            snprintf(c->cost[op][alg].why_not, sizeof c->cost[op][alg].why_not,
                     "one GPU: nothing to synchronise");
        }
}

/* The model of machine t, or, when nhosts > 0, of nhosts copies of the
 * host that t (a replica of at most two hosts) holds: the window is t
 * itself and only the step counts see the real number of hosts. */
static int coll_build_model(const cp_topo *t, int nhosts, int gpus_per_thread, cp_coll *c, cp_err *e)
{
    coll_build b;
    size_t f;
    int rc;
    memset(c, 0, sizeof *c);
    memset(&b, 0, sizeof b);
    c->topo = t;
    c->nranks = t->ngpus;
    c->nhosts = t->nhosts;
    c->launch_us = t->calib.launch_us * (gpus_per_thread > 0 ? gpus_per_thread : 1);
    b.c = c;
    b.e = e;
    b.H_given = nhosts;
    if ((rc = coll_make_window(&b, t)) || (rc = coll_collect_gpus(&b, t)))
        goto done;
    c->nranks = b.N;
    c->nhosts = b.H;
    b.load = calloc((size_t)2 * b.win->nlinks + 1, sizeof *b.load);
    if (!b.load) {
        rc = coll_oom(&b);
        goto done;
    }
    if (t->ngpus == 1) { /* nothing to synchronise; optimizer offload still copies */
        c->per_host = 1;
        single_rank(c);
        rc = coll_host_memory_build(&b);
        goto done;
    }
    c->per_host = b.n;
    if ((b.n >= 2 && (rc = coll_build_routes(&b))) || (rc = coll_find_near_nics(&b)))
        goto done;
    for (f = 0; rc == CP_OK && f < sizeof families / sizeof *families; f++)
        rc = families[f].build(&b);
done:
    if (rc == CP_OK) { /* after the host copies: it stages through d2h/h2d */
        cp_mpi_in in = {c->nranks, c->nhosts, c->per_host, c->d2h_gbs, c->h2d_gbs,
                        c->host_lat_us};
        rc = cp_mpi_build(b.win, &in, &c->mpi, e);
    }
    coll_build_free(&b);
    if (rc == CP_OK) {
        c->window = b.win_owned;
        b.win_owned = NULL;
    }
    cp_topo_free(b.win_owned);
    if (rc)
        cp_coll_free(c);
    return rc;
}

int cp_coll_build(const cp_topo *t, int gpus_per_thread, cp_coll *c, cp_err *e)
{
    return coll_build_model(t, 0, gpus_per_thread, c, e);
}

int cp_coll_build_hosts(const cp_topo *window, int nhosts, int gpus_per_thread, cp_coll *c,
                        cp_err *e)
{
    if (window->nhosts > 2 || (window->nhosts == 2 && nhosts < 2) || nhosts < window->nhosts)
        return cp_fail(e, CP_EINTERNAL, "cp_coll_build_hosts: a window of %d hosts cannot "
                       "stand for %d", window->nhosts, nhosts);
    return coll_build_model(window, nhosts, gpus_per_thread, c, e);
}

void cp_coll_free(cp_coll *c)
{
    if (!c)
        return;
    cp_topo_free(c->window);
    c->window = NULL;
    free(c->ring_use);
    c->ring_use = NULL;
}

/* ------------------------------------------------------------------------ */
/* Time of an operation                                                      */

const char *cp_proto_name(cp_proto p)
{
    return p == CP_PROTO_LL ? "LL" : p == CP_PROTO_LL128 ? "LL128" : "Simple";
}

/* Time in us to move `factor` bytes per byte of a `bytes` buffer at bw
 * GB/s under protocol p (LL carries half its bytes as flags, LL128 8 of
 * every 128); a phase that moves nothing (one GPU a host) costs nothing. */
static double move_us(double factor, double bw, cp_proto p, double bytes)
{
    double eff = p == CP_PROTO_LL ? CP_LL_EFF : p == CP_PROTO_LL128 ? CP_LL128_EFF : 1;
    return factor > 0 ? factor * bytes / (eff * bw * 1e3) : 0; /* GB/s -> bytes/us */
}

/* A phase's latency under protocol p: Simple and LL128 add their costs. */
static double fixed_us(const cp_phase *ph, cp_proto p)
{
    return ph->lat_us + (p == CP_PROTO_SIMPLE ? ph->simple_us
                         : p == CP_PROTO_LL128 ? ph->ll128_us : 0);
}

/* The fastest of a call's Simple, LL and LL128 times (negative: that
 * protocol cannot run); ties go to Simple, then LL: uncalibrated, LL never
 * wins.  Its protocol to *proto. */
static double fastest(double simple, double ll, double ll128, cp_proto *proto)
{
    cp_proto p = CP_PROTO_SIMPLE;
    double t = simple;
    if (ll >= 0 && ll < t) {
        t = ll;
        p = CP_PROTO_LL;
    }
    if (ll128 >= 0 && ll128 < t) {
        t = ll128;
        p = CP_PROTO_LL128;
    }
    if (proto)
        *proto = p;
    return t;
}

double cp_coll_proto_time_us(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, cp_proto p,
                             double bytes)
{
    const cp_alg_cost *a = &c->cost[op][alg];
    double t = c->launch_us, net = 0;
    int k;
    if (!a->available || (p == CP_PROTO_LL && !a->ll) ||
        (p == CP_PROTO_LL128 && (!a->ll128 || c->no_ll128)))
        return -1;
    for (k = 0; k < a->nphases; k++) {
        const cp_phase *ph = &a->phase[k];
        double x = move_us(ph->factor, ph->bw_gbs, p, bytes);
        t += fixed_us(ph, p);
        if (!a->pipelined)
            t += x;
        else if (k == 1)
            net = x;
    }
    if (a->pipelined) { /* the hosts' phases together, overlapped by the network's */
        double host = move_us(a->pipe_factor, a->pipe_bw, p, bytes);
        t += host > net ? host : net;
    }
    return t;
}

/* A phase run alone as one call on `bytes` under protocol p (LL only when
 * `ll`, LL128 when `ll128`); negative when it cannot run p. */
static double phase_alone_us(const cp_coll *c, const cp_phase *ph, int ll, int ll128,
                             cp_proto p, double bytes)
{
    if ((p == CP_PROTO_LL && !ll) || (p == CP_PROTO_LL128 && (!ll128 || c->no_ll128)))
        return -1;
    return c->launch_us + fixed_us(ph, p) + move_us(ph->factor, ph->bw_gbs, p, bytes);
}

/* The faster protocol for a phase alone; negative when it cannot run. */
static double phase_best_us(const cp_coll *c, const cp_phase *ph, int ll, int ll128,
                            double bytes, cp_proto *proto)
{
    return fastest(phase_alone_us(c, ph, ll, ll128, CP_PROTO_SIMPLE, bytes),
                   phase_alone_us(c, ph, ll, ll128, CP_PROTO_LL, bytes),
                   phase_alone_us(c, ph, ll, ll128, CP_PROTO_LL128, bytes), proto);
}

double cp_coll_phase_us(const cp_coll *c, cp_coll_alg alg, int k, double bytes,
                        cp_proto *proto)
{
    const cp_alg_cost *a = &c->cost[CP_OP_ALLREDUCE][alg];
    if (!a->available || k < 0 || k >= a->nphases)
        return -1;
    return phase_best_us(c, &a->phase[k], a->ll, a->ll128, bytes, proto);
}

double cp_coll_peers_us(const cp_coll *c, double bytes, int tree_ok, cp_proto *proto,
                        int *tree)
{
    const cp_alg_cost *h = &c->cost[CP_OP_ALLREDUCE][CP_ALG_HIER];
    cp_proto pr = CP_PROTO_SIMPLE, pt;
    double r, t;
    if (tree)
        *tree = 0;
    if (!h->available || h->nphases < 2)
        return -1;
    r = phase_best_us(c, &h->phase[1], h->ll, h->ll128, bytes, &pr);
    if (tree_ok && c->peers_tree.bw_gbs > 0 &&
        (t = phase_best_us(c, &c->peers_tree, 1, h->ll128, bytes, &pt)) < r) {
        r = t;
        pr = pt;
        if (tree)
            *tree = 1;
    }
    if (proto)
        *proto = pr;
    return r;
}

/* The three protocols of a call whose phases run one after another, in one
 * pass: each is launch + the latencies + the Simple-rate transfer time over
 * its payload share (the per-call cost predict pays for every bucket: three
 * separate passes cost a quarter of its speed, docs/performance.md). */
static double sequential_fastest(const cp_coll *c, const cp_alg_cost *a, double bytes,
                                 cp_proto *proto)
{
    double lat = c->launch_us, simple = 0, ll128 = 0, x = 0;
    int k;
    for (k = 0; k < a->nphases; k++) {
        const cp_phase *ph = &a->phase[k];
        lat += ph->lat_us;
        simple += ph->simple_us;
        ll128 += ph->ll128_us;
        x += move_us(ph->factor, ph->bw_gbs, CP_PROTO_SIMPLE, bytes);
    }
    return fastest(lat + simple + x, a->ll ? lat + x / CP_LL_EFF : -1,
                   a->ll128 && !c->no_ll128 ? lat + ll128 + x / CP_LL128_EFF : -1, proto);
}

double cp_coll_time_proto_us(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, double bytes,
                             cp_proto *proto)
{
    const cp_alg_cost *a = &c->cost[op][alg];
    if (a->available && !a->pipelined)
        return sequential_fastest(c, a, bytes, proto);
    return fastest(cp_coll_proto_time_us(c, op, alg, CP_PROTO_SIMPLE, bytes),
                   cp_coll_proto_time_us(c, op, alg, CP_PROTO_LL, bytes),
                   cp_coll_proto_time_us(c, op, alg, CP_PROTO_LL128, bytes), proto);
}

double cp_coll_time_us(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, double bytes)
{
    return cp_coll_time_proto_us(c, op, alg, bytes, NULL);
}

cp_coll_alg cp_coll_best(const cp_coll *c, cp_coll_op op, double bytes, double *us)
{
    return cp_coll_best_proto(c, op, bytes, -1, us);
}

cp_coll_alg cp_coll_best_proto(const cp_coll *c, cp_coll_op op, double bytes, int proto,
                               double *us)
{
    int alg;
    cp_coll_alg best = CP_ALG_RING;
    double bt = -1;
    for (alg = 0; alg < CP_ALGS; alg++) {
        double x;
        if (alg == CP_ALG_HIER || alg == CP_ALG_PS || (alg == CP_ALG_TREE && c->nhosts == 1))
            continue; /* not NCCL's (hier, ps); no NCCL tree inside a node */
        x = proto < 0 ? cp_coll_time_us(c, op, (cp_coll_alg)alg, bytes)
                      : cp_coll_proto_time_us(c, op, (cp_coll_alg)alg, (cp_proto)proto, bytes);
        if (x >= 0 && (bt < 0 || x < bt)) {
            bt = x;
            best = (cp_coll_alg)alg;
        }
    }
    if (us)
        *us = bt;
    return best;
}
