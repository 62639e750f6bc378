/*
 * sharded.h - iteration time of sharded data parallelism: ZeRO stages 1,
 * 2 and 3 (DeepSpeed) and fully sharded data parallel (PyTorch FSDP).
 *
 * All replace the gradient all-reduce by a ReduceScatter (each GPU keeps
 * the sum of its 1/N shard) and an AllGather of parameters (docs/model.md,
 * eqs. Z1-Z5):
 *   ZeRO-2: gradient buckets are reduce-scattered as backward fills them,
 *     overlapping the rest of backward; each GPU steps the optimizer on its
 *     shard (1/N of the optimizer time); the updated parameters are then
 *     all-gathered in buckets before the next forward, not overlapped.
 *     ZeRO-1 reduce-scatters the same buckets once backward (and the
 *     accumulation) is over.
 *   FSDP: every layer's parameters are all-gathered just before its
 *     forward and again before its backward (prefetched one layer ahead,
 *     at most two layers gathered at once), and its gradients
 *     reduce-scattered as soon as its backward ends; one queue in issue
 *     order (one NCCL communicator runs its operations one at a time).  SHARD_GRAD_OP keeps the forward's parameters
 *     through backward; HYBRID_SHARD shards inside each host and
 *     all-reduces every shard across the hosts (eq. Z3).
 *   ZeRO-3: parameters gathered in prefetched groups, small tensors
 *     persistent, groups gathered again in backward only beyond the reuse
 *     distance, gradients reduce-scattered in buckets (eq. Z5).
 *   Gradient accumulation: every micro-batch synchronises (eq. Z4), but
 *     under ZeRO-1.
 *
 * ZeRO's timelines are sharded.c's, FSDP's fsdp.c's (fsdp.h), and the
 * communication stream both queue on shard_ops.c's (shard_ops.h).
 *
 * Ownership: as cp_predict (predict.h).
 */
#ifndef CP_SHARDED_H
#define CP_SHARDED_H

#include "predict/predictor.h"

/* Predict strategy s (ring, auto, best: the collective algorithm of every
 * ReduceScatter and AllGather) under o->framework CP_FW_ZERO1,
 * CP_FW_ZERO2, CP_FW_FSDP or CP_FW_ZERO3.  Strategies with no ReduceScatter or AllGather (tree, hier,
 * collnet, ps, proxy, coarse) come back unavailable, with the reason. */
int cp_predict_sharded(const cp_predictor *p, cp_strategy s, const cp_predict_opts *o,
                       int keep_runs, cp_prediction *out, cp_err *e);

/* ZeRO's reduce bucket in bytes: --bucket-mb, or DeepSpeed's default of
 * CP_ZERO_BUCKET_ELEMS gradients (o->bucket_mb <= 0). */
double cp_zero_bucket_bytes(const cp_predictor *p, const cp_predict_opts *o);

/* Eq. M1: the bytes a GPU holds whole beyond its shard at the busiest
 * point of an FSDP or ZeRO-3 iteration: under FSDP the root unit, two
 * units gathered and one unit's unsharded gradient (SHARD_GRAD_OP: every
 * parameter, and one unit's gradient); under ZeRO-3 the persistent
 * tensors, the groups kept from forward to backward and the two largest
 * groups gathered again.  0 for the other frameworks; -1 when out of
 * memory. */
double cp_sharded_gathered_bytes(const cp_predictor *p, const cp_predict_opts *o);

#endif
