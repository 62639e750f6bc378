/*
 * test_llm.c - the large-model stage (src/llm/) on small layouts, every
 * expected number derived by hand beside its assertion: the GEMMs and
 * FLOPs of a GPT and a Llama block, parameter counts, Korthikanti et al.'s
 * activation sizes with and without SP and recomputation, the 1F1B and
 * interleaved bubble on four stages, the TP and PP traffic, a GEMM's
 * time on a made-up GPU, the groups of a layout that spans hosts and the
 * links they price, a stage's gradient buckets and its DP group's machine
 * for plan with a layout, and the layout checks.
 */
#include "testutil.h"

#include "llm/iteration.h"
#include "llm/stageplan.h"
#include "load/load.h"

/* A GPT block: h 64, 4 heads of 16, MLP 256 (GELU), sequence 32,
 * vocabulary 1000, learned positions of 32, biases, tied, dropout 0.1. */
static cp_xformer gpt_small(void)
{
    cp_xformer x = {.layers = 4, .hidden = 64, .heads = 4, .kv_heads = 4, .ffn = 256,
                    .seq = 32, .vocab = 1000, .max_pos = 32, .mlp = CP_MLP_GELU,
                    .pos = CP_POS_LEARNED, .norm = CP_NORM_LAYER, .tied = 1, .qkv_bias = 1,
                    .o_bias = 1, .mlp_bias = 1, .window_every = 1, .dropout = 0.1};
    return x;
}

/* A Llama block: h 64, 4 query heads and 2 key/value heads of 16, SwiGLU
 * MLP 128, RoPE, RMSNorm, no biases, untied. */
static cp_xformer llama_small(void)
{
    cp_xformer x = {.layers = 4, .hidden = 64, .heads = 4, .kv_heads = 2, .ffn = 128,
                    .seq = 32, .vocab = 1000, .mlp = CP_MLP_SWIGLU, .pos = CP_POS_ROPE,
                    .norm = CP_NORM_RMS, .swiglu = 1, .window_every = 1};
    return x;
}

static cp_layout layout(int tp, int pp, int mbs)
{
    cp_layout l;
    cp_layout_default(&l);
    l.tp = tp, l.pp = pp, l.mbs = mbs, l.seq = 32;
    l.sp = 0;
    return l;
}

/* The GEMM named `name` in a list, or NULL. */
static const cp_step *find(const cp_steps *s, const char *name)
{
    int i;
    for (i = 0; i < s->n; i++)
        if (strcmp(s->s[i].name, name) == 0)
            return &s->s[i];
    return NULL;
}

static void test_gpt_block_gemms(void **state)
{
    cp_xformer x = gpt_small();
    cp_layout l = layout(1, 1, 2);
    cp_steps f, b;
    double gemm = 0;
    int i;
    (void)state;
    cp_block_fwd(&x, &l, &f);
    /* T = b s = 2 x 32 = 64 tokens, h = 64:
     *   qkv  64 x 192 x 64: 2 x 64 x 192 x 64 = 1,572,864
     *   proj 64 x 64 x 64:                     524,288
     *   fc1  64 x 256 x 64:                  2,097,152
     *   fc2  64 x 64 x 256:                  2,097,152
     * sum 6,291,456 = 24 T h^2 (24 x 64 x 4,096) */
    assert_near(find(&f, "qkv")->flops, 1572864, 0);
    assert_near(find(&f, "qkv")->n, 192, 0);
    assert_near(find(&f, "proj")->flops, 524288, 0);
    assert_near(find(&f, "fc1")->flops, 2097152, 0);
    assert_near(find(&f, "fc2")->k, 256, 0);
    for (i = 0; i < f.n; i++)
        if (f.s[i].kind == CP_ST_GEMM)
            gemm += f.s[i].flops;
    assert_near(gemm, 24.0 * 64 * 64 * 64, 0);
    /* FlashAttention, causal: b a s^2 / 2 = 2 x 4 x 1,024 / 2 = 4,096 query-key
     * pairs, 4 d = 64 FLOPs each (Q K^T and P V): 262,144 = 4 b s^2 h / 2 */
    assert_near(find(&f, "attn.flash")->flops, 262144, 0);
    /* backward: two GEMMs a linear layer, 2 x 6,291,456; FlashAttention's
     * backward 2.5 x forward: 655,360 */
    cp_block_bwd(&x, &l, &b);
    gemm = 0;
    for (i = 0; i < b.n; i++)
        if (b.s[i].kind == CP_ST_GEMM)
            gemm += b.s[i].flops;
    assert_near(gemm, 2 * 6291456.0, 0);
    assert_near(find(&b, "attn.flash.bwd")->flops, 655360, 0);
    /* the weight gradient of fc1 is 64 x 256 over the 64 tokens */
    assert_near(find(&b, "fc1.wgrad")->m, 64, 0);
    assert_near(find(&b, "fc1.wgrad")->n, 256, 0);
    assert_near(find(&b, "fc1.wgrad")->k, 64, 0);
}

