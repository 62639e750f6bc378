/*
 * schedule.c - 1F1B and interleaved 1F1B as events (see schedule.h;
 * docs/model.md eq. S1-S3).
 *
 * Each stage r gets its list of operations in Megatron's order; then the
 * lists are swept in turn, each stage placing operations until one waits
 * for an input not yet produced, until every list is empty.  Each
 * operation starts at max(stage free, input ready): the input of forward
 * (micro-batch j, global chunk G = c p + r) is forward (j, G - 1) plus a
 * send; of backward (j, G), backward (j, G + 1) plus a send, or for the
 * last chunk its own forward.  Sends either hold the sender (blocking
 * send/recv) or only delay the receiver.
 */
#include <stdlib.h>
#include <string.h>

#include "llm/schedule.h"

/* One operation of a stage's list. */
typedef struct op {
    int fwd;      /* 1 forward, 0 backward */
    int chunk;    /* model chunk of this stage, 0 .. v-1 */
    int micro;
} op;

/* Megatron's warm-up count and order for stage r (schedules.py):
 * non-interleaved, min(p - r - 1, m) forwards; interleaved, (p - r - 1) 2 +
 * (v - 1) p virtual micro-batches, at most m v. */
static int warmup(int p, int v, int m, int r)
{
    int w = v > 1 ? (p - r - 1) * 2 + (v - 1) * p : p - r - 1;
    return w < m * v ? w : m * v;
}

/* Virtual micro-batch k of a stage: its chunk (forward order; backward
 * runs the chunks in reverse) and micro-batch, in groups of p. */
static void virtual_mb(int p, int v, int k, int fwd, int *chunk, int *micro)
{
    int c = (k % (p * v)) / p;
    *chunk = fwd ? c : v - 1 - c;
    *micro = (k / (p * v)) * p + k % p;
}

/* Stage r's list: warm-up forwards, then one forward and one backward
 * in turn, then the remaining backwards. */
static int build_list(int p, int v, int m, int r, op *list)
{
    int total = m * v, w = warmup(p, v, m, r), n = 0, k;
    for (k = 0; k < w; k++) {
        list[n].fwd = 1;
        virtual_mb(p, v, k, 1, &list[n].chunk, &list[n].micro);
        n++;
    }
    for (k = 0; k < total - w; k++) {
        list[n].fwd = 1;
        virtual_mb(p, v, w + k, 1, &list[n].chunk, &list[n].micro);
        n++;
        list[n].fwd = 0;
        virtual_mb(p, v, k, 0, &list[n].chunk, &list[n].micro);
        n++;
    }
    for (k = total - w; k < total; k++) {
        list[n].fwd = 0;
        virtual_mb(p, v, k, 0, &list[n].chunk, &list[n].micro);
        n++;
    }
    return n;
}

void cp_sched_free(cp_sched_out *o)
{
    free(o->stage_end_ms);
    free(o->busy_ms);
    free(o->send_ms);
    free(o->first_fwd_start_ms);
    free(o->last_bwd_start_ms);
    free(o->last_bwd_end_ms);
    free(o->ev);
    memset(o, 0, sizeof *o);
}

/* Scratch of one run. */
typedef struct run {
    const cp_sched_in *in;
    cp_sched_out *out;
    op *lists;          /* [p][2 m v] */
    int *len, *pos;     /* [p] */
    double *free_at;    /* [p] when the stage is next free */
    double *fdone, *bdone; /* [(p v) m] when forward/backward of (G, j) ended (-1 not yet) */
    int evcap;
} run;

static int record(run *R, int stage, int chunk, int micro, cp_sched_kind k, double s, double t)
{
    cp_sched_out *o = R->out;
    if (!R->in->keep_events)
        return 0;
    if (o->nev >= R->evcap) {
        int cap = R->evcap ? 2 * R->evcap : 256;
        cp_sched_event *ev = realloc(o->ev, (size_t)cap * sizeof *ev);
        if (!ev)
            return -1;
        o->ev = ev;
        R->evcap = cap;
    }
    o->ev[o->nev].stage = stage;
    o->ev[o->nev].chunk = chunk;
    o->ev[o->nev].micro = micro;
    o->ev[o->nev].kind = k;
    o->ev[o->nev].start_ms = s;
    o->ev[o->nev].end_ms = t;
    o->nev++;
    return 0;
}

/* When the input of operation `o` of stage r is ready, or -1 when the
 * operation it waits for has not been placed. */
static double input_ready(const run *R, int r, const op *o)
{
    const cp_sched_in *in = R->in;
    int p = in->pp, v = in->vp, m = in->micro, G = o->chunk * p + r, last = p * v - 1;
    double t;
    if (o->fwd) {
        if (G == 0)
            return 0;
        t = R->fdone[(size_t)(G - 1) * m + o->micro];
        return t < 0 ? -1 : t + (in->p2p_blocks ? 0 : in->p2p_ms);
    }
    if (G == last) {
        t = R->fdone[(size_t)G * m + o->micro];
        return t;
    }
    t = R->bdone[(size_t)(G + 1) * m + o->micro];
    return t < 0 ? -1 : t + (in->p2p_blocks ? 0 : in->p2p_ms);
}

/* Place stage r's operations until one must wait; 1 when any was placed,
 * -1 out of memory. */
