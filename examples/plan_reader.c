/*
 * plan_reader.c - print a coarse-plan plan through the runtime API alone
 * (include/coarse_plan.h, libcoarseplan.a): what a DDP communication hook or
 * a Horovod backend would read before training.
 *
 * Usage: plan_reader PLAN.json [MODEL_TENSORS.txt]
 *   MODEL_TENSORS.txt, when given, lists "name bytes" per line in
 *   registration order; the plan is verified against it first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coarse_plan.h"

/* Read "name bytes" lines; returns the count, or -1. */
static long read_tensors(const char *path, char ***names, int64_t **bytes)
{
    FILE *f = fopen(path, "r");
    char name[600];
    long long b;
    long n = 0, cap = 0;
    if (!f)
        return -1;
    *names = NULL;
    *bytes = NULL;
    while (fscanf(f, "%599s %lld", name, &b) == 2) {
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            *names = realloc(*names, (size_t)cap * sizeof **names);
            *bytes = realloc(*bytes, (size_t)cap * sizeof **bytes);
            if (!*names || !*bytes) {
                fclose(f);
                return -1;
            }
        }
        (*names)[n] = strdup(name);
        (*bytes)[n++] = b;
    }
    fclose(f);
    return n;
}

static int verify(const cpl_plan *p, const char *path)
{
    char **names, err[600];
    int64_t *bytes;
    long i, n = read_tensors(path, &names, &bytes);
    int rc;
    if (n < 0) {
        fprintf(stderr, "plan_reader: cannot read %s\n", path);
        return 1;
    }
    rc = cpl_verify(p, (size_t)n, (const char *const *)names, bytes, err, sizeof err);
    if (rc)
        fprintf(stderr, "plan_reader: the plan does not match %s: %s\n", path, err);
    for (i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(bytes);
    return rc ? 2 : 0;
}

int main(int argc, char **argv)
{
    cpl_plan *p;
    char err[600];
    size_t b, k, d;
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: plan_reader PLAN.json [MODEL_TENSORS.txt]\n");
        return 2;
    }
    if (cpl_open(argv[1], &p, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    if (argc == 3 && verify(p, argv[2])) {
        cpl_close(p);
        return 2;
    }
    printf("plan for %s on %s (%d GPUs): %zu buckets, predicted %.3f ms per iteration, "
           "split layer %d\n", cpl_model_name(p), cpl_topology_name(p), cpl_gpu_count(p),
           cpl_bucket_count(p), cpl_predicted_iteration_ms(p), cpl_split_layer(p));
    {   /* a large-model plan: which stage, over which group */
        cpl_layout L;
        if (cpl_get_layout(p, &L) == 0)
            printf("layout: TP %d x CP %d x DP %d x PP %d (VP %d), stage %d, its group %d GPUs "
                   "on %d hosts\n", L.tp, L.cp, L.dp, L.pp, L.vp, L.stage, L.group_gpus,
                   L.group_hosts);
    }
    for (b = 0; b < cpl_bucket_count(p); b++) {
        cpl_bucket bk;
        cpl_get_bucket(p, b, &bk);
        printf("bucket %zu: %lld bytes, ready at %.3f ms, %zu tensors\n", bk.id,
               (long long)bk.bytes, bk.ready_ms, bk.ntensors);
        for (k = 0; k < bk.ntensors; k++) {
            cpl_tensor t;
            cpl_get_tensor(p, b, k, &t);
            printf("  tensor %-48s offset %12lld  bytes %12lld\n", t.name, (long long)t.offset,
                   (long long)t.bytes);
        }
        for (k = 0; k < bk.nroutes; k++) {
            cpl_route r;
            cpl_get_route(p, b, k, &r);
            printf("  route %4d %-10s %-10s bytes [%lld, %lld) in %d shards", r.order, r.kind,
                   r.algorithm, (long long)r.offset, (long long)(r.offset + r.bytes), r.shards);
            for (d = 0; d < r.ndevices; d++)
                printf("%s%s", d ? "," : " via ", cpl_route_device(p, b, k, d));
            putchar('\n');
        }
    }
    cpl_close(p);
    return 0;
}
