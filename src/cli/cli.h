/*
 * cli.h - the subcommands and the few helpers they share.
 *
 * The CLI layer is the only place that prints results or errors and decides
 * exit codes (0 success, 1 internal failure, 2 bad input or usage).  Each
 * subcommand lives in its own cmd_<name>.c: it parses options, calls the
 * pipeline, and prints.  Output goes to stdout only on success, so a failed
 * command never leaves anything a pipeline could mistake for a result.
 */
#ifndef CP_CLI_H
#define CP_CLI_H

#include <jansson.h>
#include <stdio.h>

#include "core/err.h"
#include "predict/predict.h"

int cmd_check(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_collective(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_pod(int argc, char **argv); /* cmd_pod.c: the CXL pool reports */

/* Print "coarse-plan: error: <msg>" and a hint to stderr; returns 2. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print e when rc is not CP_OK; returns rc (the exit code). */
int cli_report(int rc, const cp_err *e);

/* An input error with no file of its own (a whole-file property: a fit out
 * of range, a host too large for the collective model) is about `path`:
 * name it, so the message reads "PATH: error: ...".  Only where one input
 * can be at fault, or after a callee has named the other (cp_predictor_init
 * names the topology; what remains is the model's).  Returns rc. */
int cli_blame(int rc, cp_err *e, const char *path);

/* A number option in (0, max]; 0 or a usage error (2) naming opt. */
int cli_parse_positive(const char *cmd, const char *opt, const char *arg, double max,
                       double *out);

/* An element type option (--grad-dtype, --activation-dtype): fp32, fp16 or
 * bf16 as bytes per element; 0 or a usage error. */
int cli_parse_dtype(const char *cmd, const char *opt, const char *arg, int *bytes);

/* The iteration-model options predict, compare and plan share: their
 * getopt codes (clear of every command's own) and long options.  plan has
 * no --framework (it buckets as DDP does). */
enum { CLI_OPT_ACCUM = 1000, CLI_OPT_VIEW, CLI_OPT_JITTER, CLI_OPT_FW, CLI_OPT_WRAP,
       CLI_OPT_HOOK, CLI_OPT_SHARDING, CLI_OPT_OFFLOAD };
#define CLI_MODEL_LONGOPTS                                                \
    {"accum-steps", required_argument, NULL, CLI_OPT_ACCUM},              \
        {"bucket-view", no_argument, NULL, CLI_OPT_VIEW},                 \
        {"jitter", required_argument, NULL, CLI_OPT_JITTER}
#define CLI_FRAMEWORK_LONGOPT                                    \
    {"framework", required_argument, NULL, CLI_OPT_FW},          \
        {"fsdp-wrap", required_argument, NULL, CLI_OPT_WRAP},    \
        {"comm-hook", required_argument, NULL, CLI_OPT_HOOK},    \
        {"fsdp-sharding", required_argument, NULL, CLI_OPT_SHARDING}, \
        {"offload", no_argument, NULL, CLI_OPT_OFFLOAD}

/* Apply shared option c (a CLI_OPT_* code) with its argument to p:
 * CP_OK, a usage error (2), or -1 when c is not one of them. */
int cli_model_option(const char *cmd, int c, const char *arg, cp_predict_opts *p);

/* --framework ddp|horovod|zero1|zero2|fsdp|zero3|mirrored; 0 or a usage error (2). */
int cli_parse_framework(const char *cmd, const char *arg, cp_framework *out);

/* What the chosen framework makes of the other options, once all are
 * parsed: ZeRO-2 buckets default to DeepSpeed's (bucket_mb 0) unless
 * --bucket-mb was given; --fsdp-wrap and --fsdp-sharding are for FSDP
 * only, --offload for ZeRO.  0 or a usage error (2). */
/* --offload [cpu|pool]: the word after --offload when it is one of those
 * (consumed: optind moves past it), else NULL (cpu). */
const char *cli_offload_arg(int argc, char **argv);

int cli_settle_framework(const char *cmd, cp_predict_opts *p, int bucket_given);

/* A whole-number option in [1, max]; 0 or a usage error (2) naming opt. */
int cli_parse_count(const char *cmd, const char *opt, const char *arg, int max, int *out);

/* Parse --hosts N (1 .. CP_MAX_HOSTS); 0 or a usage error (2). */
int cli_parse_hosts(const char *cmd, const char *arg, int *out);

/* Parse --gpus N (1 .. 256: the GPUs of each host a job uses); 0 or a usage
 * error (2). */
int cli_parse_gpus(const char *cmd, const char *arg, int *out);

/* Write `v` as indented JSON with a final newline to `f` and release it
 * (steals the reference).  0, or -1 when out of memory or writing failed. */
int cli_dump_json(json_t *v, FILE *f);

/* predict --timeline-svg: the n predictions (with their runs and spans)
 * as a Gantt chart written atomically to path.  0, or an error. */
int cli_write_timeline_svg(const char *path, const cp_predictor *pr, const cp_prediction *res,
                           int n, cp_err *e);

/* predict --frameworks: strategy s under every framework (base gives the
 * rest of the options; ZeRO's reduce bucket is DeepSpeed's unless
 * bucket_given), as a table or CSV on stdout.  0, or an error. */
int cli_frameworks(const cp_model *m, const cp_topo *t, const cp_predict_opts *base,
                   cp_strategy s, int bucket_given, int csv, cp_err *e);

/* A JSON real rounded to `decimals` places (new reference). */
json_t *cli_real(double x, int decimals);

#endif
