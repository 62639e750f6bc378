/*
 * cmd_import.c - `coarse-plan import KIND FILE`: convert a real description
 * into coarse-plan JSON, validated by the same loader every other command
 * uses before it is written (atomically; default standard output).
 *
 *   import nccl-topo FILE.xml     NCCL topology XML -> topology JSON
 *   import hf-config CONFIG.json  Hugging Face config.json -> model JSON
 *
 * Each kind has its own options and its own section below; cmd_import only
 * dispatches on the kind word (hf-config takes its options after it).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/fileio.h"
#include "core/units.h"
#include "import/hf_config.h"
#include "import/nccl_topo.h"
#include "load/load.h"
#include "out/jsonfmt.h"

static const char help[] =
    "usage: coarse-plan import nccl-topo FILE.xml [-o OUT.json] [--name NAME]\n"
    "                          [--net-gbs X] [--net-latency-us Y] [--calibration TOPO]\n"
    "       coarse-plan import hf-config CONFIG.json [-o OUT.json] [--name NAME]\n"
    "                          [--seq-len L] [--batch B] [--dtype fp32|fp16|bf16]\n"
    "                          [--arch ARCH]\n"
    "\n"
    "Convert a real description into coarse-plan JSON.  The result is checked with\n"
    "the loader before it is written (atomically; default: standard output).\n"
    "\n"
    "nccl-topo: NCCL's topology XML (an NCCL_TOPO_FILE hint or an NCCL_TOPO_DUMP_FILE\n"
    "dump) into topology JSON: CPUs, PCIe switches, GPUs, NICs and NVSwitches with\n"
    "their links.  What the file does not say is assumed and listed in the output's\n"
    "note (docs/import.md).\n"
    "\n"
    "  -o, --output FILE      where to write (\"-\": standard output, the default)\n"
    "      --name NAME        topology name (default: the file's base name)\n"
    "      --net-gbs X        NIC speed when the file gives none, GB/s (default 12.5)\n"
    "      --net-latency-us Y NIC-to-NIC latency when the file gives none (default 1.5)\n"
    "      --calibration TOPO copy the calibration block of this topology JSON (e.g. a\n"
    "                         shipped one of the same GPU generation); without it the\n"
    "                         result is uncalibrated (docs/calibration.md)\n"
    "\n"
    "hf-config: a Hugging Face config.json (model_type bert, gpt2, llama, mistral)\n"
    "into model JSON: every trainable tensor with its PyTorch name and shape, in\n"
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

enum { OPT_NAME = 256, OPT_NETGBS, OPT_NETLAT, OPT_CALIB };

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

static int convert(const char *in, const char *out, const cp_import_opts *o,
                   const char *calib, cp_err *e)
{
    char *text = NULL, *json = NULL;
    size_t len;
    json_t *root = NULL;
    cp_jdoc d;
    cp_topo *t = NULL;
    cp_outfile f;
    int rc = cp_read_file(in, &text, &len, e);
    if (rc == CP_OK)
        rc = cp_import_nccl_topo(in, text, len, o, &root, e);
    if (rc == CP_OK && calib)
        rc = copy_calibration(calib, root, e);
    if (rc == CP_OK) { /* validate through the loader */
        json = json_dumps(root, JSON_REAL_PRECISION(12));
        if (!json)
            rc = cp_fail(e, CP_EINTERNAL, "out of memory");
        else if ((rc = cp_jdoc_load_text(&d, in, json, strlen(json), e)) == CP_OK) {
            rc = cp_topo_load_doc(&d, &t, e);
            if (rc == CP_EINPUT) {
                char msg[sizeof e->msg];
                snprintf(msg, sizeof msg, "%s", e->msg);
                rc = cp_fail_at(e, CP_EINPUT, in, 0, 0, NULL,
                                "the converted topology is not usable: %s", msg);
            }
            cp_jdoc_free(&d);
        }
    }
    if (rc == CP_OK && (rc = cp_out_open(&f, out, e)) == CP_OK) {
        if (cp_json_write_doc(root, f.f)) {
            cp_out_abort(&f);
            rc = cp_fail(e, CP_EINTERNAL, "writing %s failed", out);
        } else {
            rc = cp_out_commit(&f, e);
        }
    }
    cp_topo_free(t);
    free(json);
    json_decref(root);
    free(text);
    return rc;
}

static int import_hf_config(int argc, char **argv);

