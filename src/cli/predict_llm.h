/*
 * predict_llm.h - `predict` for a large-model parallel layout (TP x CP x
 * DP x PP, docs/model.md "Large-model layouts"): the layout options every
 * command that prices layouts shares (predict, plan, search), and the
 * command's run, table, JSON and pipeline chart.
 *
 * A layout option (--pp, --mbs, --gbs, ... or --framework megatron,
 * deepspeed) puts predict in this mode; --tp does too.  Ownership: the
 * option values point into argv.
 */
#ifndef CP_CLI_PREDICT_LLM_H
#define CP_CLI_PREDICT_LLM_H

#include <jansson.h>

#include "cli/opt.h"
#include "llm/iteration.h"
#include "predict/predictor.h"

typedef struct cli_llm {
    cp_layout lay;
    int given;            /* any layout option was given */
    double net_gbs;       /* --net-gbs: every NIC's line rate, GB/s */
    int zero_given;
    int fw_given;         /* --framework megatron|deepspeed|fsdp was given */
    cp_framework *dp_fw;  /* where --framework's data-parallel choices go (cli_llm_bind) */
} cli_llm;

/* The options' callbacks (value: the cli_llm). */
int cli_llm_degree(const char *cmd, char *arg, void *value, int *dst, const char *name);
int cli_llm_opt_tp(const char *cmd, char *arg, void *value);
int cli_llm_opt_pp(const char *cmd, char *arg, void *value);
int cli_llm_opt_vp(const char *cmd, char *arg, void *value);
int cli_llm_opt_cp(const char *cmd, char *arg, void *value);
int cli_llm_opt_dp(const char *cmd, char *arg, void *value);
int cli_llm_opt_mbs(const char *cmd, char *arg, void *value);
int cli_llm_opt_gbs(const char *cmd, char *arg, void *value);
int cli_llm_opt_seq(const char *cmd, char *arg, void *value);
int cli_llm_opt_sp(const char *cmd, char *arg, void *value);
int cli_llm_opt_precision(const char *cmd, char *arg, void *value);
int cli_llm_opt_recompute(const char *cmd, char *arg, void *value);
int cli_llm_opt_recompute_layers(const char *cmd, char *arg, void *value);
int cli_llm_opt_attention(const char *cmd, char *arg, void *value);
int cli_llm_opt_grad_reduce(const char *cmd, char *arg, void *value);
int cli_llm_opt_fp8_params(const char *cmd, char *arg, void *value);
int cli_llm_opt_tp_overlap(const char *cmd, char *arg, void *value);
int cli_llm_opt_zero(const char *cmd, char *arg, void *value);
int cli_llm_opt_span(const char *cmd, char *arg, void *value);
int cli_llm_opt_net(const char *cmd, char *arg, void *value);
int cli_llm_opt_offload_opt(const char *cmd, char *arg, void *value);
int cli_llm_opt_offload_act(const char *cmd, char *arg, void *value);
int cli_llm_opt_ep(const char *cmd, char *arg, void *value);
int cli_llm_opt_etp(const char *cmd, char *arg, void *value);
int cli_llm_opt_moe_imbalance(const char *cmd, char *arg, void *value);
int cli_llm_opt_moe_overlap(const char *cmd, char *arg, void *value);
int cli_llm_opt_moe_dispatcher(const char *cmd, char *arg, void *value);
int cli_llm_opt_moe_a2a(const char *cmd, char *arg, void *value);

