/*
 * cmd_import.c - `coarse-plan import KIND FILE`: convert a real description
 * into coarse-plan JSON, validated by the same loader every other command
 * uses before it is written (atomically; default standard output).
 *
 *   import nccl-topo FILE.xml     NCCL topology XML -> topology JSON
 *   import smi-topo TOPO-M.txt    `nvidia-smi topo -m` matrix -> topology JSON
 *   import hf-config CONFIG.json  Hugging Face config.json -> model JSON
 *
 * Each kind parses its own options (smi-topo and hf-config after the kind
 * word); they share the checking and writing (write_checked) and the
 * topologies share --calibration (finish_topology).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/import_hwloc.h"
#include "core/fileio.h"
#include "import/hf_config.h"
#include "import/nccl_topo.h"
#include "import/smi_topo.h"
#include "load/load.h"
#include "out/jsonfmt.h"

static const char help[] =
    "usage: coarse-plan import nccl-topo FILE.xml [-o OUT.json] [--name NAME]\n"
    "                          [--net-gbs X] [--net-latency-us Y] [--no-fabric]\n"
    "\n"
    "Convert NCCL's topology XML (an NCCL_TOPO_FILE hint or an NCCL_TOPO_DUMP_FILE\n"
    "dump) into coarse-plan topology JSON: CPUs, PCIe switches, GPUs, NICs and\n"
    "NVSwitches with their links.  What the file does not say is assumed and\n"
    "listed in the output's note (docs/import.md).  The result is checked with\n"
    "the topology loader before it is written (atomically; default: standard\n"
    "output).\n"
    "\n"
    "  -o, --output FILE      where to write (\"-\": standard output, the default)\n"
    "      --name NAME        topology name (default: the file's base name)\n"
    "      --net-gbs X        NIC speed when the file gives none, GB/s (default 12.5)\n"
    "      --net-latency-us Y NIC-to-NIC latency when the file gives none (default 1.5)\n"
    "      --no-fabric        a hint file without NVLink whose GPUs are eight A100-SXM4\n"
    "                         or H100-SXM5 gets its HGX board's NVSwitch fabric (NCCL\n"
    "                         finds it through the driver); this keeps PCIe only\n"
    "      --calibration TOPO copy the calibration block of this topology JSON (e.g. a\n"
    "                         shipped one of the same GPU generation); without it the\n"
    "                         result is uncalibrated (docs/calibration.md)\n"
    "\n"
    "       coarse-plan import smi-topo TOPO-M.txt [-o OUT.json] [--gpu p100|v100|a100|h100]\n"
    "                          [--nvlink-gbs X] [--pcie-gbs Y] [--net-gbs Z] ...\n"
    "\n"
    "Convert the matrix `nvidia-smi topo -m` prints; `coarse-plan import smi-topo\n"
    "--help` lists its options.\n"
    "\n"
    "       coarse-plan import hwloc FILE.xml|--this-machine [-o OUT.json] [--gpu GEN] ...\n"
    "\n"
    "Convert an `lstopo --of xml` file, or this machine, through libhwloc;\n"
    "`coarse-plan import hwloc --help` lists its options.\n"
    "\n"
    "       coarse-plan import hf-config CONFIG.json [-o OUT.json] [--name NAME]\n"
    "                          [--seq-len L] [--batch B] [--dtype fp32|fp16|bf16]\n"
    "                          [--arch ARCH]\n"
    "\n"
    "Convert a Hugging Face config.json (model_type bert, gpt2, llama, mistral,\n"
    "qwen2, gemma) into model JSON: every trainable tensor with its PyTorch name and shape, in\n"
    "registration order, grouped into layers (embeddings, each block, final norm,\n"
    "each head) with forward FLOPs per sample (docs/import.md).  Options go after\n"
    "the word hf-config.\n"
    "\n"
    "  -o, --output FILE      where to write (\"-\": standard output, the default)\n"
    "      --name NAME        model name (default: the last part of _name_or_path,\n"
    "                         else the file's base name)\n"
    "      --seq-len L        tokens per sample for the FLOPs (default: bert 128,\n"
    "                         gpt2 1024, llama/mistral 2048, each at most the model's\n"
    "                         maximum positions)\n"
    "      --batch B          per-GPU batch, written as compute.batch (default 1)\n"
    "      --dtype T          gradient type fp32 (default), fp16 or bf16\n"
    "      --arch ARCH        architecture instead of the file's architectures[0]:\n"
    "                         BertModel, BertForPreTraining, BertForMaskedLM,\n"
    "                         GPT2LMHeadModel, GPT2Model, LlamaForCausalLM, LlamaModel,\n"
    "                         MistralForCausalLM, MistralModel\n";

static const char smi_help[] =
    "usage: coarse-plan import smi-topo TOPO-M.txt [-o OUT.json] [--name NAME]\n"
    "                          [--gpu p100|v100|a100|h100] [--nvlink-gbs X] [--pcie-gbs Y]\n"
    "                          [--net-gbs Z] [--net-latency-us W] [--calibration TOPO]\n"
    "\n"
    "Convert the matrix `nvidia-smi topo -m` prints (saved to a file; text before and\n"
    "after it is skipped) into coarse-plan topology JSON: NV# cells become NVLinks,\n"
    "PIX groups a PCIe switch, PXB groups an upstream switch, PHB/NODE and SYS cells\n"
    "(or the affinity column) CPU sockets, NIC columns NICs.  The matrix gives no\n"
    "rates: they come from --gpu or the flags, and every assumption is listed in the\n"
    "output's note (docs/import.md).  The result is checked with the topology loader\n"
    "before it is written (atomically; default: standard output).\n"
    "\n"
    "  -o, --output FILE      where to write (\"-\": standard output, the default)\n"
    "      --name NAME        topology name (default: the file's base name)\n"
    "      --gpu GEN          p100, v100, a100 or h100: the NVLink rate (20, 25, 25, 25 GB/s\n"
    "                         per link), the PCIe rate (12, 12, 24, 48 GB/s) and the part\n"
    "      --nvlink-gbs X     GB/s per NVLink per direction; needed, or --gpu, when the\n"
    "                         matrix has NV cells\n"
    "      --pcie-gbs Y       GB/s of every PCIe link (default: by --gpu, else 12, Gen3 x16)\n"
    "      --net-gbs Z        NIC speed, GB/s (default 12.5)\n"
    "      --net-latency-us W NIC-to-NIC latency (default 1.5)\n"
    "      --calibration TOPO copy the calibration block of this topology JSON (e.g. a\n"
    "                         shipped one of the same GPU generation); without it the\n"
    "                         result is uncalibrated (docs/calibration.md)\n";

enum { OPT_NAME = 256, OPT_NOFABRIC, OPT_NETGBS, OPT_NETLAT, OPT_CALIB, OPT_GPU, OPT_NVGBS, OPT_PCIEGBS,
       OPT_SEQ, OPT_BATCH, OPT_DTYPE, OPT_ARCH };

/* Copy the "calibration" object of another topology file into root. */
static int copy_calibration(const char *from, json_t *root, cp_err *e)
{
    cp_jdoc d;
    cp_topo *t;
    int rc = cp_jdoc_load(&d, from, e);
    if (rc)
        return rc;
    rc = cp_topo_load_doc(&d, &t, e); /* only a valid topology lends its calibration */
    if (rc == CP_OK) {
        json_t *c = json_object_get(d.root, "calibration");
        cp_topo_free(t);
        if (!c)
            rc = cp_fail_at(e, CP_EINPUT, from, 0, 0, NULL, "has no calibration block to copy");
        else
            json_object_set(root, "calibration", c);
    }
    cp_jdoc_free(&d);
    return rc;
}

