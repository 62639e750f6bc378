/*
 * pool_table.c - `coarse-plan collective` for the CXL pool (-a pool) and for
 * the operations beyond NCCL's four (-o reduce|gather|scatter|alltoall):
 * the nccl-tests table, its JSON, and --explain naming the resource that
 * binds the pool at each size and the network's time beside it.
 * cmd_collective.c parses the options and hands them over here.  Also what
 * `calibrate -a pool` prints and writes (cmd_calibrate.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/pool_table.h"
#include "cli/summary.h"
#include "core/units.h"
#include "cost/p2p.h"
#include "load/load.h"

/* The machine's models: the network's (collective + p2p) and the pool's
 * when the topology has one. */
typedef struct models {
    cp_coll c;
    cp_p2p p2p;
    cp_pool pool;
    int have_pool;
} models;

/* One row's time and what ran it. */
static double row(models *m, const cli_xopts *o, double bytes, const char **alg,
                  cp_pool_why *why)
{
    if (o->pool) {
        double us = cp_pool_time_us(&m->pool, (cp_xop)o->op, bytes, why);
        *alg = why->rsag ? "pool-rsag" : "pool";
        return us;
    }
    if (o->ring) {
        *alg = "ring";
        return cp_coll_time_us(&m->c, CP_OP_BROADCAST, CP_ALG_RING, bytes);
    }
    return cp_net_time_us(&m->c, &m->p2p, (cp_xop)o->op, bytes, alg);
}

static const char *redop(int op)
{
    return op == CP_XOP_ALLREDUCE || op == CP_XOP_REDUCESCATTER || op == CP_XOP_REDUCE ? "sum"
                                                                                      : "none";
}

static void print_table(models *m, const cli_xopts *o, const cp_topo *t)
{
    int64_t s;
    printf("# coarse-plan collective: %s, %d GPU%s (%d host%s x %d), %s, algorithm %s\n",
           t->name, m->c.nranks, cp_s(m->c.nranks), m->c.nhosts, cp_s(m->c.nhosts),
           m->c.per_host,
           cp_xop_name((cp_xop)o->op), o->pool ? "pool" : o->ring ? "ring" : "auto");
    cli_calib_note(t, "# ", stdout);
    printf("#\n#%12s  %12s  %6s  %6s  %10s  %7s  %7s  %-9s  %s\n", "size", "count", "type",
           "redop", "time", "algbw", "busbw", "algorithm", o->pool ? "binding" : "protocol");
    printf("#%12s  %12s  %6s  %6s  %10s  %7s  %7s\n", "(B)", "(elements)", "", "", "(us)",
           "(GB/s)", "(GB/s)");
    for (s = o->minb; s <= o->maxb; s *= o->factor) {
        const char *alg;
        cp_pool_why w;
        double us = row(m, o, (double)s, &alg, &w);
        double algbw = us > 0 ? (double)s / (us * 1e3) : 0;
        printf(" %12lld  %12lld  %6s  %6s  %10.2f  %7.2f  %7.2f  %-9s  %s\n", (long long)s,
               (long long)(s / o->typesize), o->typesize == 4 ? "float" : "half", redop(o->op),
               us, algbw, algbw * cp_xop_busbw_factor((cp_xop)o->op, m->c.nranks), alg,
               o->pool ? cp_pool_res_name(w.bind) : "Simple");
        if (s > INT64_MAX / o->factor)
            break;
    }
}

static int print_json(models *m, const cli_xopts *o, const cp_topo *t)
{
    json_t *root = json_object(), *rows = json_array();
    int64_t s;
    json_object_set_new(root, "topology", json_string(t->name));
    json_object_set_new(root, "operation", json_string(cp_xop_name((cp_xop)o->op)));
    json_object_set_new(root, "gpus", json_integer(m->c.nranks));
    json_object_set_new(root, "hosts", json_integer(m->c.nhosts));
    for (s = o->minb; s <= o->maxb; s *= o->factor) {
        const char *alg;
        cp_pool_why w;
        double us = row(m, o, (double)s, &alg, &w);
        double algbw = us > 0 ? (double)s / (us * 1e3) : 0;
        json_t *r = json_object();
        json_object_set_new(r, "bytes", json_integer(s));
        json_object_set_new(r, "count", json_integer(s / o->typesize));
        json_object_set_new(r, "time_us", cli_real(us, 3));
        json_object_set_new(r, "algbw_gbs", cli_real(algbw, 4));
        json_object_set_new(r, "busbw_gbs",
                            cli_real(algbw * cp_xop_busbw_factor((cp_xop)o->op, m->c.nranks), 4));
        json_object_set_new(r, "algorithm", json_string(alg));
        if (o->pool)
            json_object_set_new(r, "binding", json_string(cp_pool_res_name(w.bind)));
        json_array_append_new(rows, r);
        if (s > INT64_MAX / o->factor)
            break;
    }
    json_object_set_new(root, "rows", rows);
    return cli_dump_json(root, stdout);
}

