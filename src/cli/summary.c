/*
 * summary.c - human and JSON summaries of models and topologies
 * (see summary.h).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/summary.h"
#include "core/units.h"
#include "paths/paths.h"
#include "predict/memory.h"

void cli_summary_model(const cp_model *m, FILE *f)
{
    char p[32], b[32];
    fprintf(f, "model %s: %d tensor%s, %s parameters, %s of %s gradients\n", m->name,
            m->ntensors, cp_s(m->ntensors), cp_fmt_count(m->params, p, sizeof p),
            cp_fmt_bytes((double)cp_model_grad_bytes(m), b, sizeof b), cp_dtype_name(m->dtype));
}

void cli_summary_topo(const cp_topo *t, FILE *f)
{
    int nics = cp_topo_count(t, CP_NIC), mem = cp_topo_count(t, CP_MEMDEV);
    fprintf(f, "topology %s: %d host%s, %d GPU%s, %d NIC%s, %d memory device%s, %d link%s%s\n",
            t->name, t->nhosts, cp_s(t->nhosts), t->ngpus, cp_s(t->ngpus), nics, cp_s(nics),
            mem, cp_s(mem), t->nlinks, cp_s(t->nlinks), t->calib.given ? "" : ", uncalibrated");
}

void cli_calib_note(const cp_topo *t, const char *prefix, FILE *f)
{
    if (t->calib.given)
        return;
    fprintf(f, "%suncalibrated: %s has no calibration block, so every link runs at its nominal "
               "rate with no per-step latency (faster than measured); fit one with coarse-plan "
               "calibrate NCCL_TESTS_OUTPUT -t TOPO -o OUT.json (docs/calibration.md)\n",
            prefix, t->name);
}

json_t *cli_model_json(const cp_model *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_string("model"));
    json_object_set_new(o, "name", json_string(m->name));
    json_object_set_new(o, "dtype", json_string(cp_dtype_name(m->dtype)));
    json_object_set_new(o, "tensors", json_integer(m->ntensors));
    json_object_set_new(o, "layers", json_integer(m->nlayers));
    json_object_set_new(o, "params", json_integer(m->params));
    json_object_set_new(o, "grad_bytes", json_integer(cp_model_grad_bytes(m)));
    return o;
}

json_t *cli_topo_json(const cp_topo *t)
{
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_string("topology"));
    json_object_set_new(o, "name", json_string(t->name));
    json_object_set_new(o, "hosts", json_integer(t->nhosts));
    json_object_set_new(o, "gpus", json_integer(t->ngpus));
    json_object_set_new(o, "nics", json_integer(cp_topo_count(t, CP_NIC)));
    json_object_set_new(o, "memdevs", json_integer(cp_topo_count(t, CP_MEMDEV)));
    json_object_set_new(o, "nodes", json_integer(t->nnodes));
    json_object_set_new(o, "links", json_integer(t->nlinks));
    return o;
}

/* Tensor counts by gradient size: the latency-bound ones matter. */
static void model_histogram(const cp_model *m, FILE *f)
{
    static const double edge[] = {64e3, 1e6, 16e6};
    static const char *const label[] = {"< 64 KB", "64 KB - 1 MB", "1 MB - 16 MB", ">= 16 MB"};
    int count[4] = {0, 0, 0, 0}, i, k;
    double bytes[4] = {0, 0, 0, 0};
    char b[32];
    for (i = 0; i < m->ntensors; i++) {
        double sz = (double)m->tensors[i].numel * cp_dtype_bytes(m->dtype);
        for (k = 0; k < 3 && sz >= edge[k]; k++)
            ;
        count[k]++;
        bytes[k] += sz;
    }
    fprintf(f, "gradient sizes:\n");
    for (k = 0; k < 4; k++)
        fprintf(f, "  %-13s %6d tensor%-3s%10s\n", label[k], count[k], cp_s(count[k]),
                cp_fmt_bytes(bytes[k], b, sizeof b));
}

/* "SwiGLU", "GeGLU", "squared-ReLU", "GELU". */
static const char *mlp_label(cp_xf_mlp k)
{
    return k == CP_MLP_SWIGLU ? "SwiGLU" : k == CP_MLP_GEGLU ? "GeGLU"
                                         : k == CP_MLP_RELU2 ? "squared-ReLU" : "GELU";
}