static void test_llama_block_gemms_tp2(void **state)
{
    cp_xformer x = llama_small();
    cp_layout l = layout(2, 1, 2);
    cp_steps f;
    (void)state;
    cp_block_fwd(&x, &l, &f);
    /* TP 2: 2 query and 1 key/value heads of 16 a GPU, so QKV is 64 x
     * (2 + 2 x 1) x 16 = 64 x 64: 2 x 64 x 64 x 64 = 524,288; proj 64 x 64
     * over 32 = 262,144; the gated fc1 2 f / t = 128 wide: 2 x 64 x 128 x
     * 64 = 1,048,576; fc2 over f / t = 64: 524,288 */
    assert_near(find(&f, "qkv")->n, 64, 0);
    assert_near(find(&f, "qkv")->flops, 524288, 0);
    assert_near(find(&f, "proj")->flops, 262144, 0);
    assert_near(find(&f, "fc1")->flops, 1048576, 0);
    assert_near(find(&f, "fc2")->flops, 524288, 0);
    /* rotary on q and k exists, no learned positions; without SP two
     * all-reduces of T h E = 64 x 64 x 2 = 8,192 bytes */
    assert_non_null(find(&f, "rope"));
    assert_int_equal(find(&f, "tp.rs.proj")->comm, CP_CM_AR);
    assert_near(find(&f, "tp.rs.proj")->comm_bytes, 8192, 0);
    /* with SP: an all-gather before qkv, a reduce-scatter after proj */
    l.sp = 1;
    cp_block_fwd(&x, &l, &f);
    assert_int_equal(find(&f, "tp.ag.qkv")->comm, CP_CM_AG);
    assert_int_equal(find(&f, "tp.rs.proj")->comm, CP_CM_RS);
}

static void test_params_and_flops(void **state)
{
    cp_xformer x = gpt_small(), y = llama_small();
    (void)state;
    /* GPT block: qkv 64 x 192 + 192, proj 64 x 64 + 64, fc1 64 x 256 + 256,
     * fc2 256 x 64 + 64, two LayerNorms 4 x 64:
     * 12,480 + 4,160 + 16,640 + 16,448 + 256 = 49,984 */
    assert_near(cp_block_params(&x), 49984, 0);
    /* embedding 1000 x 64 + positions 32 x 64 = 66,048; head: the final norm
     * 128 (tied) */
    assert_near(cp_embed_params(&x), 66048, 0);
    assert_near(cp_head_params(&x), 128, 0);
    /* Llama block: q 64 x 64, k and v 64 x 32 each, o 64 x 64, gate/up/down
     * 3 x 64 x 128, two RMSNorms 128: 4,096 + 4,096 + 4,096 + 24,576 + 128 */
    assert_near(cp_block_params(&y), 36992, 0);
    assert_near(cp_head_params(&y), 64 + 64000, 0);
    /* Megatron's model FLOPs for GPT with f = 4h, MHA:
     * 72 s L h^2 (1 + s/(6h) + V/(12 L h)) = 72 x 32 x 4 x 4,096 x
     * (1 + 32/384 + 1000/3,072) = 37,748,736 x 1.408854 = 53,182,464 */
    assert_near(cp_model_flops_per_seq(&x, 32, 0), 53182464, 1);
}

/* Korthikanti et al. (MLSys'23) section 4: per block, 16-bit, eager
 * attention with dropout, GELU MLP of 4h, MHA: s b h (34 + 5 a s / h)
 * without parallelism; s b h (10 + 24/t + 5 a s / (h t)) with TP t;
 * s b h / t (34 + 5 a s / h) with SP; selective drops 5 a s / h; full keeps
 * 2 s b h (/ t with SP). */