/* The layout options, for a command's table; L a cli_llm *. */
#define CLI_LAYOUT_OPTIONS(L)                                                                  \
    OPT_CALLBACK(0, "tp", "T", L, cli_llm_opt_tp,                                              \
                 "tensor-parallel degree (Megatron order: TP ranks adjacent inside a host)"), \
        OPT_CALLBACK(0, "pp", "P", L, cli_llm_opt_pp, "pipeline-parallel stages"),            \
        OPT_CALLBACK(0, "vp", "V", L, cli_llm_opt_vp,                                          \
                     "model chunks per pipeline rank (interleaved 1F1B; default 1)"),          \
        OPT_CALLBACK(0, "cp", "C", L, cli_llm_opt_cp,                                          \
                     "context-parallel degree (ring attention over the sequence)"),            \
        OPT_CALLBACK(0, "dp", "D", L, cli_llm_opt_dp,                                          \
                     "data-parallel degree (default GPUs / (T P C); a product that does not "  \
                     "match the GPUs is an error)"),                                           \
        OPT_CALLBACK(0, "mbs", "B", L, cli_llm_opt_mbs, "micro-batch, sequences (default 1)"), \
        OPT_CALLBACK(0, "gbs", "G", L, cli_llm_opt_gbs,                                        \
                     "global batch, sequences (default mbs x dp: one micro-batch each)"),      \
        OPT_CALLBACK(0, "seq", "S", L, cli_llm_opt_seq,                                        \
                     "tokens per sequence (default the model's)"),                             \
        OPT_CALLBACK(0, "sp", "on|off", L, cli_llm_opt_sp,                                     \
                     "sequence parallelism (default: on with megatron and TP > 1)"),           \
        OPT_CALLBACK(0, "precision", "P", L, cli_llm_opt_precision,                            \
                     "bf16 (default), fp16 or fp8 (Transformer Engine: the block GEMMs in "    \
                     "FP8 at the FP8 peak, the rest in 16 bits)"),                             \
        OPT_CALLBACK(0, "recompute", "R", L, cli_llm_opt_recompute,                            \
                     "none, selective (attention's core), full, or auto (the least that "      \
                     "fits: none, selective, then full recomputation of the fewest blocks); "  \
                     "without a layout: full keeps only each block's input in the "            \
                     "activation estimate"),                                                   \
        OPT_CALLBACK(0, "recompute-layers", "N", L, cli_llm_opt_recompute_layers,              \
                     "with --recompute full: only N blocks of each model chunk (Megatron's "   \
                     "--recompute-method block)"),                                             \
        OPT_CALLBACK(0, "attention", "A", L, cli_llm_opt_attention,                            \
                     "flash (default: FlashAttention, causal blocks skipped) or eager (the "   \
                     "scores materialised, as Megatron-LM before 2023)"),                      \
        OPT_CALLBACK(0, "grad-reduce", "T", L, cli_llm_opt_grad_reduce,                        \
                     "fp32 or bf16: the gradient buffers and their reduction (default fp32 "   \
                     "for megatron, bf16 otherwise)"),                                         \
        OPT_CALLBACK(0, "fp8-params", "on|off", L, cli_llm_opt_fp8_params,                     \
                     "with --precision fp8: keep the GEMM weights in FP8 (Megatron's "         \
                     "--fp8-param-gather)"),                                                   \
        OPT_CALLBACK(0, "tp-overlap", "on|off", L, cli_llm_opt_tp_overlap,                     \
                     "overlap TP collectives with GEMMs in forward too (Transformer Engine "   \
                     "userbuffers; default off)"),                                             \
        OPT_CALLBACK(0, "zero", "Z", L, cli_llm_opt_zero,                                      \
                     "sharding: 0 (none), 1 (optimizer: Megatron's distributed optimizer, the " \
                     "megatron default), 2 (and gradients), 3 (and weights: fsdp's)"),         \
        OPT_CALLBACK(0, "net-gbs", "X", L, cli_llm_opt_net,                                    \
                     "every NIC's line rate, GB/s per direction (what-if; default the "        \
                     "topology's)"),                                                           \
        OPT_CALLBACK(0, "tp-span-hosts", "on|off", L, cli_llm_opt_span,                        \
                     "allow a TP group wider than a host (its collectives cross the "          \
                     "network every layer)"),                                                  \
        OPT_CALLBACK(0, "offload-optimizer", "TIER", L, cli_llm_opt_offload_opt,               \
                     "gpu (default), host or pool: where the optimizer states and fp32 master " \
                     "weights live and are stepped (ZeRO-Offload's scheme: the gradient "      \
                     "shard copied out, the step there, the weights copied back)"),            \
        OPT_CALLBACK(0, "offload-activations", "TIER", L, cli_llm_opt_offload_act,             \
                     "gpu (default), host or pool: saved activations copied out during "       \
                     "forward and back for backward, beside the compute, instead of "          \
                     "recomputing them"),                                                      \
        OPT_CALLBACK(0, "ep", "E", L, cli_llm_opt_ep,                                          \
                     "expert-parallel degree of a mixture of experts (carved out of the TP x " \
                     "CP x DP ranks of a stage, Megatron-Core's order; default 1)"),           \
        OPT_CALLBACK(0, "etp", "T", L, cli_llm_opt_etp,                                        \
                     "expert tensor-parallel degree (default: --tp, as Megatron-Core)"),       \
        OPT_CALLBACK(0, "moe-imbalance", "X", L, cli_llm_opt_moe_imbalance,                    \
                     "the busiest expert's tokens over the mean (default 1: balanced)"),       \
        OPT_CALLBACK(0, "moe-overlap", "on|off", L, cli_llm_opt_moe_overlap,                   \
                     "overlap the expert all-to-all with the other micro-batch's compute "     \
                     "(Megatron's 1F1B all-to-all overlap; default off)"),                     \
        OPT_CALLBACK(0, "moe-dispatcher", "D", L, cli_llm_opt_moe_dispatcher,                  \
                     "alltoall (default: a copy per token and expert, NCCL) or deepep (a "     \
                     "copy per token and destination GPU, per host across the network)"),      \
        OPT_CALLBACK(0, "moe-a2a", "P", L, cli_llm_opt_moe_a2a,                                \
                     "auto (default: the faster), net or pool: the links the expert "          \
                     "all-to-all takes across hosts")

