/*
 * cmd_simulate.c - `coarse-plan simulate -p PLAN.json`: replay a plan event
 * by event on its machine; report the time, link utilisation and deadlock
 * freedom.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/plan_llm.h"
#include "cli/summary.h"
#include "core/fileio.h"
#include "core/units.h"
#include "cost/pack.h"
#include "load/load.h"
#include "sim/sim.h"

static const cli_usage_text usage = {
    "usage: coarse-plan simulate -p PLAN.json [-t TOPO] [--json]\n",
    "Replay a plan event by event: every route is an operation that loads the\n"
    "links and reducers it crosses; each route kind runs its operations in the\n"
    "plan's order; operations in flight share every link and reducer max-min\n"
    "fairly at the topology's rates (link GB/s x calibrated bw_eff), not the\n"
    "planner's cost lines.  Reports the replayed iteration time against the\n"
    "planned one, the exposed communication of both, the busiest links, and\n"
    "whether the plan is deadlock-free (its processing orders cannot wait in a\n"
    "cycle, and every operation completed).\n",
    NULL};

/* The machine a plan of `hosts` hosts was made on, from its topology file:
 * the file itself when it describes those hosts, or that many copies of a
 * single-host file (plan --hosts).  Plans written before issue 24 recorded
 * the --hosts given, 1 for a multi-host file: a plan of one host on a file
 * of several is such a plan, made on the whole file. */
static int plan_hosts(const char *file, int hosts, const char *plan_path, cp_topo **t, cp_err *e)
{
    cp_topo *f;
    int rc = cp_topo_load(file, &f, e);
    if (rc)
        return rc;
    if (f->nhosts == hosts || hosts == 1) {
        *t = f;
        return CP_OK;
    }
    if (f->nhosts > 1) {
        rc = cp_fail_at(e, CP_EINPUT, plan_path, 0, 0, "topology.hosts",
                        "the plan was made for %d hosts; %s describes %d", hosts, file,
                        f->nhosts);
        cp_topo_free(f);
        return rc;
    }
    rc = cp_topo_replicate(f, hosts, t, e);
    cp_topo_free(f);
    return rc;
}

/* The topology the plan names, refusing it when its content changed. */
static int plan_topology(const cpl_plan *p, const char *plan_path, cp_topo **t, cp_err *e)
{
    const char *file = cp_planfile_topo_file(p), *want = cp_planfile_topo_hash(p);
    char *text, have[40];
    size_t len;
    int rc;
    if (!file)
        return cp_fail_at(e, CP_EINPUT, plan_path, 0, 0, "topology.file",
                          "the plan does not name its topology file: give -t TOPO");
    if ((rc = cp_read_file(file, &text, &len, e)))
        return rc;
    snprintf(have, sizeof have, "fnv1a64:%016llx", cp_hash64(text, len));
    free(text);
    if (want && strcmp(want, have) != 0)
        return cp_fail_at(e, CP_EINPUT, plan_path, 0, 0, "topology.hash",
                          "%s changed since the plan was made (hash %s, plan says %s): re-plan, "
                          "or give -t to replay anyway", file, have, want);
    {   /* a large-model plan: the stage's data-parallel group (plan_llm.h) */
        cpl_layout L;
        if (cpl_get_layout(p, &L) == 0)
            return cli_plan_llm_machine(file, &L, t, e);
    }
    return plan_hosts(file, cpl_host_count(p), plan_path, t, e);
}

/* Resources by decreasing utilisation, at most n of them (selection: n is
 * small). */
static int busiest(const cp_sim_result *r, int *out, int n)
{
    int k, i;
    for (k = 0; k < n; k++) {
        int best = -1;
        for (i = 0; i < r->nres; i++) {
            int j, taken = 0;
            for (j = 0; j < k; j++)
                taken |= out[j] == i;
            if (!taken && cp_sim_util(r, i) > 0 &&
                (best < 0 || cp_sim_util(r, i) > cp_sim_util(r, best)))
                best = i;
        }
        if (best < 0)
            break;
        out[k] = best;
    }
    return k;
}

