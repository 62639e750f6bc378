/*
 * predict.h - iteration time of data-parallel training under a gradient
 * synchronisation strategy.
 *
 * The iteration is the single-GPU compute timeline (timeline.h) with the
 * framework's gradient buckets synchronised on one communication stream,
 * each bucket launched when it is ready and after the previous one finished,
 * overlapping the rest of backward (docs/model.md eqs. P1-P6):
 *
 *     start_i  = max(ready_i, finish_{i-1})          finish_i = start_i + T(bytes_i)
 *     iteration = max(fwd + bwd, finish_last) + copy back + optimizer
 *
 * TensorFlow's MirroredStrategy has one "bucket", every gradient packed
 * together once backward is over (eq. P11).
 *     exposed   = iteration - compute  (the communication overlap did not hide)
 *
 * T(bytes) is the strategy's time for one bucket: a collective algorithm
 * (collective.h), the parameter server, or (planner) the COARSE routes.
 *
 * The strategies, options, predictor and prediction record are predictor.h's
 * (included here); ZeRO and FSDP are sharded.h's, to which cp_predict hands
 * the sharded frameworks.
 *
 * Ownership: as predictor.h.
 */
#ifndef CP_PREDICT_H
#define CP_PREDICT_H

#include "predict/predictor.h"

/* Predict one strategy.  An unavailable strategy (no memory devices for
 * proxy, no reducing CPU for ps) returns CP_OK with out->available 0 and the
 * reason; `keep_runs` keeps the bucket list for --timeline. */
int cp_predict(const cp_predictor *p, cp_strategy s, const cp_predict_opts *o,
               int keep_runs, cp_prediction *out, cp_err *e);

#endif
