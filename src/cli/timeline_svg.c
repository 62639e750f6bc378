/*
 * timeline_svg.c - `predict --timeline-svg`: one iteration per strategy as
 * a Gantt chart, so that a reader sees where the exposed communication
 * comes from (a bucket that starts late, a gather that stalls forward).
 *
 * Two lanes per strategy: the compute stream (earlier micro-batches,
 * forward, backward, the copy back, the optimizer) and the communication
 * stream (every bucket or operation of the --timeline CSV, coloured by
 * collective).  Hovering a bar shows what it is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/fileio.h"
#include "core/units.h"
#include "out/svg.h"

/* Legend colours (svg.c's palette, in this order). */
enum { C_FORWARD, C_BACKWARD, C_OPTIMIZER, C_ALLREDUCE, C_REDUCESCATTER, C_ALLGATHER, C_OTHER,
       C_MICRO, C_COLOURS };

static const char *const legend[C_COLOURS] = {
    "forward", "backward", "optimizer, copies", "all-reduce", "reduce-scatter", "all-gather",
    "other transfers", "earlier micro-batches"};

#define TIP 160

/* The colour of a communication run, from its algorithm's name. */
static int run_colour(const char *how)
{
    if (strncmp(how, "reducescatter", 13) == 0)
        return C_REDUCESCATTER;
    if (strncmp(how, "allgather", 9) == 0)
        return C_ALLGATHER;
    if (strncmp(how, "ps", 2) == 0 || strncmp(how, "proxy", 5) == 0 ||
        strncmp(how, "memdev", 6) == 0 || strcmp(how, "d2h") == 0 || strcmp(how, "h2d") == 0)
        return C_OTHER; /* the parameter server, proxies, offload's host copies */
    return C_ALLREDUCE;
}

static int span_colour(cp_span_kind k)
{
    switch (k) {
    case CP_SPAN_MICRO: return C_MICRO;
    case CP_SPAN_FORWARD: return C_FORWARD;
    case CP_SPAN_BACKWARD: return C_BACKWARD;
    default: return C_OPTIMIZER;
    }
}

/* Bars and their tips for the n predictions, two lanes each; the caller
 * frees *bars and *tips. */
static int build(const cp_prediction *res, int n, cp_gantt_lane *lanes, char (*labels)[64],
                 cp_gantt_bar **bars, char **tips)
{
    int i, k, total = 0, b = 0;
    for (i = 0; i < n; i++)
        total += res[i].nspans + res[i].nruns;
    *bars = calloc((size_t)total + 1, sizeof **bars);
    *tips = calloc((size_t)total + 1, TIP);
    if (!*bars || !*tips)
        return -1;
    for (i = 0; i < n; i++) {
        const cp_prediction *p = &res[i];
        size_t c = 2 * (size_t)i, m = c + 1; /* its compute and communication lanes */
        cp_gantt_lane *cl = &lanes[c], *ml = &lanes[m];
        snprintf(labels[c], sizeof labels[c], "%s: compute", cp_strategy_name(p->strategy));
        snprintf(labels[m], sizeof labels[m], "%s: communication",
                 cp_strategy_name(p->strategy));
        cl->label = labels[c];
        ml->label = labels[m];
        cl->bar = *bars + b;
        for (k = 0; k < p->nspans; k++, b++) {
            const cp_span *s = &p->spans[k];
            char *tip = *tips + (size_t)b * TIP;
            snprintf(tip, TIP, "%s: %.3f -> %.3f ms", cp_span_name(s->kind), s->start_ms,
                     s->end_ms);
            (*bars)[b] = (cp_gantt_bar){s->start_ms, s->end_ms, span_colour(s->kind), tip};
        }
        cl->nbar = p->nspans;
        ml->bar = *bars + b;
        for (k = 0; k < p->nruns; k++, b++) {
            const cp_bucket_run *r = &p->runs[k];
            char *tip = *tips + (size_t)b * TIP;
            snprintf(tip, TIP, "#%d %s %s, %.3f MB, %d tensor%s: ready %.3f, %.3f -> %.3f ms",
                     k, r->how, r->proto, r->bytes / 1e6, r->ntensors, cp_s(r->ntensors),
                     r->ready_ms, r->start_ms, r->finish_ms);
            (*bars)[b] = (cp_gantt_bar){r->start_ms, r->finish_ms, run_colour(r->how), tip};
        }
        ml->nbar = p->nruns;
    }
    return 0;
}

int cli_write_timeline_svg(const char *path, const cp_predictor *pr, const cp_prediction *res,
                           int n, cp_err *e)
{
    cp_gantt_lane lanes[2 * CP_STRATEGIES];
    char labels[2 * CP_STRATEGIES][64], title[256];
    cp_gantt_bar *bars = NULL;
    char *tips = NULL;
    cp_gantt g;
    cp_outfile out;
    int i, rc;
    memset(&g, 0, sizeof g);
    for (i = 0; i < n; i++)
        if (res[i].iteration_ms > g.end)
            g.end = res[i].iteration_ms;
    if (build(res, n, lanes, labels, &bars, &tips)) {
        free(bars);
        free(tips);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    snprintf(title, sizeof title, "%s on %s (%d GPU%s): one iteration (coarse-plan predict)",
             pr->model->name, pr->topo->name, pr->topo->ngpus, cp_s(pr->topo->ngpus));
    g.title = title;
    g.nlane = 2 * n;
    g.lane = lanes;
    g.nlegend = C_COLOURS;
    g.legend = legend;
    if ((rc = cp_out_open(&out, path, e)) == CP_OK) {
        if (cp_svg_gantt(&g, out.f)) {
            cp_out_abort(&out);
            rc = cp_fail(e, CP_EINTERNAL, "writing %s failed", path);
        } else {
            rc = cp_out_commit(&out, e);
        }
    }
    free(bars);
    free(tips);
    return rc;
}
