/*
 * stageplan.h - one pipeline stage's data-parallel gradients as the COARSE
 * planner's model (`plan` with a layout, docs/planner.md "Large-model
 * layouts"): the stage's gradient buckets as the framework forms them
 * (dpsync.h: Megatron-Core's max(40 M, 1 M x dp x cp) parameters a bucket,
 * each chunk's own; one bucket a chunk where ZeRO-2/3 and FSDP reduce every
 * micro-batch) become the tensors, one layer each in forward order, whose
 * ready times come from the stage's last micro-batch's backward in the
 * schedule (schedule.h), and whose forward times, one micro-batch's through
 * the stage, give the planner its deadlines (eq. Q5).
 *
 * Ownership: cp_stage_grads owns its model and ready times
 * (cp_stage_grads_free).
 */
#ifndef CP_LLM_STAGEPLAN_H
#define CP_LLM_STAGEPLAN_H

#include "llm/iteration.h"

typedef struct cp_stage_grads {
    int stage;              /* the stage planned */
    int per_chunk;          /* buckets of each of its vp chunks */
    int64_t params;         /* its parameters on one GPU (cp_stage_params / tp), rounded to
                               whole elements a chunk: what the tensors hold */
    double bucket_params;   /* one full bucket, parameters */
    int elem_bytes;         /* gradient element: 4 (fp32 main_grad) or 2 */
    double stage_end_ms;    /* the stage's last backward ends (the schedule's) */
    double optimizer_ms;    /* its optimizer step (dpsync.h) */
    cp_model *model;        /* owned: one tensor a bucket, one layer a tensor, forward order */
    double *ready_ms;       /* owned, [layer]: when the last micro-batch's backward has
                               produced the bucket, from the iteration's start */
} cp_stage_grads;

/* The gradients of stage `stage` of layout l (resolved) on GPU g, from the
 * prediction r of that layout made with keep_events (its schedule and
 * events); `name` names the model.  CP_EINPUT for a mixture of experts
 * (their gradients reduce on another group) or a stage out of range;
 * CP_EINTERNAL out of memory. */
int cp_stage_grads_build(const cp_xformer *x, const cp_layout *l, const cp_gpu *g,
                         const cp_tiers *tiers, const cp_llm_result *r, int stage,
                         const char *name, cp_stage_grads *out, cp_err *e);

void cp_stage_grads_free(cp_stage_grads *s);

#endif