int cmd_import(int argc, char **argv)
{
    static const struct option lo[] = {
        {"output", required_argument, NULL, 'o'},   {"name", required_argument, NULL, OPT_NAME},
        {"net-gbs", required_argument, NULL, OPT_NETGBS},
        {"net-latency-us", required_argument, NULL, OPT_NETLAT},
        {"calibration", required_argument, NULL, OPT_CALIB},
        {"help", no_argument, NULL, 'h'},           {0, 0, 0, 0}};
    cp_import_opts o;
    const char *out = "-", *calib = NULL;
    cp_err e;
    int c, rc = CP_OK;

    if (argc >= 2 && strcmp(argv[1], "hf-config") == 0)
        return import_hf_config(argc - 1, argv + 1);
    cp_import_opts_default(&o);
    opterr = 0;
    optind = 1;
    while (rc == CP_OK && (c = getopt_long(argc, argv, ":ho:", lo, NULL)) != -1) {
        switch (c) {
        case 'h': fputs(help, stdout); return CP_OK;
        case 'o': out = optarg; break;
        case OPT_NAME: o.name = optarg; break;
        case OPT_CALIB: calib = optarg; break;
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
        return cli_usage("import", "expected: import nccl-topo FILE.xml%s",
                         optind < argc && strcmp(argv[optind], "nccl-topo") == 0
                             ? "" : ", or import hf-config CONFIG.json");
    if (strcmp(argv[optind], "hf-config") == 0)
        return cli_usage("import", "hf-config takes its options after the word hf-config");
    if (strcmp(argv[optind], "nccl-topo") != 0)
        return cli_usage("import", "unknown format '%s' (supported: nccl-topo, hf-config)",
                         argv[optind]);
    if (cp_same_file(out, argv[optind + 1]))
        return cli_usage("import", "-o %s would overwrite the input", out);
    cp_err_clear(&e);
    return cli_report(convert(argv[optind + 1], out, &o, calib, &e), &e);
}

/* ---------------------------------------------------------------- import hf-config */

/* Validate a converted model through the model loader, then write it: what
 * import writes, every other command reads. */
static int write_model(json_t *root, const char *in, const char *out, cp_err *e)
{
    char *json = json_dumps(root, JSON_REAL_PRECISION(12));
    cp_jdoc d;
    cp_model *m = NULL;
    cp_outfile f;
    int rc;
    if (!json)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    if ((rc = cp_jdoc_load_text(&d, in, json, strlen(json), e)) == CP_OK) {
        rc = cp_model_load_doc(&d, &m, e);
        if (rc == CP_EINPUT) {
            char msg[sizeof e->msg];
            snprintf(msg, sizeof msg, "%s", e->msg);
            rc = cp_fail_at(e, CP_EINPUT, in, 0, 0, NULL,
                            "the converted model is not usable: %s", msg);
        }
        cp_model_free(m);
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

/* Read the config, convert it, validate and write the model. */
static int convert_hf(const char *in, const char *out, const cp_hf_opts *o, cp_err *e)
{
    char *text = NULL;
    size_t len;
    json_t *root = NULL;
    int rc = cp_read_file(in, &text, &len, e);
    if (rc == CP_OK)
        rc = cp_import_hf_config(in, text, len, o, &root, e);
    if (rc == CP_OK)
        rc = write_model(root, in, out, e);
    json_decref(root);
    free(text);
    return rc;
}

/* --seq-len and --batch: whole numbers in [1, max]; 0 or a usage error. */
static int parse_count(const char *opt, const char *arg, long max, int64_t *out)
{
    long n;
    if (cp_parse_long(arg, 1, max, &n))
        return cli_usage("import", "%s: expected a whole number from 1 to %ld, got '%s'", opt,
                         max, arg);
    *out = n;
    return CP_OK;
}

/* `import hf-config CONFIG.json [options]`; argv[0] is "hf-config". */
static int import_hf_config(int argc, char **argv)
{
    enum { OPT_SEQ = 512, OPT_BATCH, OPT_DTYPE, OPT_ARCH }; /* clear of the OPT_* above */
    static const struct option lo[] = {
        {"output", required_argument, NULL, 'o'}, {"name", required_argument, NULL, OPT_NAME},
        {"seq-len", required_argument, NULL, OPT_SEQ},
        {"batch", required_argument, NULL, OPT_BATCH},
        {"dtype", required_argument, NULL, OPT_DTYPE},
        {"arch", required_argument, NULL, OPT_ARCH},
        {"help", no_argument, NULL, 'h'},         {0, 0, 0, 0}};
    cp_hf_opts o;
    const char *out = "-";
    cp_err e;
    int c, rc = CP_OK;

    cp_hf_opts_default(&o);
    opterr = 0;
    optind = 1;
    while (rc == CP_OK && (c = getopt_long(argc, argv, ":ho:", lo, NULL)) != -1) {
        switch (c) {
        case 'h': fputs(help, stdout); return CP_OK;
        case 'o': out = optarg; break;
        case OPT_NAME: o.name = optarg; break;
        case OPT_SEQ: rc = parse_count("--seq-len", optarg, 1L << 24, &o.seq_len); break;
        case OPT_BATCH: rc = parse_count("--batch", optarg, 1L << 30, &o.batch); break;
        case OPT_ARCH: o.arch = optarg; break;
        case OPT_DTYPE:
            o.dtype = optarg;
            if (strcmp(optarg, "fp32") != 0 && strcmp(optarg, "fp16") != 0 &&
                strcmp(optarg, "bf16") != 0)
                rc = cli_usage("import", "--dtype: expected fp32, fp16 or bf16, got '%s'",
                               optarg);
            break;
        case ':': return cli_usage("import", "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage("import", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (rc)
        return rc;
    if (optind + 1 != argc)
        return cli_usage("import", "expected: import hf-config CONFIG.json");
    if (cp_same_file(out, argv[optind]))
        return cli_usage("import", "-o %s would overwrite the input", out);
    cp_err_clear(&e);
    return cli_report(convert_hf(argv[optind], out, &o, &e), &e);
}
