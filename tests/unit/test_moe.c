/*
 * test_moe.c - mixture-of-experts layouts (src/llm/moe.c, mla.c,
 * alltoall.c and the expert groups of layout.c): the expert groups carved
 * out of a stage's ranks, the refusals, parameter counts against the
 * published totals, the experts' parameters and optimizer states per GPU,
 * the grouped GEMMs, the all-to-all's bytes per layer and where it binds
 * (NVLink, the NIC, the pool), and the three MoE rows of
 * ../shared/data/llm/measurements.csv within 10% (docs/model.md,
 * "Mixture of experts"; docs/calibration.md, "Mixture-of-experts rows").
 * Every expected number is derived by hand in the comment beside it.
 */
#include "testutil.h"

#include "cli/predict_llm.h"
#include "llm/moe.h"
#include "llm_rows.h"

/* Qwen3-30B-A3B as Qwen/Qwen3-30B-A3B's config.json gives it: 48 blocks,
 * h 2048, 32 query and 4 key/value heads of 128, 128 experts of 768, top
 * 8, vocabulary 151,936, untied, q/k norms, SwiGLU, RMSNorm, RoPE. */
static void qwen3_30b(cp_xformer *x)
{
    memset(x, 0, sizeof *x);
    x->layers = 48;
    x->hidden = 2048;
    x->heads = 32;
    x->kv_heads = 4;
    x->head_dim = 128;
    x->ffn = 768;
    x->seq = 4096;
    x->vocab = 151936;
    x->mlp = CP_MLP_SWIGLU;
    x->swiglu = 1;
    x->pos = CP_POS_ROPE;
    x->norm = CP_NORM_RMS;
    x->qk_norm = 1;
    x->window_every = 1;
    x->moe.experts = 128;
    x->moe.top_k = 8;
    x->moe.ffn = 768;
    x->moe.every = 1;
}

/* DeepSeek-V3 (deepseek-ai/DeepSeek-V3 config.json, without its
 * multi-token-prediction module): 61 blocks, h 7168, 128 heads with latent
 * attention (q_lora 1536, kv_lora 512, nope 128, rope 64, v 128), the first
 * 3 blocks dense of 18,432, then 256 experts of 2,048, top 8, one shared
 * expert, sigmoid scores with a bias, vocabulary 129,280, untied. */
static void deepseek_v3(cp_xformer *x)
{
    memset(x, 0, sizeof *x);
    x->layers = 61;
    x->hidden = 7168;
    x->heads = x->kv_heads = 128;
    x->head_dim = 192;
    x->ffn = 18432;
    x->seq = 4096;
    x->vocab = 129280;
    x->mlp = CP_MLP_SWIGLU;
    x->swiglu = 1;
    x->pos = CP_POS_ROPE;
    x->norm = CP_NORM_RMS;
    x->window_every = 1;
    x->moe.experts = 256;
    x->moe.top_k = 8;
    x->moe.ffn = 2048;
    x->moe.shared_experts = 1;
    x->moe.shared_ffn = 2048;
    x->moe.dense_layers = 3;
    x->moe.dense_ffn = 18432;
    x->moe.every = 1;
    x->moe.router_sigmoid = 1;
    x->mla.q_lora_rank = 1536;
    x->mla.kv_lora_rank = 512;
    x->mla.qk_nope_dim = 128;
    x->mla.qk_rope_dim = 64;
    x->mla.v_head_dim = 128;
}

static int resolve(cp_layout *l, const cp_xformer *x, int gpus, cp_err *e)
{
    cp_err_clear(e);
    return cp_layout_resolve(l, x, gpus, 8, e);
}

/* ------------------------------------------------------------------ */
/* Layouts                                                             */

/* DeepSeek-V3's Megatron-Bridge layout on 1,024 GPUs: TP 2 x PP 8 x DP 64,
 * EP 64, ETP 1.  A stage's TP x CP x DP = 2 x 1 x 64 = 128 ranks are ETP 1
 * x EP 64 x EDP 2 (eq. E1).  Expert rank = etp_i + ETP (ep_i + EP edp_i):
 * the EP group is ranks 0..63, 8 hosts of 8 GPUs, one group a host; the
 * EDP group ranks 0 and 64, hosts 0 and 8, one GPU on each, 8 such groups
 * sharing a host. */