/* --framework for predict: megatron, deepspeed and (with a layout) fsdp
 * select the large-model frameworks; the others the data-parallel ones
 * (value: the cli_llm; dp_framework: where the data-parallel choice goes,
 * set by cli_llm_bind). */
int cli_llm_opt_framework(const char *cmd, char *arg, void *value);
void cli_llm_bind(cli_llm *L, cp_framework *dp_framework);

/* Run predict in layout mode: model file, topology (with hosts / gpus),
 * strategies (list, n; none: auto), output form; --timeline-svg when svg. */
typedef struct cli_llm_run {
    const char *model, *topo, *svg;
    int hosts, gpus, json, csv;
    const cp_strategy *list;
    int nlist;
} cli_llm_run;

int cli_predict_llm(const cli_llm *L, const cli_llm_run *r, cp_err *e);

/* The host a layout is priced on: one host of `path` (its first `gpus`
 * GPUs), the `hosts` copies never built (groups.h replicates each group as
 * far as it spans).  CP_OK and *t owned by the caller. */
int cli_llm_machine(const char *path, int gpus, int hosts, cp_topo **t, cp_err *e);

/* The model's transformer and the layout L, resolved on `hosts` copies of
 * host t (cp_layout_resolve): CP_EINPUT naming the model file when it has
 * no transformer block, the numbers when the layout does not fit the
 * machine (predict and plan say the same). */
int cli_llm_resolve(const cli_llm *L, const cp_model *m, const cp_topo *t, int hosts,
                    const char *model, cp_layout *l, cp_err *e);

/* What predict and plan both read for a layout: the model, one host of
 * the topology (its first `gpus` GPUs, 0 all), the layout resolved on
 * `hosts` copies, its GPU (FP8 refused without FP8 peaks) and its memory
 * tiers where it offloads or the host shares a pool.  *m and *t are the
 * caller's to free, on failure too (NULL when not loaded). */
int cli_llm_open(const cli_llm *L, const char *model, const char *topo, int gpus, int hosts,
                 cp_model **m, cp_topo **t, cp_layout *l, cp_gpu *g, cp_tiers *tiers, cp_err *e);

/* The `parallel` object of one prediction (predict --json, search --json). */
json_t *cli_llm_parallel_json(const cp_layout *l, const cp_llm_result *res);

/* The strategy's data-parallel route for a layout: CP_OK and *alg
 * (CP_ALGS for NCCL's choice) and *pool (1: through the CXL pool), or
 * CP_EINPUT naming why it cannot price one. */
int cli_llm_strategy_alg(cp_strategy s, cp_coll_alg *alg, int *pool, cp_err *e);

/* Draw the pipeline of res (its schedule events) as a Gantt chart into
 * path, written whole (pipeline_svg.c). */
int cli_llm_pipeline_svg(const char *path, const char *title, const cp_layout *l,
                         const cp_llm_result *res, cp_err *e);

#endif
