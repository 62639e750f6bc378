/*
 * plan_predict.h - predictions for every strategy, the planner's included.
 *
 * cp_predict (predict.h) covers the collective and parameter-server
 * strategies; `proxy` and `coarse` need the planner, which sits above the
 * predictor (it uses its compute timeline and collective model).  This is
 * the one entry point the command line uses for all of them.
 */
#ifndef CP_PLAN_PREDICT_H
#define CP_PLAN_PREDICT_H

#include "plan/planner.h"

/* As cp_predict, for any strategy.  min_shard_kb <= 0 takes the default. */
int cp_predict_any(const cp_predictor *pr, cp_strategy s, const cp_predict_opts *o,
                   double min_shard_kb, int keep_runs, cp_prediction *out, cp_err *e);

#endif