static void test_expert_groups(void **state)
{
    cp_xformer x;
    cp_layout l;
    cp_group_shape g;
    cp_err e;
    (void)state;
    deepseek_v3(&x);
    x.layers = 64; /* divisible by PP 8: the group shapes do not depend on it */
    cp_layout_default(&l);
    l.tp = 2, l.pp = 8, l.ep = 64, l.etp = 1, l.gbs = 8192;
    assert_int_equal(resolve(&l, &x, 1024, &e), CP_OK);
    assert_int_equal(l.dp, 64);  /* 1024 / (2 x 8) */
    assert_int_equal(l.edp, 2);  /* 2 x 64 / (1 x 64) */
    cp_layout_group(&l, CP_G_EP, &g);
    assert_int_equal(g.size, 64);
    assert_int_equal(g.hosts, 8);
    assert_int_equal(g.local, 8);
    assert_int_equal(g.concurrent, 1);
    cp_layout_group(&l, CP_G_EDP, &g);
    assert_int_equal(g.size, 2);
    assert_int_equal(g.hosts, 2);
    assert_int_equal(g.local, 1);
    assert_int_equal(g.concurrent, 8);
    cp_layout_group(&l, CP_G_ETP, &g);
    assert_int_equal(g.size, 1);
}

/* Megatron-Core's default ETP is TP: TP 2, DP 8 and EP 4 on 16 GPUs leave
 * EDP = 2 x 8 / (2 x 4) = 2; the EP group is ranks 0, 2, 4, 6 (stride
 * ETP), four GPUs of host 0 at local indices 0, 2, 4, 6, two such groups a
 * host; the ETP group is the TP pair 0, 1. */
static void test_default_etp(void **state)
{
    cp_xformer x;
    cp_layout l;
    cp_group_shape g;
    cp_err e;
    (void)state;
    qwen3_30b(&x);
    cp_layout_default(&l);
    l.tp = 2, l.ep = 4;
    assert_int_equal(resolve(&l, &x, 16, &e), CP_OK);
    assert_int_equal(cp_layout_etp(&l), 2);
    assert_int_equal(l.edp, 2);
    cp_layout_group(&l, CP_G_EP, &g);
    assert_int_equal(g.size, 4);
    assert_int_equal(g.hosts, 1);
    assert_int_equal(g.local, 4);
    assert_int_equal(g.idx[1], 2);
    assert_int_equal(g.idx[3], 6);
    assert_int_equal(g.concurrent, 2);
    cp_layout_group(&l, CP_G_ETP, &g);
    assert_int_equal(g.size, 2);
    assert_int_equal(g.idx[1], 1);
}

/* What the layout refuses, with the numbers named. */
static void test_expert_refusals(void **state)
{
    cp_xformer x, dense;
    cp_layout l;
    cp_err e;
    (void)state;
    qwen3_30b(&x);
    /* 128 experts over EP 48: 128 / 48 is not whole (DP 48 on 48 GPUs) */
    cp_layout_default(&l);
    l.ep = 48;
    assert_int_equal(resolve(&l, &x, 48, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "128 experts are not divisible by --ep 48"));
    /* EP 16 x ETP 1 = 16 does not divide TP 2 x DP 4 = 8 ranks */
    cp_layout_default(&l);
    l.tp = 2, l.ep = 16, l.etp = 1;
    assert_int_equal(resolve(&l, &x, 8, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "--ep 16 x --etp 1 = 16 does not divide the 8 ranks"));
    /* ETP 16 wider than a host of 8 (TP 16 allowed across hosts, ETP not) */
    cp_layout_default(&l);
    l.tp = 2, l.etp = 16;
    assert_int_equal(resolve(&l, &x, 32, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "--etp 16 is wider than a host of 8 GPUs"));
    /* the busiest expert gets every token at most: 128 / 8 = 16 times the mean */
    cp_layout_default(&l);
    l.ep = 8, l.moe_imbalance = 20;
    assert_int_equal(resolve(&l, &x, 8, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "128 experts / top 8 = 16 times the mean"));
    /* DeepEP does not run through a pool */
    cp_layout_default(&l);
    l.ep = 8, l.moe_dispatch = CP_MOE_DEEPEP, l.moe_path = CP_A2A_POOL;
    assert_int_equal(resolve(&l, &x, 8, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "--moe-a2a pool with --moe-dispatcher deepep"));
    /* expert options on a dense model */
    cp_moe_dense_view(&x, &dense);
    cp_layout_default(&l);
    l.ep = 2;
    assert_int_equal(resolve(&l, &dense, 8, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "--ep: the model is dense"));
    cp_layout_default(&l);
    l.moe_dispatch = CP_MOE_DEEPEP;
    assert_int_equal(resolve(&l, &dense, 8, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "--moe-dispatcher: the model is dense"));
    /* resolving a dense layout twice leaves it valid (etp 0 stays "as TP") */
    cp_layout_default(&l);
    l.tp = 2;
    assert_int_equal(resolve(&l, &dense, 8, &e), CP_OK);
    assert_int_equal(resolve(&l, &dense, 8, &e), CP_OK);
    assert_int_equal(l.edp, 0);
}

