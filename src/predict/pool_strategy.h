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
int cp_pool_predictor_attach(cp_predictor *p, const cp_predictor *like, cp_err *e);

/* Free what attach built (not what it borrowed). */
void cp_pool_predictor_detach(cp_predictor *p);

/* Time in us of `op` on `bytes` through the pool; negative when the
 * machine has none. */
double cp_pool_strategy_us(const cp_predictor *p, cp_coll_op op, double bytes);

/* Why the pool strategy cannot run here. */
const char *cp_pool_strategy_why_not(const cp_predictor *p);

#endif
