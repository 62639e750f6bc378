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
#include "cost/nccl_rules.h"

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
    {"nccl sizing", coll_nccl_size_build}, /* nccl_size.c: channels per size, LL's rate */
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

/* A builder that leaves an algorithm unavailable without a word would make
 * "strategy X is not available on T: " with nothing after the colon; the
 * builders give their reasons, and this is the net under any that does not
 * (tests/cli/trust.sh, item 7, checks that no shipped machine reaches it). */
static void missing_reasons(cp_coll *c)
{
    int op, alg;
    for (op = 0; op < CP_OPS; op++)
        for (alg = 0; alg < CP_ALGS; alg++)
            if (!c->cost[op][alg].available && !c->cost[op][alg].why_not[0])
                snprintf(c->cost[op][alg].why_not, sizeof c->cost[op][alg].why_not,
                         "the %s model does not cover this machine (no reason given)",
                         cp_coll_alg_name((cp_coll_alg)alg));
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
    c->launch_us = t->calib.launch_us;
    c->issue_us = t->calib.launch_us * (gpus_per_thread > 0 ? gpus_per_thread : 1);
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
    if (rc == CP_OK) /* every algorithm that cannot run says why (issue 24, item 7) */
        missing_reasons(c);
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

/* A phase's bandwidth under protocol p with every channel: LL's own
 * (ll_bw_gbs: half the payload, NCCL's cap), LL128 8 bytes of every 128,
 * Simple the packed rate. */
static double proto_bw(const cp_phase *ph, cp_proto p)
{
    return p == CP_PROTO_LL ? ph->ll_bw_gbs : p == CP_PROTO_LL128 ? CP_LL128_EFF * ph->bw_gbs
                                                                   : ph->bw_gbs;
}

/* Channels NCCL runs a phase on for a call of `bytes` under p, as a share
 * of all of them (nccl_rules.h: it drops channels that would get too few
 * bytes, and each channel carries its share of the packed rate); 1 where
 * NCCL sizes nothing. */
static double chan_share(const cp_phase *ph, cp_proto p, double bytes)
{
    if (ph->nc_max <= 0)
        return 1;
    return (double)cp_nccl_nc(bytes, ph->chan_bytes[p], ph->nc_max) / ph->nc_max;
}

/* Time in us to move a phase's `factor` bytes per byte of a `bytes` buffer
 * under protocol p: on every channel (`actual` 0: NCCL's estimate) or on
 * those NCCL runs at this size; a phase that moves nothing (one GPU a
 * host) costs nothing. */
static double move_us(const cp_phase *ph, cp_proto p, double bytes, int actual)
{
    double bw = proto_bw(ph, p), share;
    if (!(ph->factor > 0))
        return 0;
    if (actual && ph->nc_max > 0) {
        share = chan_share(ph, p, bytes);
        if (p != CP_PROTO_LL || !(ph->ll_raw_gbs > 0)) {
            bw *= share;
        } else { /* LL: the links' share, NCCL's total cap, each channel's own limit */
            bw = ph->ll_raw_gbs * share;
            if (ph->ll_cap_gbs > 0 && bw > ph->ll_cap_gbs)
                bw = ph->ll_cap_gbs;
            if (ph->ll_ch_gbs > 0 && bw > share * ph->nc_max * ph->ll_ch_gbs)
                bw = share * ph->nc_max * ph->ll_ch_gbs;
        }
    }
    return ph->factor * bytes / (bw * 1e3); /* GB/s -> bytes/us */
}

/* LL has no per-step handshake: a sender only waits for credit once it has
 * filled its channel's NCCL_STEPS slots of LL buffer (CP_NCCL_LL_STEP_DATA
 * of data each).  A call whose channel share exceeds them pays that wait,
 * the credit coming back around the ring and the data going forward again:
 * twice the phase's latency (docs/collectives.md, "Channels per size"). */
static double stall_us(const cp_phase *ph, cp_proto p, double bytes)
{
    int nc;
    if (p != CP_PROTO_LL || ph->nc_max <= 0)
        return 0;
    nc = cp_nccl_nc(bytes, ph->chan_bytes[p], ph->nc_max);
    return bytes / nc > CP_NCCL_STEPS * CP_NCCL_LL_STEP_DATA ? 2 * ph->lat_us : 0;
}

/* A phase's latency under protocol p: Simple and LL128 add their costs. */
static double fixed_us(const cp_phase *ph, cp_proto p)
{
    return ph->lat_us + (p == CP_PROTO_SIMPLE ? ph->simple_us
                         : p == CP_PROTO_LL128 ? ph->ll128_us : 0);
}

/* A call's time as measured back to back: never under what one thread
 * takes to issue it (nccl-tests -g: a launch per GPU). */
static double issued(const cp_coll *c, double us)
{
    return us < c->issue_us ? c->issue_us : us;
}

/* 1 when algorithm cost a may run protocol p. */
static int can_run(const cp_coll *c, const cp_alg_cost *a, cp_proto p)
{
    return a->available && !(p == CP_PROTO_LL && !a->ll) &&
           !(p == CP_PROTO_LL128 && (!a->ll128 || c->no_ll128));
}

/* Time of op/alg under p: NCCL's estimate (`actual` 0) or the model's
 * prediction (1: the channels of this size, LL's stall, the issue bound). */
static double proto_us(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, cp_proto p,
                       double bytes, int actual)
{
    const cp_alg_cost *a = &c->cost[op][alg];
    double t = c->launch_us, net = 0;
    int k;
    if (!can_run(c, a, p))
        return -1;
    for (k = 0; k < a->nphases; k++) {
        const cp_phase *ph = &a->phase[k];
        double x = move_us(ph, p, bytes, actual);
        t += fixed_us(ph, p) + (actual ? stall_us(ph, p, bytes) : 0);
        if (!a->pipelined)
            t += x;
        else if (k == 1)
            net = x;
    }
    if (a->pipelined && a->pipe_factor > 0) { /* the hosts' phases, overlapped by the network's */
        double host = a->pipe_factor * bytes / (a->pipe_bw * 1e3);
        t += host > net ? host : net;
    } else if (a->pipelined) {
        t += net;
    }
    return actual ? issued(c, t) : t;
}

double cp_coll_proto_time_us(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, cp_proto p,
                             double bytes)
{
    return proto_us(c, op, alg, p, bytes, 1);
}

double cp_coll_proto_est_us(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, cp_proto p,
                            double bytes)
{
    return proto_us(c, op, alg, p, bytes, 0);
}

/* The protocol NCCL's tuner picks among Simple, LL and LL128 from their
 * estimates (negative: that protocol cannot run); ties go to Simple, then
 * LL: uncalibrated, LL never wins.  Its estimate to *est. */
static cp_proto pick(double simple, double ll, double ll128, double *est)
{
    cp_proto p = CP_PROTO_SIMPLE;
    double t = simple;
    if (ll >= 0 && (t < 0 || ll < t)) {
        t = ll;
        p = CP_PROTO_LL;
    }
    if (ll128 >= 0 && (t < 0 || ll128 < t)) {
        t = ll128;
        p = CP_PROTO_LL128;
    }
    if (est)
        *est = t;
    return p;
}

/* A phase run alone as one call on `bytes` under protocol p (LL only when
 * `ll`, LL128 when `ll128`); negative when it cannot run p. */
static double phase_alone_us(const cp_coll *c, const cp_phase *ph, int ll, int ll128,
                             cp_proto p, double bytes, int actual)
{
    double t;
    if ((p == CP_PROTO_LL && !ll) || (p == CP_PROTO_LL128 && (!ll128 || c->no_ll128)))
        return -1;
    t = c->launch_us + fixed_us(ph, p) + move_us(ph, p, bytes, actual);
    return actual ? issued(c, t + stall_us(ph, p, bytes)) : t;
}

/* The protocol NCCL picks for a phase alone, and its predicted time;
 * negative when it cannot run; *est its estimate. */
static double phase_best_us(const cp_coll *c, const cp_phase *ph, int ll, int ll128,
                            double bytes, cp_proto *proto, double *est)
{
    cp_proto p = pick(phase_alone_us(c, ph, ll, ll128, CP_PROTO_SIMPLE, bytes, 0),
                      phase_alone_us(c, ph, ll, ll128, CP_PROTO_LL, bytes, 0),
                      phase_alone_us(c, ph, ll, ll128, CP_PROTO_LL128, bytes, 0), est);
    if (proto)
        *proto = p;
    return phase_alone_us(c, ph, ll, ll128, p, bytes, 1);
}

double cp_coll_phase_us(const cp_coll *c, cp_coll_alg alg, int k, double bytes,
                        cp_proto *proto)
{
    const cp_alg_cost *a = &c->cost[CP_OP_ALLREDUCE][alg];
    if (!a->available || k < 0 || k >= a->nphases)
        return -1;
    return phase_best_us(c, &a->phase[k], a->ll, a->ll128, bytes, proto, NULL);
}

double cp_coll_peers_us(const cp_coll *c, double bytes, int tree_ok, cp_proto *proto,
                        int *tree)
{
    const cp_alg_cost *h = &c->cost[CP_OP_ALLREDUCE][CP_ALG_HIER];
    cp_proto pr = CP_PROTO_SIMPLE, pt;
    double r, t, er = 0, et = 0;
    if (tree)
        *tree = 0;
    if (!h->available || h->nphases < 2)
        return -1;
    r = phase_best_us(c, &h->phase[1], h->ll, h->ll128, bytes, &pr, &er);
    if (tree_ok && c->peers_tree.bw_gbs > 0 &&
        (t = phase_best_us(c, &c->peers_tree, 1, h->ll128, bytes, &pt, &et)) >= 0 && et < er) {
        r = t;
        pr = pt;
        if (tree)
            *tree = 1;
    }
    if (proto)
        *proto = pr;
    return r;
}

/* The protocol NCCL picks for op/alg at `bytes`, its estimate to *est. */
static cp_proto alg_pick(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, double bytes,
                         double *est)
{
    return pick(proto_us(c, op, alg, CP_PROTO_SIMPLE, bytes, 0),
                proto_us(c, op, alg, CP_PROTO_LL, bytes, 0),
                proto_us(c, op, alg, CP_PROTO_LL128, bytes, 0), est);
}

double cp_coll_time_proto_us(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, double bytes,
                             cp_proto *proto)
{
    cp_proto p;
    if (!c->cost[op][alg].available)
        return -1;
    p = alg_pick(c, op, alg, bytes, NULL);
    if (proto)
        *proto = p;
    return proto_us(c, op, alg, p, bytes, 1);
}

double cp_coll_time_us(const cp_coll *c, cp_coll_op op, cp_coll_alg alg, double bytes)
{
    return cp_coll_time_proto_us(c, op, alg, bytes, NULL);
}

cp_coll_alg cp_coll_best(const cp_coll *c, cp_coll_op op, double bytes, double *us)
{
    return cp_coll_best_proto(c, op, bytes, -1, us);
}

/* NCCL's own choice between the ring and the tree for an AllReduce across
 * hosts (cp_nccl_tuner_us over the protocols each may run here): the one
 * it would not run, or -1 when there is no such choice to make. */
static int nccl_loser(const cp_coll *c, cp_coll_op op, double bytes, int proto)
{
    double best[2] = {-1, -1};
    int alg, p;
    if (op != CP_OP_ALLREDUCE || c->nhosts < 2 || !c->cost[op][CP_ALG_RING].available ||
        !c->cost[op][CP_ALG_TREE].available || c->nccl.gpus < 1)
        return -1;
    for (alg = 0; alg < 2; alg++) {
        const cp_alg_cost *a = &c->cost[op][alg == 0 ? CP_ALG_TREE : CP_ALG_RING];
        for (p = 0; p < 3; p++) {
            double x;
            if ((proto >= 0 && p != proto) || !can_run(c, a, (cp_proto)p))
                continue;
            x = cp_nccl_tuner_us(&c->nccl, alg, p, bytes);
            if (best[alg] < 0 || x < best[alg])
                best[alg] = x;
        }
    }
    if (best[0] < 0 || best[1] < 0)
        return -1;
    return best[0] < best[1] ? CP_ALG_RING : CP_ALG_TREE;
}

cp_coll_alg cp_coll_best_proto(const cp_coll *c, cp_coll_op op, double bytes, int proto,
                               double *us)
{
    int alg, loser = nccl_loser(c, op, bytes, proto);
    cp_coll_alg best = CP_ALG_RING;
    double be = -1;
    cp_proto bp = CP_PROTO_SIMPLE;
    for (alg = 0; alg < CP_ALGS; alg++) {
        double x = -1;
        cp_proto p = proto < 0 ? CP_PROTO_SIMPLE : (cp_proto)proto;
        if (alg == CP_ALG_HIER || alg == CP_ALG_PS || (alg == CP_ALG_TREE && c->nhosts == 1) ||
            alg == loser)
            continue; /* not NCCL's (hier, ps); no NCCL tree inside a node; NCCL's tuner
                       * prefers the other of ring and tree */
        if (!c->cost[op][alg].available)
            continue;
        if (proto < 0)
            p = alg_pick(c, op, (cp_coll_alg)alg, bytes, &x);
        else
            x = proto_us(c, op, (cp_coll_alg)alg, p, bytes, 0);
        if (x >= 0 && (be < 0 || x < be)) {
            be = x;
            best = (cp_coll_alg)alg;
            bp = p;
        }
    }
    if (us)
        *us = be < 0 ? -1 : proto_us(c, op, best, bp, bytes, 1);
    return best;
}