static void test_activations(void **state)
{
    cp_xformer x = gpt_small();
    cp_layout l = layout(1, 1, 2);
    double s = 32, b = 2, h = 64, a = 4, sbh = s * b * h;
    (void)state;
    l.attn = CP_ATTN_EAGER;
    /* 4,096 x (34 + 5 x 4 x 32 / 64 = 10): 180,224 */
    assert_near(cp_block_act_bytes(&x, &l, CP_RC_NONE), sbh * (34 + 5 * a * s / h), 0);
    assert_near(cp_block_act_bytes(&x, &l, CP_RC_NONE), 180224, 0);
    l.tp = 2; /* 4,096 x (10 + 12 + 5) = 110,592 */
    assert_near(cp_block_act_bytes(&x, &l, CP_RC_NONE), sbh * (10 + 24 / 2.0 + 5 * a * s / h / 2),
                0);
    l.sp = 1; /* 4,096 / 2 x 44 = 90,112 */
    assert_near(cp_block_act_bytes(&x, &l, CP_RC_NONE), sbh / 2 * (34 + 5 * a * s / h), 0);
    assert_near(cp_block_act_bytes(&x, &l, CP_RC_SELECTIVE), sbh / 2 * 34, 0);
    assert_near(cp_block_act_bytes(&x, &l, CP_RC_FULL), 2 * sbh / 2, 0);
    /* FlashAttention keeps an fp32 log-sum-exp per query and head instead
     * of the scores: T a/t x 4 = 64 x 2 x 4 = 512 bytes */
    l.attn = CP_ATTN_FLASH;
    assert_near(cp_block_act_bytes(&x, &l, CP_RC_NONE), sbh / 2 * 34 + 512, 0);
}

static void test_inflight_and_memory(void **state)
{
    cp_xformer x = gpt_small();
    cp_layout l = layout(1, 4, 1);
    cp_err e;
    cp_llm_mem m;
    (void)state;
    l.gbs = 8;
    l.fw = CP_LLM_MEGATRON;
    assert_int_equal(cp_layout_resolve(&l, &x, 4, 4, &e), CP_OK);
    /* 1F1B: stage r holds min(p - r, m) micro-batches: 4, 3, 2, 1 */
    assert_int_equal(cp_inflight_chunks(&l, 0), 4);
    assert_int_equal(cp_inflight_chunks(&l, 3), 1);
    /* interleaved, 8 blocks, v = 2 (one block a chunk): Megatron's warm-up
     * (p - r - 1) 2 + (v - 1) p, plus one: 3 x 2 + 4 + 1 = 11 chunks on
     * stage 0, i.e. L (1 + (p-1)/(p v)) = 8 x (1 + 3/8) = 11 layers' worth */
    x.layers = 8;
    l.vp = 2;
    assert_int_equal(cp_layout_resolve(&l, &x, 4, 4, &e), CP_OK);
    assert_int_equal(cp_inflight_chunks(&l, 0), 11);
    assert_near(cp_inflight_chunks(&l, 0) * (double)l.layers_per_chunk, 8 * (1 + 3.0 / 8), 0);
    /* model states under the distributed optimizer with fp32 gradients,
     * one GPU a stage (dp 1): stage 0 holds chunks 0 and 4, two blocks, and
     * the embedding, 2 x 49,984 + 66,048 = 166,016 parameters: weights 2
     * bytes, gradients 4, Adam and master 12 */
    cp_llm_memory(&x, &l, CP_RC_NONE, &m);
    assert_int_equal(m.stage, 0);
    assert_near(m.weights, 166016 * 2.0, 0);
    assert_near(m.grads, 166016 * 4.0, 0);
    assert_near(m.optim, 166016 * 12.0, 0);
}

/* Uniform stages, no sends: 1F1B ends at m (f + b) + (p - 1)(f + b);
 * interleaved with v chunks at m (f + b) + (p - 1)(f + b) / v (Narayanan
 * et al., eq. 1 and 2). */
