/*
 * pool_whatif.c - what `predict --what-if` adds on a machine with a CXL
 * pool: why the pool strategy is faster or slower than the network, from
 * the resource that binds the pool at the run's largest operation, and
 * what making each of the pool's resources twice as fast would buy.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/pool_table.h"
#include "predict/memory.h"
#include "predict/pool_strategy.h"

/* The largest operation the pool strategy's run issues: its bytes and
 * which collective (from the run's names: "allgather/pool", ...). */
static void largest_op(const cp_prediction *r, double *bytes, cp_coll_op *op)
{
    int k;
    *bytes = 0;
    *op = CP_OP_ALLREDUCE;
    for (k = 0; k < r->nruns; k++)
        if (r->runs[k].bytes > *bytes) {
            const char *how = r->runs[k].how;
            *bytes = r->runs[k].bytes;
            *op = strncmp(how, "allgather", 9) == 0       ? CP_OP_ALLGATHER
                  : strncmp(how, "reducescatter", 13) == 0 ? CP_OP_REDUCESCATTER
                                                           : CP_OP_ALLREDUCE;
        }
}

/* The pool strategy's iteration on a copy of t changed by `what` (0: the
 * copy engines, 1: the devices, 2: the CXL links) twice as fast, with
 * copy-engine rates `ce`, `cer` as the model derived them; -1 unavailable. */
static int doubled(const cp_model *m, const cp_topo *t, const cp_predict_opts *po, int what,
                   double ce, double cer, double *ms, cp_err *e)
{
    cp_topo *c = cp_topo_clone(t);
    cp_predictor pr;
    cp_prediction r;
    int i, rc;
    *ms = -1;
    if (!c)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    if (what == 0) {
        c->calib.pool.copy_gbs = 2 * ce;
        c->calib.pool.copy_read_gbs = 2 * cer;
    }
    for (i = 0; what == 1 && i < c->nnodes; i++)
        if (c->nodes[i].kind == CP_MEMDEV && c->nodes[i].host < 0) {
            c->nodes[i].read_gbs *= 2;
            c->nodes[i].write_gbs *= 2;
            c->nodes[i].mem_gbs *= 2;
        }
    if (what == 2)
        cp_topo_scale_kind(c, CP_CXL, 2);
    rc = cp_predictor_init(&pr, m, c, po, e);
    if (rc == CP_OK) {
        rc = cp_predict(&pr, CP_S_POOL, po, 0, &r, e);
        if (rc == CP_OK && r.available)
            *ms = r.iteration_ms;
        if (rc == CP_OK)
            cp_prediction_free(&r);
        cp_predictor_free(&pr);
    }
    cp_topo_free(c);
    return rc;
}

static void print_reason(const cp_predictor *pr, cp_coll_op op, double bytes)
{
    const cp_topo *t = pr->topo;
    cp_pool_why w;
    cp_coll_alg alg;
    const char *proto;
    double us = cp_pool_time_us(pr->pool, (cp_xop)op, bytes, &w);
    double net = cp_strategy_coll_ms(pr, CP_S_AUTO, op, bytes, &alg, &proto) * 1e3;
    int at = w.res_where[w.bind];
    char where[160];
    if (w.bind == CP_PRES_LINK && at >= 0)
        snprintf(where, sizeof where, "%s %s -> %s", cp_pool_arc_role(t, at),
                 t->nodes[cp_arc_tail(t, at)].id, t->nodes[cp_arc_head(t, at)].id);
    else
        snprintf(where, sizeof where, "%s", at >= 0 ? t->nodes[at].id : "-");
    printf("# pool against the network, at this run's largest operation (%s of %.0f B):\n",
           cp_coll_op_name(op), bytes);
    printf("#   pool %.2f us, bound by the %s (%s, %.2f us of it)%s; network (%s) %.2f us: "
           "the pool is %.2fx %s\n", us, cp_pool_res_name(w.bind), where, w.res_us[w.bind],
           w.intra_us > 0 ? " after the in-host phases" : "",
           alg == CP_ALGS ? "none" : cp_coll_alg_name(alg), net,
           us < net ? net / us : us / net, us < net ? "faster" : "slower");
    if (w.bind == CP_PRES_COPY_READ || w.bind == CP_PRES_COPY_WRITE) {
        char lim[160];
        cli_pool_copy_limit(pr->pool, w.bind == CP_PRES_COPY_WRITE, lim, sizeof lim);
        printf("#   one copy engine per direction %s each GPU's share one copy after another, "
               "each to one device at %s%s\n",
               w.bind == CP_PRES_COPY_READ ? "pulls" : "publishes", lim,
               op == CP_OP_ALLREDUCE && !w.device_reduces && !w.rsag
                   ? "; reducing on the GPUs, every rank pulls every contribution" : "");
    }
}