/* "gpu0", "host link cpu0 -> cxlsw, 30.0 GB/s effective", "mem0": where a
 * resource binds. */
static void where(const cp_topo *t, cp_pool_res k, int at, char *buf, size_t cap)
{
    if (at < 0) {
        snprintf(buf, cap, "-");
    } else if (k == CP_PRES_LINK) {
        const cp_link *l = &t->links[at >> 1];
        snprintf(buf, cap, "%s %s -> %s, %.1f GB/s effective", cp_pool_arc_role(t, at),
                 t->nodes[cp_arc_tail(t, at)].id, t->nodes[cp_arc_head(t, at)].id,
                 l->gbs[at & 1] * t->calib.kind[l->kind].bw_eff);
    } else {
        snprintf(buf, cap, "%s", t->nodes[at].id);
    }
}

void cli_pool_copy_limit(const cp_pool *p, int write, char *buf, size_t cap)
{
    const cp_topo *t = p->topo;
    double gbs;
    int at = cp_pool_copy_limit(p, 0, 0, write, &gbs);
    if (at >= 0)
        snprintf(buf, cap, "%.1f GB/s (%s %s -> %s)", gbs, cp_pool_arc_role(t, at),
                 t->nodes[cp_arc_tail(t, at)].id, t->nodes[cp_arc_head(t, at)].id);
    else if (at == -1)
        snprintf(buf, cap, "%.1f GB/s (the copy engine)", gbs);
    else
        snprintf(buf, cap, "%.1f GB/s (%s's memory)", gbs, t->nodes[p->dev[0]].id);
}

/* The binding resource as one phrase: "link (host link h0/cpu0 -> cxlsw)". */
static void bind_name(const cp_topo *t, const cp_pool_why *w, char *buf, size_t cap)
{
    int at = w->res_where[w->bind];
    if (w->bind == CP_PRES_LINK && at >= 0)
        snprintf(buf, cap, "%s %s -> %s", cp_pool_arc_role(t, at),
                 t->nodes[cp_arc_tail(t, at)].id, t->nodes[cp_arc_head(t, at)].id);
    else
        snprintf(buf, cap, "%s%s%s%s", cp_pool_res_name(w->bind), at >= 0 ? " (" : "",
                 at >= 0 ? t->nodes[at].id : "", at >= 0 ? ")" : "");
}

/* One call's terms: launch, fill, steps, and every resource it uses. */
static void explain_call(const cp_topo *t, const cp_pool_call *c, const char *label)
{
    int k;
    char buf[160];
    printf("    %s%s: %.2f us = launch %.2f + fill %.2f + %d steps x %.2f (%s)\n", label,
           cp_xop_name((cp_xop)c->op), c->us, c->launch_us, c->fill_us, c->steps, c->step_us,
           cp_pool_res_name(c->bind));
    for (k = 0; k < CP_PRES_KINDS; k++) {
        if (c->res_where[k] < 0)
            continue;
        where(t, (cp_pool_res)k, c->res_where[k], buf, sizeof buf);
        printf("      %-24s %10.2f us  (%s)%s\n", cp_pool_res_name((cp_pool_res)k), c->res_us[k],
               buf, c->bind == (cp_pool_res)k ? "  <- binds" : "");
    }
    printf("      busiest copy-engine stream: %lld cop%s of %.0f B, %.2f us fixed cost each",
           c->copies, c->copies == 1 ? "y" : "ies", c->copy_bytes, c->copy_us);
    if (c->fanout > 1)
        printf("; %d readers pull each chunk from its one device at once", c->fanout);
    printf("\n");
}