static void test_bubble(void **state)
{
    double f[8], b[8];
    cp_sched_in in;
    cp_sched_out out;
    cp_err e;
    int i;
    (void)state;
    memset(&in, 0, sizeof in);
    for (i = 0; i < 8; i++)
        f[i] = 1, b[i] = 2;
    in.pp = 4, in.vp = 1, in.micro = 8, in.fwd_ms = f, in.bwd_ms = b, in.p2p_blocks = 1;
    assert_int_equal(cp_sched_run(&in, &out, &e), CP_OK);
    /* 8 x 3 + 3 x 3 = 33 ms; every stage computes 24 ms */
    assert_near(out.end_ms, 33, 1e-9);
    assert_near(out.busy_ms[0], 24, 1e-9);
    assert_near(cp_sched_bubble_ms(4, 1, 1, 2), 9, 1e-12);
    cp_sched_free(&out);
    /* two chunks a stage, each half the layers: f 0.5, b 1 a chunk; 24 + 9/2 */
    for (i = 0; i < 8; i++)
        f[i] = 0.5, b[i] = 1;
    in.vp = 2;
    assert_int_equal(cp_sched_run(&in, &out, &e), CP_OK);
    assert_near(out.end_ms, 28.5, 1e-9);
    cp_sched_free(&out);
    /* interleaving needs m a multiple of p */
    in.micro = 6;
    assert_int_equal(cp_sched_run(&in, &out, &e), CP_EINPUT);
}

/* Two stages, one micro-batch, blocking sends of s: forward on stage 0,
 * send, forward and backward on stage 1, send, backward on stage 0:
 * 2 (f + b) + 2 s = 2 x 3 + 1 = 7 ms, of which stage 0 held 1 ms sending. */
static void test_sends(void **state)
{
    double f[2] = {1, 1}, b[2] = {2, 2};
    cp_sched_in in;
    cp_sched_out out;
    cp_err e;
    (void)state;
    memset(&in, 0, sizeof in);
    in.pp = 2, in.vp = 1, in.micro = 1, in.fwd_ms = f, in.bwd_ms = b;
    in.p2p_ms = 0.5, in.p2p_blocks = 1;
    assert_int_equal(cp_sched_run(&in, &out, &e), CP_OK);
    assert_near(out.end_ms, 7, 1e-9);
    assert_near(out.send_ms[0], 0.5, 1e-12);
    assert_near(out.send_ms[1], 0.5, 1e-12);
    cp_sched_free(&out);
    /* overlapped sends only delay the receiver: the same 7 ms, no stage held */
    in.p2p_blocks = 0;
    assert_int_equal(cp_sched_run(&in, &out, &e), CP_OK);
    assert_near(out.end_ms, 7, 1e-9);
    assert_near(out.send_ms[0], 0, 0);
    cp_sched_free(&out);
}

/* A made-up GPU: 4 SMs, 4 TFLOP/s (1 a SM), 1 TB/s, a large GEMM at half
 * the peak, no prologue, no fixed costs. */
static cp_gpu toy_gpu(void)
{
    cp_gpu g;
    memset(&g, 0, sizeof g);
    g.model = "toy";
    g.peak16 = 4e12;
    g.hbm = 1e12;
    g.sms = 4;
    g.cal.eff16 = 0.5;
    g.cal.ai_crit = 64;
    g.cal.k0 = 0;
    g.cal.mem_eff = 1;
    g.cal.bwd_eff = 1;
    g.cal.attn_eff = 1;
    return g;
}

static void test_gemm_time(void **state)
{
    cp_gpu g = toy_gpu();
    cp_step s;
    (void)state;
    memset(&s, 0, sizeof s);
    s.kind = CP_ST_GEMM, s.m = 512, s.n = 256, s.k = 1024, s.batch = 1;
    s.flops = 2 * 512.0 * 256 * 1024;
    s.bytes = 2 * (512.0 * 1024 + 1024 * 256 + 512 * 256);
    /* 256 x 128 tiles: 2 x 2 = 4, one wave; a tile 2 x 256 x 128 x 1,024 /
     * (1e12 x 0.5) = 134.2177 us; 128 x 128 tiles take two waves of 67.1 us,
     * the same; the bytes (1.8 MB) take 1.8 us */
    assert_near(cp_gpu_step_us(&g, &s), 2 * 256.0 * 128 * 1024 / 0.5e12 * 1e6, 1e-9);
    assert_near(cp_gpu_gemm_eff(&g, 512, 256, 1024, 1, 0), 0.5, 1e-9);
    /* one more row of tiles: 3 x 2 = 6 tiles, two waves of 256 x 128 (268.4
     * us); 128 x 128: 5 x 2 = 10 tiles, three waves of 67.1 us = 201.3 us */
    s.m = 513;
    assert_near(cp_gpu_step_us(&g, &s), 3 * 2 * 128.0 * 128 * 1024 / 0.5e12 * 1e6, 1e-9);
    /* memory-bound work: 2 MB at 1 TB/s = 2 us plus the kernel's fixed 3 us */
    memset(&s, 0, sizeof s);
    s.kind = CP_ST_MEM, s.bytes = 2e6;
    g.cal.kernel_us = 3;
    assert_near(cp_gpu_step_us(&g, &s), 5, 1e-12);
    /* NCCL's 24 thread blocks on 132 SMs slow an overlapped kernel by 18.2% */
    g.cal.nccl_ctas = 24, g.sms = 132;
    assert_near(cp_gpu_overlap_loss(&g), 24.0 / 132, 1e-12);
}