/* Heads, positions, norm, biases and the attention variants. */
static void info_attention(const cp_xformer *x, FILE *f)
{
    static const char *const pos[] = {"learned", "rotary", "ALiBi", "no"};
    char learned[48] = "";
    if (x->pos == CP_POS_LEARNED)
        snprintf(learned, sizeof learned, " (%lld rows)", (long long)x->max_pos);
    fprintf(f, "attention: heads of %lld, %s positions%s, %s, biases on q/k/v %s, output %s, "
               "MLP %s%s%s%s\n", (long long)cp_xf_head_dim(x), pos[x->pos], learned,
            x->norm == CP_NORM_RMS ? "RMSNorm" : "LayerNorm", x->qkv_bias ? "yes" : "no",
            x->o_bias ? "yes" : "no", x->mlp_bias ? "yes" : "no",
            x->qk_norm ? ", query/key norms" : "", x->attn_sinks ? ", sink logits" : "",
            x->vocab > 0 ? (x->tied ? ", LM head tied" : ", LM head untied") : "");
    if (x->window > 0 && x->window_every == 1)
        fprintf(f, "sliding window: %lld tokens on every block\n", (long long)x->window);
    else if (x->window > 0)
        fprintf(f, "sliding window: %lld tokens on blocks 0, %lld, %lld, ... (one in %lld), "
                   "the others attend fully\n", (long long)x->window,
                (long long)x->window_every, 2 * (long long)x->window_every,
                (long long)x->window_every);
    if (x->mla.kv_lora_rank > 0)
        fprintf(f, "latent attention (MLA): query rank %lld, key/value rank %lld, per head "
                   "%lld + %lld rotary query/key, %lld value\n",
                (long long)x->mla.q_lora_rank, (long long)x->mla.kv_lora_rank,
                (long long)x->mla.qk_nope_dim, (long long)x->mla.qk_rope_dim,
                (long long)x->mla.v_head_dim);
}

/* The expert layout of a mixture-of-experts model. */
static void info_moe(const cp_xformer *x, FILE *f)
{
    const cp_xf_moe *q = &x->moe;
    int64_t i, n = 0;
    for (i = 0; i < x->layers; i++)
        n += cp_xf_moe_block(x, i);
    fprintf(f, "experts: %lld of %lld blocks, each %lld routed experts of %lld (top %lld, %s "
               "router%s%s)", (long long)n, (long long)x->layers, (long long)q->experts,
            (long long)q->ffn, (long long)q->top_k, q->router_sigmoid ? "sigmoid" : "softmax",
            q->router_bias ? ", biased" : "", q->expert_bias ? "; experts biased" : "");
    if (q->shared_experts > 0)
        fprintf(f, ", %lld shared of %lld together%s", (long long)q->shared_experts,
                (long long)q->shared_ffn, q->shared_gate ? " (gated)" : "");
    if (q->dense_layers > 0)
        fprintf(f, "; the first %lld dense (MLP %lld)", (long long)q->dense_layers,
                (long long)(q->dense_ffn > 0 ? q->dense_ffn : x->ffn));
    fprintf(f, "\n");
}

/* The block (docs/formats.md, "Transformer"), the parameters it implies for
 * a decoder LM, and eq. M2 at the model's batch. */
static void info_transformer(const cp_model *m, FILE *f)
{
    const cp_xformer *x = &m->xf;
    char c[32], b[32], r[32];
    fprintf(f, "transformer: %lld blocks, hidden %lld, %lld heads (%lld key/value), "
               "%s MLP of %lld, sequence %lld, %s, dropout %g\n",
            (long long)x->layers, (long long)x->hidden, (long long)x->heads,
            (long long)x->kv_heads, mlp_label(x->mlp), (long long)x->ffn, (long long)x->seq,
            x->vocab > 0 ? "an LM head" : "no LM head", x->dropout);
    info_attention(x, f);
    if (x->moe.experts > 0)
        info_moe(x, f);
    if (x->vocab > 0) {
        int64_t total, active;
        cp_xf_params(x, &total, &active);
        fprintf(f, "parameters of the architecture (a decoder LM): %s", cp_fmt_count(total, c,
                                                                                      sizeof c));
        if (active != total)
            fprintf(f, ", %s active per token", cp_fmt_count(active, b, sizeof b));
        if (total != m->params)
            fprintf(f, " (the tensor list has %s: heads or poolers it does not describe)",
                    cp_fmt_count(m->params, r, sizeof r));
        fprintf(f, "\n");
    }
    if (m->batch <= 0) {
        fprintf(f, "activations (eq. M2): no compute.batch, no estimate\n");
        return;
    }
    fprintf(f, "activations at batch %d (eq. M2): %s, %s with fused attention, %s "
               "recomputed\n", m->batch,
            cp_fmt_bytes(cp_activation_bytes(m, 0, 1, 0, 0), c, sizeof c),
            cp_fmt_bytes(cp_activation_bytes(m, 0, 1, 0, 1), b, sizeof b),
            cp_fmt_bytes(cp_activation_bytes(m, 0, 1, 1, 0), r, sizeof r));
}

