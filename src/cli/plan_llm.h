/*
 * plan_llm.h - `plan` for a large-model layout (docs/planner.md "Large-
 * model layouts"): the layout priced as predict prices it, one pipeline
 * stage's gradient buckets with their ready times as the planner's model
 * (llm/stageplan.h), the stage's data-parallel group as its machine
 * (cp_groups_machine), and the same machine rebuilt from a plan's layout
 * for simulate.
 *
 * Ownership: cli_plan_llm owns its model and machine (cli_plan_llm_free).
 */
#ifndef CP_CLI_PLAN_LLM_H
#define CP_CLI_PLAN_LLM_H

#include "cli/predict_llm.h"
#include "coarse_plan.h"
#include "llm/stageplan.h"
#include "out/plan_write.h"

typedef struct cli_plan_llm {
    cp_stage_grads sg;      /* the stage's gradients: the planner's model */
    cp_topo *machine;       /* owned: the stage's data-parallel group as a machine */
    cp_layout l;            /* resolved */
    cp_plan_layout info;    /* the plan file's "layout" object */
    int slowest;            /* the stage predict finds slowest */
    const char *dp_alg;     /* predict's data-parallel algorithm (static) */
} cli_plan_llm;

/* Price layout L of model file `model` on `hosts` copies of host `topo`,
 * and build stage `stage`'s gradients (-1: the slowest stage's) and its
 * data-parallel group's machine.  The layout's refusals are predict's. */
int cli_plan_llm_setup(const cli_llm *L, const char *model, const char *topo, int hosts,
                       int stage, cli_plan_llm *out, cp_err *e);

/* Put the stage's timeline into the predictor's compute c (built from
 * sg.model): each bucket ready when the last micro-batch's backward has
 * produced it, the compute ending with the stage's last backward and its
 * optimizer step. */
void cli_plan_llm_timeline(const cli_plan_llm *s, cp_compute *c);

void cli_plan_llm_free(cli_plan_llm *s);

/* The machine a plan with layout L was made on: the data-parallel group
 * of L on the one-host topology file `path` (simulate replays on it). */
int cli_plan_llm_machine(const char *path, const cpl_layout *L, cp_topo **out, cp_err *e);

#endif