/* Check converted JSON (root, borrowed) with the loader of its kind (a
 * model or a topology), then write it to `out` atomically: what import
 * writes, every other command reads. */
static int write_checked(const char *in, const char *out, json_t *root, int is_model,
                         cp_err *e)
{
    char *json = json_dumps(root, JSON_REAL_PRECISION(12));
    cp_jdoc d;
    cp_topo *t = NULL;
    cp_model *m = NULL;
    cp_outfile f;
    int rc;
    if (!json)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    if ((rc = cp_jdoc_load_text(&d, in, json, strlen(json), e)) == CP_OK) {
        rc = is_model ? cp_model_load_doc(&d, &m, e) : cp_topo_load_doc(&d, &t, e);
        if (rc == CP_EINPUT) {
            char msg[sizeof e->msg];
            snprintf(msg, sizeof msg, "%s", e->msg);
            rc = cp_fail_at(e, CP_EINPUT, in, 0, 0, NULL, "the converted %s is not usable: %s",
                            is_model ? "model" : "topology", msg);
        }
        cp_model_free(m);
        cp_topo_free(t);
        cp_jdoc_free(&d);
    }
    free(json);
    if (rc == CP_OK && (rc = cp_out_open(&f, out, e)) == CP_OK) {
        if (cp_json_write_doc(root, f.f)) {
            cp_out_abort(&f);
            rc = cp_fail(e, CP_EINTERNAL, "writing %s failed", out);
        } else {
            rc = cp_out_commit(&f, e);
        }
    }
    return rc;
}

