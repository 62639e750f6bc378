/*
 * cmd_import.c - `coarse-plan import KIND FILE`: convert a real description
 * into coarse-plan JSON, validated by the same loader every other command
 * uses before it is written (atomically; default standard output).
 *
 *   import nccl-topo FILE.xml     NCCL topology XML -> topology JSON
 *   import smi-topo TOPO-M.txt    `nvidia-smi topo -m` matrix -> topology JSON
 *   import hf-config CONFIG.json  Hugging Face config.json -> model JSON
 *
 * Each kind declares its own option table (smi-topo and hf-config take
 * theirs after the kind word); they share the checking and writing
 * (write_checked) and the topologies share --calibration (cli_finish_topology).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/suggest.h"
#include "cli/import_hwloc.h"
#include "core/fileio.h"
#include "import/hf_config.h"
#include "import/nccl_topo.h"
#include "import/smi_topo.h"
#include "load/load.h"
#include "out/jsonfmt.h"

static const cli_usage_text nccl_usage = {
    "usage: coarse-plan import nccl-topo FILE.xml [OPTIONS]\n"
    "       coarse-plan import smi-topo TOPO-M.txt [OPTIONS]\n"
    "       coarse-plan import hf-config CONFIG.json [OPTIONS]\n"
    "       coarse-plan import hwloc FILE.xml|--this-machine [OPTIONS]\n",
    "Convert NCCL's topology XML (an NCCL_TOPO_FILE hint or an NCCL_TOPO_DUMP_FILE\n"
    "dump) into coarse-plan topology JSON: CPUs, PCIe switches, GPUs, NICs and\n"
    "NVSwitches with their links.  What the file does not say is assumed and\n"
    "listed in the output's note (docs/import.md).  The result is checked with\n"
    "the topology loader before it is written (atomically; default: standard\n"
    "output).  The options of nccl-topo:\n",
    "`coarse-plan import smi-topo --help` lists the options of smi-topo (the\n"
    "matrix `nvidia-smi topo -m` prints), `coarse-plan import hf-config --help`\n"
    "those of hf-config (a Hugging Face config.json), `coarse-plan import hwloc\n"
    "--help` those of hwloc (an `lstopo --of xml` file, or this machine, through\n"
    "libhwloc).  Their options go after the kind word.\n"};

static const cli_usage_text smi_usage = {
    "usage: coarse-plan import smi-topo TOPO-M.txt [OPTIONS]\n",
    "Convert the matrix `nvidia-smi topo -m` prints (saved to a file; text before\n"
    "and after it is skipped) into coarse-plan topology JSON: NV# cells become\n"
    "NVLinks, PIX groups a PCIe switch, PXB groups an upstream switch, PHB/NODE and\n"
    "SYS cells (or the affinity column) CPU sockets, NIC columns NICs.  The matrix\n"
    "gives no rates: they come from --gpu or the flags, and every assumption is\n"
    "listed in the output's note (docs/import.md).  The result is checked with the\n"
    "topology loader before it is written (atomically; default: standard output).\n",
    NULL};

static const cli_usage_text hf_usage = {
    "usage: coarse-plan import hf-config CONFIG.json [OPTIONS]\n",
    "Convert a Hugging Face config.json (model_type bert, gpt2, llama, mistral,\n"
    "qwen2, qwen3, gemma, nemotron, and the mixtures of experts mixtral, qwen2_moe,\n"
    "qwen3_moe, deepseek_v3, gpt_oss) into model JSON: every trainable tensor with\n"
    "its PyTorch name and shape, in registration order, grouped into layers\n"
    "(embeddings, each block, final norm, each head) with forward FLOPs per sample,\n"
    "and the architecture as a \"transformer\" block (docs/import.md).\n"
    "Options go after the word hf-config.\n",
    NULL};

/* The options every kind shares: where to write, and the name. */
#define IMPORT_OUTPUT(out)                                                                     \
    OPT_STRING('o', "output", "FILE", out,                                                     \
               "where to write (\"-\": standard output, the default)")
#define IMPORT_CALIBRATION(calib)                                                              \
    OPT_STRING(0, "calibration", "TOPO", calib,                                                \
               "copy the calibration block of this topology JSON (e.g. a shipped one of the "  \
               "same GPU generation); without it the result is uncalibrated "                  \
               "(docs/calibration.md)")

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
/* Without --calibration the result has no calibration block: its note ends
 * saying so, as every command's header will (docs/import.md). */
static int note_uncalibrated(json_t *root, cp_err *e)
{
    const char *old = json_string_value(json_object_get(root, "note"));
    static const char what[] = "uncalibrated (no --calibration): every link at its nominal "
                               "rate; fit it with coarse-plan calibrate";
    char *note;
    size_t n = (old ? strlen(old) : 0) + sizeof what + 3;
    int rc = CP_OK;
    if (!(note = malloc(n)))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    snprintf(note, n, "%s%s%s", old ? old : "", old && old[0] ? "; " : "", what);
    if (json_object_set_new(root, "note", json_string(note)))
        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
    free(note);
    return rc;
}