/* Megatron's order on hosts of 8: TP 4 x CP 1 x DP 4 x PP 2 = 32 GPUs. */
static void test_groups_shape(void **state)
{
    cp_xformer x = gpt_small();
    cp_layout l = layout(4, 2, 1);
    cp_group_shape g;
    cp_err e;
    (void)state;
    x.heads = x.kv_heads = 4;
    assert_int_equal(cp_layout_resolve(&l, &x, 32, 8, &e), CP_OK);
    assert_int_equal(l.dp, 4); /* 32 / (4 x 2) */
    /* rank = tp + 4 (cp + dp + 4 pp) */
    assert_int_equal(cp_layout_rank(&l, 1, 0, 2, 1), 1 + 4 * (2 + 4 * 1));
    /* TP: ranks 0-3 on host 0, two TP groups a host */
    cp_layout_group(&l, CP_G_TP, &g);
    assert_int_equal(g.size, 4), assert_int_equal(g.hosts, 1), assert_int_equal(g.local, 4);
    assert_int_equal(g.concurrent, 2);
    /* DP: ranks 0, 4, 8, 12: GPUs 0 and 4 of hosts 0 and 1; four DP groups
     * share a host */
    cp_layout_group(&l, CP_G_DP, &g);
    assert_int_equal(g.size, 4), assert_int_equal(g.hosts, 2), assert_int_equal(g.local, 2);
    assert_int_equal(g.idx[0], 0), assert_int_equal(g.idx[1], 4);
    assert_int_equal(g.concurrent, 4);
    /* PP: rank 0 and rank 16 (host 2): one GPU on each of two hosts */
    cp_layout_group(&l, CP_G_PP, &g);
    assert_int_equal(g.hosts, 2), assert_int_equal(g.local, 1), assert_int_equal(g.concurrent, 8);
}

/* The DP group of that layout on real hosts: on HGX H100 (a 400 Gb/s NIC
 * a GPU, behind the GPU's own PCIe switch) its two GPUs keep their own two
 * NICs whole, 50 GB/s each; on a p3dn (one 100 Gb/s EFA for eight GPUs) its
 * two GPUs get 2/8 of the one NIC: 12.5 x 2 / 8 = 3.125 GB/s, 1.5625 a GPU. */
static void test_group_links(void **state)
{
    cp_xformer x = gpt_small();
    cp_layout l = layout(4, 2, 1);
    cp_topo *t = NULL;
    cp_groups G;
    cp_err e;
    (void)state;
    cp_err_clear(&e);
    assert_int_equal(cp_topo_load_hosts("topologies/hgx-h100.json", 4, &t, &e), CP_OK);
    assert_int_equal(cp_layout_resolve(&l, &x, t->ngpus, 8, &e), CP_OK);
    assert_int_equal(cp_groups_build(&G, t, &l, 0, NULL, &e), CP_OK);
    assert_int_equal(cp_groups_model(&G, CP_G_DP)->host->ngpus, 2);
    assert_int_equal(cp_topo_count(cp_groups_model(&G, CP_G_DP)->host, CP_NIC), 2);
    assert_near(cp_groups_model(&G, CP_G_DP)->nic_share, 50, 1e-9);
    assert_int_equal(cp_groups_model(&G, CP_G_DP)->coll.nhosts, 2);
    assert_near(cp_groups_model(&G, CP_G_TP)->nic_share, 0, 0); /* inside a host: NVLink */
    /* --net-gbs 25 halves the line rate */
    cp_groups_free(&G);
    assert_int_equal(cp_groups_build(&G, t, &l, 25, NULL, &e), CP_OK);
    assert_near(cp_groups_model(&G, CP_G_DP)->nic_share, 25, 1e-9);
    cp_groups_free(&G);
    cp_topo_free(t);
    assert_int_equal(cp_topo_load_hosts("topologies/aws-p3dn.json", 4, &t, &e), CP_OK);
    assert_int_equal(cp_groups_build(&G, t, &l, 0, NULL, &e), CP_OK);
    assert_near(cp_groups_model(&G, CP_G_DP)->nic_share, 12.5 * 2 / 8 / 2, 1e-9);
    cp_groups_free(&G);
    cp_topo_free(t);
}

