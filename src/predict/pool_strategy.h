/*
 * pool_strategy.h - the `pool` strategy: every gradient byte (and, under
 * the sharded frameworks, every gather and reduce-scatter) through the
 * machine's shared CXL pool (cost/pool.h), for predict and compare.
 *
 * Its functions are declared in pool_hooks.h (the predictor and the
 * sharded frameworks call them without including this header, whose .c
 * includes theirs); this header adds the pool model and the predictor for
 * the commands and tests that use both.
 */
#ifndef CP_POOL_STRATEGY_H
#define CP_POOL_STRATEGY_H

#include "cost/pool.h"
#include "predict/pool_hooks.h"
#include "predict/predictor.h"

#endif
