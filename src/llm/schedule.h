/*
 * schedule.h - pipeline schedules laid out as events: 1F1B (PipeDream-
 * Flush, Megatron's forward_backward_pipelining_without_interleaving) and
 * interleaved 1F1B with v model chunks per rank (Narayanan et al., SC'21;
 * Megatron's forward_backward_pipelining_with_interleaving), each stage
 * running its operations in the schedule's order, each operation starting
 * when its stage is free and its input has arrived from the neighbouring
 * stage (docs/model.md eq. S1-S3).  The bubble, the exposed sends and what
 * overlaps with what come out of the events, not from (p - 1) / m.
 *
 * Cost: O(p v m) operations, each placed once.  Ownership: cp_sched_out
 * owns its arrays (cp_sched_free).
 */
#ifndef CP_LLM_SCHEDULE_H
#define CP_LLM_SCHEDULE_H

#include "core/err.h"

typedef struct cp_sched_in {
    int pp, vp, micro;        /* stages, chunks per stage, micro-batches */
    const double *fwd_ms;     /* [pp * vp]: forward of one micro-batch through chunk c of
                                 stage r at [r * vp + c] */
    const double *bwd_ms;     /* the same for backward (recomputation included) */
    double p2p_ms;            /* one activation or gradient send to the adjacent stage */
    int p2p_blocks;           /* 1: a send holds its stage until it is received (the
                                 blocking send/recv pairs of the 1F1B schedule); 0: the
                                 transfer overlaps the next operation (overlap_p2p_comm) */
    int keep_events;          /* record every operation for a timeline */
} cp_sched_in;

typedef enum cp_sched_kind { CP_EV_FWD, CP_EV_BWD, CP_EV_SEND } cp_sched_kind;

typedef struct cp_sched_event {
    int stage, chunk, micro;
    cp_sched_kind kind;
    double start_ms, end_ms;
} cp_sched_event;

typedef struct cp_sched_out {
    double end_ms;            /* the last stage's last operation */
    double *stage_end_ms;     /* [pp] */
    double *busy_ms;          /* [pp] computing */
    double *send_ms;          /* [pp] held by blocking sends */
    double *first_fwd_start_ms; /* [pp * vp] when the chunk's first forward starts */
    double *last_bwd_start_ms;  /* [pp * vp] the chunk's last backward ... */
    double *last_bwd_end_ms;    /* ... its start and end (gradients complete) */
    cp_sched_event *ev;       /* keep_events: every operation, in start order per stage */
    int nev;
} cp_sched_out;

/* Lay out the schedule.  CP_EINPUT when vp > 1 and micro is not a multiple
 * of pp (Megatron's interleaved schedule needs it); CP_EINTERNAL out of
 * memory. */
int cp_sched_run(const cp_sched_in *in, cp_sched_out *out, cp_err *e);

void cp_sched_free(cp_sched_out *out);

/* The closed forms the events must agree with on uniform stages: the
 * 1F1B bubble (p - 1)(f + b) and its interleaved (p - 1)(f + b) / v (f, b
 * one micro-batch's forward and backward through a whole stage, no sends):
 * Narayanan et al. eq. 1 and 2, for tests and docs. */
double cp_sched_bubble_ms(int pp, int vp, double f_ms, double b_ms);

#endif
