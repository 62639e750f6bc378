/*
 * cli.h - the subcommands and the few helpers they share.
 *
 * The CLI layer is the only place that prints results or errors and decides
 * exit codes (0 success, 1 internal failure, 2 bad input or usage).  Each
 * subcommand lives in its own cmd_<name>.c: it declares its options as a
 * table (opt.h, parsed and documented by opt.c), calls the pipeline, and
 * prints.  Output goes to stdout only on success, so a failed
 * command never leaves anything a pipeline could mistake for a result.
 */
#ifndef CP_CLI_H
#define CP_CLI_H

#include <jansson.h>
#include <stdio.h>

#include "cli/check.h"
#include "cli/opt.h"
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
int cmd_search(int argc, char **argv); /* cmd_search.c: large-model layouts */

/* Print e when rc is not CP_OK; returns rc (the exit code). */
int cli_report(int rc, const cp_err *e);

/* An input error with no file of its own (a whole-file property: a fit out
 * of range, a host too large for the collective model) is about `path`:
 * name it, so the message reads "PATH: error: ...".  Only where one input
 * can be at fault, or after a callee has named the other (cp_predictor_init
 * names the topology; what remains is the model's).  Returns rc. */
int cli_blame(int rc, cp_err *e, const char *path);

/* The data-parallel activation estimate (eq. M2) needs the per-GPU batch:
 * CP_EINPUT naming `path` when the model has a transformer block but no
 * compute.batch and no measured --activation-gb replaces the estimate. */
int cli_need_batch(const cp_model *m, const char *path, double activation_gb, cp_err *e);

/* Option callbacks (opt.h CLI_K_CALLBACK) for the options below; value is
 * the cp_predict_opts field named.  CP_OK or a usage error (2). */
int cli_opt_framework(const char *cmd, char *arg, void *framework); /* cp_framework */
int cli_opt_wrap(const char *cmd, char *arg, void *fsdp_wrap_mb);   /* double */
int cli_opt_sharding(const char *cmd, char *arg, void *fsdp_sharding); /* int bits */
int cli_opt_hook(const char *cmd, char *arg, void *comm_hook);      /* int */
int cli_opt_offload(const char *cmd, char *arg, void *offload);     /* int CP_OFFLOAD_* */

/* The iteration-model options predict, compare and plan share, as entries
 * of an option table (opt.h) writing into the cp_predict_opts *p. */
#define CLI_MODEL_OPTIONS(p)                                                                   \
    OPT_INT(0, "accum-steps", "K", &(p)->accum_steps, 1, 1000000,                            \
            "micro-batches per optimizer step (gradient accumulation: DDP no_sync, Horovod "  \
            "backward_passes_per_step; ZeRO-2 and FSDP synchronise every micro-batch); the "  \
            "compute time is one micro-batch's (default 1)"),                                 \
        OPT_FLAG(0, "bucket-view", &(p)->bucket_view,                                          \
                 "DDP gradient_as_bucket_view=True: no copy of the reduced buckets back into " \
                 "the gradients"),                                                             \
        OPT_DOUBLE(0, "jitter", "CV", &(p)->jitter, 1,                                          \
                   "stragglers: one GPU's compute time varies from step to step with this "   \
                   "coefficient of variation (e.g. 0.02); every step waits for the slowest "  \
                   "GPU (default 0)")

/* --gpu-memory-gb of the topology importers (smi-topo, nccl-topo, hwloc):
 * every GPU's capacity_gb, instead of the part's (import/gpu_memory.h);
 * dflt says what the importer takes without it. */
#define CLI_OPT_GPU_MEMORY(ptr, dflt)                                                          \
    OPT_DOUBLE(0, "gpu-memory-gb", "GB", ptr, 1e5,                                             \
               "every GPU's device memory, GB (1e9 bytes, as nvidia-smi's memory.total x "     \
               "1.048576e-3; what predict's model states must fit in); default: " dflt)

/* The framework options predict and compare share (plan buckets as DDP
 * does and has none of them). */
#define CLI_FRAMEWORK_OPTIONS(p)                                                               \
    OPT_CALLBACK(0, "framework", "F", &(p)->framework, cli_opt_framework,                      \
                 "ddp (PyTorch DistributedDataParallel, default), horovod, zero1 (DeepSpeed "  \
                 "ZeRO stage 1: reduce-scatter after backward, shard step, all-gather), zero2 " \
                 "(stage 2: the reduce-scatters during backward, gradients sharded), fsdp "    \
                 "(PyTorch FSDP), zero3 (DeepSpeed ZeRO stage 3 with its default prefetch, "   \
                 "persistence, reuse and bucket sizes) or mirrored (TensorFlow "               \
                 "MirroredStrategy: one pack of every gradient all-reduced after backward)"),  \
        CLI_FRAMEWORK_TUNING(p)

/* The data-parallel frameworks' settings (CLI_FRAMEWORK_OPTIONS without
 * --framework, for predict, whose --framework also takes the large-model
 * frameworks: cli/predict_llm.h). */
#define CLI_FRAMEWORK_TUNING(p)                                                                \
        OPT_CALLBACK_OPTARG(0, "offload", "cpu|pool", &(p)->offload, cli_opt_offload,         \
                            "DeepSpeed offload_optimizer to the CPU (zero1, zero2, zero3; "    \
                            "no argument or cpu): reduced shards copied to host memory, the "  \
                            "sockets step the optimizer, parameters copied back; pool: the "   \
                            "optimizer states (and under zero3 and fsdp the parameter "        \
                            "shards) in the shared CXL pool (docs/pool.md)"),                  \
        OPT_CALLBACK(0, "fsdp-wrap", "W", &(p)->fsdp_wrap_mb, cli_opt_wrap,                    \
                     "FSDP units: block (default; one per numbered block, as "                 \
                     "transformer_auto_wrap_policy, the rest in the root unit), layer (every " \
                     "model layer), or MB (consecutive layers until a unit holds MB MiB, as "  \
                     "size_based_auto_wrap_policy)"),                                          \
        OPT_CALLBACK(0, "fsdp-sharding", "S", &(p)->fsdp_sharding, cli_opt_sharding,           \
                     "FSDP sharding_strategy: full (FULL_SHARD, default), grad-op "            \
                     "(SHARD_GRAD_OP: parameters kept from forward to backward), hybrid "      \
                     "(HYBRID_SHARD: shard inside each host, all-reduce the shards across "    \
                     "hosts) or hybrid-grad-op (_HYBRID_SHARD_ZERO2)"),                        \
        OPT_CALLBACK(0, "comm-hook", "H", &(p)->comm_hook, cli_opt_hook,                       \
                     "DDP communication hook: fp16 or bf16 (fp16_compress_hook, "              \
                     "bf16_compress_hook: buckets all-reduced as 2-byte floats, plus the "     \
                     "casts), or none (default)")

/* What the chosen framework makes of the other options, once all are
 * parsed: ZeRO-2 buckets default to DeepSpeed's (bucket_mb 0) unless
 * --bucket-mb was given; --fsdp-wrap and --fsdp-sharding are for FSDP
 * only, --offload for ZeRO.  0 or a usage error (2). */
int cli_settle_framework(const char *cmd, cp_predict_opts *p, int bucket_given);

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

/* One row of a calibration's fit, {"bytes","measured_us","predicted_us",
 * "error"} (new reference): what calibrate --json prints for rings and
 * for the pool alike. */
json_t *cli_fit_row(double bytes, double measured_us, double predicted_us);

#endif
