/*
 * cmd_check.c - `coarse-plan check FILE...`: tell model, topology and plan
 * files apart, validate each, print one summary line per valid file.
 *
 * Every file is checked even after a failure, so one run lists every
 * problem; the exit code is the worst status seen.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/summary.h"
#include "core/units.h"
#include "load/load.h"
#include "runtime/planfile.h"

static const cli_usage_text usage = {
    "usage: coarse-plan check FILE...\n",
    "Validate model, topology and plan files (JSON).  The kind of each file is\n"
    "told from its keys: \"tensors\" (model; or \"model_type\", a Hugging Face\n"
    "config.json, read as import hf-config --dtype bf16 converts it), \"nodes\"\n"
    "(topology), \"format\" (plan).  Prints one summary line per valid file to\n"
    "stdout and one error per invalid file to stderr as FILE:LINE:COL: error:\n"
    "FIELD: message.\n",
    "Exit status: 0 all valid, 2 some file is invalid, 1 internal failure.\n"};

/* Validate one file and print its summary; returns its status. */
static int check_one(const char *path, cp_err *e)
{
    cp_jdoc d;
    int rc = cp_jdoc_load(&d, path, e);
    if (rc)
        return rc;
    switch (cp_detect_kind(&d)) {
    case CP_FILE_MODEL: {
        cp_model *m;
        rc = cp_model_load_doc(&d, &m, e);
        if (rc == CP_OK) {
            printf("%s: ok: ", path);
            cli_summary_model(m, stdout);
            cp_model_free(m);
        }
        break;
    }
    case CP_FILE_TOPO: {
        cp_topo *t;
        rc = cp_topo_load_doc(&d, &t, e);
        if (rc == CP_OK) {
            printf("%s: ok: ", path);
            cli_summary_topo(t, stdout);
            cp_topo_free(t);
        }
        break;
    }
    case CP_FILE_PLAN: {
        cpl_plan *p;
        rc = cp_planfile_load_doc(&d, &p, e); /* takes the document */
        if (rc == CP_OK) {
            size_t nb = cpl_bucket_count(p), nt = cpl_tensor_count(p), nr = cpl_route_count(p);
            printf("%s: ok: plan for %s on %s: %zu bucket%s, %zu tensor%s, %zu route%s, "
                   "predicted %.3f ms per iteration\n", path, cpl_model_name(p),
                   cpl_topology_name(p), nb, cp_s((long long)nb), nt, cp_s((long long)nt), nr,
                   cp_s((long long)nr), cpl_predicted_iteration_ms(p));
            cpl_close(p);
        }
        break;
    }
    default:
        rc = cp_jdoc_fail(&d, e, d.root, NULL, "",
                          "cannot tell what this file is: expected a model (key \"tensors\"), "
                          "a topology (key \"nodes\") or a plan (key \"format\")");
        break;
    }
    cp_jdoc_free(&d);
    return rc;
}

int cmd_check(int argc, char **argv)
{
    static const cli_option table[] = {OPT_END()};
    int i, first, worst = CP_OK, rc = cli_parse("check", &usage, table, argc, argv, &first);
    if (rc)
        return rc == CLI_HELP ? CP_OK : rc;
    if (first >= argc)
        return cli_usage("check", "no files given");
    for (i = first; i < argc; i++) {
        cp_err e;
        cp_err_clear(&e);
        rc = check_one(argv[i], &e);
        if (rc) {
            cli_report(rc, &e);
            if (worst != CP_EINTERNAL)
                worst = rc;
        }
    }
    return worst;
}
