/*
 * import_hwloc.c - `coarse-plan import hwloc FILE.xml [options]` and
 * `import hwloc --this-machine [options]`: an hwloc topology (or this
 * machine, through libhwloc) to topology JSON (src/import/hwloc.c).
 *
 * The result goes through cli_finish_topology like every imported topology
 * (calibration, loader check, atomic write).  A machine without GPUs (a
 * CPU-only machine, the CXL test host) is refused with exit 2, counting what
 * hwloc found: no command accepts a topology without a GPU, so nothing is
 * written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/import_hwloc.h"
#include "core/fileio.h"
#include "import/hwloc.h"

static const cli_usage_text usage = {
    "usage: coarse-plan import hwloc FILE.xml [OPTIONS]\n"
    "       coarse-plan import hwloc --this-machine [OPTIONS]\n",
    "Convert a machine as hwloc describes it (`lstopo --of xml` output, hwloc 2.x or\n"
    "3.x) into coarse-plan topology JSON through libhwloc: sockets, PCIe switches\n"
    "with their link speeds, GPUs (part from GPUModel), NICs, NVSwitches, CXL memory\n"
    "devices with their capacity, and NVLinks from an NVLinkBandwidth matrix when\n"
    "the file has one.  --this-machine reads the running machine instead.  What\n"
    "hwloc does not say is assumed and listed in the output's note (docs/import.md).\n"
    "A machine without GPUs is refused (exit 2): every command needs a GPU.\n",
    NULL};

/* --gpu p100|v100|a100|h100 (value: cp_hwloc_opts.gpu, kept as the word). */
static int parse_gpu(const char *cmd, char *arg, void *value)
{
    if (!cp_hwloc_gpu_known(arg))
        return cli_usage(cmd, "--gpu: expected p100, v100, a100 or h100, got '%s'", arg);
    *(const char **)value = arg;
    return CP_OK;
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
    if (rc == CP_OK) /* o->need_gpu: a machine without GPUs stopped above */
        rc = cli_finish_topology(in ? in : "this machine", out, root, calib, e);
    json_decref(root);
    free(text);
    return rc;
}

int cli_import_hwloc(int argc, char **argv)
{
    static const char cmd[] = "import hwloc";
    const char *out = "-", *calib = NULL, *in;
    cp_hwloc_opts o;
    cp_err e;
    int first, rc, this_machine = 0;
    const cli_option table[] = {
        OPT_STRING('o', "output", "FILE", &out,
                   "where to write (\"-\": standard output, the default)"),
        OPT_STRING(0, "name", "NAME", &o.base.name, "topology name (default: the file's base name)"),
        OPT_FLAG(0, "this-machine", &this_machine,
                 "read this machine through libhwloc instead of a file"),
        OPT_CALLBACK(0, "gpu", "GEN", &o.gpu, parse_gpu,
                     "p100, v100, a100 or h100: the generation of GPUs the file does not name "
                     "(their NVLinks, FLOP/s, memory bandwidth)"),
        OPT_DOUBLE(0, "nvlink-gbs", "X", &o.nvlink_gbs, 1e4,
                   "GB/s per NVLink per direction (default: by generation)"),
        CLI_OPT_GPU_MEMORY(&o.base.gpu_memory_gb,
                           "hwloc's CUDAGlobalMemorySize (or OpenCL's), else the size in "
                           "GPUModel, else by the generation as import smi-topo"),
        OPT_DOUBLE(0, "net-gbs", "Z", &o.base.net_gbs, 1e4,
                   "NIC speed, GB/s (default 12.5; hwloc gives none)"),
        OPT_DOUBLE(0, "net-latency-us", "W", &o.base.net_lat_us, 1e5,
                   "NIC-to-NIC latency (default 1.5)"),
        OPT_STRING(0, "calibration", "TOPO", &calib,
                   "copy the calibration block of this topology JSON"),
        OPT_END()};
    cp_hwloc_opts_default(&o);
    o.need_gpu = 1;
    if ((rc = cli_parse(cmd, &usage, table, argc, argv, &first)))
        return rc == CLI_HELP ? CP_OK : rc;
    if (first + (this_machine ? 0 : 1) != argc)
        return cli_usage(cmd, "expected: import hwloc FILE.xml, or import hwloc --this-machine");
    in = this_machine ? NULL : argv[first];
    if (in && cp_same_file(out, in))
        return cli_usage(cmd, "-o %s would overwrite the input", out);
    cp_err_clear(&e);
    return cli_report(run(in, out, &o, calib, &e), &e);
}