/* A converted topology: copy the calibration block of `calib` when given,
 * then check and write it.  Every importer whose result is a topology ends
 * here. */
int cli_finish_topology(const char *in, const char *out, json_t *root, const char *calib,
                        cp_err *e)
{
    int rc = calib ? copy_calibration(calib, root, e) : CP_OK;
    return rc == CP_OK ? write_checked(in, out, root, 0, e) : rc;
}

/* The converters behind one signature: the text of `in` to JSON. */
typedef int (*converter)(const char *in, const char *text, size_t len, const void *opts,
                         json_t **root, cp_err *e);

static int conv_nccl(const char *in, const char *text, size_t len, const void *opts,
                     json_t **root, cp_err *e)
{
    return cp_import_nccl_topo(in, text, len, opts, root, e);
}

static int conv_smi(const char *in, const char *text, size_t len, const void *opts,
                    json_t **root, cp_err *e)
{
    return cp_import_smi_topo(in, text, len, opts, root, e);
}

static int conv_hf(const char *in, const char *text, size_t len, const void *opts,
                   json_t **root, cp_err *e)
{
    return cp_import_hf_config(in, text, len, opts, root, e);
}

/* Read `in`, convert it, check it with the loader of what it became (a
 * model, or a topology given `calib`'s calibration) and write it. */
static int convert(const char *in, const char *out, converter conv, const void *opts,
                   int is_model, const char *calib, cp_err *e)
{
    char *text = NULL;
    size_t len;
    json_t *root = NULL;
    int rc = cp_read_file(in, &text, &len, e);
    if (rc == CP_OK)
        rc = conv(in, text, len, opts, &root, e);
    if (rc == CP_OK)
        rc = is_model ? write_checked(in, out, root, 1, e)
                      : cli_finish_topology(in, out, root, calib, e);
    json_decref(root);
    free(text);
    return rc;
}

/* One option of `import smi-topo` (opts: cp_smi_opts); CP_OK or a usage
 * error. */
static int smi_option(int c, void *opts, const char **calib)
{
    static const char cmd[] = "import smi-topo";
    cp_smi_opts *o = opts;
    switch (c) {
    case OPT_NAME: o->base.name = optarg; return CP_OK;
    case OPT_CALIB: *calib = optarg; return CP_OK;
    case OPT_GPU:
        if (!cp_smi_gpu_known(optarg))
            return cli_usage(cmd, "--gpu: expected p100, v100, a100 or h100, got '%s'", optarg);
        o->gpu = optarg;
        return CP_OK;
    case OPT_NVGBS: return cli_parse_positive(cmd, "--nvlink-gbs", optarg, 1e4, &o->nvlink_gbs);
    case OPT_PCIEGBS: return cli_parse_positive(cmd, "--pcie-gbs", optarg, 1e4, &o->pcie_gbs);
    case OPT_NETGBS: return cli_parse_positive(cmd, "--net-gbs", optarg, 1e4, &o->base.net_gbs);
    case OPT_NETLAT:
        return cli_parse_positive(cmd, "--net-latency-us", optarg, 1e5, &o->base.net_lat_us);
    default: return cli_usage(cmd, "unknown option");
    }
}

