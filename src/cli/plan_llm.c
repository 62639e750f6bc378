/*
 * plan_llm.c - `plan` for a large-model layout: the layout priced, one
 * stage's gradients and its data-parallel group's machine for the planner
 * (see plan_llm.h; docs/planner.md "Large-model layouts").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/plan_llm.h"
#include "llm/dpsync.h"
#include "load/load.h"

void cli_plan_llm_free(cli_plan_llm *s)
{
    cp_stage_grads_free(&s->sg);
    cp_topo_free(s->machine);
    memset(s, 0, sizeof *s);
}

int cli_plan_llm_setup(const cli_llm *L, const char *model, const char *topo, int hosts,
                       int stage, cli_plan_llm *out, cp_err *e)
{
    cp_model *m = NULL;
    cp_topo *t = NULL;
    cp_groups G;
    cp_tiers tiers;
    cp_llm_result res;
    cp_llm_opts o;
    cp_gpu g;
    cp_group_shape sh;
    int rc, have_groups = 0;
    memset(out, 0, sizeof *out);
    memset(&res, 0, sizeof res);
    if ((rc = cli_llm_open(L, model, topo, 0, hosts, &m, &t, &out->l, &g, &tiers, e)))
        goto done;
    if (out->l.dp * out->l.cp < 2) {
        rc = cp_fail(e, CP_EINPUT, "the layout has no data parallelism (DP x CP = 1): no "
                     "gradient to synchronise, nothing to plan");
        goto done;
    }
    if ((rc = cp_groups_build(&G, t, &out->l, L->net_gbs, NULL, e)))
        goto done;
    have_groups = 1;
    memset(&o, 0, sizeof o);
    o.dp_alg = CP_ALGS; /* predict's auto: NCCL's choice, or a pool with room */
    o.dp_pool = tiers.t[CP_TIER_POOL].available ? 2 : 0;
    o.keep_events = 1;
    o.tiers = &tiers;
    if ((rc = cp_llm_predict(&m->xf, &out->l, &g, &G, &o, &res, e)))
        goto done;
    out->slowest = res.stage;
    out->dp_alg = res.dp_alg;
    if ((rc = cp_stage_grads_build(&m->xf, &out->l, &g, &tiers, &res,
                                   stage < 0 ? res.stage : stage, m->name, &out->sg, e)) ||
        (rc = cp_groups_machine(t, &out->l, cp_dp_group(&out->l, 0), L->net_gbs, &out->machine, e)))
        goto done;
    cp_layout_group(&out->l, cp_dp_group(&out->l, 0), &sh);
    out->info.framework = cp_llm_fw_name(out->l.fw);
    out->info.tp = out->l.tp, out->info.pp = out->l.pp, out->info.vp = out->l.vp;
    out->info.cp = out->l.cp, out->info.dp = out->l.dp;
    out->info.mbs = out->l.mbs, out->info.gbs = out->l.gbs;
    out->info.seq = (long long)out->l.seq;
    out->info.stage = out->sg.stage;
    out->info.group = out->l.cp > 1 ? "dp-cp" : "dp";
    out->info.group_gpus = sh.size;
    out->info.group_hosts = sh.hosts;
    out->info.params = (long long)out->sg.params;
    out->info.bucket_params = out->sg.bucket_params;
    out->info.net_gbs = L->net_gbs;
    out->info.iteration_ms = res.iteration_ms;
done:
    cp_llm_result_free(&res);
    if (have_groups)
        cp_groups_free(&G);
    cp_model_free(m);
    cp_topo_free(t);
    if (rc)
        cli_plan_llm_free(out);
    return rc;
}

void cli_plan_llm_timeline(const cli_plan_llm *s, cp_compute *c)
{
    int i;
    double lead;
    for (i = 0; i < c->nlayers && i < s->sg.model->nlayers; i++)
        c->ready_ms[i] = s->sg.ready_ms[i];
    /* what the stage did before its last micro-batch's passes (the other
     * micro-batches, the bubble) leads them: the compute ends with its last
     * backward, then its step */
    lead = s->sg.stage_end_ms - c->fwd_total - c->bwd_total;
    c->lead_ms = lead > 0 ? lead : 0;
    c->optimizer_ms = s->sg.optimizer_ms;
}

int cli_plan_llm_machine(const char *path, const cpl_layout *L, cp_topo **out, cp_err *e)
{
    cp_topo *t = NULL;
    cp_layout l;
    int rc;
    *out = NULL;
    if ((rc = cli_llm_machine(path, 0, 1, &t, e)))
        return rc;
    cp_layout_default(&l);
    l.tp = L->tp, l.cp = L->cp, l.dp = L->dp, l.pp = L->pp, l.vp = L->vp;
    l.gpus = l.tp * l.cp * l.dp * l.pp;
    l.per_host = t->ngpus / (t->nhosts > 0 ? t->nhosts : 1);
    l.hosts = l.per_host > 0 && l.gpus > l.per_host ? l.gpus / l.per_host : 1;
    rc = cp_groups_machine(t, &l, cp_dp_group(&l, 0), L->net_gbs, out, e);
    cp_topo_free(t);
    return rc;
}