/* ------------------------------------------------------------------ */
/* Parameters                                                          */

/* The published totals.  Qwen3-30B-A3B, per block: q 2048 x 4096 =
 * 8,388,608, k and v 2048 x 512 = 1,048,576 each, o 4096 x 2048 =
 * 8,388,608, q/k norms 2 x 128, two RMSNorms 2 x 2048: 18,878,720;
 * experts 128 x 3 x 2048 x 768 = 603,979,776, router 128 x 2048 = 262,144;
 * 623,120,640 a block, x 48 = 29,909,790,720; embedding and head 2 x
 * 151,936 x 2048 = 622,329,856, final norm 2048: 30,532,122,624 ("30.5B").
 * Active: 8 of 128 experts, 37,748,736: 56,889,600 a block, x 48 +
 * 622,331,904 = 3,353,032,704 ("3.3B activated").
 * DeepSeek-V3: latent attention q_down 7168 x 1536 = 11,010,048, q_norm
 * 1536, q_up 1536 x 128 x 192 = 37,748,736, kv_down 7168 x 576 =
 * 4,128,768, kv_norm 512, kv_up 512 x 128 x 256 = 16,777,216, o 128 x 128
 * x 7168 = 117,440,512: 187,107,328; two norms 14,336; a dense block adds
 * 3 x 7168 x 18432 = 396,361,728 (583,483,392), a routed one 256 x 3 x
 * 7168 x 2048 = 11,274,289,152 experts, 256 x 7168 + 256 router and bias,
 * 3 x 7168 x 2048 = 44,040,192 shared (11,507,286,272); 3 dense and 58
 * routed blocks, 2 x 129,280 x 7168 + 7168 ends: 671,026,419,200
 * ("671B"); active 37,552,297,472 ("37B"). */
static void test_published_totals(void **state)
{
    cp_xformer x;
    double active, total;
    (void)state;
    qwen3_30b(&x);
    total = cp_moe_model_params(&x, &active);
    assert_near(total, 30532122624.0, 0.5);
    assert_near(active, 3353032704.0, 0.5);
    deepseek_v3(&x);
    assert_near(cp_mla_params(&x), 187107328.0, 0.5);
    total = cp_moe_model_params(&x, &active);
    assert_near(total, 671026419200.0, 0.5);
    assert_near(active, 37552297472.0, 0.5);
    assert_int_equal(cp_moe_block_is_moe(&x, 2), 0);
    assert_int_equal(cp_moe_block_is_moe(&x, 3), 1);
}

/* Qwen3-30B-A3B on 16 GPUs as Megatron-Bridge ran it: PP 2, DP 8, EP 8,
 * ETP 1 (EDP 1), stage 0 of 24 blocks.  Its experts per GPU: 24 x
 * 603,979,776 / 8 = 1,811,939,328; their Adam states are not sharded (EDP
 * 1): 12 x 1,811,939,328 = 21,743,271,936 bytes; the dense part, 24 x
 * (18,878,720 + 262,144) + the 311,164,928 embedding = 770,545,664,
 * sharded over DP 8: 12 x 770,545,664 / 8 = 1,155,818,496; optimizer
 * 22,899,090,432 bytes per GPU. */
