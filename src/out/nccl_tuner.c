/*
 * nccl_tuner.c - writing the collective model's choices as NCCL tuner
 * rules (see nccl_tuner.h; docs/nccl-tuner.md).
 *
 * The choice at a size is the model's best NCCL algorithm (cp_coll_best:
 * ring, tree across hosts, NVLS, CollNet; not hier or ps, which NCCL does
 * not have) with its faster protocol.  It is sampled at 16 sizes per
 * octave from 1 byte to 2^64 - 1, and every change between two samples is
 * pinned to the byte by bisection (repeated while the two ends still
 * differ, so a third choice between two samples is not lost).  About
 * 1,000 model evaluations per collective, each O(1).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "out/nccl_tuner.h"

static const char *const op_names[CP_OPS] = {"allreduce", "reducescatter", "allgather",
                                             "broadcast"};

const char *cp_tuner_alg_name(const cp_coll *c, cp_coll_alg alg)
{
    switch (alg) {
    case CP_ALG_RING: return "ring";
    case CP_ALG_TREE: return "tree";
    /* across hosts the model's NVLS reduces in the switch and crosses the
     * network in between (eq. C12): NCCL's NVLSTree */
    case CP_ALG_NVLS: return c->nhosts > 1 ? "nvls_tree" : "nvls";
    case CP_ALG_COLLNET: return "collnet_direct";
    default: return NULL;
    }
}

const char *cp_tuner_proto_name(cp_proto p)
{
    return p == CP_PROTO_LL ? "ll" : p == CP_PROTO_LL128 ? "ll128" : "simple";
}

/* The choice at `bytes` as one number (alg x protocols + protocol), or -1
 * when no NCCL algorithm can run the op. */
static int choice(const cp_coll *c, cp_coll_op op, uint64_t bytes)
{
    double us, x = bytes == 0 ? 1.0 : (double)bytes;
    cp_proto p = CP_PROTO_SIMPLE;
    cp_coll_alg a = cp_coll_best(c, op, x, &us);
    if (us < 0 || cp_coll_time_proto_us(c, op, a, x, &p) < 0)
        return -1;
    return (int)a * CP_PROTOS + (int)p;
}

/* NCCL's lowest per-channel bandwidth ceiling, GB/s: perChMaxRingLL128Bws
 * for Volta and Ampere (../shared/data/nccl-tests/TUNING-FACTS.md, A3).
 * A channel is one CTA moving its share of the buffer; NCCL's bandwidth is
 * nChannels x the per-channel rate (A4, step 3). */
#define CHANNEL_CAP_GBS 20.0

/* Channels of an algorithm: for each phase, the channels its packing used
 * (rings, trees: pack.h), but at least as many as its bandwidth needs at
 * CHANNEL_CAP_GBS a channel, which is what counts where the model has a
 * closed form instead of a packing (NVSwitch phases report one pattern);
 * the most over the phases. */
static int channels(const cp_coll *c, cp_coll_op op, cp_coll_alg alg)
{
    const cp_alg_cost *a = &c->cost[op][alg];
    int k, n = 1;
    for (k = 0; k < a->nphases; k++) {
        int need = (int)ceil(a->phase[k].bw_gbs / CHANNEL_CAP_GBS - 1e-9);
        if (a->phase[k].nchannels > n)
            n = a->phase[k].nchannels;
        if (need > n)
            n = need;
    }
    return n;
}

/* Append a rule starting at `from` with choice ch (closing the previous). */
static int push(const cp_coll *c, cp_coll_op op, uint64_t from, int ch, cp_tuner_rule **r,
                int *n, int *cap)
{
    cp_tuner_rule *x;
    if (*n > 0 && (*r)[*n - 1].op == op)
        (*r)[*n - 1].max_bytes = from - 1;
    if (*n >= *cap) {
        size_t nc = *cap > 0 ? 2 * (size_t)*cap : 32;
        cp_tuner_rule *g = nc <= INT_MAX ? realloc(*r, nc * sizeof *g) : NULL;
        if (!g)
            return -1;
        *r = g;
        *cap = (int)nc;
    }
    x = &(*r)[(*n)++];
    x->op = op;
    x->min_bytes = from;
    x->max_bytes = UINT64_MAX;
    x->alg = (cp_coll_alg)(ch / CP_PROTOS);
    x->proto = (cp_proto)(ch % CP_PROTOS);
    x->channels = channels(c, op, x->alg);
    return 0;
}