int cli_pool_whatif(const cp_model *m, const cp_topo *t, const cp_predict_opts *po, cp_err *e)
{
    static const char *const labels[] = {"pool copy engines x2", "pool devices x2",
                                         "pool cxl links x2"};
    cp_predictor pr;
    cp_prediction r;
    cp_coll_op op;
    double bytes, ms;
    int k, rc;
    if (!cp_pool_present(t))
        return CP_OK;
    if ((rc = cp_predictor_init(&pr, m, t, po, e)))
        return rc;
    if ((rc = cp_predict(&pr, CP_S_POOL, po, 1, &r, e))) {
        cp_predictor_free(&pr);
        return rc;
    }
    printf("\n");
    if (!r.available) {
        printf("# pool: unavailable: %s\n", r.why_not);
    } else {
        largest_op(&r, &bytes, &op);
        if (bytes > 0)
            print_reason(&pr, op, bytes);
        printf("# what if (strategy pool, %.2f ms now): each change alone\n", r.iteration_ms);
        printf("%-24s %12s %10s %8s\n", "change", "iteration_ms", "saving_ms", "saving");
        for (k = 0; k < 3 && rc == CP_OK; k++) {
            rc = doubled(m, t, po, k, pr.pool->copy_gbs[0], pr.pool->copy_read_gbs[0], &ms, e);
            if (rc == CP_OK && ms >= 0)
                printf("%-24s %12.2f %10.2f %7.2f%%\n", labels[k], ms, r.iteration_ms - ms,
                       100 * (r.iteration_ms - ms) / r.iteration_ms);
        }
    }
    cp_prediction_free(&r);
    cp_predictor_free(&pr);
    return rc;
}

int cli_pool_memory_note(const cp_predictor *pr, const cp_predict_opts *o, const cp_mem *mem,
                         cp_err *e)
{
    const cp_topo *t = pr->topo;
    cp_predict_opts without = *o;
    cp_mem m0;
    double cap = 0;
    int i, rc;
    if (o->offload != CP_OFFLOAD_POOL)
        return CP_OK;
    for (i = 0; i < t->nnodes; i++)
        if (t->nodes[i].kind == CP_MEMDEV && t->nodes[i].host < 0)
            cap += t->nodes[i].capacity_gb * 1e9;
    without.offload = 0;
    if ((rc = cp_model_states(pr, &without, &m0, e)))
        return rc;
    printf("# --offload pool: %.3f GB per GPU in the pool (%s), %.1f GB for all %d GPUs of the "
           "pool's %.1f GB%s\n", mem->pooled / 1e9,
           o->framework == CP_FW_ZERO3 || o->framework == CP_FW_FSDP
               ? "optimizer states and parameter shards" : "optimizer states",
           mem->pooled * t->ngpus / 1e9, t->ngpus, cap / 1e9,
           cap > 0 && mem->pooled * t->ngpus > cap ? ": does not fit in the pool" : "");
    printf("# without it: %.3f GB of model states per GPU%s%s\n", m0.states / 1e9,
           m0.capacity > 0 ? (m0.total <= m0.capacity ? ", fits" : ", does not fit") : "",
           m0.capacity > 0 ? " with the activations" : "");
    return CP_OK;
}

int cli_pool_binding(const cp_predictor *pr, const cp_predict_opts *o, const char **name,
                     cp_err *e)
{
    cp_prediction r;
    cp_pool_why w;
    cp_coll_op op;
    double bytes;
    int rc;
    *name = "";
    if (!pr->pool)
        return CP_OK;
    if ((rc = cp_predict(pr, CP_S_POOL, o, 1, &r, e)))
        return rc;
    if (r.available) {
        largest_op(&r, &bytes, &op);
        if (bytes > 0) {
            cp_pool_time_us(pr->pool, (cp_xop)op, bytes, &w);
            *name = w.bind == CP_PRES_LINK && w.res_where[w.bind] >= 0
                        ? cp_pool_arc_role(pr->topo, w.res_where[w.bind])
                        : cp_pool_res_name(w.bind);
        }
    }
    cp_prediction_free(&r);
    return CP_OK;
}