static void test_expert_states(void **state)
{
    cp_xformer x;
    cp_layout l;
    cp_llm_mem m;
    cp_err e;
    double dense, expert;
    (void)state;
    qwen3_30b(&x);
    cp_layout_default(&l);
    l.pp = 2, l.ep = 8, l.etp = 1, l.mbs = 2, l.gbs = 512;
    assert_int_equal(resolve(&l, &x, 16, &e), CP_OK);
    assert_int_equal(l.edp, 1);
    cp_moe_stage_params(&x, &l, 0, &dense, &expert);
    assert_near(expert / (l.ep * cp_layout_etp(&l)), 1811939328.0, 0.5);
    assert_near(dense, 24 * 19140864.0, 0.5);
    cp_llm_memory(&x, &l, CP_RC_NONE, &m);
    assert_int_equal(m.stage, 0);
    assert_near(m.optim, 22899090432.0, 1);
}

/* ------------------------------------------------------------------ */
/* Kernels                                                             */

/* The routed block of that layout, micro-batch 2 x 4096 tokens, TP 1:
 * T' = 8192 tokens, R = 8 x 8192 = 65,536 copies, 128 / 8 = 16 experts on
 * a GPU, 4096 tokens each.  Forward: fc1 and fc2 grouped over 16 experts
 * (32 GEMMs); backward: their data and weight gradients (64).  fc1 of an
 * expert: 4096 x 1536 (gate and up) x 2048, 2 x 4096 x 1536 x 2048 x 16 =
 * 412,316,860,416 FLOPs.  Two all-to-alls forward, two backward, each of R
 * x h x 2 = 65,536 x 2048 x 2 = 268,435,456 bytes. */
static void test_grouped_gemms(void **state)
{
    cp_xformer x;
    cp_layout l;
    cp_steps st;
    cp_err e;
    int i, gemms = 0, a2a = 0;
    double a2a_bytes = 0;
    (void)state;
    qwen3_30b(&x);
    cp_layout_default(&l);
    l.pp = 2, l.ep = 8, l.etp = 1, l.mbs = 2, l.gbs = 512, l.precision = CP_PREC_FP8;
    assert_int_equal(resolve(&l, &x, 16, &e), CP_OK);
    cp_moe_block_fwd(&x, &l, 1, &st);
    for (i = 0; i < st.n; i++) {
        const cp_step *s = &st.s[i];
        if (s->flags & CP_SF_GROUPED) {
            gemms += (int)s->batch;
            assert_near(s->m, 4096, 0);
        }
        if (!strcmp(s->name, "experts.fc1"))
            assert_near(s->flops, 412316860416.0, 1);
        if (s->kind == CP_ST_COMM && s->comm == CP_CM_A2A)
            a2a++, a2a_bytes += s->comm_bytes;
    }
    assert_int_equal(gemms, 32);
    cp_moe_block_bwd(&x, &l, 1, &st);
    for (i = 0; i < st.n; i++) {
        const cp_step *s = &st.s[i];
        if (s->flags & CP_SF_GROUPED)
            gemms += (int)s->batch;
        if (s->kind == CP_ST_COMM && s->comm == CP_CM_A2A)
            a2a++, a2a_bytes += s->comm_bytes;
    }
    assert_int_equal(gemms, 32 + 64);
    assert_int_equal(a2a, 4);
    assert_near(a2a_bytes, 4 * 268435456.0, 0.5);
}

/* A grouped GEMM costs its tiles' waves plus group_us per expert (eq.
 * E3): the same step without the grouped flag is 16 x group_us faster. */
