/*
 * pool_strategy.c - the `pool` strategy's hooks into the predictor (see
 * pool_strategy.h).  The predictor owns (or borrows) one cp_pool built with
 * its own collective model, whose in-host phases the pool's hierarchical
 * form uses on hosts of several GPUs (docs/pool.md, eq. PL7).
 */
#include <stdlib.h>

#include "predict/memory.h"
#include "predict/pool_strategy.h"

int cp_pool_predictor_attach(cp_predictor *p, const cp_predictor *like,
                             const cp_predict_opts *o, cp_err *e)
{
    int rc;
    p->pool_params = o->offload == CP_OFFLOAD_POOL &&
                     (o->framework == CP_FW_ZERO3 || o->framework == CP_FW_FSDP);
    if (o->offload == CP_OFFLOAD_POOL && !cp_pool_present(p->topo))
        return cp_fail_at(e, CP_EINPUT, p->topo->src_path, 0, 0, NULL,
                          "--offload pool: %s has no CXL pool (no cxl_switch node, no pool "
                          "block)", p->topo->name);
    if (like) {
        p->pool = like->pool;
        return CP_OK;
    }
    if (!cp_pool_present(p->topo))
        return CP_OK;
    if (!(p->pool = malloc(sizeof *p->pool)))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    if ((rc = cp_pool_build(p->topo, &p->coll, p->pool, e))) {
        free(p->pool);
        p->pool = NULL;
        return rc;
    }
    p->have_pool = 1;
    return CP_OK;
}

void cp_pool_predictor_detach(cp_predictor *p)
{
    if (p->have_pool) {
        cp_pool_free(p->pool);
        free(p->pool);
    }
    p->pool = NULL;
    p->have_pool = 0;
}

double cp_pool_strategy_us(const cp_predictor *p, cp_coll_op op, double bytes)
{
    if (!p->pool)
        return -1;
    /* the predictor may have been moved since attach: its own model */
    p->pool->coll = &p->coll;
    return cp_pool_time_us(p->pool, (cp_xop)op, bytes, NULL);
}

const char *cp_pool_strategy_why_not(const cp_predictor *p)
{
    if (p->pool)
        return "the pool runs collectives over every GPU; hybrid sharding's in-host and "
               "peer operations are the network's";
    return "the machine has no CXL pool (no cxl_switch node, no pool block)";
}

double cp_pool_copy_ms(const cp_predictor *p, double rd, double wr)
{
    if (!p->pool || !(rd > 0 || wr > 0))
        return 0;
    return cp_pool_copy_us(p->pool, rd, wr, NULL) / 1e3;
}

double cp_pool_offload_step_ms(const cp_predictor *p, const cp_predict_opts *o, int group)
{
    double shard = (double)p->model->params / (group > 0 ? group : 1);
    double states = shard * cp_optimizer_bytes(o->optimizer, p->elem_bytes);
    double params = p->pool_params ? shard * p->elem_bytes : 0;
    if (o->offload != CP_OFFLOAD_POOL)
        return 0;
    return cp_pool_copy_ms(p, states, 0) + cp_pool_copy_ms(p, 0, states + params);
}
