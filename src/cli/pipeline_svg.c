/*
 * pipeline_svg.c - `predict --timeline-svg` for a large-model layout: the
 * pipeline stages against time, one lane a stage, every micro-batch's
 * forward and backward through each chunk, the blocking sends, and each
 * stage's data-parallel tail and optimizer step, so the bubble and what
 * the iteration waits for can be seen at a glance.  A mixture of experts'
 * exposed all-to-alls end each forward and backward bar in a colour of
 * their own (summed over the chunk's blocks: they interleave with its
 * kernels, eq. E6).  Hovering a bar says
 * what it is (stage, chunk, micro-batch, times).
 *
 * At most MAX_LANES stages are drawn: a deeper pipeline shows its first
 * and last stages, which hold the longest waits (fill and drain).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/predict_llm.h"
#include "core/fileio.h"
#include "out/svg.h"

enum { C_FWD, C_BWD, C_SEND, C_DP, C_STEP, C_EP, C_COLOURS };

static const char *const legend[C_COLOURS] = {
    "forward", "backward (recomputation included)", "blocking send",
    "data-parallel sync (exposed)", "optimizer step, gathers",
    "expert all-to-all (exposed, the chunk's summed)"};

#define MAX_LANES 32
#define TIP 120

/* The stages drawn: all of them, or the first and last MAX_LANES / 2. */
static int lane_stage(int pp, int k)
{
    if (pp <= MAX_LANES || k < MAX_LANES / 2)
        return k;
    return pp - MAX_LANES + k;
}

int cli_llm_pipeline_svg(const char *path, const char *title, const cp_layout *l,
                         const cp_llm_result *res, cp_err *e)
{
    int nl = l->pp < MAX_LANES ? l->pp : MAX_LANES, i, k, nb = 0, rc;
    const cp_sched_out *s = &res->sched;
    cp_gantt_lane lanes[MAX_LANES];
    char labels[MAX_LANES][32];
    cp_gantt_bar *bars = calloc(2 * (size_t)s->nev + 2 * (size_t)nl + 1, sizeof *bars);
    char *tips = calloc(2 * (size_t)s->nev + 2 * (size_t)nl + 1, TIP);
    int *lane_of = malloc(((size_t)l->pp + 1) * sizeof *lane_of);
    cp_gantt g;
    cp_outfile out;
    if (!bars || !tips || !lane_of || !res->have_sched || !res->dp_end_ms) {
        free(bars), free(tips), free(lane_of);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    for (i = 0; i < l->pp; i++)
        lane_of[i] = -1;
    for (k = 0; k < nl; k++)
        lane_of[lane_stage(l->pp, k)] = k;
    for (k = 0; k < nl; k++) { /* each lane's bars are contiguous: one pass per lane */
        int r = lane_stage(l->pp, k), first = nb;
        snprintf(labels[k], sizeof labels[k], "stage %d", r);
        for (i = 0; i < s->nev; i++) {
            const cp_sched_event *ev = &s->ev[i];
            char *tip = tips + (size_t)nb * TIP;
            double a2a = 0, to;
            if (ev->stage != r)
                continue;
            if (res->ep_fwd_ms && ev->kind != CP_EV_SEND)
                a2a = (ev->kind == CP_EV_FWD ? res->ep_fwd_ms
                                             : res->ep_bwd_ms)[r * l->vp + ev->chunk];
            if (a2a > ev->end_ms - ev->start_ms)
                a2a = ev->end_ms - ev->start_ms;
            to = ev->end_ms - a2a;
            snprintf(tip, TIP, "stage %d chunk %d micro-batch %d %s: %.2f -> %.2f ms", r,
                     ev->chunk, ev->micro, ev->kind == CP_EV_FWD ? "forward"
                                           : ev->kind == CP_EV_BWD ? "backward" : "send",
                     ev->start_ms, ev->end_ms);
            bars[nb++] = (cp_gantt_bar){ev->start_ms, to,
                                        ev->kind == CP_EV_FWD ? C_FWD
                                        : ev->kind == CP_EV_BWD ? C_BWD : C_SEND, tip};
            if (a2a > 0) {
                tip = tips + (size_t)nb * TIP;
                snprintf(tip, TIP, "stage %d chunk %d micro-batch %d %s: expert all-to-alls "
                         "%.2f ms exposed", r, ev->chunk, ev->micro,
                         ev->kind == CP_EV_FWD ? "forward" : "backward", a2a);
                bars[nb++] = (cp_gantt_bar){to, ev->end_ms, C_EP, tip};
            }
        }
        if (res->dp_end_ms[r] > s->stage_end_ms[r]) {
            char *tip = tips + (size_t)nb * TIP;
            snprintf(tip, TIP, "stage %d gradients reduced: %.2f -> %.2f ms", r,
                     s->stage_end_ms[r], res->dp_end_ms[r]);
            bars[nb++] = (cp_gantt_bar){s->stage_end_ms[r], res->dp_end_ms[r], C_DP, tip};
        }
        {
            double from = res->dp_end_ms[r] > s->stage_end_ms[r] ? res->dp_end_ms[r]
                                                                 : s->stage_end_ms[r];
            char *tip = tips + (size_t)nb * TIP;
            snprintf(tip, TIP, "stage %d optimizer step and gathers: %.2f -> %.2f ms", r, from,
                     res->step_end_ms[r]);
            bars[nb++] = (cp_gantt_bar){from, res->step_end_ms[r], C_STEP, tip};
        }
        lanes[k].label = labels[k];
        lanes[k].bar = bars + first;
        lanes[k].nbar = nb - first;
    }
    memset(&g, 0, sizeof g);
    g.title = title;
    g.nlane = nl;
    g.lane = lanes;
    g.nlegend = C_COLOURS;
    g.legend = legend;
    g.end = res->iteration_ms;
    if ((rc = cp_out_open(&out, path, e)) == CP_OK) {
        if (cp_svg_gantt(&g, out.f)) {
            cp_out_abort(&out);
            rc = cp_fail(e, CP_EINTERNAL, "writing %s failed", path);
        } else {
            rc = cp_out_commit(&out, e);
        }
    }
    free(bars), free(tips), free(lane_of);
    return rc;
}
