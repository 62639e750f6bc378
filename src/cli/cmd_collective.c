/*
 * cmd_collective.c - `coarse-plan collective`: the predicted nccl-tests
 * table for one collective on one machine, and --explain: which links bind
 * each algorithm and how its time splits into latency and bandwidth.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "cli/pool_table.h"
#include "cli/summary.h"
#include "cost/busshare.h"
#include "core/units.h"
#include "core/fileio.h"
#include "cost/collective.h"
#include "cost/dtree.h"
#include "load/load.h"
#include "out/nccl_tuner.h"

static const cli_usage_text usage = {
    "usage: coarse-plan collective -t TOPO [OPTIONS]\n",
    "Predict a collective's time over a range of sizes, in nccl-tests layout: size,\n"
    "count, type, redop, time (us), algbw and busbw (GB/s), and the algorithm.\n",
    "busbw = algbw x 2(n-1)/n (allreduce), (n-1)/n (reducescatter, allgather,\n"
    "gather, scatter, alltoall), 1 (broadcast, reduce), as nccl-tests documents.\n"
    "The model: docs/collectives.md, docs/pool.md.\n"};

typedef struct opts {
    const char *topo, *tuner; /* tuner: --nccl-tuner-conf FILE */
    int hosts, gpus, json, explain, gpt, alg; /* alg -1 = auto */
    int proto;                                /* -1: the faster; else a cp_proto (NCCL_PROTO) */
    int xop, pool;                            /* a cp_xop (pool_table.h); 1: -a pool */
    cp_coll_op op;
    int64_t minb, maxb;
    long factor;
    int typesize;
} opts;