/* plan with a layout (docs/planner.md "Large-model layouts"): a stage's
 * gradient buckets, their ready times from the schedule, and the machine
 * of its data-parallel group. */
static void test_stage_grads(void **state)
{
    cp_xformer x = llama_small();
    cp_layout l = layout(1, 2, 1);
    cp_topo *t = NULL, *dpm = NULL;
    cp_groups G;
    cp_llm_opts o;
    cp_llm_result r;
    cp_stage_grads sg;
    cp_gpu g;
    cp_err e;
    (void)state;
    cp_err_clear(&e);
    memset(&o, 0, sizeof o);
    o.dp_alg = CP_ALGS;
    o.keep_events = 1;
    l.gbs = 8; /* TP 1 x PP 2 on 8 GPUs: DP 4, two micro-batches each */
    assert_int_equal(cp_topo_load("topologies/hgx-h100.json", &t, &e), CP_OK);
    assert_int_equal(cp_layout_resolve(&l, &x, 8, 8, &e), CP_OK);
    assert_int_equal(l.dp, 4);
    assert_int_equal(cp_gpu_from_topo(t, &g, &e), CP_OK);
    assert_int_equal(cp_groups_build(&G, t, &l, 0, NULL, &e), CP_OK);
    assert_int_equal(cp_llm_predict(&x, &l, &g, &G, &o, &r, &e), CP_OK);
    /* a block: q and o 64 x 64 = 4,096 each, k and v 64 x 32 = 2,048 each,
     * SwiGLU 3 x 64 x 128 = 24,576, two RMSNorms 128: 36,992.  Stage 0:
     * blocks 0-1 and the embedding 1000 x 64: 73,984 + 64,000 = 137,984;
     * stage 1: blocks 2-3, the final norm 64 and the head 64,000: 138,048 */
    assert_int_equal(cp_stage_grads_build(&x, &l, &g, NULL, &r, 0, "s0", &sg, &e), CP_OK);
    assert_int_equal(sg.params, 137984);
    /* Megatron's bucket is max(40 M, 1 M x dp) parameters: one bucket */
    assert_int_equal(sg.model->ntensors, 1);
    assert_int_equal(sg.model->tensors[0].numel, 137984);
    assert_int_equal(sg.elem_bytes, 4); /* fp32 main_grad */
    /* the one bucket of the chunk is complete when the last micro-batch's
     * backward through it ends (overlap_grad_reduce) */
    assert_near(sg.ready_ms[0], r.sched.last_bwd_end_ms[0], 1e-12);
    cp_stage_grads_free(&sg);
    assert_int_equal(cp_stage_grads_build(&x, &l, &g, NULL, &r, 1, "s1", &sg, &e), CP_OK);
    assert_int_equal(sg.params, 138048);
    assert_near(sg.stage_end_ms, r.sched.stage_end_ms[1], 1e-12);
    cp_stage_grads_free(&sg);
    assert_int_equal(cp_stage_grads_build(&x, &l, &g, NULL, &r, 2, "s2", &sg, &e), CP_EINPUT);
    /* the DP group of stage 0: ranks 0-3 of the host, one host */
    assert_int_equal(cp_groups_machine(t, &l, CP_G_DP, 0, &dpm, &e), CP_OK);
    assert_int_equal(dpm->ngpus, 4);
    assert_int_equal(dpm->nhosts, 1);
    cp_topo_free(dpm);
    /* a TP group has nothing to synchronise here (TP 1) */
    assert_int_equal(cp_groups_machine(t, &l, CP_G_TP, 0, &dpm, &e), CP_EINPUT);
    assert_null(dpm);
    cp_llm_result_free(&r);
    cp_groups_free(&G);
    cp_topo_free(t);
    /* TP 4 x PP 2 on 4 hosts of 8: DP 4, ranks tp + 4 (dp + 4 pp), so the
     * DP group of stage 0 is ranks 0, 4 (host 0) and 8, 12 (host 1): 2 GPUs
     * on each of 2 hosts, each with its own NIC (hgx-h100: one a GPU) */
    l = layout(4, 2, 1);
    assert_int_equal(cp_topo_load_hosts("topologies/hgx-h100.json", 4, &t, &e), CP_OK);
    assert_int_equal(cp_layout_resolve(&l, &x, t->ngpus, 8, &e), CP_OK);
    assert_int_equal(cp_groups_machine(t, &l, CP_G_DP, 0, &dpm, &e), CP_OK);
    assert_int_equal(dpm->ngpus, 4);
    assert_int_equal(dpm->nhosts, 2);
    assert_int_equal(cp_topo_count(dpm, CP_NIC), 4);
    cp_topo_free(dpm);
    cp_topo_free(t);
}

