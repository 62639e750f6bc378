/*
 * cmd_info.c - `coarse-plan info -m MODEL | -t TOPO [--hosts N] [--gpus G] [--json]`:
 * what a model or a machine contains, and for a machine where its
 * bottlenecks are.
 */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/summary.h"
#include "load/load.h"

static const cli_usage_text usage = {
    "usage: coarse-plan info -m MODEL [--json]\n"
    "       coarse-plan info -t TOPO [--hosts N] [--gpus G] [--json]\n",
    "Describe a model (tensors, parameters, gradient bytes, size distribution)\n"
    "or a topology (hosts, GPUs, NICs, memory devices, links, and for each GPU\n"
    "the slowest link on its best route to the other GPUs).\n",
    NULL};

static int info_model(const char *path, int json, cp_err *e)
{
    cp_model *m;
    int rc = cp_model_load(path, &m, e);
    if (rc)
        return rc;
    if (json)
        rc = cli_dump_json(cli_model_json(m), stdout) ? CP_EINTERNAL : CP_OK;
    else
        cli_info_model(m, stdout);
    cp_model_free(m);
    return rc == CP_EINTERNAL ? cp_fail(e, CP_EINTERNAL, "writing output failed") : rc;
}

static int info_topo(const char *path, int gpus, int hosts, int json, cp_err *e)
{
    cp_topo *t;
    int rc = cp_topo_load_machine(path, gpus, hosts, &t, e);
    if (rc)
        return rc;
    if (json)
        rc = cli_dump_json(cli_topo_json(t), stdout)
                 ? cp_fail(e, CP_EINTERNAL, "writing output failed")
                 : CP_OK;
    else
        rc = cli_info_topo(t, stdout, e);
    cp_topo_free(t);
    return rc;
}

int cmd_info(int argc, char **argv)
{
    const char *model = NULL, *topo = NULL;
    int json = 0, hosts = 1, gpus = 0, first, rc;
    const cli_option table[] = {
        OPT_STRING('m', "model", "FILE", &model, "model JSON"),
        OPT_STRING('t', "topo", "FILE", &topo, "topology JSON"),
        OPT_INT(0, "hosts", "N", &hosts, 1, CP_MAX_HOSTS,
                "replicate a single-host topology N times over its NICs"),
        OPT_INT(0, "gpus", "G", &gpus, 1, CLI_MAX_GPUS, "keep the first G GPUs of each host"),
        OPT_FLAG(0, "json", &json,
                 "machine-readable output:\n"
                 "{\"kind\":\"model\",\"name\",\"tensors\",\"params\",\n"
                 "\"grad_bytes\",...}\n"
                 "{\"kind\":\"topology\",\"name\",\"hosts\",\"gpus\",\"nics\",\n"
                 "\"memdevs\",\"links\",...}"),
        OPT_END()};
    cp_err e;

    cp_err_clear(&e);
    if ((rc = cli_parse("info", &usage, table, argc, argv, &first)) ||
        (rc = cli_no_args("info", argc, argv, first)))
        return rc == CLI_HELP ? CP_OK : rc;
    if (!model == !topo)
        return cli_usage("info", "give exactly one of -m MODEL or -t TOPO");
    if (model && (hosts > 1 || gpus > 0))
        return cli_usage("info", "--hosts and --gpus apply to a topology (-t)");
    return cli_report(model ? info_model(model, json, &e) : info_topo(topo, gpus, hosts, json, &e),
                      &e);
}