static void test_grouped_overhead(void **state)
{
    cp_topo *t = NULL;
    cp_gpu g;
    cp_err e;
    cp_step s;
    double grouped, plain;
    (void)state;
    cp_err_clear(&e);
    assert_int_equal(cp_topo_load_machine("topologies/hgx-h100.json", 0, 1, &t, &e), CP_OK);
    assert_int_equal(cp_gpu_from_topo(t, &g, &e), CP_OK);
    memset(&s, 0, sizeof s);
    s.kind = CP_ST_GEMM;
    s.m = 4096, s.n = 1536, s.k = 2048, s.batch = 16;
    s.flops = 2 * s.m * s.n * s.k * s.batch;
    s.flags = CP_SF_GROUPED;
    grouped = cp_gpu_step_us(&g, &s);
    s.flags = 0;
    plain = cp_gpu_step_us(&g, &s);
    assert_near(grouped - plain, 16 * g.cal.group_us, 1e-6);
    assert_true(g.cal.group_us > 0);
    cp_topo_free(t);
}

/* DeepEP's reach (eq. E6): a GPU with 4 of 256 experts gets a copy of a
 * token that picks 8 with probability 1 - C(252, 8) / C(256, 8) = 1 -
 * (248 x 247 x 246 x 245) / (256 x 255 x 254 x 253) = 1 - 3,691,899,120 /
 * 4,195,023,360 = 0.119934; a host of 32 of them: 1 - C(224, 8) / C(256,
 * 8).  All experts: 1. */
static void test_reach(void **state)
{
    double miss = 1;
    int i;
    (void)state;
    assert_near(cp_moe_reach(256, 4, 8), 1 - 3691899120.0 / 4195023360.0, 1e-12);
    for (i = 0; i < 8; i++)
        miss *= (224.0 - i) / (256.0 - i);
    assert_near(cp_moe_reach(256, 32, 8), 1 - miss, 1e-12);
    assert_near(cp_moe_reach(8, 8, 2), 1, 0);
}

/* ------------------------------------------------------------------ */
/* The all-to-all on the EP group's links                              */

/* The EP group of Qwen3-30B-A3B's experts (128, top 8, h 2048) at TP 1,
 * DP = EP over `hosts` hgx-h100 hosts, one micro-batch of 4096 tokens:
 * each GPU sends S = 4096 x 8 x 2048 x 2 = 134,217,728 bytes an
 * all-to-all. */
typedef struct ep_fixture {
    cp_topo *t;
    cp_xformer x;
    cp_layout l;
    cp_groups G;
    cp_gpu g;
} ep_fixture;

static void ep_setup(ep_fixture *f, const char *topo, int hosts)
{
    cp_err e;
    memset(f, 0, sizeof *f);
    cp_err_clear(&e);
    assert_int_equal(cp_topo_load_machine(topo, 0, hosts, &f->t, &e), CP_OK);
    qwen3_30b(&f->x);
    cp_layout_default(&f->l);
    f->l.ep = 8 * hosts;
    assert_int_equal(resolve(&f->l, &f->x, 8 * hosts, &e), CP_OK);
    assert_int_equal(cp_groups_build(&f->G, f->t, &f->l, 0, NULL, &e), CP_OK);
    assert_int_equal(cp_gpu_from_topo(f->t, &f->g, &e), CP_OK);
    assert_non_null(f->G.a2a);
}

static void ep_teardown(ep_fixture *f)
{
    cp_groups_free(&f->G);
    cp_topo_free(f->t);
}

#define S_BYTES 134217728.0

/* One host: each GPU sends 7 of its 8 pieces, 7 S / 8 = 117,440,512
 * bytes, over its 18 NVLinks (4 NVSwitch chips, 100 + 125 + 125 + 100 =
 * 450 GB/s) at the calibrated 0.824: 370.8 GB/s, 316.72 us; plus the
 * launch (5 us) and the slowest route's latency (two NVLink hops of 0.7 us
 * and Simple's 2.8 us step, NCCL's per-step NVLink cost: 4.2 us).  NVLink
 * binds. */
