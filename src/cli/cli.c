/*
 * cli.c - helpers shared by the subcommands (see cli.h).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/units.h"

int cli_report(int rc, const cp_err *e)
{
    if (rc != CP_OK) {
        fflush(stdout);
        cp_err_print(e, stderr);
    }
    return rc;
}

int cli_blame(int rc, cp_err *e, const char *path)
{
    if (rc == CP_EINPUT && !e->file[0] && path)
        snprintf(e->file, sizeof e->file, "%s", path);
    return rc;
}

int cli_need_batch(const cp_model *m, const char *path, double activation_gb, cp_err *e)
{
    if (m->xf.layers == 0 || m->batch > 0 || activation_gb > 0)
        return CP_OK;
    return cp_fail_at(e, CP_EINPUT, path, 0, 0, NULL,
                      "the activation estimate (docs/model.md, eq. M2) needs the per-GPU batch "
                      "of this transformer: give compute.batch in the model file, or "
                      "--activation-gb");
}

int cli_opt_framework(const char *cmd, char *arg, void *framework)
{
    int f;
    for (f = CP_FW_DDP; f <= CP_FW_ZERO1; f++)
        if (strcmp(arg, cp_framework_name((cp_framework)f)) == 0) {
            *(cp_framework *)framework = (cp_framework)f;
            return CP_OK;
        }
    return cli_usage(cmd, "--framework: expected ddp, horovod, zero1, zero2, fsdp, zero3 or "
                          "mirrored, got '%s'", arg);
}

/* --fsdp-wrap layer|block|MB: the FSDP unit policy (cp_predict_opts). */
int cli_opt_wrap(const char *cmd, char *arg, void *fsdp_wrap_mb)
{
    double *out = fsdp_wrap_mb;
    if (strcmp(arg, "layer") == 0)
        *out = CP_WRAP_LAYER;
    else if (strcmp(arg, "block") == 0)
        *out = CP_WRAP_BLOCK;
    else if (cp_parse_double(arg, out) || !(*out > 0) || *out > 1e6)
        return cli_usage(cmd, "--fsdp-wrap: expected layer, block or a size in MiB in "
                              "(0, 1e6], got '%s'", arg);
    return CP_OK;
}

/* --fsdp-sharding full|grad-op|hybrid|hybrid-grad-op: FSDP's
 * sharding_strategy FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD,
 * _HYBRID_SHARD_ZERO2 (cp_predict_opts.fsdp_sharding bits). */
int cli_opt_sharding(const char *cmd, char *arg, void *fsdp_sharding)
{
    static const char *const names[] = {"full", "grad-op", "hybrid", "hybrid-grad-op"};
    static const int bits[] = {CP_SHARD_FULL, CP_SHARD_GRAD_OP, CP_SHARD_HYBRID,
                               CP_SHARD_HYBRID | CP_SHARD_GRAD_OP};
    size_t k;
    for (k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(arg, names[k]) == 0) {
            *(int *)fsdp_sharding = bits[k];
            return CP_OK;
        }
    return cli_usage(cmd, "--fsdp-sharding: expected full, grad-op, hybrid or "
                          "hybrid-grad-op, got '%s'", arg);
}

/* --comm-hook none|fp16|bf16: bytes per element of the compressed buckets,
 * 0 for none (cp_predict_opts.comm_hook). */
int cli_opt_hook(const char *cmd, char *arg, void *comm_hook)
{
    if (strcmp(arg, "none") == 0)
        *(int *)comm_hook = 0;
    else if (strcmp(arg, "fp16") == 0 || strcmp(arg, "bf16") == 0)
        *(int *)comm_hook = 2;
    else
        return cli_usage(cmd, "--comm-hook: expected none, fp16 or bf16, got '%s'", arg);
    return CP_OK;
}

/* --offload[=cpu|pool]: optimizer states to the CPU (no argument, cpu) or
 * to the shared CXL pool (cp_predict_opts.offload). */
int cli_opt_offload(const char *cmd, char *arg, void *offload)
{
    if (!arg || strcmp(arg, "cpu") == 0)
        *(int *)offload = CP_OFFLOAD_CPU;
    else if (strcmp(arg, "pool") == 0)
        *(int *)offload = CP_OFFLOAD_POOL;
    else
        return cli_usage(cmd, "--offload: expected cpu or pool, got '%s'", arg);
    return CP_OK;
}

int cli_settle_framework(const char *cmd, cp_predict_opts *p, int bucket_given)
{
    if (p->fsdp_wrap_mb != 0 && p->framework != CP_FW_FSDP)
        return cli_usage(cmd, "--fsdp-wrap is for --framework fsdp");
    if (p->fsdp_sharding != 0 && p->framework != CP_FW_FSDP)
        return cli_usage(cmd, "--fsdp-sharding is for --framework fsdp");
    if (p->comm_hook && p->framework != CP_FW_DDP)
        return cli_usage(cmd, "--comm-hook is a DDP communication hook (--framework ddp)");
    if (p->offload == CP_OFFLOAD_POOL && !cp_framework_sharded(p->framework))
        return cli_usage(cmd, "--offload pool is for the sharded frameworks (--framework "
                              "zero1, zero2, zero3 or fsdp)");
    if (p->offload == CP_OFFLOAD_CPU && !cp_framework_deepspeed(p->framework))
        return cli_usage(cmd, "--offload is DeepSpeed's offload_optimizer (--framework zero1, "
                              "zero2 or zero3)");
    if (!cp_framework_deepspeed(p->framework))
        return CP_OK;
    if (!bucket_given)
        p->bucket_mb = 0; /* DeepSpeed's reduce_bucket_size, 5e8 elements */
    return CP_OK;
}

int cli_dump_json(json_t *v, FILE *f)
{
    int rc;
    if (!v)
        return -1;
    rc = json_dumpf(v, f, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
    json_decref(v);
    if (rc == 0 && fputc('\n', f) == EOF)
        rc = -1;
    return rc;
}

json_t *cli_real(double x, int decimals)
{
    return json_real(cp_round(x, decimals));
}

json_t *cli_fit_row(double bytes, double measured_us, double predicted_us)
{
    json_t *r = json_object();
    json_object_set_new(r, "bytes", json_real(bytes));
    json_object_set_new(r, "measured_us", cli_real(measured_us, 3));
    json_object_set_new(r, "predicted_us", cli_real(predicted_us, 3));
    json_object_set_new(r, "error", cli_real((predicted_us - measured_us) / measured_us, 4));
    return r;
}