int cli_finish_topology(const char *in, const char *out, json_t *root, const char *calib,
                        cp_err *e)
{
    int rc = calib ? copy_calibration(calib, root, e) : note_uncalibrated(root, e);
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

/* What a kind that takes its options after the kind word supplies. */
typedef struct import_kind {
    const char *cmd;            /* for usage errors: "import smi-topo" */
    const cli_usage_text *help; /* printed by -h around the table */
    const char *expect;         /* the usage line for a wrong argument count */
    converter conv;
    int is_model;               /* the result is a model, not a topology */
} import_kind;

/* `import KIND FILE [options]`; argv[0] is the kind word.  Parses the
 * options (table, into opts, *out and *calib) then converts FILE to *out. */
static int run_kind(const import_kind *k, const cli_option *table, void *opts,
                    const char *const *outp, const char *const *calib, int argc, char **argv)
{
    int first, rc = cli_parse(k->cmd, k->help, table, argc, argv, &first);
    const char *out;
    cp_err e;
    if (rc)
        return rc == CLI_HELP ? CP_OK : rc;
    out = *outp;
    if (first + 1 != argc)
        return cli_usage(k->cmd, "expected: %s", k->expect);
    if (cp_same_file(out, argv[first]))
        return cli_usage(k->cmd, "-o %s would overwrite the input", out);
    cp_err_clear(&e);
    return cli_report(convert(argv[first], out, k->conv, opts, k->is_model, *calib, &e), &e);
}

/* --gpu GEN (value: cp_smi_opts.gpu). */
static int parse_gpu(const char *cmd, char *arg, void *value)
{
    if (!cp_smi_gpu_known(arg))
        return cli_usage(cmd, "--gpu: expected p100, v100, a100 or h100, got '%s'", arg);
    *(const char **)value = arg;
    return CP_OK;
}

/* `import smi-topo TOPO-M.txt [options]`. */
static int import_smi(int argc, char **argv)
{
    static const import_kind k = {"import smi-topo", &smi_usage, "import smi-topo TOPO-M.txt",
                                  conv_smi, 0};
    const char *out = "-", *calib = NULL;
    cp_smi_opts o;
    const cli_option table[] = {
        IMPORT_OUTPUT(&out),
        OPT_STRING(0, "name", "NAME", &o.base.name, "topology name (default: the file's base name)"),
        OPT_CALLBACK(0, "gpu", "GEN", &o.gpu, parse_gpu,
                     "p100, v100, a100 or h100: the NVLink rate (20, 25, 25, 25 GB/s per link), "
                     "the PCIe rate (12, 12, 24, 48 GB/s) and the part"),
        OPT_DOUBLE(0, "nvlink-gbs", "X", &o.nvlink_gbs, 1e4,
                   "GB/s per NVLink per direction; needed, or --gpu, when the matrix has NV "
                   "cells"),
        OPT_DOUBLE(0, "pcie-gbs", "Y", &o.pcie_gbs, 1e4,
                   "GB/s of every PCIe link (default: by --gpu, else 12, Gen3 x16)"),
        CLI_OPT_GPU_MEMORY(&o.base.gpu_memory_gb, "by --gpu: P100, V100 16 GB (17.18), A100 "
                                                 "40 GB (42.95), H100 80 GB (85.52)"),
        OPT_DOUBLE(0, "net-gbs", "Z", &o.base.net_gbs, 1e4, "NIC speed, GB/s (default 12.5)"),
        OPT_DOUBLE(0, "net-latency-us", "W", &o.base.net_lat_us, 1e5,
                   "NIC-to-NIC latency (default 1.5)"),
        IMPORT_CALIBRATION(&calib),
        OPT_END()};
    cp_smi_opts_default(&o);
    return run_kind(&k, table, &o, &out, &calib, argc, argv);
}

/* --dtype fp32|fp16|bf16 (value: cp_hf_opts.dtype, kept as the word). */
static int parse_hf_dtype(const char *cmd, char *arg, void *value)
{
    if (strcmp(arg, "fp32") != 0 && strcmp(arg, "fp16") != 0 && strcmp(arg, "bf16") != 0)
        return cli_usage(cmd, "--dtype: expected fp32, fp16 or bf16, got '%s'", arg);
    *(const char **)value = arg;
    return CP_OK;
}

/* --seq-len and --batch (value: int64_t): whole numbers from 1 to 2^24
 * tokens and 2^30 samples. */
static int parse_seq(const char *cmd, char *arg, void *value)
{
    int n = 0, rc = cli_parse_count(cmd, "--seq-len", arg, 1 << 24, &n);
    *(int64_t *)value = rc == CP_OK ? n : *(int64_t *)value;
    return rc;
}

static int parse_batch(const char *cmd, char *arg, void *value)
{
    int n = 0, rc = cli_parse_count(cmd, "--batch", arg, 1 << 30, &n);
    *(int64_t *)value = rc == CP_OK ? n : *(int64_t *)value;
    return rc;
}

/* `import hf-config CONFIG.json [options]`; usage errors name `import`. */
static int import_hf_config(int argc, char **argv)
{
    static const import_kind k = {"import", &hf_usage, "import hf-config CONFIG.json", conv_hf,
                                  1};
    const char *out = "-", *calib = NULL; /* a model has no calibration */
    cp_hf_opts o;
    const cli_option table[] = {
        IMPORT_OUTPUT(&out),
        OPT_STRING(0, "name", "NAME", &o.name,
                   "model name (default: the last part of _name_or_path, else the file's base "
                   "name)"),
        OPT_CALLBACK(0, "seq-len", "L", &o.seq_len, parse_seq,
                     "tokens per sample for the FLOPs (default: bert 128, gpt2 1024, "
                     "the decoder families 2048, each at most the model's maximum "
                     "positions)"),
        OPT_CALLBACK(0, "batch", "B", &o.batch, parse_batch,
                     "per-GPU batch, written as compute.batch (default 1)"),
        OPT_CALLBACK(0, "dtype", "T", &o.dtype, parse_hf_dtype,
                     "gradient type fp32 (default), fp16 or bf16"),
        OPT_STRING(0, "arch", "ARCH", &o.arch,
                   "architecture instead of the file's architectures[0]: BertModel, "
                   "BertForPreTraining, BertForMaskedLM, GPT2LMHeadModel, GPT2Model, "
                   "LlamaForCausalLM, LlamaModel, MistralForCausalLM, MistralModel"),
        OPT_END()};
    cp_hf_opts_default(&o);
    return run_kind(&k, table, &o, &out, &calib, argc, argv);
}

/* `import [options] nccl-topo FILE.xml`, or the kinds that parse their own
 * options after the kind word. */
int cmd_import(int argc, char **argv)
{
    cp_import_opts o;
    const char *out = "-", *calib = NULL;
    const cli_option table[] = {
        IMPORT_OUTPUT(&out),
        OPT_STRING(0, "name", "NAME", &o.name, "topology name (default: the file's base name)"),
        OPT_DOUBLE(0, "net-gbs", "X", &o.net_gbs, 1e4,
                   "NIC speed when the file gives none, GB/s (default 12.5)"),
        OPT_DOUBLE(0, "net-latency-us", "Y", &o.net_lat_us, 1e5,
                   "NIC-to-NIC latency when the file gives none (default 1.5)"),
        CLI_OPT_GPU_MEMORY(&o.gpu_memory_gb, "by the part the PCI device id names, e.g. "
                                            "V100-SXM2-32GB 34.36"),
        OPT_FLAG(0, "no-fabric", &o.no_fabric,
                 "a hint file without NVLink whose GPUs are eight A100-SXM4 or H100-SXM5 gets "
                 "its HGX board's NVSwitch fabric (NCCL finds it through the driver); this "
                 "keeps PCIe only"),
        IMPORT_CALIBRATION(&calib),
        OPT_END()};
    cp_err e;
    int first, rc;

    if (argc > 1 && strcmp(argv[1], "smi-topo") == 0)
        return import_smi(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "hf-config") == 0)
        return import_hf_config(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "hwloc") == 0) /* import_hwloc.c */
        return cli_import_hwloc(argc - 1, argv + 1);
    cp_import_opts_default(&o);
    if ((rc = cli_parse("import", &nccl_usage, table, argc, argv, &first)))
        return rc == CLI_HELP ? CP_OK : rc;
    if (first + 2 != argc)
        return cli_usage("import", "expected: import nccl-topo FILE.xml (or import smi-topo "
                         "FILE, or import hf-config CONFIG.json)");
    if (strcmp(argv[first], "smi-topo") == 0 || strcmp(argv[first], "hf-config") == 0)
        return cli_usage("import", "write the format first: import %s FILE [options]",
                         argv[first]); /* options came first */
    if (strcmp(argv[first], "nccl-topo") != 0) {
        static const char *const formats[] = {"nccl-topo", "smi-topo", "hf-config", "hwloc"};
        const char *near = cli_nearest(argv[first], formats, 4);
        if (near)
            return cli_usage("import", "unknown format '%s'; did you mean '%s'?", argv[first],
                             near);
        return cli_usage("import", "unknown format '%s' (supported: nccl-topo, smi-topo, "
                         "hf-config, hwloc)", argv[first]);
    }
    if (cp_same_file(out, argv[first + 1]))
        return cli_usage("import", "-o %s would overwrite the input", out);
    cp_err_clear(&e);
    return cli_report(convert(argv[first + 1], out, conv_nccl, &o, 0, calib, &e), &e);
}