static void test_a2a_one_host(void **state)
{
    ep_fixture f;
    cp_a2a_why w;
    double us;
    (void)state;
    ep_setup(&f, "topologies/hgx-h100.json", 1);
    assert_int_equal(f.G.a2a->hosts, 1);
    us = cp_a2a_net_us(f.G.a2a, S_BYTES / 8, S_BYTES / 8, &w);
    assert_near(w.wire_us, 7 * S_BYTES / 8 / (450 * 0.824 * 1e3), 1e-6);
    assert_near(us, 5 + 4.2 + 7 * S_BYTES / 8 / (450 * 0.824 * 1e3), 1e-6);
    assert_string_equal(w.path, "nvlink");
    assert_string_equal(w.bind, "nvlink");
    ep_teardown(&f);
}

/* Two hosts (EP 16): each GPU sends 8 pieces of S / 16 to the other host,
 * S / 2 = 67,108,864 bytes through its own 400 Gb/s NIC at NCCL's 47 of 50
 * GB/s: 1,427.85 us, above its PCIe link's 48 GB/s (1,398 us) and its 7 S /
 * 16 over NVLink (158 us): the NIC binds.  Launch 5 us, latency 17.5 us
 * (the network route's: 3.5 us of NIC and switch, and NCCL's 2.7 + 11.3 =
 * 14.0 us a Simple step on InfiniBand; the NVLink pairs' is 4.2 us).  On four hosts (EP
 * 32) each GPU has 24 remote peers: 24 S / 32 through the NIC, 2,141.8 us.
 * The all-to-all dispatcher runs at a2a_eff of that (eq. E7), times
 * --moe-imbalance.  A block and micro-batch moves 4 S a GPU (dispatch and
 * combine, forward and backward), 4 S / 2 = 268,435,456 bytes of it
 * through the NIC. */
static void test_a2a_two_hosts(void **state)
{
    ep_fixture f;
    cp_a2a_why w;
    double us, wire = S_BYTES / 2 / (47 * 1e3);
    cp_moe_tokens tk;
    (void)state;
    ep_setup(&f, "topologies/hgx-h100.json", 2);
    assert_int_equal(f.G.a2a->hosts, 2);
    assert_int_equal(f.G.a2a->have_pool, 0);
    us = cp_a2a_net_us(f.G.a2a, S_BYTES / 16, S_BYTES / 16, &w);
    assert_near(w.wire_us, wire, 1e-6);
    assert_near(us, 5 + 17.5 + wire, 1e-6);
    assert_string_equal(w.path, "network");
    assert_string_equal(w.bind, "network");
    cp_moe_tokens_of(&f.x, &f.l, &tk);
    assert_near(tk.a2a_bytes, S_BYTES, 0);
    {
        cp_steps st;
        double layer = 0;
        int i, pass;
        for (pass = 0; pass < 2; pass++) {
            if (pass == 0)
                cp_moe_block_fwd(&f.x, &f.l, 1, &st);
            else
                cp_moe_block_bwd(&f.x, &f.l, 1, &st);
            for (i = 0; i < st.n; i++)
                if (st.s[i].kind == CP_ST_COMM && st.s[i].comm == CP_CM_A2A)
                    layer += st.s[i].comm_bytes;
        }
        assert_near(layer, 4 * S_BYTES, 0);
        assert_near(layer * 8 / 16, 268435456.0, 0); /* the 8 remote pieces of 16 */
    }
    us = cp_moe_a2a_us(&f.x, &f.l, &f.g, &f.G, tk.a2a_bytes, &w);
    assert_near(us, 5 + 17.5 + wire / f.g.cal.a2a_eff, 1e-6);
    f.l.moe_imbalance = 1.5;
    assert_near(cp_moe_a2a_us(&f.x, &f.l, &f.g, &f.G, tk.a2a_bytes, NULL),
                1.5 * (5 + 17.5 + wire / f.g.cal.a2a_eff), 1e-6);
    ep_teardown(&f);
    ep_setup(&f, "topologies/hgx-h100.json", 4);
    cp_a2a_net_us(f.G.a2a, S_BYTES / 32, S_BYTES / 32, &w);
    assert_near(w.wire_us, 24 * S_BYTES / 32 / (47 * 1e3), 1e-6);
    ep_teardown(&f);
}

/* DeepEP on two hosts (eq. E6): a token crosses the network once per
 * remote host that holds one of its experts: 64 of 128 experts a host,
 * reach 1 - C(64, 8) / C(128, 8); S / 8 bytes of tokens, so the NIC
 * carries S / 8 x reach(64), well under the all-to-all dispatcher's S / 2. */