void cli_info_model(const cp_model *m, FILE *f)
{
    int i, big = 0;
    char c[32], b[32];
    cli_summary_model(m, f);
    fprintf(f, "layers: %d\n", m->nlayers);
    for (i = 1; i < m->ntensors; i++)
        if (m->tensors[i].numel > m->tensors[big].numel)
            big = i;
    fprintf(f, "largest tensor: %s, %s parameters (%s)\n", m->tensors[big].name,
            cp_fmt_count(m->tensors[big].numel, c, sizeof c),
            cp_fmt_bytes((double)m->tensors[big].numel * cp_dtype_bytes(m->dtype), b, sizeof b));
    model_histogram(m, f);
    if (m->nlayers > 0 && m->layers[0].fwd_ms >= 0)
        fprintf(f, "compute: per-layer forward/backward times given\n");
    else if (m->iteration_ms > 0)
        fprintf(f, "compute: %.1f ms per iteration on one GPU, split over layers by %s\n",
                m->iteration_ms, m->split == CP_SPLIT_FLOPS ? "FLOPs" : "parameters");
    else
        fprintf(f, "compute: not given (use --compute-ms with predict)\n");
    if (m->xf.layers > 0)
        info_transformer(m, f);
}

/* Link counts and bandwidth range per kind. */
static void topo_link_kinds(const cp_topo *t, FILE *f)
{
    int k, i;
    for (k = 0; k < CP_LINK_KINDS; k++) {
        int n = 0;
        double lo = 0, hi = 0;
        for (i = 0; i < t->nlinks; i++) {
            const cp_link *l = &t->links[i];
            double a = l->gbs[0] < l->gbs[1] ? l->gbs[0] : l->gbs[1];
            double z = l->gbs[0] > l->gbs[1] ? l->gbs[0] : l->gbs[1];
            if (l->kind != (cp_link_kind)k)
                continue;
            if (n == 0 || a < lo)
                lo = a;
            if (n == 0 || z > hi)
                hi = z;
            n++;
        }
        if (n == 0)
            continue;
        if (lo == hi)
            fprintf(f, "  %-7s %5d link%s, %g GB/s per direction\n",
                    cp_link_kind_name((cp_link_kind)k), n, cp_s(n), lo);
        else
            fprintf(f, "  %-7s %5d link%s, %g to %g GB/s per direction\n",
                    cp_link_kind_name((cp_link_kind)k), n, cp_s(n), lo, hi);
    }
}

/* For each GPU, the peer whose best route is narrowest, and the link that
 * makes it so. */
static int topo_bottlenecks(const cp_topo *t, FILE *f, cp_err *e)
{
    int gi, hi;
    if (t->ngpus < 2)
        return CP_OK;
    fprintf(f, "slowest link on each GPU's best route to the others:\n");
    if (t->rep_hosts > 1) /* copies of one host: host 0 says it all, in linear time */
    {
        if (t->rep_hosts == 2)
            fprintf(f, "  (host 0's GPUs; the other host is a copy of it)\n");
        else
            fprintf(f, "  (host 0's GPUs; the other %d hosts are copies of it)\n",
                    t->rep_hosts - 1);
    }
    for (gi = 0; gi < t->ngpus; gi++) {
        cp_reach r;
        int g = t->gpus[gi], worst = -1, arc, rc;
        if (t->rep_hosts > 1 && t->nodes[g].host != 0)
            continue;
        if ((rc = cp_reach_from(t, g, &r, e)))
            return rc;
        for (hi = 0; hi < t->ngpus; hi++) {
            int h = t->gpus[hi];
            if (h != g && (worst < 0 || r.bott[h] < r.bott[worst]))
                worst = h;
        }
        arc = cp_reach_bottleneck_arc(t, &r, worst);
        if (arc >= 0)
            fprintf(f, "  %-10s to %-10s %7.2f GB/s  %s %s -> %s  (%d hop%s, %.2f us)\n",
                    t->nodes[g].id, t->nodes[worst].id, r.bott[worst],
                    cp_link_kind_name(t->links[arc >> 1].kind),
                    t->nodes[cp_arc_tail(t, arc)].id, t->nodes[cp_arc_head(t, arc)].id,
                    r.hops[worst], r.hops[worst] == 1 ? "" : "s", r.lat_us[worst]);
        else /* the loaders refuse such a machine; never drop the GPU's row */
            fprintf(f, "  %-10s to %-10s no route (routes never pass through a GPU)\n",
                    t->nodes[g].id, t->nodes[worst].id);
        cp_reach_free(&r);
    }
    return CP_OK;
}