/* Every change of choice in (a, b], a's choice being `ca`; appended. */
static int changes(const cp_coll *c, cp_coll_op op, uint64_t a, int ca, uint64_t b,
                   cp_tuner_rule **r, int *n, int *cap)
{
    int cb = choice(c, op, b);
    while (ca != cb) {
        uint64_t lo = a, hi = b;
        while (hi - lo > 1) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (choice(c, op, mid) == ca)
                lo = mid;
            else
                hi = mid;
        }
        ca = choice(c, op, hi);
        if (push(c, op, hi, ca, r, n, cap))
            return -1;
        a = hi;
    }
    return 0;
}

/* The rules of one op; nothing when no NCCL algorithm runs it. */
static int op_rules(const cp_coll *c, cp_coll_op op, cp_tuner_rule **r, int *n, int *cap)
{
    uint64_t prev = 1;
    int k, j, cprev = choice(c, op, 1);
    if (cprev < 0)
        return 0;
    if (push(c, op, 0, cprev, r, n, cap))
        return -1;
    for (k = 0; k < 64; k++)
        for (j = 0; j < 16; j++) {
            uint64_t step = ((uint64_t)1 << k) / 16, x = ((uint64_t)1 << k) + (uint64_t)j * step;
            if (x <= prev)
                continue;
            if (changes(c, op, prev, cprev, x, r, n, cap))
                return -1;
            prev = x;
            cprev = choice(c, op, x);
        }
    return changes(c, op, prev, cprev, UINT64_MAX, r, n, cap);
}

int cp_tuner_rules(const cp_coll *c, cp_tuner_rule **out, int *n, cp_err *e)
{
    int op, cap = 0;
    *out = NULL;
    *n = 0;
    for (op = 0; op < CP_OPS; op++)
        if (op_rules(c, (cp_coll_op)op, out, n, &cap)) {
            free(*out);
            *out = NULL;
            *n = 0;
            return cp_fail(e, CP_EINTERNAL, "out of memory");
        }
    return CP_OK;
}

/* The comment header: who wrote it, for which machine, with which
 * calibration (one line per calibrated link kind, under NCCL's 256). */
static void header(const cp_coll *c, FILE *f)
{
    const cp_topo *t = c->topo;
    int k;
    fprintf(f, "# NCCL tuner rules from coarse-plan's collective model (docs/collectives.md)\n");
    fprintf(f, "# topology: %.100s (%.100s), %d node%s x %d GPUs = %d ranks\n", t->name,
            t->src_path ? t->src_path : "built in memory", c->nhosts, c->nhosts == 1 ? "" : "s",
            c->per_host, c->nranks);
    fprintf(f, "# calibration: %s; launch %.4g us\n",
            t->calib.given ? "the topology's calibration block (docs/calibration.md)"
                           : "none in the topology file: nominal bandwidths, no software cost",
            t->calib.launch_us);
    for (k = 0; k < CP_LINK_KINDS; k++) {
        const cp_calib_kind *q = &t->calib.kind[k];
        if (q->bw_eff != 1 || q->step_us != 0 || q->simple_us != 0)
            fprintf(f, "# calibration %s: bw_eff %.4g, step %.4g us, Simple %.4g us per step\n",
                    cp_link_kind_name((cp_link_kind)k), q->bw_eff, q->step_us, q->simple_us);
    }
    fprintf(f, "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n"
               "# ranges are inclusive and tile 0 .. 18446744073709551615 per collective\n"
               "# use: NCCL_TUNER_PLUGIN=<the example tuner> NCCL_TUNER_CONFIG_FILE=<this file>\n");
}

int cp_tuner_write(const cp_coll *c, const char *path, int *nrules, cp_err *e)
{
    cp_tuner_rule *r;
    cp_outfile out;
    int n, i, rc = cp_tuner_rules(c, &r, &n, e);
    if (rc)
        return rc;
    if ((rc = cp_out_open(&out, path, e))) {
        free(r);
        return rc;
    }
    header(c, out.f);
    for (i = 0; i < n; i++)
        fprintf(out.f, "%s,%llu,%llu,%s,%s,%d,%d,%d\n", op_names[r[i].op],
                (unsigned long long)r[i].min_bytes, (unsigned long long)r[i].max_bytes,
                cp_tuner_alg_name(c, r[i].alg), cp_tuner_proto_name(r[i].proto), r[i].channels,
                c->nhosts, c->nranks);
    free(r);
    if (ferror(out.f)) {
        cp_out_abort(&out);
        return cp_fail(e, CP_EINTERNAL, "writing %s failed", path);
    }
    if (nrules)
        *nrules = n;
    return cp_out_commit(&out, e);
}