static void test_a2a_deepep(void **state)
{
    ep_fixture f;
    cp_a2a_why w;
    cp_moe_tokens tk;
    double reach = cp_moe_reach(128, 64, 8);
    (void)state;
    ep_setup(&f, "topologies/hgx-h100.json", 2);
    f.l.moe_dispatch = CP_MOE_DEEPEP;
    cp_moe_tokens_of(&f.x, &f.l, &tk);
    cp_moe_a2a_us(&f.x, &f.l, &f.g, &f.G, tk.a2a_bytes, &w);
    assert_near(w.wire_us, S_BYTES / 8 * reach / (47 * 1e3), 1e-6);
    assert_true(reach < 1 && reach > 0.99);
    ep_teardown(&f);
}

/* Through the pool of hgx-h100-pod (two hosts): each CPU socket's one Gen5
 * x16 port (23 GB/s, the adapter's measured share) carries what its 4 GPUs
 * publish, 4 x 15/16 S = 503,316,480 bytes (every piece but a GPU's own,
 * flat through the pool): 21,883.33 us, against the network's 1,450 us;
 * the link binds (a GPU's own PCIe link, 48 GB/s, takes 15/16 S in 2,621
 * us), and auto takes the network. */
static void test_a2a_pool(void **state)
{
    ep_fixture f;
    cp_a2a_why w;
    double pool, net;
    (void)state;
    ep_setup(&f, "topologies/hgx-h100-pod.json", 2);
    assert_int_equal(f.G.a2a->have_pool, 1);
    pool = cp_a2a_pool_us(f.G.a2a, S_BYTES, &w);
    assert_string_equal(w.path, "pool");
    assert_string_equal(w.bind, "link");
    assert_near(w.wire_us, 4 * 15.0 / 16 * S_BYTES / (23 * 1e3), 1e-6);
    assert_true(pool > w.wire_us);
    net = cp_moe_a2a_us(&f.x, &f.l, &f.g, &f.G, S_BYTES, &w);
    assert_string_equal(w.path, "network");
    f.l.moe_path = CP_A2A_POOL;
    assert_near(cp_moe_a2a_us(&f.x, &f.l, &f.g, &f.G, S_BYTES, &w), pool, 1e-6);
    assert_string_equal(w.path, "pool");
    assert_true(net < pool);
    ep_teardown(&f);
}

/* ------------------------------------------------------------------ */
/* An iteration                                                        */

/* Qwen3-30B-A3B on two hgx-h100 hosts (TP 1, PP 1, EP 16, gbs 16 of 1
 * micro-batch each): the ep term holds the exposed all-to-alls, 4 a block
 * and micro-batch, and the 1F1B overlap hides them under the passes'
 * kernels (eq. E9): less is exposed, never less than the overlap's SM
 * loss on all of it. */
static void test_iteration_ep_term(void **state)
{
    ep_fixture f;
    cp_llm_result r, ro;
    cp_llm_opts o;
    cp_moe_tokens tk;
    cp_err e;
    double a2a;
    (void)state;
    ep_setup(&f, "topologies/hgx-h100.json", 2);
    f.g.peak8 = 1979e12;
    memset(&o, 0, sizeof o);
    o.dp_alg = CP_ALGS;
    cp_err_clear(&e);
    assert_int_equal(cp_llm_predict(&f.x, &f.l, &f.g, &f.G, &o, &r, &e), CP_OK);
    cp_moe_tokens_of(&f.x, &f.l, &tk);
    a2a = cp_moe_a2a_us(&f.x, &f.l, &f.g, &f.G, tk.a2a_bytes, NULL) / 1000;
    assert_near(r.a2a_ms, a2a, 1e-9);
    assert_near(r.b.ep, 48 * 4 * a2a * f.l.micro, 1e-6); /* 48 blocks, 4 each */
    assert_near(r.ep_comm_ms, r.b.ep, 1e-9);
    f.l.moe_overlap = 1;
    assert_int_equal(cp_llm_predict(&f.x, &f.l, &f.g, &f.G, &o, &ro, &e), CP_OK);
    assert_true(ro.b.ep < r.b.ep);
    assert_true(ro.b.ep >= r.b.ep * cp_gpu_overlap_loss(&f.g) - 1e-9);
    assert_true(ro.iteration_ms < r.iteration_ms);
    cp_llm_result_free(&r);
    cp_llm_result_free(&ro);
    ep_teardown(&f);
}

