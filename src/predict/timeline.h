/*
 * timeline.h - when each gradient bucket is ready during backward, and how
 * frameworks group gradients into buckets.
 *
 * Compute: per-layer forward and backward times, from the model file or from
 * one measured single-GPU iteration time split over layers by FLOPs (or
 * parameters), with backward = bwd_fwd_ratio x forward (docs/model.md eq. P1).
 * Backward runs from the last layer to the first; a layer's gradients are
 * ready when its backward finishes (eq. P2).
 *
 * Bucketing, as the frameworks do it:
 *   DDP: tensors in reverse registration order, a tensor never split, the
 *     first bucket closing at 1 MiB and later ones at bucket_cap (25 MiB),
 *     a bucket closing as soon as it reaches its cap (PyTorch reducer.cpp
 *     compute_bucket_assignment_by_size); a bucket is ready when its last
 *     tensor is.
 *   Horovod: a background cycle (5 ms) gathers the tensors that became ready
 *     and fuses them into buffers up to the fusion threshold (64 MiB).
 *   One bucket per tensor (TensorFlow's per-variable all-reduce) is DDP with
 *     a cap of 0 bytes.
 *
 * Ownership: cp_compute and cp_buckets own their arrays; free them with
 * cp_compute_free / cp_buckets_free.
 */
#ifndef CP_TIMELINE_H
#define CP_TIMELINE_H

#include "model/model.h"

typedef struct cp_compute {
    int nlayers;
    double *fwd_ms;      /* [layer] */
    double *bwd_ms;      /* [layer] */
    double fwd_total, bwd_total, optimizer_ms;
    double lead_ms;      /* earlier micro-batches of an accumulated step (eq. P8); 0 */
    double *ready_ms;    /* [layer] time from iteration start when its gradients exist */
} cp_compute;

/* Compute times for `m`.  compute_ms > 0 overrides the model's own timing
 * (it is the measured single-GPU iteration time).  CP_EINPUT when neither the
 * model nor compute_ms gives a time. */
int cp_compute_build(const cp_model *m, double compute_ms, cp_compute *c, cp_err *e);
void cp_compute_free(cp_compute *c);

/* Multiply every compute time (and readiness) by f > 0. */
void cp_compute_scale(cp_compute *c, double f);

/* The same for forward and backward only (a larger batch: the optimizer
 * step does not grow with it). */
void cp_compute_scale_passes(cp_compute *c, double f);

/* Total compute of one optimizer step: earlier micro-batches + forward +
 * backward + optimizer. */
double cp_compute_total(const cp_compute *c);

/* Eq. P7: one pass over `bytes` of GPU memory, reading and writing each
 * byte once, at mem_gbs GB/s, in ms; 0 when mem_gbs is not known. */
double cp_copy_ms(double bytes, double mem_gbs);

/* Eq. P7: DDP's gradient copies into the buckets, charged to the compute
 * stream where the reducer runs them: each gradient is copied (and scaled
 * by 1/N) into its bucket as backward produces it, stretching that layer's
 * backward.  A copy reads and writes each byte once, at the GPU's memory
 * bandwidth mem_gbs (GB/s); mem_gbs 0 charges nothing.  Returns what one
 * such pass over every gradient costs (ms): the copy back after the
 * all-reduce, which the caller places after the synchronisation. */
double cp_compute_add_copies(cp_compute *c, const cp_model *m, int elem_bytes, double mem_gbs);

/* Eq. P8: gradient accumulation.  steps - 1 micro-batches of micro_ms each
 * (forward + backward, no synchronisation) run before the one whose
 * backward overlaps the all-reduce. */
void cp_compute_accumulate(cp_compute *c, int steps, double micro_ms);

typedef struct cp_bucket {
    int first, count;    /* tensors order[first .. first+count) of cp_buckets.order */
    double bytes;        /* gradient bytes */
    double ready_ms;     /* when the last of its tensors is ready */
} cp_bucket;

typedef struct cp_buckets {
    int *order;          /* tensor indices in bucket order (reverse registration) */
    int ntensors;
    cp_bucket *b;
    int n;
} cp_buckets;

/* The DDP bucket caps in bytes: PyTorch's first_bucket_mb and bucket_cap_mb
 * (MiB, x 1,048,576), or, when apex_elems > 0, apex DDP's message_size in
 * gradient elements x elem_bytes for every bucket alike (apex has no small
 * first bucket): 1e7 elements are 40 MB of fp32 and 20 MB of fp16 gradients
 * (docs/model.md, P3). */
void cp_ddp_caps(double first_mb, double cap_mb, double apex_elems, int elem_bytes,
                 double *first_bytes, double *cap_bytes);

/* DDP buckets: first_cap_bytes for the first, cap_bytes for the rest
 * (cap 0: one tensor per bucket).  elem_bytes is the gradient element size. */
int cp_buckets_ddp(const cp_model *m, const cp_compute *c, int elem_bytes,
                   double first_cap_bytes, double cap_bytes, cp_buckets *out, cp_err *e);

void cp_buckets_free(cp_buckets *b);

#endif