/* One option of `import hf-config` (opts: cp_hf_opts); CP_OK or a usage
 * error. */
static int hf_option(int c, void *opts, const char **calib)
{
    cp_hf_opts *o = opts;
    int n = 0, rc = CP_OK;
    (void)calib; /* a model has no calibration */
    switch (c) {
    case OPT_NAME: o->name = optarg; break;
    case OPT_ARCH: o->arch = optarg; break;
    case OPT_SEQ:
        if ((rc = cli_parse_count("import", "--seq-len", optarg, 1 << 24, &n)) == CP_OK)
            o->seq_len = n;
        break;
    case OPT_BATCH:
        if ((rc = cli_parse_count("import", "--batch", optarg, 1 << 30, &n)) == CP_OK)
            o->batch = n;
        break;
    case OPT_DTYPE:
        o->dtype = optarg;
        if (strcmp(optarg, "fp32") != 0 && strcmp(optarg, "fp16") != 0 &&
            strcmp(optarg, "bf16") != 0)
            rc = cli_usage("import", "--dtype: expected fp32, fp16 or bf16, got '%s'", optarg);
        break;
    default: rc = cli_usage("import", "unknown option");
    }
    return rc;
}

/* What a kind that takes its options after the kind word supplies. */
typedef struct import_kind {
    const char *cmd;          /* for usage errors: "import smi-topo" */
    const char *help;         /* printed by -h */
    const char *expect;       /* the usage line for a wrong argument count */
    const struct option *lo;  /* its long options */
    int (*option)(int c, void *opts, const char **calib);
    converter conv;
    int is_model;             /* the result is a model, not a topology */
} import_kind;

/* `import KIND FILE [options]`; argv[0] is the kind word.  Parses the
 * options into opts, then converts FILE. */
static int run_kind(const import_kind *k, void *opts, int argc, char **argv)
{
    const char *out = "-", *calib = NULL;
    cp_err e;
    int c, rc = CP_OK;
    opterr = 0;
    optind = 1;
    while (rc == CP_OK && (c = getopt_long(argc, argv, ":ho:", k->lo, NULL)) != -1) {
        if (c == 'h') {
            fputs(k->help, stdout);
            return CP_OK;
        }
        if (c == ':' || c == '?') /* name the option as the user wrote it */
            return cli_usage(k->cmd, c == ':' ? "option '%s' needs a value"
                                              : "unknown option '%s'",
                             argv[optind - 1]);
        if (c == 'o')
            out = optarg;
        else
            rc = k->option(c, opts, &calib);
    }
    if (rc)
        return rc;
    if (optind + 1 != argc)
        return cli_usage(k->cmd, "expected: %s", k->expect);
    if (cp_same_file(out, argv[optind]))
        return cli_usage(k->cmd, "-o %s would overwrite the input", out);
    cp_err_clear(&e);
    return cli_report(convert(argv[optind], out, k->conv, opts, k->is_model, calib, &e), &e);
}

/* `import smi-topo TOPO-M.txt [options]`. */
static int import_smi(int argc, char **argv)
{
    static const struct option lo[] = {
        {"output", required_argument, NULL, 'o'},   {"name", required_argument, NULL, OPT_NAME},
        {"gpu", required_argument, NULL, OPT_GPU},
        {"nvlink-gbs", required_argument, NULL, OPT_NVGBS},
        {"pcie-gbs", required_argument, NULL, OPT_PCIEGBS},
        {"net-gbs", required_argument, NULL, OPT_NETGBS},
        {"net-latency-us", required_argument, NULL, OPT_NETLAT},
        {"calibration", required_argument, NULL, OPT_CALIB},
        {"help", no_argument, NULL, 'h'},           {0, 0, 0, 0}};
    static const import_kind k = {"import smi-topo", smi_help,
                                  "import smi-topo TOPO-M.txt", lo, smi_option, conv_smi, 0};
    cp_smi_opts o;
    cp_smi_opts_default(&o);
    return run_kind(&k, &o, argc, argv);
}