/* The timeline shows the all-to-alls in a colour of their own. */
static void test_timeline_svg(void **state)
{
    ep_fixture f;
    cp_llm_result r;
    cp_llm_opts o;
    cp_err e;
    char path[] = "/tmp/cp-test-moe-XXXXXX.svg", buf[1 << 16];
    FILE *fp;
    size_t n;
    int fd;
    (void)state;
    ep_setup(&f, "topologies/hgx-h100.json", 2);
    memset(&o, 0, sizeof o);
    o.dp_alg = CP_ALGS;
    o.keep_events = 1;
    cp_err_clear(&e);
    assert_int_equal(cp_llm_predict(&f.x, &f.l, &f.g, &f.G, &o, &r, &e), CP_OK);
    assert_non_null(r.ep_fwd_ms);
    assert_true(r.ep_fwd_ms[0] > 0);
    fd = mkstemps(path, 4);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(cli_llm_pipeline_svg(path, "moe", &f.l, &r, &e), CP_OK);
    fp = fopen(path, "r");
    assert_non_null(fp);
    n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = 0;
    fclose(fp);
    unlink(path);
    assert_non_null(strstr(buf, "expert all-to-all (exposed"));
    assert_non_null(strstr(buf, "expert all-to-alls"));
    cp_llm_result_free(&r);
    ep_teardown(&f);
}

/* ------------------------------------------------------------------ */
/* Acceptance: the MoE rows of ../shared/data/llm/measurements.csv      */

/* DeepSeek-V3 on 1,024 H100, Qwen3-30B-A3B on 16, Qwen3-235B-A22B on 256
 * (Megatron-Bridge 25.09): tokens/s per GPU within 10% of the measured
 * 1,297, 10,494 and 1,204, with llm_rows.h's settings. */
static void test_moe_rows(void **state)
{
    llm_row *rows;
    int n, i, seen = 0;
    (void)state;
    if (!have_shared_data()) {
        print_message("reference data absent (" SHARED_DATA ")\n");
        skip();
    }
    rows = llm_rows_read(SHARED_DATA "/llm/measurements.csv", &n);
    assert_non_null(rows);
    for (i = 0; i < n; i++) {
        llm_case k;
        llm_eval ev;
        llm_row_setup(&rows[i], &k);
        if (k.skip || k.x.moe.experts <= 0)
            continue;
        assert_int_equal(llm_case_eval(&k, ".", NULL, &ev), 0);
        print_message("%s: predicted %.0f, measured %.0f tokens/s/GPU (%+.1f%%)\n",
                      rows[i].f[C_ID], ev.pred, ev.meas, 100 * ev.err);
        assert_true(ev.fits);
        assert_true(fabs(ev.err) <= 0.10);
        seen++;
    }
    assert_int_equal(seen, 3);
    free(rows);
    llm_machines_free();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expert_groups),
        cmocka_unit_test(test_default_etp),
        cmocka_unit_test(test_expert_refusals),
        cmocka_unit_test(test_published_totals),
        cmocka_unit_test(test_expert_states),
        cmocka_unit_test(test_grouped_gemms),
        cmocka_unit_test(test_grouped_overhead),
        cmocka_unit_test(test_reach),
        cmocka_unit_test(test_a2a_one_host),
        cmocka_unit_test(test_a2a_two_hosts),
        cmocka_unit_test(test_a2a_deepep),
        cmocka_unit_test(test_a2a_pool),
        cmocka_unit_test(test_iteration_ep_term),
        cmocka_unit_test(test_timeline_svg),
        cmocka_unit_test(test_moe_rows),
    };
    (void)llm_vtrain_setup; /* llm_rows.h's, for the dense suites */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
