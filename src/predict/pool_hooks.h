/*
 * pool_hooks.h - what the predictor and the sharded frameworks call of the
 * `pool` strategy (pool_strategy.c, which defines them): a header of its
 * own, on forward declarations, so that predictor.c, sharded.c and
 * shard_ops.c need not include pool_strategy.h, whose .c includes theirs
 * (no include circle: tools/include-cycles.sh).
 */
#ifndef CP_POOL_HOOKS_H
#define CP_POOL_HOOKS_H

#include "core/err.h"
#include "cost/collective.h"

struct cp_predictor;
struct cp_predict_opts;

/* Build the pool model into p (borrow like's when like is not NULL) when
 * the topology has a pool; nothing otherwise.  CP_OK, or an error from
 * cp_pool_build. */
int cp_pool_predictor_attach(struct cp_predictor *p, const struct cp_predictor *like,
                             const struct cp_predict_opts *o, cp_err *e);

/* Free what attach built (not what it borrowed). */
void cp_pool_predictor_detach(struct cp_predictor *p);

/* Eq. PL8, --offload pool: ms of pulling `rd` and publishing `wr` bytes
 * of every GPU's own data (no exchange) through the pool, all GPUs at
 * once; 0 when nothing moves or there is no pool. */
double cp_pool_copy_ms(const struct cp_predictor *p, double rd, double wr);

/* Eq. PL8: the pool copies around each GPU's optimizer step on its shard
 * of `group` GPUs: its optimizer states pulled before and published after,
 * and under ZeRO-3 and FSDP its updated parameter shard published; ms. */
double cp_pool_offload_step_ms(const struct cp_predictor *p, const struct cp_predict_opts *o,
                               int group);

/* Time in us of `op` on `bytes` through the pool; negative when the
 * machine has none. */
double cp_pool_strategy_us(const struct cp_predictor *p, cp_coll_op op, double bytes);

/* Why the pool strategy cannot run here. */
const char *cp_pool_strategy_why_not(const struct cp_predictor *p);

#endif