/* `import hf-config CONFIG.json [options]`. */
static int import_hf_config(int argc, char **argv)
{
    static const struct option lo[] = {
        {"output", required_argument, NULL, 'o'}, {"name", required_argument, NULL, OPT_NAME},
        {"seq-len", required_argument, NULL, OPT_SEQ},
        {"batch", required_argument, NULL, OPT_BATCH},
        {"dtype", required_argument, NULL, OPT_DTYPE},
        {"arch", required_argument, NULL, OPT_ARCH},
        {"help", no_argument, NULL, 'h'},         {0, 0, 0, 0}};
    static const import_kind k = {"import", help, "import hf-config CONFIG.json", lo,
                                  hf_option, conv_hf, 1};
    cp_hf_opts o;
    cp_hf_opts_default(&o);
    return run_kind(&k, &o, argc, argv);
}

int cmd_import(int argc, char **argv)
{
    static const struct option lo[] = {
        {"output", required_argument, NULL, 'o'},   {"name", required_argument, NULL, OPT_NAME},
        {"net-gbs", required_argument, NULL, OPT_NETGBS},
        {"net-latency-us", required_argument, NULL, OPT_NETLAT},
        {"calibration", required_argument, NULL, OPT_CALIB},
        {"no-fabric", no_argument, NULL, OPT_NOFABRIC},
        {"help", no_argument, NULL, 'h'},           {0, 0, 0, 0}};
    cp_import_opts o;
    const char *out = "-", *calib = NULL;
    cp_err e;
    int c, rc = CP_OK;

    if (argc > 1 && strcmp(argv[1], "smi-topo") == 0)
        return import_smi(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "hf-config") == 0)
        return import_hf_config(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "hwloc") == 0) /* import_hwloc.c */
        return cli_import_hwloc(argc - 1, argv + 1);
    cp_import_opts_default(&o);
    opterr = 0;
    optind = 1;
    while (rc == CP_OK && (c = getopt_long(argc, argv, ":ho:", lo, NULL)) != -1) {
        switch (c) {
        case 'h': fputs(help, stdout); return CP_OK;
        case 'o': out = optarg; break;
        case OPT_NAME: o.name = optarg; break;
        case OPT_CALIB: calib = optarg; break;
        case OPT_NOFABRIC: o.no_fabric = 1; break;
        case OPT_NETGBS: rc = cli_parse_positive("import", "--net-gbs", optarg, 1e4, &o.net_gbs); break;
        case OPT_NETLAT:
            rc = cli_parse_positive("import", "--net-latency-us", optarg, 1e5, &o.net_lat_us);
            break;
        case ':': return cli_usage("import", "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage("import", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (rc)
        return rc;
    if (optind + 2 != argc)
        return cli_usage("import", "expected: import nccl-topo FILE.xml (or import smi-topo "
                         "FILE, or import hf-config CONFIG.json)");
    if (strcmp(argv[optind], "smi-topo") == 0 || strcmp(argv[optind], "hf-config") == 0)
        return cli_usage("import", "write the format first: import %s FILE [options]",
                         argv[optind]); /* options came first */
    if (strcmp(argv[optind], "nccl-topo") != 0)
        return cli_usage("import", "unknown format '%s' (supported: nccl-topo, smi-topo, "
                         "hf-config, hwloc)", argv[optind]);
    if (cp_same_file(out, argv[optind + 1]))
        return cli_usage("import", "-o %s would overwrite the input", out);
    cp_err_clear(&e);
    return cli_report(convert(argv[optind + 1], out, conv_nccl, &o, 0, calib, &e), &e);
}
