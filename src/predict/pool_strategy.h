/*
 * pool_strategy.h - the `pool` strategy: every gradient byte (and, under
 * the sharded frameworks, every gather and reduce-scatter) through the
 * machine's shared CXL pool (cost/pool.h), for predict and compare.
 */
#ifndef CP_POOL_STRATEGY_H
#define CP_POOL_STRATEGY_H

#include "cost/pool.h"
#include "predict/predict.h"

/* Build the pool model into p (borrow like's when like is not NULL) when
 * the topology has a pool; nothing otherwise.  CP_OK, or an error from
 * cp_pool_build. */
int cp_pool_predictor_attach(cp_predictor *p, const cp_predictor *like,
                             const cp_predict_opts *o, cp_err *e);

/* Eq. PL8, --offload pool: ms of pulling `rd` and publishing `wr` bytes
 * of every GPU's own data (no exchange) through the pool, all GPUs at
 * once; 0 when nothing moves or there is no pool. */
double cp_pool_copy_ms(const cp_predictor *p, double rd, double wr);

/* Eq. PL8: the pool copies around each GPU's optimizer step on its shard
 * of `group` GPUs: its optimizer states pulled before and published after,
 * and under ZeRO-3 and FSDP its updated parameter shard published; ms. */
double cp_pool_offload_step_ms(const cp_predictor *p, const cp_predict_opts *o, int group);

/* Free what attach built (not what it borrowed). */
void cp_pool_predictor_detach(cp_predictor *p);

/* Time in us of `op` on `bytes` through the pool; negative when the
 * machine has none. */
double cp_pool_strategy_us(const cp_predictor *p, cp_coll_op op, double bytes);

/* Why the pool strategy cannot run here. */
const char *cp_pool_strategy_why_not(const cp_predictor *p);

#endif