static void explain_size(models *m, const cli_xopts *o, const cp_topo *t, double bytes)
{
    cp_pool_why w;
    const char *alg;
    double us = cp_pool_time_us(&m->pool, (cp_xop)o->op, bytes, &w);
    double net = cp_net_time_us(&m->c, &m->p2p, (cp_xop)o->op, bytes, &alg);
    int i;
    printf("  at %.0f B: %.2f us", bytes, us);
    if (w.intra_us > 0)
        printf(" = in-host phases %.2f (hierarchical, eq. PL7) + pool %.2f", w.intra_us,
               w.pool_us);
    printf("\n");
    if (o->op == CP_XOP_ALLREDUCE && w.ncalls > 0)
        printf("    pool allreduce: every rank pulls every contribution %.2f us; reduce-scatter "
               "+ all-gather %.2f us: the %s is taken\n", w.direct_us, w.rsag_us,
               w.rsag ? "second" : "first");
    for (i = 0; i < w.ncalls; i++)
        explain_call(t, &w.call[i], w.ncalls > 1 ? (i ? "then " : "first ") : "");
    if (net > 0)
        printf("    network (%s): %.2f us; the pool is %.2fx %s\n", alg, net,
               us < net ? net / us : us / net, us < net ? "faster" : "slower");
}

/* Every size from -b to -e: the pool's time, its binding resource, the
 * network's time and the speed-up. */
static void explain_sizes(models *m, const cli_xopts *o, const cp_topo *t)
{
    int64_t s;
    printf("  %12s %12s  %-9s  %-40s %12s  %-9s %8s\n", "size (B)", "pool us", "form",
           "binding resource", "network us", "network", "speed-up");
    for (s = o->minb; s <= o->maxb; s *= o->factor) {
        cp_pool_why w;
        const char *alg;
        char buf[160];
        double us = cp_pool_time_us(&m->pool, (cp_xop)o->op, (double)s, &w);
        double net = cp_net_time_us(&m->c, &m->p2p, (cp_xop)o->op, (double)s, &alg);
        bind_name(t, &w, buf, sizeof buf);
        printf("  %12lld %12.2f  %-9s  %-40s %12.2f  %-9s %8.3f\n", (long long)s, us,
               o->op != CP_XOP_ALLREDUCE ? "-" : w.rsag ? "rs+ag" : "direct", buf, net,
               net > 0 ? alg : "-", net > 0 && us > 0 ? net / us : 0);
        if (s > INT64_MAX / o->factor)
            break;
    }
}

static void print_explain(models *m, const cli_xopts *o, const cp_topo *t)
{
    const cp_pool *p = &m->pool;
    printf("%s through the pool of %s: %d GPU%s (%d host%s), %d device%s, reduction on the %s\n",
           cp_xop_name((cp_xop)o->op), t->name, p->nranks, cp_s(p->nranks), p->nhosts,
           p->nhosts == 1 ? "" : "s", p->ndev, p->ndev == 1 ? "" : "s",
           p->device_reduces ? "devices" : "GPUs");
    char wr[160], rd[160];
    cli_pool_copy_limit(p, 1, wr, sizeof wr);
    cli_pool_copy_limit(p, 0, rd, sizeof rd);
    printf("  copy engines %.1f GB/s publishing, %.1f pulling (%s); the pull keeps %.2f of its "
           "rate while publishing runs\n",
           p->copy_gbs[0], p->copy_read_gbs[0], t->nodes[t->gpus[0]].id, p->duplex);
    printf("  one copy to one device: %s publishing, %s pulling\n", wr, rd);
    printf("  %d chunks a piece; a copy's fixed cost %.2f us publishing, %.2f pulling", p->chunks,
           p->chunk_us, p->chunk_read_us);
    if (p->small_bytes > 0)
        printf(", %.0f us under %.0f B", p->small_us, p->small_bytes);
    printf("; doorbell %.2f us; slowest route %.2f us\n", p->doorbell_us, p->path_lat_us);
    explain_sizes(m, o, t);
    explain_size(m, o, t, (double)o->minb);
    if (o->maxb != o->minb)
        explain_size(m, o, t, (double)o->maxb);
}

int cli_xcollective(const cli_xopts *o)
{
    models m;
    cp_topo *t;
    cp_err e;
    int rc;
    memset(&m, 0, sizeof m);
    cp_err_clear(&e);
    rc = cp_topo_load_machine(o->topo, o->gpus, o->hosts, &t, &e);
    if (rc)
        return cli_report(rc, &e);
    rc = cli_blame(cp_coll_build(t, o->gpt, &m.c, &e), &e, o->topo);
    if (rc == CP_OK)
        rc = cp_p2p_build(t, &m.p2p, &e);
    if (rc == CP_OK && o->pool)
        rc = cli_blame(cp_pool_build(t, &m.c, &m.pool, &e), &e, o->topo);
    m.have_pool = rc == CP_OK && o->pool;
    if (rc == CP_OK && o->explain && !o->pool)
        rc = cp_fail(&e, CP_EINPUT, "--explain with -o %s explains -a pool",
                     cp_xop_name((cp_xop)o->op));
    if (rc == CP_OK) {
        if (o->json)
            rc = print_json(&m, o, t) ? cp_fail(&e, CP_EINTERNAL, "writing output failed")
                                      : CP_OK;
        else if (o->explain)
            print_explain(&m, o, t);
        else
            print_table(&m, o, t);
    }
    if (m.have_pool)
        cp_pool_free(&m.pool);
    cp_p2p_free(&m.p2p);
    cp_coll_free(&m.c);
    cp_topo_free(t);
    return cli_report(rc, &e);
}

