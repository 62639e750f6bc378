/*
 * import_hwloc.c - `coarse-plan import hwloc FILE.xml [options]` and
 * `import hwloc --this-machine [options]`: an hwloc topology (or this
 * machine, through libhwloc) to topology JSON (src/import/hwloc.c).
 *
 * A result with GPUs goes through cli_finish_topology like every imported
 * topology (calibration, loader check, atomic write).  One without GPUs
 * (a CPU-only machine, the CXL test host) cannot pass the loader, which
 * wants a GPU: it is written as it is, its note saying that no GPUs were
 * found, and every command that loads it refuses it with that reason.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/import_hwloc.h"
#include "core/fileio.h"
#include "import/hwloc.h"
#include "out/jsonfmt.h"

static const char help[] =
    "usage: coarse-plan import hwloc FILE.xml [-o OUT.json] [--name NAME] [--gpu GEN]\n"
    "                          [--nvlink-gbs X] [--net-gbs Z] [--net-latency-us W]\n"
    "                          [--calibration TOPO]\n"
    "       coarse-plan import hwloc --this-machine [same options]\n"
    "\n"
    "Convert a machine as hwloc describes it (`lstopo --of xml` output, hwloc 2.x or\n"
    "3.x) into coarse-plan topology JSON through libhwloc: sockets, PCIe switches\n"
    "with their link speeds, GPUs (part from GPUModel), NICs, NVSwitches, CXL memory\n"
    "devices with their capacity, and NVLinks from an NVLinkBandwidth matrix when\n"
    "the file has one.  --this-machine reads the running machine instead.  What\n"
    "hwloc does not say is assumed and listed in the output's note (docs/import.md).\n"
    "A machine without GPUs gives its CPU/PCIe/NIC topology, which commands that\n"
    "need a GPU refuse.\n"
    "\n"
    "  -o, --output FILE      where to write (\"-\": standard output, the default)\n"
    "      --name NAME        topology name (default: the file's base name)\n"
    "      --this-machine     read this machine through libhwloc instead of a file\n"
    "      --gpu GEN          p100, v100, a100 or h100: the generation of GPUs the file\n"
    "                         does not name (their NVLinks, FLOP/s, memory bandwidth)\n"
    "      --nvlink-gbs X     GB/s per NVLink per direction (default: by generation)\n"
    "      --net-gbs Z        NIC speed, GB/s (default 12.5; hwloc gives none)\n"
    "      --net-latency-us W NIC-to-NIC latency (default 1.5)\n"
    "      --calibration TOPO copy the calibration block of this topology JSON\n";

enum { OPT_NAME = 256, OPT_THIS, OPT_GPU, OPT_NVGBS, OPT_NETGBS, OPT_NETLAT, OPT_CALIB };

/* One option into o (or *calib, *this_machine); CP_OK or a usage error. */
static int option(int c, cp_hwloc_opts *o, const char **calib, int *this_machine)
{
    static const char cmd[] = "import hwloc";
    switch (c) {
    case OPT_NAME: o->base.name = optarg; return CP_OK;
    case OPT_THIS: *this_machine = 1; return CP_OK;
    case OPT_CALIB: *calib = optarg; return CP_OK;
    case OPT_GPU:
        if (!cp_hwloc_gpu_known(optarg))
            return cli_usage(cmd, "--gpu: expected p100, v100, a100 or h100, got '%s'", optarg);
        o->gpu = optarg;
        return CP_OK;
    case OPT_NVGBS: return cli_parse_positive(cmd, "--nvlink-gbs", optarg, 1e4, &o->nvlink_gbs);
    case OPT_NETGBS: return cli_parse_positive(cmd, "--net-gbs", optarg, 1e4, &o->base.net_gbs);
    case OPT_NETLAT:
        return cli_parse_positive(cmd, "--net-latency-us", optarg, 1e5, &o->base.net_lat_us);
    default: return cli_usage(cmd, "unknown option");
    }
}

/* A topology without GPUs: written as converted (the loader would refuse
 * it), atomically. */
static int write_plain(const char *out, json_t *root, cp_err *e)
{
    cp_outfile f;
    int rc = cp_out_open(&f, out, e);
    if (rc)
        return rc;
    if (cp_json_write_doc(root, f.f)) {
        cp_out_abort(&f);
        return cp_fail(e, CP_EINTERNAL, "writing %s failed", out);
    }
    return cp_out_commit(&f, e);
}

/* Convert `in` (NULL: this machine) and write it to `out`. */
static int run(const char *in, const char *out, const cp_hwloc_opts *o, const char *calib,
               cp_err *e)
{
    char *text = NULL;
    size_t len = 0;
    json_t *root = NULL;
    int rc = in ? cp_read_file(in, &text, &len, e) : CP_OK;
    if (rc == CP_OK)
        rc = in ? cp_import_hwloc(in, text, len, o, &root, e)
                : cp_import_hwloc_this_machine(o, &root, e);
    if (rc == CP_OK && cp_hwloc_count_gpus(root) > 0)
        rc = cli_finish_topology(in ? in : "this machine", out, root, calib, e);
    else if (rc == CP_OK)
        rc = write_plain(out, root, e); /* --calibration has nothing to calibrate */
    json_decref(root);
    free(text);
    return rc;
}

int cli_import_hwloc(int argc, char **argv)
{
    static const struct option lo[] = {
        {"output", required_argument, NULL, 'o'},   {"name", required_argument, NULL, OPT_NAME},
        {"this-machine", no_argument, NULL, OPT_THIS},
        {"gpu", required_argument, NULL, OPT_GPU},
        {"nvlink-gbs", required_argument, NULL, OPT_NVGBS},
        {"net-gbs", required_argument, NULL, OPT_NETGBS},
        {"net-latency-us", required_argument, NULL, OPT_NETLAT},
        {"calibration", required_argument, NULL, OPT_CALIB},
        {"help", no_argument, NULL, 'h'},           {0, 0, 0, 0}};
    static const char cmd[] = "import hwloc";
    const char *out = "-", *calib = NULL, *in;
    cp_hwloc_opts o;
    cp_err e;
    int c, rc = CP_OK, this_machine = 0;
    cp_hwloc_opts_default(&o);
    opterr = 0;
    optind = 1;
    while (rc == CP_OK && (c = getopt_long(argc, argv, ":ho:", lo, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            return CP_OK;
        }
        if (c == ':' || c == '?')
            return cli_usage(cmd, c == ':' ? "option '%s' needs a value" : "unknown option '%s'",
                             argv[optind - 1]);
        if (c == 'o')
            out = optarg;
        else
            rc = option(c, &o, &calib, &this_machine);
    }
    if (rc)
        return rc;
    if (optind + (this_machine ? 0 : 1) != argc)
        return cli_usage(cmd, "expected: import hwloc FILE.xml, or import hwloc --this-machine");
    in = this_machine ? NULL : argv[optind];
    if (in && cp_same_file(out, in))
        return cli_usage(cmd, "-o %s would overwrite the input", out);
    cp_err_clear(&e);
    return cli_report(run(in, out, &o, calib, &e), &e);
}