/* TP traffic: a block's forward under SP moves four buffers of T h E
 * through the TP group (two all-gathers, two reduce-scatters); its PP send
 * is the sequence-sharded activation T h E / t. */
static void test_tp_pp_traffic(void **state)
{
    cp_xformer x = gpt_small();
    cp_layout l = layout(2, 2, 2);
    cp_steps f;
    double tp = 0;
    int i;
    (void)state;
    l.sp = 1;
    cp_block_fwd(&x, &l, &f);
    for (i = 0; i < f.n; i++)
        if (f.s[i].kind == CP_ST_COMM)
            tp += f.s[i].comm_bytes;
    /* 4 x 64 tokens x 64 x 2 bytes = 32,768 */
    assert_near(tp, 4 * 64 * 64 * 2.0, 0);
}

static void test_layout_errors(void **state)
{
    cp_xformer x = gpt_small();
    cp_layout l;
    cp_err e;
    (void)state;
    l = layout(2, 2, 1);
    l.dp = 3; /* 2 x 1 x 3 x 2 = 12, not 8 */
    assert_int_equal(cp_layout_resolve(&l, &x, 8, 8, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "= 12"));
    l = layout(1, 1, 3);
    l.gbs = 8; /* 8 sequences over 8 GPUs in micro-batches of 3 */
    assert_int_equal(cp_layout_resolve(&l, &x, 8, 8, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "--gbs 8"));
    l = layout(1, 5, 1); /* 4 layers over 5 stages (and 6 with the ends) */
    assert_int_equal(cp_layout_resolve(&l, &x, 5, 8, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "4 layers"));
    l = layout(8, 1, 1); /* 4 heads over TP 8 */
    assert_int_equal(cp_layout_resolve(&l, &x, 8, 8, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "4 attention heads"));
    l = layout(1, 1, 1);
    l.cp = 3; /* a 32-token sequence is not divisible by 2 x 3 */
    assert_int_equal(cp_layout_resolve(&l, &x, 3, 8, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "2 x --cp 3"));
    l = layout(16, 1, 1); /* TP wider than a host of 8 */
    x.heads = x.kv_heads = 16;
    assert_int_equal(cp_layout_resolve(&l, &x, 16, 8, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "--tp-span-hosts"));
    /* 126 layers on 8 x 8 chunks: only with the embedding and the loss
     * counted as layers, 128 / 64 = 2 a chunk, one on the first and last */
    x = gpt_small();
    x.layers = 126;
    l = layout(1, 8, 1);
    l.vp = 8;
    l.gbs = 8;
    assert_int_equal(cp_layout_resolve(&l, &x, 8, 8, &e), CP_OK);
    assert_int_equal(l.ends_in_split, 1);
    assert_int_equal(cp_layout_chunk_layers(&l, 0), 1);
    assert_int_equal(cp_layout_chunk_layers(&l, 1), 2);
    assert_int_equal(cp_layout_chunk_layers(&l, 63), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpt_block_gemms),
        cmocka_unit_test(test_llama_block_gemms_tp2),
        cmocka_unit_test(test_params_and_flops),
        cmocka_unit_test(test_activations),
        cmocka_unit_test(test_inflight_and_memory),
        cmocka_unit_test(test_bubble),
        cmocka_unit_test(test_sends),
        cmocka_unit_test(test_gemm_time),
        cmocka_unit_test(test_groups_shape),
        cmocka_unit_test(test_group_links),
        cmocka_unit_test(test_stage_grads),
        cmocka_unit_test(test_tp_pp_traffic),
        cmocka_unit_test(test_layout_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