static int parse_name(const char *s, const char *const *names, int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

static const char *const ops[] = {"allreduce", "reducescatter", "allgather", "broadcast",
                                  "reduce",    "gather",        "scatter",   "alltoall"};

/* -o OP (value: opts): op the cp_coll_op (allreduce for the operations
 * beyond NCCL's four), xop the cp_xop (pool_table.h). */
static int parse_op(const char *cmd, char *arg, void *value)
{
    opts *o = value;
    int k = parse_name(arg, ops, 8);
    if (k < 0)
        return cli_usage(cmd, "-o: unknown operation '%s' (allreduce, reducescatter, "
                              "allgather, broadcast, reduce, gather, scatter, alltoall)", arg);
    o->op = (cp_coll_op)(k < CP_OPS ? k : 0);
    o->xop = k;
    return CP_OK;
}

/* -a ALG (value: opts): alg -1 for auto and pool, pool 1 for pool. */
static int parse_alg(const char *cmd, char *arg, void *value)
{
    static const char *const algs[] = {"ring", "tree", "nvls", "hier", "ps", "collnet", "auto",
                                       "pool"};
    opts *o = value;
    int k = parse_name(arg, algs, 8);
    if (k < 0)
        return cli_usage(cmd, "-a: unknown algorithm '%s' (ring, tree, nvls, hier, ps, "
                              "collnet, pool, auto)", arg);
    o->alg = k >= 6 ? -1 : k;
    o->pool = k == 7;
    return CP_OK;
}

/* -b and -e SIZE (value: int64_t): bytes, K, M, G suffixes. */
static int parse_min(const char *cmd, char *arg, void *value)
{
    if (cp_parse_size(arg, value))
        return cli_usage(cmd, "-b: expected a size such as 8, 64K, 128M, got '%s'", arg);
    return CP_OK;
}

static int parse_max(const char *cmd, char *arg, void *value)
{
    if (cp_parse_size(arg, value))
        return cli_usage(cmd, "-e: expected a size such as 8, 64K, 128M, got '%s'", arg);
    return CP_OK;
}

/* -f F (value: long): the size factor between rows. */
static int parse_factor(const char *cmd, char *arg, void *value)
{
    if (cp_parse_long(arg, 2, 1024, value))
        return cli_usage(cmd, "-f: expected a whole factor from 2 to 1024, got '%s'", arg);
    return CP_OK;
}

/* -g N (value: int): GPUs per thread, as nccl-tests -g. */
static int parse_gpt(const char *cmd, char *arg, void *value)
{
    long gpt;
    if (cp_parse_long(arg, 1, 1024, &gpt))
        return cli_usage(cmd, "-g: expected 1 to 1024, got '%s'", arg);
    *(int *)value = (int)gpt;
    return CP_OK;
}

/* --dtype float|half (value: int, bytes per element). */
static int parse_dtype(const char *cmd, char *arg, void *value)
{
    if (strcmp(arg, "float") == 0 || strcmp(arg, "fp32") == 0)
        *(int *)value = 4;
    else if (strcmp(arg, "half") == 0 || strcmp(arg, "fp16") == 0 || strcmp(arg, "bf16") == 0)
        *(int *)value = 2;
    else
        return cli_usage(cmd, "--dtype: expected float or half, got '%s'", arg);
    return CP_OK;
}

/* --proto LL|LL128|Simple (value: int, a cp_proto). */
static int parse_proto(const char *cmd, char *arg, void *value)
{
    if (strcasecmp(arg, "LL") == 0)
        *(int *)value = CP_PROTO_LL;
    else if (strcasecmp(arg, "Simple") == 0)
        *(int *)value = CP_PROTO_SIMPLE;
    else if (strcasecmp(arg, "LL128") == 0)
        *(int *)value = CP_PROTO_LL128;
    else
        return cli_usage(cmd, "--proto: expected LL, LL128 or Simple, got '%s'", arg);
    return CP_OK;
}

/* The option table, parsed into o, then what does not combine; CP_OK,
 * CLI_HELP or a usage error. */
static int parse_opts(int argc, char **argv, opts *o)
{
    const cli_option table[] = {
        OPT_STRING('t', "topo", "FILE", &o->topo, "topology JSON"),
        OPT_INT(0, "hosts", "N", &o->hosts, 1, CP_MAX_HOSTS,
                "replicate a single-host topology N times over its NICs"),
        OPT_INT(0, "gpus", "G", &o->gpus, 1, CLI_MAX_GPUS,
                "use the first G GPUs of each host (default: all)"),
        OPT_CALLBACK('o', "op", "OP", o, parse_op,
                     "allreduce (default), reducescatter, allgather, broadcast, reduce, "
                     "gather, scatter, alltoall"),
        OPT_CALLBACK('a', "algo", "ALG", o, parse_alg,
                     "ring, tree, nvls, hier, ps (parameter server in CPU memory), collnet "
                     "(in-network reduction, SHARP: needs a reducing network switch), pool "
                     "(through a CXL memory pool, docs/pool.md; AllReduce's rows say pool or "
                     "pool-rsag, the faster of its two forms), or auto (default: the fastest of "
                     "NCCL's algorithms per size, as NCCL's tuner picks)"),
        OPT_CALLBACK('b', "minbytes", "SIZE", &o->minb, parse_min,
                     "smallest size (default 8); K, M, G suffixes (x1024)"),
        OPT_CALLBACK('e', "maxbytes", "SIZE", &o->maxb, parse_max,
                     "largest size (default 128M)"),
        OPT_CALLBACK('f', "stepfactor", "F", &o->factor, parse_factor,
                     "multiply the size by F each row (default 2)"),
        OPT_CALLBACK(0, "dtype", "T", &o->typesize, parse_dtype,
                     "float (4 bytes, default) or half (2 bytes): the count column"),
        OPT_CALLBACK(0, "proto", "P", &o->proto, parse_proto,
                     "LL, LL128 or Simple only, as NCCL_PROTO forces it (default: the faster per "
                     "size, as NCCL's tuner picks)"),
        OPT_CALLBACK('g', "gpus-per-thread", "N", &o->gpt, parse_gpt,
                     "GPUs driven by one thread, as nccl-tests -g (default 1): kernel launches "
                     "are serialised within a thread"),
        OPT_FLAG(0, "json", &o->json,
                 "{\"rows\":[{\"bytes\",\"count\",\"time_us\",\"algbw_gbs\",\n"
                 "\"busbw_gbs\",\"algorithm\"}]}"),
        OPT_FLAG(0, "explain", &o->explain,
                 "for each algorithm: phases, steps, latency, bandwidth, the links that bind "
                 "it and what one more GB/s on them buys, and where the algorithms cross over; "
                 "with -a pool: the resource that binds the pool at every size against the "
                 "network, and every term at the smallest and largest"),
        OPT_STRING(0, "nccl-tuner-conf", "FILE", &o->tuner,
                   "write the model's best algorithm, protocol and channels per size range of "
                   "every collective as rules for NCCL's example tuner plugin ('-' for standard "
                   "output; docs/nccl-tuner.md)"),
        OPT_END()};
    int first, rc;
    memset(o, 0, sizeof *o);
    o->hosts = 1;
    o->gpt = 1;
    o->alg = -1;
    o->proto = -1;
    o->minb = 8;
    o->maxb = 128 << 20;
    o->factor = 2;
    o->typesize = 4;
    if ((rc = cli_parse("collective", &usage, table, argc, argv, &first)) ||
        (rc = cli_no_args("collective", argc, argv, first)))
        return rc;
    if (!o->topo)
        return cli_usage("collective", "-t TOPO is required");
    if (o->minb < 1 || o->maxb < o->minb)
        return cli_usage("collective", "sizes: need 1 <= -b <= -e");
    if (o->tuner && cp_same_file(o->tuner, o->topo))
        return cli_usage("collective", "--nccl-tuner-conf %s would overwrite an input", o->tuner);
    if (o->explain && o->json)
        return cli_usage("collective", "--explain and --json do not combine");
    if (o->explain && o->proto >= 0)
        return cli_usage("collective", "--explain shows both protocols; --proto goes with the "
                                       "table");
    if ((o->pool || o->xop >= CP_OPS) && o->proto >= 0)
        return cli_usage("collective", "--proto is NCCL's: it does not apply to -a pool nor "
                                       "to -o reduce, gather, scatter, alltoall");
    if (o->xop >= CP_OPS && o->alg >= 0 && !(o->alg == CP_ALG_RING && o->xop == CP_OPS))
        return cli_usage("collective", "-o %s on the network is %s; or -a pool", ops[o->xop],
                         o->xop == CP_OPS ? "NCCL's ring: -a ring or auto"
                                          : "point-to-point sends: -a auto");
    return CP_OK;
}

/* Time, algorithm and protocol for one size; negative time when
 * unavailable. */
static double row_time(const cp_coll *c, const opts *o, double bytes, cp_coll_alg *alg,
                       cp_proto *proto)
{
    *alg = o->alg < 0 ? cp_coll_best_proto(c, o->op, bytes, o->proto, NULL)
                      : (cp_coll_alg)o->alg;
    if (o->proto < 0)
        return cp_coll_time_proto_us(c, o->op, *alg, bytes, proto);
    *proto = (cp_proto)o->proto; /* forced, as NCCL_PROTO does */
    return cp_coll_proto_time_us(c, o->op, *alg, *proto, bytes);
}

static void print_table(const cp_coll *c, const opts *o)
{
    int64_t s;
    const char *redop = o->op == CP_OP_ALLREDUCE || o->op == CP_OP_REDUCESCATTER ? "sum" : "none";
    printf("# coarse-plan collective: %s, %d GPU%s (%d host%s x %d), %s, algorithm %s\n",
           c->topo->name, c->nranks, cp_s(c->nranks), c->nhosts, cp_s(c->nhosts), c->per_host,
           cp_coll_op_name(o->op), o->alg < 0 ? "auto" : cp_coll_alg_name((cp_coll_alg)o->alg));
    cli_calib_note(c->topo, "# ", stdout);
    printf("#\n#%12s  %12s  %6s  %6s  %10s  %7s  %7s  %-9s  %s\n", "size", "count", "type",
           "redop", "time", "algbw", "busbw", "algorithm", "protocol");
    printf("#%12s  %12s  %6s  %6s  %10s  %7s  %7s\n", "(B)", "(elements)", "", "", "(us)",
           "(GB/s)", "(GB/s)");
    for (s = o->minb; s <= o->maxb; s *= o->factor) {
        cp_coll_alg alg;
        cp_proto proto;
        double t = row_time(c, o, (double)s, &alg, &proto);
        double algbw = t > 0 ? (double)s / (t * 1e3) : 0;
        printf(" %12lld  %12lld  %6s  %6s  %10.2f  %7.2f  %7.2f  %-9s  %s\n", (long long)s,
               (long long)(s / o->typesize), o->typesize == 4 ? "float" : "half", redop, t,
               algbw, algbw * cp_coll_busbw_factor(o->op, c->nranks), cp_coll_alg_name(alg),
               cp_proto_name(proto));
        if (s > INT64_MAX / o->factor)
            break;
    }
}

static int print_json(const cp_coll *c, const opts *o)
{
    json_t *root = json_object(), *rows = json_array();
    int64_t s;
    json_object_set_new(root, "topology", json_string(c->topo->name));
    json_object_set_new(root, "operation", json_string(cp_coll_op_name(o->op)));
    json_object_set_new(root, "gpus", json_integer(c->nranks));
    json_object_set_new(root, "hosts", json_integer(c->nhosts));
    for (s = o->minb; s <= o->maxb; s *= o->factor) {
        cp_coll_alg alg;
        cp_proto proto;
        double t = row_time(c, o, (double)s, &alg, &proto);
        double algbw = t > 0 ? (double)s / (t * 1e3) : 0;
        json_t *r = json_object();
        json_object_set_new(r, "bytes", json_integer(s));
        json_object_set_new(r, "count", json_integer(s / o->typesize));
        json_object_set_new(r, "time_us", cli_real(t, 3));
        json_object_set_new(r, "algbw_gbs", cli_real(algbw, 4));
        json_object_set_new(r, "busbw_gbs",
                            cli_real(algbw * cp_coll_busbw_factor(o->op, c->nranks), 4));
        json_object_set_new(r, "algorithm", json_string(cp_coll_alg_name(alg)));
        json_object_set_new(r, "protocol", json_string(cp_proto_name(proto)));
        json_array_append_new(rows, r);
        if (s > INT64_MAX / o->factor)
            break;
    }
    json_object_set_new(root, "rows", rows);
    return cli_dump_json(root, stdout);
}

/* One arc as "nvlink gpu0 -> gpu3 (43.0 GB/s effective)". */
static void print_arc(const cp_topo *t, int arc, double dual)
{
    const cp_link *l = &t->links[arc >> 1];
    printf("        %-7s %s -> %s: %.1f GB/s effective; +1 GB/s there gives %+.3f GB/s\n",
           cp_link_kind_name(l->kind), t->nodes[cp_arc_tail(t, arc)].id,
           t->nodes[cp_arc_head(t, arc)].id,
           l->gbs[arc & 1] * t->calib.kind[l->kind].bw_eff, dual);
}

/* Where LL and Simple take equal time: LL pays no per-step handshake but
 * moves half the payload per byte on the wire (eq. C11). */
static void explain_protocols(const cp_coll *c, const opts *o, cp_coll_alg alg)
{
    double l0 = cp_coll_proto_time_us(c, o->op, alg, CP_PROTO_LL, 0);
    double s0 = cp_coll_proto_time_us(c, o->op, alg, CP_PROTO_SIMPLE, 0);
    double l1 = cp_coll_proto_time_us(c, o->op, alg, CP_PROTO_LL, 1e9) - l0;
    double s1 = cp_coll_proto_time_us(c, o->op, alg, CP_PROTO_SIMPLE, 1e9) - s0;
    char buf[32];
    if (c->cost[o->op][alg].ll128 && !c->no_ll128) { /* three protocols: cost/collective.h */
        char ranges[160];
        cp_coll_proto_ranges(c, o->op, alg, ranges, sizeof ranges);
        printf("  protocol: %s\n", ranges);
        return;
    }
    if (l0 < 0) {
        printf("  protocol: %s\n", alg == CP_ALG_PS ? "none (not NCCL's: pushes and pulls)"
                                                   : "Simple (NCCL runs it with no other)");
        return;
    }
    if (!(s0 > l0)) {
        printf("  protocol: Simple at every size (no per-step cost calibrated for it)\n");
        return;
    }
    cp_fmt_bytes((s0 - l0) / (l1 - s1) * 1e9, buf, sizeof buf);
    printf("  protocol: LL below %s, Simple above\n", buf);
}

static void explain_alg(const cp_coll *c, const opts *o, cp_coll_alg alg)
{
    const cp_alg_cost *a = &c->cost[o->op][alg];
    double big = (double)o->maxb, small = (double)o->minb;
    int k, j;
    if (!a->available) {
        printf("%s: not available: %s\n", cp_coll_alg_name(alg), a->why_not);
        return;
    }
    printf("%s: %d phase%s, launch %.2f us\n", cp_coll_alg_name(alg), a->nphases,
           a->nphases == 1 ? "" : "s", c->launch_us);
    for (k = 0; k < a->nphases; k++) {
        const cp_phase *ph = &a->phase[k];
        double bwt = ph->factor * big / (ph->bw_gbs * 1e3), lat = ph->lat_us + ph->simple_us;
        printf("  %s: %d step%s, latency ", ph->label, ph->steps, cp_s(ph->steps));
        if (a->ll)
            printf("%.2f us under LL, %.2f under Simple", ph->lat_us, lat);
        else
            printf("%.2f us", lat);
        printf("; %d channel%s carry %.3g bytes per byte at %.1f GB/s\n", ph->nchannels,
               ph->nchannels == 1 ? "" : "s", ph->factor, ph->bw_gbs);
        printf("    at the largest size: latency %.1f us + bandwidth %.1f us (%.0f%% "
               "bandwidth)\n", lat, bwt, 100 * bwt / (bwt + lat + 1e-30));
        if (ph->nc_max > 0) /* NCCL's sizing of the call (docs/collectives.md) */
            printf("    NCCL runs it on %d channels, fewer below %.0f B a channel under LL, "
                   "%.0f under Simple, %.0f under LL128; LL at %.1f GB/s with all\n",
                   ph->nc_max, ph->chan_bytes[CP_PROTO_LL], ph->chan_bytes[CP_PROTO_SIMPLE],
                   ph->chan_bytes[CP_PROTO_LL128], ph->ll_bw_gbs);
        if (ph->nbind)
            printf("    binding links:\n");
        for (j = 0; j < ph->nbind; j++)
            print_arc(cp_coll_arcs(c), ph->bind_arc[j], ph->bind_dual[j]);
    }
    if (alg == CP_ALG_TREE && c->nhosts > 1) { /* per-NIC traffic (cost/dtree.h) */
        char why[320];
        cp_coll_tree_traffic(c, why, sizeof why);
        printf("  network: %s\n", why);
    }
    if (a->pipelined && a->nphases == 3) {
        double host = a->pipe_factor * big / (a->pipe_bw * 1e3);
        double net = a->phase[1].factor * big / (a->phase[1].bw_gbs * 1e3);
        printf("  pipelined (one kernel, eq. C12): at the largest size the hosts' phases "
               "take %.1f us together (%.3g bytes per byte at %.1f GB/s), the network's "
               "%.1f us; the larger counts\n", host, a->pipe_factor, a->pipe_bw, net);
    }
    explain_protocols(c, o, alg);
    printf("  total: %.2f us at %.0f B, %.2f us at %.0f B\n",
           cp_coll_time_us(c, o->op, alg, small), small, cp_coll_time_us(c, o->op, alg, big),
           big);
}

/* Where two algorithms take equal time, on their Simple lines (the
 * protocol of the sizes where algorithms differ most). */
static void explain_crossovers(const cp_coll *c, const opts *o)
{
    int a, b;
    printf("algorithms compared on their Simple lines:\n");
    for (a = 0; a < CP_ALGS; a++)
        for (b = a + 1; b < CP_ALGS; b++) {
            double ta0 = cp_coll_proto_time_us(c, o->op, (cp_coll_alg)a, CP_PROTO_SIMPLE, 0);
            double tb0 = cp_coll_proto_time_us(c, o->op, (cp_coll_alg)b, CP_PROTO_SIMPLE, 0);
            double sa = cp_coll_proto_time_us(c, o->op, (cp_coll_alg)a, CP_PROTO_SIMPLE, 1e9) - ta0;
            double sb = cp_coll_proto_time_us(c, o->op, (cp_coll_alg)b, CP_PROTO_SIMPLE, 1e9) - tb0;
            char buf[32];
            if (ta0 < 0 || tb0 < 0)
                continue;
            if ((ta0 - tb0) * (sa - sb) >= 0) {
                cp_coll_alg w = (ta0 + sa <= tb0 + sb) ? (cp_coll_alg)a : (cp_coll_alg)b;
                printf("%s beats %s at every size\n", cp_coll_alg_name(w),
                       cp_coll_alg_name((int)w == a ? (cp_coll_alg)b : (cp_coll_alg)a));
                continue;
            }
            cp_fmt_bytes((tb0 - ta0) / (sa - sb) * 1e9, buf, sizeof buf);
            printf("%s is faster below %s, %s above (lower %s latency, higher %s bandwidth)\n",
                   cp_coll_alg_name(ta0 < tb0 ? (cp_coll_alg)a : (cp_coll_alg)b), buf,
                   cp_coll_alg_name(ta0 < tb0 ? (cp_coll_alg)b : (cp_coll_alg)a),
                   cp_coll_alg_name(ta0 < tb0 ? (cp_coll_alg)a : (cp_coll_alg)b),
                   cp_coll_alg_name(ta0 < tb0 ? (cp_coll_alg)b : (cp_coll_alg)a));
        }
}

/* The COARSE paper's side figure: the packed rings' share of the GPU buses. */
static void explain_bus_share(const cp_coll *c)
{
    cp_bus_share s;
    double share = cp_coll_bus_share(c, &s);
    if (s.total_gbs > 0)
        printf("ring AllReduce keeps %.1f%% of the GPU buses busy (%.1f of %.1f GB/s, NVLink "
               "%.1f of %.1f; docs/collectives.md, bus share)\n",
               100 * share, s.used_gbs, s.total_gbs, s.nvlink_used_gbs, s.nvlink_total_gbs);
}

static void print_explain(const cp_coll *c, const opts *o)
{
    int alg;
    printf("%s on %s: %d GPU%s (%d host%s x %d); %d candidate ring%s searched\n",
           cp_coll_op_name(o->op), c->topo->name, c->nranks, cp_s(c->nranks), c->nhosts,
           cp_s(c->nhosts), c->per_host, c->ring_candidates, cp_s(c->ring_candidates));
    for (alg = 0; alg < CP_ALGS; alg++)
        explain_alg(c, o, (cp_coll_alg)alg);
    explain_crossovers(c, o);
    explain_bus_share(c);
}

/* --nccl-tuner-conf: the rules (out/nccl_tuner.c), and a line saying so. */
static int write_tuner(const cp_coll *c, const char *path, cp_err *e)
{
    int n = 0, rc = cp_tuner_write(c, path, &n, e);
    if (rc == CP_OK && strcmp(path, "-") != 0)
        printf("%s: %d NCCL tuner rule%s for %s, %d node%s x %d GPU%s\n", path, n, cp_s(n),
               c->topo->name, c->nhosts, cp_s(c->nhosts), c->per_host, cp_s(c->per_host));
    return rc;
}

int cmd_collective(int argc, char **argv)
{
    opts o;
    cp_topo *t;
    cp_coll c;
    cp_err e;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc == CLI_HELP ? CP_OK : rc;
    if (o.pool || o.xop >= CP_OPS) {
        cli_xopts x = {o.topo, o.hosts, o.gpus, o.gpt, o.xop, o.pool, o.alg == CP_ALG_RING,
                       o.json, o.explain, o.minb, o.maxb, o.factor, o.typesize};
        return cli_xcollective(&x);
    }
    cp_err_clear(&e);
    rc = cp_topo_load_machine(o.topo, o.gpus, o.hosts, &t, &e);
    if (rc)
        return cli_report(rc, &e);
    rc = cli_blame(cp_coll_build(t, o.gpt, &c, &e), &e, o.topo);
    if (rc == CP_OK && o.alg >= 0 && !c.cost[o.op][o.alg].available)
        rc = cp_fail(&e, CP_EINPUT, "-a %s on %s: %s", cp_coll_alg_name((cp_coll_alg)o.alg),
                     t->name, c.cost[o.op][o.alg].why_not);
    if (rc == CP_OK && o.proto == CP_PROTO_LL && o.alg >= 0 && !c.cost[o.op][o.alg].ll)
        rc = cp_fail(&e, CP_EINPUT, "-a %s runs Simple only: --proto LL does not apply",
                     cp_coll_alg_name((cp_coll_alg)o.alg));
    if (rc == CP_OK && o.proto == CP_PROTO_LL128 && o.alg >= 0 && !c.cost[o.op][o.alg].ll128)
        rc = cp_fail(&e, CP_EINPUT, "-a %s on %s: NCCL does not enable LL128 here (it needs "
                     "NVLink inside hosts, NICs behind PCIe switches, Volta or later: "
                     "docs/collectives.md)", cp_coll_alg_name((cp_coll_alg)o.alg), t->name);
    if (rc == CP_OK && o.tuner)
        rc = write_tuner(&c, o.tuner, &e);
    else if (rc == CP_OK) {
        if (o.json)
            rc = print_json(&c, &o) ? cp_fail(&e, CP_EINTERNAL, "writing output failed") : CP_OK;
        else if (o.explain)
            print_explain(&c, &o);
        else
            print_table(&c, &o);
    }
    cp_coll_free(&c);
    cp_topo_free(t);
    return cli_report(rc, &e);
}