int cmd_simulate(int argc, char **argv)
{
    const char *plan_path = NULL, *topo_path = NULL;
    int json = 0, rc, first, top[8], ntop, k;
    const cli_option table[] = {
        OPT_STRING('p', "plan", "FILE", &plan_path, "plan JSON written by `coarse-plan plan`"),
        OPT_STRING('t', "topo", "FILE", &topo_path,
                   "topology to replay on (default: the file the plan names, whose content "
                   "hash must still match)"),
        OPT_FLAG(0, "json", &json,
                 "{\"iteration_ms\",\"planned_ms\",\"compute_ms\",\"tail_ms\",\n"
                 "\"exposed_ms\",\"planned_exposed_ms\",\n"
                 "\"operations\",\"deadlock_free\",\"links\":[{\"link\",\"gbs\",\n"
                 "\"utilisation\"}]}"),
        OPT_END()};
    cpl_plan *p = NULL;
    cp_topo *t = NULL;
    cp_sim_result r;
    cp_err e;

    if ((rc = cli_parse("simulate", &usage, table, argc, argv, &first)) ||
        (rc = cli_no_args("simulate", argc, argv, first)))
        return rc == CLI_HELP ? CP_OK : rc;
    if (!plan_path)
        return cli_usage("simulate", "-p PLAN.json is required");
    cp_err_clear(&e);
    rc = cp_planfile_load(plan_path, &p, &e);
    if (rc == CP_OK)
        rc = topo_path ? plan_hosts(topo_path, cpl_host_count(p), plan_path, &t, &e)
                       : plan_topology(p, plan_path, &t, &e);
    if (rc == CP_OK)
        rc = cp_simulate(p, t, &r, &e);
    if (rc == CP_OK) {
        ntop = busiest(&r, top, 8);
        if (json) {
            json_t *root = json_object(), *links = json_array();
            json_object_set_new(root, "iteration_ms", cli_real(r.iteration_ms, 4));
            json_object_set_new(root, "planned_ms", cli_real(cpl_predicted_iteration_ms(p), 4));
            json_object_set_new(root, "compute_ms", cli_real(r.compute_ms, 4));
            json_object_set_new(root, "tail_ms", cli_real(r.tail_ms, 4));
            json_object_set_new(root, "exposed_ms", cli_real(r.iteration_ms - r.compute_ms, 4));
            json_object_set_new(root, "planned_exposed_ms",
                                cli_real(cpl_predicted_iteration_ms(p) - r.compute_ms, 4));
            json_object_set_new(root, "operations", json_integer(r.nops));
            json_object_set_new(root, "deadlock_free", json_true());
            for (k = 0; k < ntop; k++) {
                char name[200];
                json_t *l = json_object();
                cli_res_name(t, top[k], name, sizeof name);
                json_object_set_new(l, "link", json_string(name));
                json_object_set_new(l, "gbs", cli_real(r.cap[top[k]], 4));
                json_object_set_new(l, "utilisation", cli_real(cp_sim_util(&r, top[k]), 4));
                json_array_append_new(links, l);
            }
            json_object_set_new(root, "links", links);
            if (cli_dump_json(root, stdout))
                rc = cp_fail(&e, CP_EINTERNAL, "writing output failed");
        } else {
            printf("simulate: plan for %s on %s: %d operation%s, %d rate update%s\n",
                   cpl_model_name(p), t->name, r.nops, cp_s(r.nops), r.events, cp_s(r.events));
            cli_calib_note(t, "", stdout);
            printf("replayed iteration %.3f ms (planned %.3f ms, compute %.3f ms)\n",
                   r.iteration_ms, cpl_predicted_iteration_ms(p), r.compute_ms);
            printf("exposed communication: replayed %.3f ms, planned %.3f ms (the %.3f ms tail "
                   "after the last bucket counts as compute)\n",
                   r.iteration_ms - r.compute_ms, cpl_predicted_iteration_ms(p) - r.compute_ms,
                   r.tail_ms);
            printf("deadlock-free: yes (processing orders acyclic; %s %d operation%s "
                   "completed)\n", r.completed == 1 ? "the" : "all", r.completed,
                   cp_s(r.completed));
            printf("busiest links and reducers between %.3f and %.3f ms:\n", r.first_ms,
                   r.last_ms);
            for (k = 0; k < ntop; k++) {
                char name[200];
                cli_res_name(t, top[k], name, sizeof name);
                printf("  %-40s %8.2f GB/s  %5.1f%% busy\n", name, r.cap[top[k]],
                       100 * cp_sim_util(&r, top[k]));
            }
        }
        cp_sim_result_free(&r);
    }
    cpl_close(p);
    cp_topo_free(t);
    return cli_report(rc, &e);
}