/* Two GPUs are the same part when every datasheet figure agrees. */
static int same_part(const cp_node *a, const cp_node *b)
{
    return ((!a->model && !b->model) || (a->model && b->model && !strcmp(a->model, b->model))) &&
           a->tflops == b->tflops && a->tflops_fp16 == b->tflops_fp16 &&
           a->tflops_fp8 == b->tflops_fp8 && a->sms == b->sms && a->mem_gbs == b->mem_gbs &&
           a->capacity_gb == b->capacity_gb;
}

/* "67 FP32, 989 FP16/BF16, 1979 FP8 dense TFLOP/s, 132 SMs, 4800 GB/s, 150.76
 * GB": the figures the file gives, "no figures" when none. */
static void gpu_figures(const cp_node *n, char *buf, size_t cap)
{
    size_t u = 0;
    buf[0] = '\0';
#define PUT(...) (u += (size_t)snprintf(buf + u, u < cap ? cap - u : 0, __VA_ARGS__))
    if (n->tflops > 0)
        PUT("%g FP32", n->tflops);
    if (n->tflops_fp16 > 0)
        PUT("%s%g FP16/BF16", u ? ", " : "", n->tflops_fp16);
    if (n->tflops_fp8 > 0)
        PUT("%s%g FP8", u ? ", " : "", n->tflops_fp8);
    if (u)
        PUT(" dense TFLOP/s");
    if (n->sms > 0)
        PUT("%s%d SMs", u ? ", " : "", n->sms);
    if (n->mem_gbs > 0)
        PUT("%s%g GB/s", u ? ", " : "", n->mem_gbs);
    if (n->capacity_gb > 0)
        PUT("%s%g GB", u ? ", " : "", n->capacity_gb);
    if (!u)
        PUT("no figures");
#undef PUT
}

/* One line per distinct GPU part (at most 8; the rest counted): what the
 * compute and memory models read.  Linear in the GPUs. */
static void topo_gpus(const cp_topo *t, FILE *f)
{
    enum { MAX_PARTS = 8 };
    int part[MAX_PARTS], count[MAX_PARTS], nparts = 0, other = 0, gi, k;
    char fig[256];
    for (gi = 0; gi < t->ngpus; gi++) {
        const cp_node *n = &t->nodes[t->gpus[gi]];
        for (k = 0; k < nparts && !same_part(&t->nodes[part[k]], n); k++)
            ;
        if (k < nparts)
            count[k]++;
        else if (nparts < MAX_PARTS) {
            part[nparts] = t->gpus[gi];
            count[nparts++] = 1;
        } else
            other++;
    }
    for (k = 0; k < nparts; k++) {
        const cp_node *n = &t->nodes[part[k]];
        gpu_figures(n, fig, sizeof fig);
        fprintf(f, "gpus: %d x %s: %s\n", count[k], n->model ? n->model : "(no model)", fig);
    }
    if (other)
        fprintf(f, "gpus: %d of other parts\n", other);
}

int cli_info_topo(const cp_topo *t, FILE *f, cp_err *e)
{
    int i;
    cli_summary_topo(t, f);
    cli_calib_note(t, "", f);
    topo_gpus(t, f);
    fprintf(f, "links:\n");
    topo_link_kinds(t, f);
    for (i = 0; i < t->nnodes; i++) {
        const cp_node *n = &t->nodes[i];
        if (n->kind == CP_MEMDEV || (n->kind != CP_GPU && n->reduce_gbs > 0))
            fprintf(f, "reducer %s (%s): %g GB/s%s\n", n->id, cp_node_kind_name(n->kind),
                    n->reduce_gbs, n->reduce_gbs > 0 ? "" : " (cannot reduce)");
    }
    return topo_bottlenecks(t, f, e);
}

void cli_res_name(const cp_topo *t, int res, char *buf, size_t cap)
{
    if (res < 2 * t->nlinks)
        snprintf(buf, cap, "%s %s -> %s", cp_link_kind_name(t->links[res >> 1].kind),
                 t->nodes[cp_arc_tail(t, res)].id, t->nodes[cp_arc_head(t, res)].id);
    else
        snprintf(buf, cap, "reducer %s", t->nodes[res - 2 * t->nlinks].id);
}
