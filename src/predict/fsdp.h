/*
 * fsdp.h - PyTorch FullyShardedDataParallel's iteration (docs/model.md,
 * eqs. Z2-Z4): every unit of the wrap policy all-gathered before its
 * forward and again before its backward, its gradients reduce-scattered
 * when its backward ends; SHARD_GRAD_OP and HYBRID_SHARD (eq. Z3).
 * cp_predict_sharded (sharded.h) runs it and closes the iteration.
 *
 * Ownership: as cp_predict (predict.h).
 */
#ifndef CP_FSDP_H
#define CP_FSDP_H

#include "predict/predictor.h"

/* FSDP's micro-batches under strategy s from time 0: *end is the
 * iteration without the optimizer step.  CP_OK, 1 when s cannot run an
 * operation, or an error (CP_EINPUT: a timeline too long to print). */
int cp_fsdp_run(const cp_predictor *p, cp_strategy s, const cp_predict_opts *o, int keep,
                cp_prediction *out, double *end, cp_err *e);

/* Eq. M1 under FSDP: the bytes a GPU holds whole beyond its shard at the
 * busiest point (the root unit, two units gathered and one unit's
 * unsharded gradient; SHARD_GRAD_OP: every parameter and one unit's
 * gradient); -1 when out of memory. */
double cp_fsdp_gathered_bytes(const cp_predictor *p, const cp_predict_opts *o);

#endif
