/*
 * cmd_info.c - `coarse-plan info -m MODEL | -t TOPO [--hosts N] [--gpus G] [--json]`:
 * what a model or a machine contains, and for a machine where its
 * bottlenecks are.
 */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/summary.h"
#include "load/load.h"

static const char help[] =
    "usage: coarse-plan info -m MODEL [--json]\n"
    "       coarse-plan info -t TOPO [--hosts N] [--gpus G] [--json]\n"
    "\n"
    "Describe a model (tensors, parameters, gradient bytes, size distribution)\n"
    "or a topology (hosts, GPUs, NICs, memory devices, links, and for each GPU\n"
    "the slowest link on its best route to the other GPUs).\n"
    "\n"
    "  -m, --model FILE   model JSON\n"
    "  -t, --topo FILE    topology JSON\n"
    "      --hosts N      replicate a single-host topology N times over its NICs\n"
    "      --gpus G       keep the first G GPUs of each host\n"
    "      --json         machine-readable output:\n"
    "                     {\"kind\":\"model\",\"name\",\"tensors\",\"params\",\"grad_bytes\",...}\n"
    "                     {\"kind\":\"topology\",\"name\",\"hosts\",\"gpus\",\"nics\",\n"
    "                      \"memdevs\",\"links\",...}\n";

enum { OPT_HOSTS = 256, OPT_JSON, OPT_GPUS };

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
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'}, {"topo", required_argument, NULL, 't'},
        {"hosts", required_argument, NULL, OPT_HOSTS}, {"json", no_argument, NULL, OPT_JSON},
        {"gpus", required_argument, NULL, OPT_GPUS},
        {"help", no_argument, NULL, 'h'},        {0, 0, 0, 0}};
    const char *model = NULL, *topo = NULL;
    int c, json = 0, hosts = 1, gpus = 0;
    cp_err e;

    cp_err_clear(&e);
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":hm:t:", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            fputs(help, stdout);
            return CP_OK;
        case 'm':
            model = optarg;
            break;
        case 't':
            topo = optarg;
            break;
        case OPT_HOSTS:
            if (cli_parse_hosts("info", optarg, &hosts))
                return CP_EINPUT;
            break;
        case OPT_GPUS:
            if (cli_parse_gpus("info", optarg, &gpus))
                return CP_EINPUT;
            break;
        case OPT_JSON:
            json = 1;
            break;
        case ':':
            return cli_usage("info", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage("info", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage("info", "unexpected argument '%s'", argv[optind]);
    if (!model == !topo)
        return cli_usage("info", "give exactly one of -m MODEL or -t TOPO");
    if (model && (hosts > 1 || gpus > 0))
        return cli_usage("info", "--hosts and --gpus apply to a topology (-t)");
    return cli_report(model ? info_model(model, json, &e) : info_topo(topo, gpus, hosts, json, &e),
                      &e);
}