static int advance(run *R, int r)
{
    const cp_sched_in *in = R->in;
    cp_sched_out *out = R->out;
    int p = in->pp, v = in->vp, m = in->micro, moved = 0;
    while (R->pos[r] < R->len[r]) {
        const op *o = &R->lists[(size_t)r * 2 * m * v + R->pos[r]];
        int G = o->chunk * p + r, idx = r * v + o->chunk;
        double ready = input_ready(R, r, o), start, dur, end;
        int sends;
        if (ready < 0)
            break;
        start = ready > R->free_at[r] ? ready : R->free_at[r];
        dur = o->fwd ? in->fwd_ms[idx] : in->bwd_ms[idx];
        end = start + dur;
        if (record(R, r, o->chunk, o->micro, o->fwd ? CP_EV_FWD : CP_EV_BWD, start, end))
            return -1;
        out->busy_ms[r] += dur;
        if (o->fwd) {
            if (o->micro == 0 && out->first_fwd_start_ms[idx] < 0)
                out->first_fwd_start_ms[idx] = start;
        } else if (o->micro == m - 1) {
            out->last_bwd_start_ms[idx] = start;
            out->last_bwd_end_ms[idx] = end;
        }
        /* a forward sends to the next chunk, a backward to the previous */
        sends = o->fwd ? G < p * v - 1 : G > 0;
        if (sends && in->p2p_blocks && in->p2p_ms > 0) {
            if (record(R, r, o->chunk, o->micro, CP_EV_SEND, end, end + in->p2p_ms))
                return -1;
            end += in->p2p_ms;
            out->send_ms[r] += in->p2p_ms;
        }
        if (o->fwd)
            R->fdone[(size_t)G * m + o->micro] = end;
        else
            R->bdone[(size_t)G * m + o->micro] = end;
        R->free_at[r] = end;
        R->pos[r]++;
        moved = 1;
    }
    return moved;
}

static int alloc_run(run *R, const cp_sched_in *in, cp_sched_out *out)
{
    int p = in->pp, v = in->vp, m = in->micro, i;
    size_t gm = (size_t)p * v * m;
    memset(out, 0, sizeof *out);
    R->in = in;
    R->out = out;
    R->lists = malloc((size_t)p * 2 * m * v * sizeof *R->lists);
    R->len = calloc((size_t)p, sizeof *R->len);
    R->pos = calloc((size_t)p, sizeof *R->pos);
    R->free_at = calloc((size_t)p, sizeof *R->free_at);
    R->fdone = malloc(gm * sizeof *R->fdone);
    R->bdone = malloc(gm * sizeof *R->bdone);
    out->stage_end_ms = calloc((size_t)p, sizeof(double));
    out->busy_ms = calloc((size_t)p, sizeof(double));
    out->send_ms = calloc((size_t)p, sizeof(double));
    out->first_fwd_start_ms = malloc((size_t)p * v * sizeof(double));
    out->last_bwd_start_ms = calloc((size_t)p * v, sizeof(double));
    out->last_bwd_end_ms = calloc((size_t)p * v, sizeof(double));
    if (!R->lists || !R->len || !R->pos || !R->free_at || !R->fdone || !R->bdone ||
        !out->stage_end_ms || !out->busy_ms || !out->send_ms || !out->first_fwd_start_ms ||
        !out->last_bwd_start_ms || !out->last_bwd_end_ms)
        return -1;
    for (i = 0; i < p * v; i++)
        out->first_fwd_start_ms[i] = -1;
    for (i = 0; i < (int)gm; i++)
        R->fdone[i] = R->bdone[i] = -1;
    return 0;
}

static void free_run(run *R)
{
    free(R->lists);
    free(R->len);
    free(R->pos);
    free(R->free_at);
    free(R->fdone);
    free(R->bdone);
}

int cp_sched_run(const cp_sched_in *in, cp_sched_out *out, cp_err *e)
{
    run R;
    int p = in->pp, v = in->vp, m = in->micro, r, left, rc = CP_OK;
    memset(&R, 0, sizeof R);
    if (p < 1 || v < 1 || m < 1)
        return cp_fail(e, CP_EINPUT, "a pipeline needs a stage, a chunk and a micro-batch");
    if (v > 1 && m % p)
        return cp_fail(e, CP_EINPUT, "the interleaved schedule needs the %d micro-batches to "
                       "be a multiple of the %d stages", m, p);
    if (alloc_run(&R, in, out)) {
        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
        goto done;
    }
    for (r = 0; r < p; r++)
        R.len[r] = build_list(p, v, m, r, R.lists + (size_t)r * 2 * m * v);
    do { /* sweep the stages until every list is placed */
        int moved = 0;
        left = 0;
        for (r = 0; r < p; r++) {
            int k = advance(&R, r);
            if (k < 0) {
                rc = cp_fail(e, CP_EINTERNAL, "out of memory");
                goto done;
            }
            moved |= k;
            left += R.pos[r] < R.len[r];
        }
        if (left && !moved) { /* a schedule that waits on itself: a bug, not input */
            rc = cp_fail(e, CP_EINTERNAL, "pipeline schedule deadlocked (p %d, v %d, m %d)",
                         p, v, m);
            goto done;
        }
    } while (left);
    for (r = 0; r < p; r++) {
        out->stage_end_ms[r] = R.free_at[r];
        if (R.free_at[r] > out->end_ms)
            out->end_ms = R.free_at[r];
    }
done:
    free_run(&R);
    if (rc)
        cp_sched_free(out);
    return rc;
}

double cp_sched_bubble_ms(int pp, int vp, double f_ms, double b_ms)
{
    return (pp - 1) * (f_ms + b_ms) / (vp > 0 ? vp : 1);
}
