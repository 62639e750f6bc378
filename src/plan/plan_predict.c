/*
 * plan_predict.c - strategy dispatch over predictor and planner (see
 * plan_predict.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan_predict.h"

/* A plan's timing as a prediction: one run per bucket and family. */
static int from_plan(const cp_plan *pl, int keep, cp_prediction *out, cp_err *e)
{
    int bi, k, n = 0;
    out->available = 1;
    out->iteration_ms = pl->iteration_ms;
    out->compute_ms = pl->compute_ms;
    out->exposed_ms = pl->iteration_ms - pl->compute_ms;
    if (out->exposed_ms < 0)
        out->exposed_ms = 0;
    for (bi = 0; bi < pl->nb; bi++)
        n += pl->b[bi].nroutes;
    if (keep && !(out->runs = calloc((size_t)n + 1, sizeof *out->runs)))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    for (bi = 0; bi < pl->nb; bi++) {
        const cp_plan_bucket *b = &pl->b[bi];
        for (k = 0; k < b->nroutes; k++) {
            const cp_plan_route *r = &b->routes[k];
            /* devices of one family share its start and finish: count it once */
            int first = k == 0 || b->routes[k - 1].fam != r->fam;
            if (first)
                out->comm_ms += r->finish_ms - r->start_ms;
            if (out->runs) {
                cp_bucket_run *run = &out->runs[out->nruns++];
                run->bytes = (double)r->bytes;
                run->ntensors = b->count;
                run->ready_ms = b->ready_ms;
                run->start_ms = r->start_ms;
                run->finish_ms = r->finish_ms;
                run->how = r->how;
                run->proto = "-"; /* a plan's routes mix NCCL calls and proxies */
            }
        }
    }
    return CP_OK;
}

int cp_predict_any(const cp_predictor *pr, cp_strategy s, const cp_predict_opts *o,
                   double min_shard_kb, int keep_runs, cp_prediction *out, cp_err *e)
{
    cp_plan_opts po;
    cp_plan pl;
    int rc;
    if ((s != CP_S_PROXY && s != CP_S_COARSE && s != CP_S_COARSE_MPI) || cp_framework_sharded(o->framework) ||
        o->framework == CP_FW_MIRRORED) /* cp_predict says why not */
        return cp_predict(pr, s, o, keep_runs, out, e);
    memset(out, 0, sizeof *out);
    out->strategy = s;
    cp_plan_opts_default(&po);
    po.pred = *o;
    if (min_shard_kb > 0)
        po.min_shard_kb = min_shard_kb;
    po.mode = s == CP_S_PROXY ? CP_PLAN_PROXY : CP_PLAN_COARSE;
    po.gpu_mpi = s == CP_S_COARSE_MPI;
    if (pr->topo->ngpus <= 1)
        return cp_predict(pr, CP_S_RING, o, keep_runs, out, e) ? CP_EINTERNAL
               : (out->strategy = s, CP_OK);
    rc = cp_plan_build(pr, &po, &pl, e);
    if (rc == CP_EINPUT) {
        out->available = 0;
        snprintf(out->why_not, sizeof out->why_not, "%.199s", e->msg);
        cp_err_clear(e);
        return CP_OK;
    }
    if (rc)
        return rc;
    rc = from_plan(&pl, keep_runs, out, e);
    cp_plan_free(&pl);
    if (rc == CP_OK && cp_prediction_ddp_spans(pr, out))
        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
    return rc;
}