void cli_pool_calib_json(json_t *obj, const cp_calib_pool *p)
{
    json_t *sub;
    if (p->copy_gbs <= 0 && p->copy_read_gbs <= 0 && p->duplex <= 0 && p->chunks <= 0 &&
        p->chunk_us < 0 && p->chunk_read_us < 0 && p->small_copy_bytes <= 0)
        return;
    sub = json_object();
    if (p->copy_gbs > 0)
        json_object_set_new(sub, "copy_gbs", cli_real(p->copy_gbs, 6));
    if (p->copy_read_gbs > 0)
        json_object_set_new(sub, "copy_read_gbs", cli_real(p->copy_read_gbs, 6));
    if (p->duplex > 0)
        json_object_set_new(sub, "duplex", cli_real(p->duplex, 6));
    if (p->chunks > 0)
        json_object_set_new(sub, "chunks", json_integer(p->chunks));
    if (p->chunk_us >= 0)
        json_object_set_new(sub, "chunk_us", cli_real(p->chunk_us, 6));
    if (p->chunk_read_us >= 0)
        json_object_set_new(sub, "chunk_read_us", cli_real(p->chunk_read_us, 6));
    if (p->small_copy_bytes > 0) {
        json_object_set_new(sub, "small_copy_bytes", cli_real(p->small_copy_bytes, 0));
        json_object_set_new(sub, "small_copy_us", cli_real(p->small_copy_us, 6));
    }
    json_object_set_new(obj, "pool", sub);
}

static int print_fit_json(const cp_topo *t, const cp_nccl_table *tab, const cp_pool_fit *f)
{
    json_t *root = json_object(), *rows = json_array(), *cal = json_object();
    int i;
    json_object_set_new(root, "topology", json_string(t->name));
    json_object_set_new(root, "algorithm", json_string("pool"));
    json_object_set_new(root, "operation", json_string(cp_xop_name(f->op)));
    cli_pool_calib_json(cal, &t->calib.pool);
    json_object_set_new(root, "calibration", cal);
    json_object_set_new(root, "binding", json_string(cp_pool_res_name(f->bind)));
    for (i = 0; i < tab->nrows; i++) {
        json_t *r = cli_fit_row(tab->rows[i].bytes, tab->rows[i].time_us, f->pred_us[i]);
        json_array_append_new(rows, r);
    }
    json_object_set_new(root, "rows", rows);
    return cli_dump_json(root, stdout);
}

int cli_print_pool_fit(const cp_topo *t, const cp_nccl_table *tab, const cp_pool_fit *f,
                       const char *table, int json, cp_err *e)
{
    const char *side = f->read_side ? "copy_read_gbs" : "copy_gbs";
    const char *cost = f->read_side ? "chunk_read_us" : "chunk_us";
    int i;
    if (json)
        return print_fit_json(t, tab, f) ? cp_fail(e, CP_EINTERNAL, "writing output failed")
                                         : CP_OK;
    printf("# calibrate: %s on %s (%d GPU%s), %s through the pool\n", table, t->name, t->ngpus,
           cp_s(t->ngpus), cp_xop_name(f->op));
    if (f->rate_fitted)
        printf("# %s: %.3f -> %.3f GB/s (the busier copy-engine stream binds)\n", side,
               f->rate_before, f->rate_after);
    else
        printf("# %s: %.3f kept (every copy's path is slower than the engine: its rate is "
               "not seen)\n", side, f->rate_before);
    printf("# %s: %.3f -> %.3f; launch_us %.3f held; rms error %.2f%%\n", cost,
           f->chunk_before, f->chunk_after, t->calib.launch_us, 100 * f->rms_error);
    printf("#%12s  %12s  %12s  %8s\n", "size (B)", "measured us", "predicted us", "error");
    for (i = 0; i < tab->nrows; i++) {
        const cp_nccl_row *r = &tab->rows[i];
        printf(" %12.0f  %12.2f  %12.2f  %+7.1f%%\n", r->bytes, r->time_us, f->pred_us[i],
               100 * (f->pred_us[i] - r->time_us) / r->time_us);
    }
    return CP_OK;
}
