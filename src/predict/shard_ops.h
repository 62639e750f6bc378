/*
 * shard_ops.h - the communication stream of the sharded timelines
 * (sharded.c for ZeRO, fsdp.c for FSDP; docs/model.md eqs. Z1-Z6): room for
 * the run list, AllGathers, ReduceScatters and the peers' all-reduce queued
 * one after another on one stream in the scope they run in, the optimizer
 * step on the GPU or (offload) on the host with its copies, and the compute
 * spans of a micro-batch.
 *
 * Every cp_shard_issue* returns the finish of what it queued (ms), or -1
 * when strategy s cannot run it; *stream is when the stream is next free,
 * and the operation goes on out's run list (room for `cap`) when it keeps
 * one.
 *
 * Ownership: nothing here allocates but cp_shard_alloc_runs, whose run
 * list is the prediction's (cp_prediction_free).
 */
#ifndef CP_SHARD_OPS_H
#define CP_SHARD_OPS_H

#include "predict/predictor.h"

/* Where an operation runs (eq. Z3): over every GPU; inside every host at
 * once (hybrid sharding's gathers and reduce-scatters); or among the
 * peers, the GPUs of one local rank across the hosts, every group at once
 * (hybrid sharding's all-reduce of each shard). */
typedef enum cp_shard_scope { CP_SC_ALL, CP_SC_HOST, CP_SC_PEERS } cp_shard_scope;

/* Room for the timeline of K micro-batches of up to `per` operations plus
 * `extra` (when keep): CP_OK, CP_EINPUT when it would be too long to print,
 * or CP_EINTERNAL out of memory.  *cap is the room, kept or not. */
int cp_shard_alloc_runs(cp_prediction *out, int keep, double per, int K, double extra,
                        int *cap, cp_err *e);

/* `times` operations `op` of `bytes` each in scope sc, back to back (one
 * entry of the run list), issued at `at`. */
double cp_shard_issue_in(const cp_predictor *p, cp_strategy s, cp_coll_op op,
                         cp_shard_scope sc, double bytes, double times, int nt, double at,
                         double *stream, cp_prediction *out, int cap);

/* The same over every GPU. */
double cp_shard_issue_n(const cp_predictor *p, cp_strategy s, cp_coll_op op, double bytes,
                        double times, int nt, double at, double *stream, cp_prediction *out,
                        int cap);

/* One operation over every GPU. */
double cp_shard_issue(const cp_predictor *p, cp_strategy s, cp_coll_op op, double bytes,
                      int nt, double at, double *stream, cp_prediction *out, int cap);

/* A gradient bucket's ReduceScatter over every GPU, then under offload
 * each GPU's shard of it copied to host memory (eq. Z6). */
double cp_shard_reduce_bucket(const cp_predictor *p, cp_strategy s, int offload, double bytes,
                              int nt, double at, double *stream, cp_prediction *out, int cap);

/* Eq. Z6: host memory bytes the offloaded optimizer moves per parameter
 * (CP_OPT_ADAM or CP_OPT_SGD, gradients of grad_bytes). */
double cp_offload_step_bytes(int optimizer, int grad_bytes);

/* The GPU's share of the measured optimizer step when `group` GPUs share
 * a shard: 1/group of it, or nothing under offload (eq. Z6). */
double cp_shard_gpu_step_ms(const cp_predictor *p, const cp_predict_opts *o, int group);

/* The optimizer step from `at`, on the GPU or on the host with the copy
 * back (eq. Z6); *stream advances to its end.  0, or -1 out of memory. */
int cp_shard_optimizer_step(const cp_predictor *p, const cp_predict_opts *o, double at,
                            double *stream, cp_prediction *out, int cap);

/* A micro-batch's forward [start, fwd_end] and backward [fwd_end, end] on
 * the compute stream's chart: 0, or -1 when out of memory. */
int cp_shard_micro_spans(cp_prediction *out, double start, double fwd_end, double end);

/* The two largest of n values into *a >= *b (0 when absent). */
void cp_shard_two_largest(const double *v, int n, double *a, double *b);

#endif
