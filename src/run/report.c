/*
 * report.c - coarse-run's output on rank 0 (see report.h).
 *
 * Times are MPI_Wtime seconds, each route's the maximum over the ranks that
 * took part (the slowest participant decides when a route is done), divided
 * by the iterations; a kind's time is the sum of its routes'.  Bytes are
 * what all ranks sent, per iteration: a ring of m GPUs sends 2 (m - 1) / m
 * of the range from each GPU, a push-pull 1 range from each GPU plus G per
 * shard from its device.  Elements are fp32 on the wire whatever the
 * plan's dtype, at the plan's byte counts divided by --scale.
 */
#include <string.h>

#include "run/report.h"

/* Totals of one kind. */
typedef struct kind_sum {
    int routes;
    double bytes, s;
    const char *alg[8];
    int alg_n[8], nalg;
} kind_sum;

static void sum_kinds(const run_report *r, kind_sum *ks)
{
    size_t k;
    memset(ks, 0, RUN_KINDS * sizeof *ks);
    for (k = 0; k < r->L->nr; k++) {
        const run_route *rt = &r->L->r[k];
        kind_sum *s = &ks[rt->kind];
        int a;
        s->routes++;
        s->bytes += r->route_bytes[k] / r->iterations;
        s->s += r->route_s[k] / r->iterations;
        for (a = 0; a < s->nalg && strcmp(s->alg[a], rt->r.algorithm) != 0; a++)
            ;
        if (a == s->nalg && a < 8)
            s->alg[s->nalg++] = rt->r.algorithm;
        if (a < 8)
            s->alg_n[a]++;
    }
}

static const char *plural(int n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

int run_report_text(const run_report *r, FILE *f)
{
    kind_sum ks[RUN_KINDS];
    const run_layout *L = r->L;
    int k, a;
    char devs[160];
    sum_kinds(r, ks);
    run_devices_text(L, devs, sizeof devs);
    fprintf(f, "coarse-run: %s on %s: %d GPUs%s%s, %d %s, --scale %lld, %d %s\n",
            cpl_model_name(r->plan), cpl_topology_name(r->plan), L->gpus, devs[0] ? " + " : "",
            devs, L->hosts, plural(L->hosts, "host", "hosts"),
            (long long)L->scale, r->iterations, plural(r->iterations, "iteration", "iterations"));
    fprintf(f, "%-11s %6s %12s %10s  %s\n", "kind", "routes", "MB_moved", "time_ms",
            "algorithms (routes)");
    for (k = 0; k < RUN_KINDS; k++) {
        if (ks[k].routes == 0)
            continue;
        fprintf(f, "%-11s %6d %12.3f %10.3f ", run_kind_name((run_kind)k), ks[k].routes,
                ks[k].bytes / 1e6, ks[k].s * 1e3);
        for (a = 0; a < ks[k].nalg; a++)
            fprintf(f, " %s (%d)%s", ks[k].alg[a], ks[k].alg_n[a],
                    k == RUN_ALLREDUCE && !run_allreduce_mimics(ks[k].alg[a])
                        ? ": not mimicked, run as MPI_Allreduce on the GPUs"
                        : "");
        fputc('\n', f);
    }
    fprintf(f, "iteration %.3f ms (max over ranks; the plan predicts %.3f ms at full size "
               "on the real machine)\n",
            r->wall_s * 1e3 / r->iterations, cpl_predicted_iteration_ms(r->plan));
    if (r->m->found)
        return 1;
    fprintf(f, "coarse-run: %s: %zu buckets, %zu routes, bit-exact on %d GPUs%s%s\n", r->path,
            L->nb, L->nr, L->gpus, devs[0] ? " + " : "", devs);
    return 0;
}

/* A JSON string (the names come from the plan: escape quotes, backslashes
 * and control characters). */
static void jstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

int run_report_json(const run_report *r, FILE *f)
{
    kind_sum ks[RUN_KINDS];
    const run_layout *L = r->L;
    size_t i;
    int k, first = 1;
    sum_kinds(r, ks);
    fputs("{\"plan\": ", f);
    jstr(f, r->path);
    fputs(", \"model\": ", f);
    jstr(f, cpl_model_name(r->plan));
    fputs(", \"topology\": ", f);
    jstr(f, cpl_topology_name(r->plan));
    fprintf(f, ", \"gpus\": %d, \"devices\": %d, \"hosts\": %d, \"scale\": %lld, "
               "\"iterations\": %d, \"iteration_ms\": %.6f, \"bit_exact\": %s,\n \"kinds\": [",
            L->gpus, L->ndev, L->hosts, (long long)L->scale, r->iterations,
            r->wall_s * 1e3 / r->iterations, r->m->found ? "false" : "true");
    for (k = 0; k < RUN_KINDS; k++) {
        if (ks[k].routes == 0)
            continue;
        fprintf(f, "%s{\"kind\": \"%s\", \"routes\": %d, \"bytes\": %.0f, \"time_ms\": %.6f}",
                first ? "" : ", ", run_kind_name((run_kind)k), ks[k].routes, ks[k].bytes,
                ks[k].s * 1e3);
        first = 0;
    }
    fputs("],\n \"routes\": [", f);
    for (i = 0; i < L->nr; i++) {
        const run_route *rt = &L->r[i];
        fprintf(f, "%s\n  {\"order\": %d, \"bucket\": %zu, \"route\": %zu, \"kind\": \"%s\", "
                   "\"algorithm\": ",
                i ? "," : "", rt->r.order, rt->bucket, rt->index, run_kind_name(rt->kind));
        jstr(f, rt->r.algorithm);
        double t0 = 0, t1 = 0;
        cpl_route_times(r->plan, rt->bucket, rt->index, &t0, &t1);
        fprintf(f, ", \"mimicked\": %s, \"elements\": %lld, \"shards\": %d, \"bytes\": %.0f, "
                   "\"time_ms\": %.6f, \"planned_start_ms\": %.4f, \"planned_ms\": %.4f}",
                rt->kind != RUN_ALLREDUCE || run_allreduce_mimics(rt->r.algorithm) ? "true"
                                                                                   : "false",
                (long long)rt->n, rt->r.shards, r->route_bytes[i] / r->iterations,
                r->route_s[i] * 1e3 / r->iterations, t0, t1 - t0);
    }
    fputs("]}\n", f);
    return r->m->found ? 1 : 0;
}

void run_report_mismatch(const run_report *r, FILE *f)
{
    const run_mismatch *m = r->m;
    cpl_tensor t;
    if (cpl_get_tensor(r->plan, m->bucket, m->tensor, &t))
        t.name = "?";
    fprintf(f, "coarse-run: error: %s: not bit-exact: GPU %d, bucket %zu, tensor %zu \"%s\", "
               "element %lld: expected %.9g, got %.9g\n",
            r->path, m->gpu, m->bucket, m->tensor, t.name, (long long)m->element,
            (double)m->expected, (double)m->got);
}
