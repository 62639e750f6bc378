/*
 * test_predict.c - compute split, DDP bucketing, the bucket timeline, the
 * invariants issue 4 lists, and the published ResNet-50 measurement.
 */
#include "testutil.h"
#include "testtopo.h"

#include "load/load.h"
#include "predict/memory.h"
#include "predict/predict.h"

#define MIB 1048576

/* A model built in code: one tensor per layer, sizes in elements. */
static cp_model *make_model(const int64_t *numel, const double *flops, int n)
{
    cp_model *m = calloc(1, sizeof *m);
    cp_err e;
    int i;
    m->name = strdup("test");
    m->dtype = CP_FP32;
    m->ntensors = m->nlayers = n;
    m->tensors = calloc((size_t)n, sizeof *m->tensors);
    m->layers = calloc((size_t)n, sizeof *m->layers);
    for (i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%d", i);
        m->tensors[i].name = strdup(name);
        m->tensors[i].numel = numel[i];
        m->tensors[i].layer = i;
        m->layers[i].fwd_ms = m->layers[i].bwd_ms = -1;
        m->layers[i].flops = flops ? flops[i] : 0;
    }
    m->split = flops ? CP_SPLIT_FLOPS : CP_SPLIT_PARAMS;
    assert_int_equal(cp_model_finish(m, &e), CP_OK);
    return m;
}

/* Two layers with FLOPs 3:1, 8 ms, backward = 2 x forward:
 * forward total 8 / 3; layer 0 forward 2, layer 1 forward 2/3; backward 4
 * and 4/3; layer 1 ready at 8/3 + 4/3 = 4, layer 0 at 4 + 4 = 8. */
static void test_compute_split(void **state)
{
    static const int64_t numel[] = {10, 10};
    static const double flops[] = {3, 1};
    cp_model *m = make_model(numel, flops, 2);
    cp_compute c;
    cp_err e;
    (void)state;
    assert_int_equal(cp_compute_build(m, 8.0, &c, &e), CP_OK);
    assert_near(c.fwd_ms[0], 2.0, 1e-12);
    assert_near(c.fwd_ms[1], 2.0 / 3, 1e-12);
    assert_near(c.bwd_ms[0], 4.0, 1e-12);
    assert_near(c.ready_ms[1], 4.0, 1e-12);
    assert_near(c.ready_ms[0], 8.0, 1e-12);
    assert_near(cp_compute_total(&c), 8.0, 1e-12);
    cp_compute_free(&c);
    /* no time anywhere: an input error */
    assert_int_equal(cp_compute_build(m, 0, &c, &e), CP_EINPUT);
    cp_model_free(m);
}

/* Five tensors of 0.5, 2, 10, 20, 1 MiB (fp32) in registration order.
 * Reverse order: 1 MiB fills the 1 MiB first bucket; 20 then 10 reach the
 * 25 MiB cap (30 >= 25); 2 and 0.5 remain: buckets {4}, {3, 2}, {1, 0}. */
static void test_ddp_buckets(void **state)
{
    static const int64_t numel[] = {MIB / 8, MIB / 2, 10 * MIB / 4, 5 * MIB, MIB / 4};
    cp_model *m = make_model(numel, NULL, 5);
    cp_compute c;
    cp_buckets b;
    cp_err e;
    (void)state;
    assert_int_equal(cp_compute_build(m, 10.0, &c, &e), CP_OK);
    assert_int_equal(cp_buckets_ddp(m, &c, 4, 1.0 * MIB, 25.0 * MIB, &b, &e), CP_OK);
    assert_int_equal(b.n, 3);
    assert_int_equal(b.b[0].count, 1);
    assert_int_equal(b.order[b.b[0].first], 4);
    assert_int_equal(b.b[1].count, 2);
    assert_near(b.b[1].bytes, 30.0 * MIB, 0);
    assert_int_equal(b.b[2].count, 2);
    assert_near(b.b[2].bytes, 2.5 * MIB, 0);
    /* a bucket is ready when its last tensor is: tensor 0's layer, the end */
    assert_near(b.b[2].ready_ms, c.ready_ms[0], 0);
    cp_buckets_free(&b);
    /* cap 0: one tensor per bucket, as per-variable all-reduce */
    assert_int_equal(cp_buckets_ddp(m, &c, 4, 0, 0, &b, &e), CP_OK);
    assert_int_equal(b.n, 5);
    cp_buckets_free(&b);
    {
        /* apex DDP message_size 1e7 elements: 4e7 B of fp32 gradients, 2e7 of
         * fp16, for the first bucket too; without it PyTorch's MiB: 1 and 25
         * MiB = 1,048,576 and 26,214,400 B */
        double first, cap;
        cp_ddp_caps(1, 25, 1e7, 4, &first, &cap);
        assert_near(first, 4e7, 0);
        assert_near(cap, 4e7, 0);
        cp_ddp_caps(1, 25, 1e7, 2, &first, &cap);
        assert_near(cap, 2e7, 0);
        cp_ddp_caps(1, 25, 0, 4, &first, &cap);
        assert_near(first, 1048576.0, 0);
        assert_near(cap, 26214400.0, 0);
        /* apex message_size MIB/2 elements of fp32 = 2 MiB for every bucket, in
         * reverse order: tensor 4 (1 MiB, under 2), then 3 (20 MiB): closes at
         * 21 MiB; tensor 2 (10 MiB) alone; 1 (2 MiB) alone; 0 (0.5 MiB) last:
         * four buckets, where PyTorch's 1 MiB first bucket closes after tensor 4
         * alone and 25 MiB after 3 and 2 */
        cp_ddp_caps(1, 25, MIB / 2, 4, &first, &cap);
        assert_int_equal(cp_buckets_ddp(m, &c, 4, first, cap, &b, &e), CP_OK);
        assert_int_equal(b.n, 4);
        assert_int_equal(b.b[0].count, 2);
        assert_near(b.b[0].bytes, 21.0 * MIB, 0);
        assert_int_equal(b.b[1].count, 1);
        assert_near(b.b[1].bytes, 10.0 * MIB, 0);
        cp_buckets_free(&b);
    }
    cp_compute_free(&c);
    cp_model_free(m);
}

/* The machine and model of the three by-hand timelines below: the NVLink
 * square with GPU memory of mem_gbs (0: none), a 12 MiB tensor in layer 0
 * and a 4 MiB one in layer 1, 30 ms of compute, default options but for
 * accum_steps and bucket_view. */
typedef struct square_case {
    cp_model *m;
    cp_topo *t;
    cp_predict_opts o;
    cp_predictor pr;
} square_case;

/* The same with options o and an optimizer step of optimizer_ms inside the
 * compute time. */
static void square_open_with(square_case *c, const cp_predict_opts *o, double mem_gbs,
                             double optimizer_ms)
{
    static const int64_t numel[] = {3 * MIB, MIB};
    cp_err e;
    int g;
    c->o = *o;
    c->m = make_model(numel, NULL, 2);
    c->m->optimizer_ms = optimizer_ms;
    c->t = test_nvlink_square(25, 25);
    for (g = 0; g < c->t->ngpus; g++)
        c->t->nodes[c->t->gpus[g]].mem_gbs = mem_gbs;
    assert_int_equal(cp_predictor_init(&c->pr, c->m, c->t, &c->o, &e), CP_OK);
}

static void square_open(square_case *c, double mem_gbs, int accum_steps, int bucket_view)
{
    cp_predict_opts o;
    cp_predict_opts_default(&o);
    o.compute_ms = 30;
    o.accum_steps = accum_steps;
    o.bucket_view = bucket_view;
    square_open_with(c, &o, mem_gbs, 0);
}

static void square_close(square_case *c)
{
    cp_predictor_free(&c->pr);
    cp_topo_free(c->t);
    cp_model_free(c->m);
}

/* The options of the sharded by-hand cases: 34 ms of compute (the model
 * gives a 4 ms optimizer step), framework fw (ZeRO buckets of 4 MiB, FSDP
 * every layer a unit under `sharding`), accum micro-batches. */
static void sharded_opts(cp_predict_opts *o, cp_framework fw, int sharding, int accum)
{
    cp_predict_opts_default(o);
    o->compute_ms = 34;
    o->framework = fw;
    o->accum_steps = accum;
    if (fw == CP_FW_FSDP) {
        o->fsdp_wrap_mb = CP_WRAP_LAYER;
        o->fsdp_sharding = sharding;
    } else {
        o->bucket_mb = 4;
    }
}

/* The square with those options and a 4 ms optimizer step. */
static void sharded_square_open(square_case *c, cp_framework fw, int sharding, int accum)
{
    cp_predict_opts o;
    sharded_opts(&o, fw, sharding, accum);
    square_open_with(c, &o, 0, 4);
}

/* Four GPUs in an NVLink square (25 GB/s, 1 us hops, uncalibrated): ring
 * AllReduce T(S) = 6 us + 1.5 S / 50e3 us (test_collective.c).
 * Model: layer 0 a 12 MiB tensor, layer 1 a 4 MiB tensor, 30 ms split by
 * parameters 3:1: forward 10 ms (7.5 + 2.5), backward 15 + 5; layer 1 ready
 * at 15 ms, layer 0 at 30 ms.  Buckets: {4 MiB} (reaches the 1 MiB first
 * cap), {12 MiB}.
 *   bucket 0: 15 -> 15 + (6 + 1.5 x 4194304 / 50000) us = 15.131829 ms
 *   bucket 1: 30 -> 30 + (6 + 1.5 x 12582912 / 50000) us = 30.383487 ms
 * iteration 30.383487, comm 0.131829 + 0.383487 = 0.515316, exposed 0.383487 */
static void test_timeline_by_hand(void **state)
{
    square_case c;
    cp_prediction p;
    cp_err e;
    (void)state;
    square_open(&c, 0, 1, 0);
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 1, &p, &e), CP_OK);
    assert_true(p.available);
    assert_int_equal(p.nruns, 2);
    assert_near(p.runs[0].start_ms, 15.0, 1e-9);
    assert_near(p.runs[0].finish_ms, 15.131829, 1e-6);
    assert_near(p.runs[1].finish_ms, 30.383487, 1e-6);
    assert_near(p.iteration_ms, 30.383487, 1e-6);
    assert_near(p.comm_ms, 0.515316, 1e-6);
    assert_near(p.exposed_ms, 0.383487, 1e-6);
    /* the compute stream, for the chart: forward 0 -> 10, backward -> 30;
     * no copies (no memory bandwidth given) and no optimizer time */
    assert_int_equal(p.nspans, 2);
    assert_int_equal(p.spans[0].kind, CP_SPAN_FORWARD);
    assert_near(p.spans[0].end_ms, 10.0, 1e-9);
    assert_int_equal(p.spans[1].kind, CP_SPAN_BACKWARD);
    assert_near(p.spans[1].start_ms, 10.0, 1e-9);
    assert_near(p.spans[1].end_ms, 30.0, 1e-9);
    cp_prediction_free(&p);
    /* no reducing CPU: the parameter server is unavailable, with a reason */
    assert_int_equal(cp_predict(&c.pr, CP_S_PS, &c.o, 0, &p, &e), CP_OK);
    assert_false(p.available);
    assert_non_null(strstr(p.why_not, "reduce_gbs"));
    square_close(&c);
}

/* The same machine and model with NVLink's Simple protocol costing 40 us a
 * step (eq. C11; 6 steps): LL 6 + 1.5 S / 25e3 us, Simple 246 + 1.5 S / 50e3,
 * equal at S = 8,000,000 B.
 *   bucket 0, 4 MiB, LL:      6 + 1.5 x 4194304 / 25000 = 257.65824 us,
 *     and LL's buffer stall (issue 25): 4 MiB over the square's 4 NCCL
 *     channels is 1 MiB a channel, over its 8 x 32 KiB of LL buffer, so
 *     twice the ring's 6 us more: 269.65824 us, finish 15.26965824 ms
 *     (Simple would take 371.8 us; NCCL's tuner, which does not see the
 *     stall, picks LL on its 257.66)
 *   bucket 1, 12 MiB, Simple: 246 + 1.5 x 12582912 / 50000 = 623.48736 us,
 *     finish 30.62348736 ms (LL would take 761.0 us) */
static void test_protocols_by_hand(void **state)
{
    static const int64_t numel[] = {3 * MIB, MIB};
    cp_predict_opts o;
    cp_model *m = make_model(numel, NULL, 2);
    cp_topo *t = test_nvlink_square(25, 25);
    cp_predictor pr;
    cp_prediction p;
    cp_err e;
    (void)state;
    cp_predict_opts_default(&o);
    o.compute_ms = 30;
    t->calib.kind[CP_NVLINK].simple_us = 40;
    assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
    assert_int_equal(cp_predict(&pr, CP_S_RING, &o, 1, &p, &e), CP_OK);
    assert_int_equal(p.nruns, 2);
    assert_near(p.runs[0].finish_ms, 15.26965824, 1e-9);
    assert_string_equal(p.runs[0].proto, "LL");
    assert_near(p.runs[1].finish_ms, 30.62348736, 1e-9);
    assert_string_equal(p.runs[1].proto, "Simple");
    assert_near(p.iteration_ms, 30.62348736, 1e-9);
    cp_prediction_free(&p);
    cp_predictor_free(&pr);
    cp_topo_free(t);
    cp_model_free(m);
}

/* The same machine and model with GPU memory of 100 GB/s (eq. P7): a copy
 * costs 2 bytes of traffic per byte, 2 / 100e6 ms per byte.
 *   copy in:  layer 1 4194304 B -> 0.08388608 ms, layer 0 12582912 B -> 0.25165824 ms
 *   backward: layer 1 5.08388608 (ready 10 + 5.08388608 = 15.08388608),
 *             layer 0 15.25165824 (ready 30.33554432)
 *   copy back 16777216 B -> 0.33554432 ms, before the optimizer
 *   bucket 0: 15.08388608 + 0.13182912 = 15.2157152
 *   bucket 1: 30.33554432 + 0.38348736 = 30.71903168
 *   iteration 30.71903168 + 0.33554432 = 31.054576;
 *   compute 30 + 2 x 0.33554432 = 30.67108864; exposed 0.38348736.
 * gradient_as_bucket_view: no copy back, iteration 30.71903168. */
static void test_copies_by_hand(void **state)
{
    square_case c;
    cp_prediction p;
    cp_err e;
    (void)state;
    square_open(&c, 100, 1, 0);
    assert_near(c.pr.single_ms, 30.0, 1e-12);
    assert_near(c.pr.copy_ms, 0.67108864, 1e-9);
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 1, &p, &e), CP_OK);
    assert_near(p.runs[0].ready_ms, 15.08388608, 1e-9);
    assert_near(p.runs[0].finish_ms, 15.2157152, 1e-6);
    assert_near(p.runs[1].start_ms, 30.33554432, 1e-9);
    assert_near(p.iteration_ms, 31.054576, 1e-6);
    assert_near(p.compute_ms, 30.67108864, 1e-9);
    assert_near(p.exposed_ms, 0.38348736, 1e-6);
    cp_prediction_free(&p);
    square_close(&c);
    square_open(&c, 100, 1, 1);
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 0, &p, &e), CP_OK);
    assert_near(p.iteration_ms, 30.71903168, 1e-6);
    assert_near(p.compute_ms, 30.33554432, 1e-9);
    cp_prediction_free(&p);
    square_close(&c);
}

/* DDP's fp16 compression hook (eq. P10) on the copies machine (GPU memory
 * 100 GB/s): each bucket's all-reduce moves half the bytes, and the casts
 * (down, divide, back up) move 2 S + 4 (S/2) = 4 S bytes: 4 S / 1e8 ms.
 *   bucket 0 (4 MiB), ready 15.08388608: all-reduce of 2 MiB 6 + 1.5 x
 *     2097152 / 50e3 = 68.91456 us, casts 0.16777216 ms: finish 15.3205728
 *   bucket 1 (12 MiB), ready 30.33554432: 6 + 188.74368 = 194.74368 us,
 *     casts 0.50331648 ms: finish 31.03360448
 *   iteration 31.03360448 + 0.33554432 (copy back) = 31.3691488; compute
 *   30.67108864 as before; exposed 0.69806016. */
static void test_compress_hook_by_hand(void **state)
{
    square_case c;
    cp_predict_opts o;
    cp_prediction p;
    cp_err e;
    (void)state;
    cp_predict_opts_default(&o);
    o.compute_ms = 30;
    o.comm_hook = 2;
    square_open_with(&c, &o, 100, 0);
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 1, &p, &e), CP_OK);
    assert_near(p.runs[0].finish_ms, 15.3205728, 1e-9);
    assert_near(p.runs[1].finish_ms, 31.03360448, 1e-9);
    assert_near(p.iteration_ms, 31.3691488, 1e-9);
    assert_near(p.compute_ms, 30.67108864, 1e-9);
    assert_near(p.exposed_ms, 0.69806016, 1e-9);
    cp_prediction_free(&p);
    square_close(&c);
}

/* TensorFlow's MirroredStrategy (eq. P11) on the copies machine (GPU memory
 * 100 GB/s, one pass over S bytes costs 2 S / 100e6 ms): no copies during
 * backward, which ends at 30 ms; then
 *   concatenate 16 MiB:  2 x 16777216 / 100e6 = 0.33554432 ms -> 30.33554432
 *   all-reduce the pack: 6 + 1.5 x 16777216 / 50e3 = 509.31648 us
 *                        -> 30.8448608
 *   split it back:       0.33554432 ms -> iteration 31.18040512
 * compute 30 + 2 x 0.33554432 = 30.67108864; the all-reduce is all exposed:
 * comm = exposed = 0.50931648.  DDP on the same machine hides bucket 0 and
 * ends at 31.054576 (test_copies_by_hand). */
static void test_mirrored_by_hand(void **state)
{
    square_case c;
    cp_predict_opts o;
    cp_prediction p;
    cp_mem mem;
    cp_err e;
    (void)state;
    cp_predict_opts_default(&o);
    o.compute_ms = 30;
    o.framework = CP_FW_MIRRORED;
    square_open_with(&c, &o, 100, 0);
    assert_near(c.pr.copy_ms, 0.67108864, 1e-9);
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 1, &p, &e), CP_OK);
    assert_int_equal(p.nruns, 1);
    assert_near(p.runs[0].bytes, 16.0 * MIB, 0);
    assert_int_equal(p.runs[0].ntensors, 2);
    assert_near(p.runs[0].start_ms, 30.33554432, 1e-9);
    assert_near(p.runs[0].finish_ms, 30.8448608, 1e-9);
    assert_near(p.iteration_ms, 31.18040512, 1e-9);
    assert_near(p.compute_ms, 30.67108864, 1e-9);
    assert_near(p.comm_ms, 0.50931648, 1e-9);
    assert_near(p.exposed_ms, 0.50931648, 1e-9);
    /* the compute stream: forward 0 -> 10, backward -> 30, pack -> 30.3355,
     * then after the all-reduce the split (a copy) 30.8449 -> 31.1804 */
    assert_int_equal(p.nspans, 4);
    assert_int_equal(p.spans[2].kind, CP_SPAN_PACK);
    assert_near(p.spans[2].end_ms, 30.33554432, 1e-9);
    assert_int_equal(p.spans[3].kind, CP_SPAN_COPY);
    assert_near(p.spans[3].start_ms, 30.8448608, 1e-9);
    cp_prediction_free(&p);
    /* eq. M1 as DDP's, the pack in place of the buckets: 4 Mi parameters x
     * (4 weights + 4 gradients + 8 Adam + 4 pack) = 80 MiB */
    assert_int_equal(cp_model_states(&c.pr, &c.o, &mem, &e), CP_OK);
    assert_near(mem.states, 80.0 * MIB, 1e-6);
    square_close(&c);
    /* three micro-batches (accumulated locally, reduced once): the pack
     * waits for all three backward passes, 60 ms later */
    o.accum_steps = 3;
    square_open_with(&c, &o, 100, 0);
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 0, &p, &e), CP_OK);
    assert_near(p.iteration_ms, 91.18040512, 1e-9);
    assert_near(p.exposed_ms, 0.50931648, 1e-9);
    cp_prediction_free(&p);
    /* the COARSE planner routes DDP's buckets: not this framework's */
    assert_int_equal(cp_predict(&c.pr, CP_S_COARSE, &c.o, 0, &p, &e), CP_OK);
    assert_false(p.available);
    assert_non_null(strstr(p.why_not, "one pack"));
    square_close(&c);
}

/* Twice the batch (batch_scale 2): forward and backward take twice as
 * long, the optimizer step does not.  34 ms measured with a 4 ms step:
 * passes 30 -> 60, step 4, one GPU's iteration 64 ms; layer 1 (a quarter
 * of the parameters) ready after forward 20 and its backward 10: at 30. */
static void test_batch_scale_by_hand(void **state)
{
    square_case c;
    cp_predict_opts o;
    (void)state;
    cp_predict_opts_default(&o);
    o.compute_ms = 34;
    o.batch_scale = 2;
    square_open_with(&c, &o, 0, 4);
    assert_near(c.pr.single_ms, 64.0, 1e-9);
    assert_near(c.pr.comp.optimizer_ms, 4.0, 1e-12);
    assert_near(c.pr.comp.ready_ms[1], 30.0, 1e-9);
    square_close(&c);
}

/* Gradient accumulation (eq. P8), the timeline machine without copies,
 * three micro-batches of 30 ms: two run first (lead 60 ms), layer 1 ready
 * at 60 + 15 = 75, layer 0 at 90; bucket 1 finishes 90 + 0.38348736;
 * compute 3 x 30 = 90, exposed 0.38348736 as with one micro-batch. */
static void test_accumulation_by_hand(void **state)
{
    square_case c;
    cp_prediction p;
    cp_err e;
    (void)state;
    square_open(&c, 0, 3, 0);
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 1, &p, &e), CP_OK);
    assert_near(p.runs[0].ready_ms, 75.0, 1e-9);
    assert_near(p.runs[1].ready_ms, 90.0, 1e-9);
    assert_near(p.compute_ms, 90.0, 1e-9);
    assert_near(p.iteration_ms, 90.38348736, 1e-6);
    assert_near(p.exposed_ms, 0.38348736, 1e-6);
    cp_prediction_free(&p);
    square_close(&c);
}

/* ZeRO-2 (eq. Z1) on the square: ring ReduceScatter and AllGather are
 * 3 us + 0.75 S / 50e3 us (half the AllReduce's steps and bytes: C3), so
 * 4 MiB take 0.06591456 ms and 12 MiB 0.19174368 ms.  34 ms of compute with
 * a 4 ms optimizer step: forward 10 (7.5 + 2.5), backward 15 + 5, layer 1
 * ready at 15, layer 0 at 30.  Buckets of 4 MiB: {t1}, {t0}.
 *   RS t1: 15 -> 15.06591456;  RS t0: 30 -> 30.19174368
 *   optimizer on the shard: 4 / 4 GPUs = 1 ms -> 31.19174368
 *   all-gather 16 MiB in four 4 MiB buckets: 4 x 0.06591456 -> 31.45540192
 *   (one timeline entry for the four)
 * compute 10 + 20 + 1 = 31, exposed 0.45540192,
 * comm 5 x 0.06591456 + 0.19174368 = 0.52131648. */
static void test_zero2_by_hand(void **state)
{
    square_case c;
    cp_prediction p;
    cp_err e;
    (void)state;
    sharded_square_open(&c, CP_FW_ZERO2, 0, 1);
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 1, &p, &e), CP_OK);
    assert_true(p.available);
    assert_int_equal(p.nruns, 3);
    assert_near(p.runs[0].finish_ms, 15.06591456, 1e-9);
    assert_near(p.runs[1].finish_ms, 30.19174368, 1e-9);
    assert_near(p.runs[2].start_ms, 31.19174368, 1e-9);
    assert_near(p.runs[2].bytes, 16.0 * MIB, 0);
    assert_near(p.runs[2].finish_ms, 31.45540192, 1e-9);
    assert_near(p.iteration_ms, 31.45540192, 1e-9);
    assert_near(p.compute_ms, 31.0, 1e-9);
    assert_near(p.exposed_ms, 0.45540192, 1e-9);
    assert_near(p.comm_ms, 0.52131648, 1e-9);
    cp_prediction_free(&p);
    /* the parameter server is no ReduceScatter: unavailable, with a reason */
    assert_int_equal(cp_predict(&c.pr, CP_S_PS, &c.o, 0, &p, &e), CP_OK);
    assert_false(p.available);
    assert_non_null(strstr(p.why_not, "ReduceScatter"));
    square_close(&c);
}

/* ZeRO-1 (eq. Z1) on the machine of test_zero2_by_hand: nothing is
 * reduced until backward ends at 30 ms.
 *   RS t1: 30 -> 30.06591456; RS t0: -> 30.25765824
 *   optimizer on the shard, 1 ms -> 31.25765824
 *   all-gather 4 x 0.06591456 -> 31.52131648
 * compute 31; comm 0.52131648, all of it exposed (ZeRO-2 hid RS t1).
 * Two micro-batches (eq. Z4, stage 1): the first reduces nothing, the
 * second's backward ends at 60: iteration 61.52131648, comm still
 * 0.52131648 (ZeRO-2 reduce-scatters both micro-batches' buckets:
 * test_sharded_accumulation_by_hand). */
static void test_zero1_by_hand(void **state)
{
    square_case c;
    cp_prediction p;
    cp_err e;
    (void)state;
    sharded_square_open(&c, CP_FW_ZERO1, 0, 1);
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 1, &p, &e), CP_OK);
    assert_int_equal(p.nruns, 3);
    assert_near(p.runs[0].start_ms, 30.0, 1e-9);
    assert_near(p.runs[0].finish_ms, 30.06591456, 1e-9);
    assert_near(p.runs[1].finish_ms, 30.25765824, 1e-9);
    assert_near(p.runs[2].start_ms, 31.25765824, 1e-9);
    assert_near(p.iteration_ms, 31.52131648, 1e-9);
    assert_near(p.compute_ms, 31.0, 1e-9);
    assert_near(p.comm_ms, 0.52131648, 1e-9);
    assert_near(p.exposed_ms, 0.52131648, 1e-9);
    cp_prediction_free(&p);
    square_close(&c);
    sharded_square_open(&c, CP_FW_ZERO1, 0, 2);
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 0, &p, &e), CP_OK);
    assert_near(p.iteration_ms, 61.52131648, 1e-9);
    assert_near(p.comm_ms, 0.52131648, 1e-9);
    cp_prediction_free(&p);
    square_close(&c);
}

/* ZeRO-2 with the optimizer offloaded to the CPU (eq. Z6) on the pair
 * host (testtopo.h: host copies 2 us + S / 8e3 us each way, host memory
 * 30 GB/s; ring ReduceScatter and AllGather of the NVLink pair
 * 1 + 0.5 S / 50e3 us).  The square's model (12 MiB in layer 0, 4 MiB in
 * layer 1, fp32), 34 ms with a 4 ms optimizer step (not run on the GPU),
 * 4 MiB buckets:
 *   RS t1 (4 MiB) at 15: 1 + 41.94304 us -> 15.04294304
 *   its 2 MiB shard to the host: 2 + 262.144 us -> 15.30708704
 *   RS t0 (12 MiB) at 30: 1 + 125.82912 us -> 30.12682912
 *   its 6 MiB shard: 2 + 786.432 us -> 30.91526112
 *   Adam on the host: 4,194,304 parameters x 28 B / 30e9 B/s
 *     = 3.91468373 ms -> 34.82994485
 *   each GPU's 8 MiB of new parameters back: 2 + 1048.576 us
 *     -> 35.88052085
 *   all-gather 16 MiB in 4 MiB buckets: 4 x 42.94304 us -> 36.05229301
 * compute 30 + 3.91468373 (the host's step) = 33.91468373, exposed
 * 2.13760928; comm 42.94304 + 264.144 + 126.82912 + 788.432 + 1050.576 +
 * 171.77216 us = 2.44469632 ms.  Model states: weights 16 MiB, gradient
 * shard 8, no optimizer states on the GPU, the 4 MiB bucket: 28 MiB. */
static void test_offload_by_hand(void **state)
{
    static const int64_t numel[] = {3 * MIB, MIB};
    cp_model *m = make_model(numel, NULL, 2);
    cp_topo *t = test_pair_host(2);
    cp_predictor pr;
    cp_predict_opts o;
    cp_prediction p;
    cp_mem mem;
    cp_err e;
    (void)state;
    m->optimizer_ms = 4;
    sharded_opts(&o, CP_FW_ZERO2, 0, 1);
    o.offload = 1;
    assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
    assert_near(pr.coll.d2h_gbs, 8, 1e-9);
    assert_near(pr.coll.h2d_gbs, 8, 1e-9);
    assert_near(pr.coll.host_lat_us, 2, 1e-9);
    assert_near(pr.coll.host_mem_gbs, 30, 1e-9);
    assert_int_equal(cp_predict(&pr, CP_S_RING, &o, 1, &p, &e), CP_OK);
    assert_true(p.available);
    assert_int_equal(p.nruns, 6);
    assert_string_equal(p.runs[1].how, "d2h");
    assert_near(p.runs[1].finish_ms, 15.30708704, 1e-9);
    assert_near(p.runs[3].finish_ms, 30.91526112, 1e-9);
    assert_string_equal(p.runs[4].how, "h2d");
    assert_near(p.runs[4].start_ms, 34.82994485, 1e-8);
    assert_near(p.runs[4].finish_ms, 35.88052085, 1e-8);
    assert_near(p.iteration_ms, 36.05229301, 1e-8);
    assert_near(p.compute_ms, 33.91468373, 1e-8);
    assert_near(p.exposed_ms, 2.13760928, 1e-8);
    assert_near(p.comm_ms, 2.44469632, 1e-9);
    cp_prediction_free(&p);
    assert_int_equal(cp_model_states(&pr, &o, &mem, &e), CP_OK);
    assert_near(mem.states, 28.0 * MIB, 1e-6);
    assert_near(mem.optim, 0, 0);
    cp_predictor_free(&pr);
    /* no socket says how fast host memory streams: unavailable, with why */
    t->nodes[3].reduce_gbs = 0;
    assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
    assert_int_equal(cp_predict(&pr, CP_S_RING, &o, 0, &p, &e), CP_OK);
    assert_false(p.available);
    assert_non_null(strstr(p.why_not, "reduce_gbs"));
    cp_prediction_free(&p);
    cp_predictor_free(&pr);
    cp_topo_free(t);
    cp_model_free(m);
}

/* ZeRO-Offload's own case, one GPU (eq. Z6): the pair host with its second
 * GPU gone (g0 - switch 12 GB/s - socket 16 GB/s, 2 us; host memory
 * 30 GB/s).  Nothing to reduce-scatter or gather, but every gradient goes
 * down and every parameter comes back at 12 GB/s:
 *   t1 (4 MiB) ready at 15: 2 + 4194304 / 12e3 = 351.525333 us
 *     -> 15.351525333
 *   t0 (12 MiB) at 30: 2 + 1048.576 us -> 31.050576
 *   Adam on the host 3.91468373 ms -> 34.96525973
 *   16 MiB back: 2 + 1398.101333 us -> 36.365361063
 * compute 30 + 3.91468373; comm 0.351525333 + 1.050576 + 1.400101333
 * = 2.802202667. */
static void test_offload_one_gpu_by_hand(void **state)
{
    static const int64_t numel[] = {3 * MIB, MIB};
    cp_model *m = make_model(numel, NULL, 2);
    cp_topo *t = test_pair_host(1);
    cp_predictor pr;
    cp_predict_opts o;
    cp_prediction p;
    cp_err e;
    (void)state;
    m->optimizer_ms = 4;
    sharded_opts(&o, CP_FW_ZERO2, 0, 1);
    o.offload = 1;
    assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
    assert_near(pr.coll.d2h_gbs, 12, 1e-9);
    assert_int_equal(cp_predict(&pr, CP_S_AUTO, &o, 0, &p, &e), CP_OK);
    assert_near(p.iteration_ms, 36.365361063, 1e-8);
    assert_near(p.compute_ms, 33.91468373, 1e-8);
    assert_near(p.comm_ms, 2.802202667, 1e-8);
    cp_prediction_free(&p);
    cp_predictor_free(&pr);
    cp_topo_free(t);
    cp_model_free(m);
}

/* FSDP (eq. Z2), same machine and compute; every layer a unit, gathers of
 * 12 MiB 0.19174368 ms and 4 MiB 0.06591456 ms, reduce-scatters the same.
 * Forward: AG0 [0, 0.19174368], AG1 [0.19174368, 0.25765824] (no layer to
 * free yet); fwd0 0.19174368 -> 7.69174368, fwd1 -> 10.19174368.
 * Backward: AG1 at 10.19174368 -> 10.25765824, bwd1 10.25765824 ->
 * 15.25765824; AG0 issued as bwd1 starts: 10.25765824 -> 10.44940192; RS1
 * at 15.25765824 -> 15.3235728; bwd0 15.25765824 -> 30.25765824; RS0 ->
 * 30.44940192.  Iteration 30.44940192 + 1 (optimizer on the shard) =
 * 31.44940192; compute 31, exposed 0.44940192; comm 3 x 0.19174368 +
 * 3 x 0.06591456 = 0.77297472. */
static void test_fsdp_by_hand(void **state)
{
    square_case c;
    cp_prediction p;
    cp_err e;
    (void)state;
    sharded_square_open(&c, CP_FW_FSDP, 0, 1);
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 1, &p, &e), CP_OK);
    assert_true(p.available);
    assert_int_equal(p.nruns, 6);
    assert_near(p.runs[1].finish_ms, 0.25765824, 1e-9);
    assert_near(p.runs[2].start_ms, 10.19174368, 1e-9);
    assert_near(p.runs[3].start_ms, 10.25765824, 1e-9);
    assert_near(p.runs[4].start_ms, 15.25765824, 1e-9);
    assert_near(p.runs[5].finish_ms, 30.44940192, 1e-9);
    assert_near(p.iteration_ms, 31.44940192, 1e-9);
    assert_near(p.compute_ms, 31.0, 1e-9);
    assert_near(p.exposed_ms, 0.44940192, 1e-9);
    assert_near(p.comm_ms, 0.77297472, 1e-9);
    /* compute as it ran: forward from the end of the first gather to
     * 10.19174368, backward (its waits included) to 30.25765824, the
     * optimizer on the shard after the last reduce-scatter */
    assert_int_equal(p.nspans, 3);
    assert_near(p.spans[0].start_ms, 0.19174368, 1e-9);
    assert_near(p.spans[0].end_ms, 10.19174368, 1e-9);
    assert_near(p.spans[1].end_ms, 30.25765824, 1e-9);
    assert_int_equal(p.spans[2].kind, CP_SPAN_OPTIMIZER);
    assert_near(p.spans[2].start_ms, 30.44940192, 1e-9);
    assert_near(p.spans[2].end_ms, 31.44940192, 1e-9);
    cp_prediction_free(&p);
    square_close(&c);
}

/* Gradient accumulation under sharding (eq. Z4), two micro-batches of 30 ms
 * (forward 10, backward 15 + 5) and the 4 ms optimizer, on the square.
 * ZeRO-2 as test_zero2_by_hand, every micro-batch reduce-scattering: RS t1
 * 15 -> 15.06591456, RS t0 30 -> 30.19174368, then 45 -> 45.06591456 and
 * 60 -> 60.19174368; optimizer on the shard 1 ms -> 61.19174368; gathers
 * 4 x .06591456 -> 61.45540192, the iteration; compute 30 + 30 + 1 = 61;
 * comm 2 x (.06591456 + .19174368) + .26365824 = .77897472; five entries.
 * FSDP as test_fsdp_by_hand: the first micro-batch ends its backward at
 * 30.25765824 and its last reduce-scatter at 30.44940192; the second
 * gathers u0 after it [30.44940192, 30.6411456], u1 [30.6411456,
 * 30.70706016]; forward 30.6411456 -> 40.6411456; AG u1 [40.6411456,
 * 40.70706016], bwd1 -> 45.70706016, AG u0 [40.70706016, 40.89880384], RS
 * u1 [45.70706016, 45.77297472], bwd0 -> 60.70706016, RS u0 ->
 * 60.89880384; + 1 = 61.89880384; comm 2 x .77297472 = 1.54594944. */
static void test_sharded_accumulation_by_hand(void **state)
{
    square_case c;
    cp_prediction p;
    cp_err e;
    (void)state;
    sharded_square_open(&c, CP_FW_ZERO2, 0, 2);
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 1, &p, &e), CP_OK);
    assert_int_equal(p.nruns, 5);
    assert_near(p.runs[2].start_ms, 45.0, 1e-9);
    assert_near(p.runs[3].finish_ms, 60.19174368, 1e-9);
    assert_near(p.iteration_ms, 61.45540192, 1e-9);
    assert_near(p.compute_ms, 61.0, 1e-9);
    assert_near(p.comm_ms, 0.77897472, 1e-9);
    cp_prediction_free(&p);
    square_close(&c);
    sharded_square_open(&c, CP_FW_FSDP, 0, 2);
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 1, &p, &e), CP_OK);
    assert_int_equal(p.nruns, 12);
    assert_near(p.runs[6].start_ms, 30.44940192, 1e-9);
    assert_near(p.runs[9].start_ms, 40.70706016, 1e-9);
    assert_near(p.runs[11].finish_ms, 60.89880384, 1e-9);
    assert_near(p.iteration_ms, 61.89880384, 1e-9);
    assert_near(p.compute_ms, 61.0, 1e-9);
    assert_near(p.comm_ms, 1.54594944, 1e-9);
    cp_prediction_free(&p);
    square_close(&c);
}

/* A model with measured per-layer times: tensor k of numel[k] elements in
 * layer layer[k]; layer l runs fwd[l] ms forward and bwd[l] backward. */
static cp_model *make_timed_model(const int64_t *numel, const int *layer, int nt,
                                  const double *fwd, const double *bwd, int nl)
{
    cp_model *m = calloc(1, sizeof *m);
    cp_err e;
    int i;
    m->name = strdup("timed");
    m->dtype = CP_FP32;
    m->ntensors = nt;
    m->nlayers = nl;
    m->tensors = calloc((size_t)nt, sizeof *m->tensors);
    m->layers = calloc((size_t)nl, sizeof *m->layers);
    for (i = 0; i < nt; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%d", i);
        m->tensors[i].name = strdup(name);
        m->tensors[i].numel = numel[i];
        m->tensors[i].layer = layer[i];
    }
    for (i = 0; i < nl; i++) {
        m->layers[i].fwd_ms = fwd[i];
        m->layers[i].bwd_ms = bwd[i];
    }
    assert_int_equal(cp_model_finish(m, &e), CP_OK);
    return m;
}

/* ZeRO-3 (eq. Z5) on the square (ring gather or reduce-scatter of S bytes
 * 3 + 0.75 S / 50e3 us), fp32.  Layer 0: a weight of 3e7 elements and a
 * bias of 1e3 (under the 1e5 persistence threshold); layer 1: 6e8; layer
 * 2: 3e7.  Forward 10, 20, 10 ms, backward 20, 40, 20, no optimizer time.
 *   fetch groups (5e7 elements each at most): {0}, {1}, {2}
 *   gathered again in backward: group 0 only (2 x (6e8 + 3e7) = 1.26e9 >
 *   1e9; group 1: 2 x 3e7 = 6e7, kept)
 *   gathers: 1.2e8 B 1.803 ms, 2.4e9 B 36.003 ms
 *   forward:  AG g0 [0, 1.803]; g1 prefetched as layer 0 starts [1.803,
 *             37.806]; fwd0 1.803 -> 11.803; g2 prefetched as layer 1
 *             starts [37.806, 39.609]; fwd1 37.806 -> 57.806; fwd2 ->
 *             67.806
 *   backward: bwd2 -> 87.806 (bucket 1.2e8 B of the 2e9 B cap); g0
 *             prefetched as layer 1's backward starts [87.806, 89.609];
 *             bwd1 -> 127.806, bucket 2.52e9 B >= 2e9: reduce-scattered
 *             [127.806, 165.609] (3 + 0.75 x 2.52e9 / 5e4 = 37803 us);
 *             bwd0 -> 147.806; the rest, 1.20004e8 B, [165.609, 167.41206]
 *             (3 + 1800.06 us)
 *   persistent parameters (4e3 B) gathered after the step: under Simple on
 *   one of the square's 4 NCCL channels (a Simple channel needs 32 KiB,
 *   issue 25): 3 + 0.75 x 4e3 x 4 / 5e4 = 3.24 us -> 167.41530, the
 *   iteration; compute 120
 *   comm 3 x 1.803 + 36.003 + 37.803 + 1.80306 + .00324 = 81.0213 */
static void test_zero3_by_hand(void **state)
{
    static const int64_t numel[] = {30000000, 1000, 600000000, 30000000};
    static const int layer[] = {0, 0, 1, 2};
    static const double fwd[] = {10, 20, 10}, bwd[] = {20, 40, 20};
    cp_model *m = make_timed_model(numel, layer, 4, fwd, bwd, 3);
    cp_topo *t = test_nvlink_square(25, 25);
    cp_predict_opts o;
    cp_predictor pr;
    cp_prediction p;
    cp_err e;
    (void)state;
    cp_predict_opts_default(&o);
    o.framework = CP_FW_ZERO3;
    o.bucket_mb = 0; /* DeepSpeed's 5e8 elements, as the command line sets it */
    assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
    assert_int_equal(cp_predict(&pr, CP_S_RING, &o, 1, &p, &e), CP_OK);
    assert_true(p.available);
    assert_int_equal(p.nruns, 7);
    assert_near(p.runs[1].finish_ms, 37.806, 1e-9);
    assert_near(p.runs[2].start_ms, 37.806, 1e-9);
    assert_near(p.runs[3].start_ms, 87.806, 1e-9);
    assert_near(p.runs[3].bytes, 1.2e8, 0);
    assert_near(p.runs[4].bytes, 2.52e9, 0);
    assert_near(p.runs[4].finish_ms, 165.609, 1e-9);
    assert_near(p.runs[5].finish_ms, 167.41206, 1e-9);
    assert_int_equal(p.runs[6].ntensors, 1);
    assert_near(p.iteration_ms, 167.4153, 1e-9);
    assert_near(p.compute_ms, 120.0, 1e-9);
    assert_near(p.comm_ms, 81.0213, 1e-9);
    cp_prediction_free(&p);
    cp_predictor_free(&pr);
    cp_topo_free(t);
    cp_model_free(m);
}

/* Eq. M2 by hand on a toy transformer: L = 3 blocks, s = 4 tokens, b = 2
 * samples, h = 8, a = 2 heads, f = 4h = 32, dropout, GELU, no LM head, fp16
 * activations (E = 2): s b h = 64, s b f = 256, a s^2 b = 64.
 *   Korthikanti et al.'s 34 s b h + 5 a s^2 b per block: block
 *     64 (2 (6 + 2) + 2) + 256 x 2 x 2 = 1152 + 1024 = 2176 = 34 x 64;
 *     scores 64 (2 x 2 + 1) = 320 = 5 x 64; 2496 a block, 7488 for three;
 *     ends: mask + final norm input 64 (1 + 2) = 192; total 7680 B
 *   fused attention: 4 a s b = 64 in place of 320: 3 x 2240 + 192 = 6912
 *   recomputed: the other 2 blocks' inputs of E s b h = 2 x 128 = 256, one
 *     block rebuilt (its input among its tensors) 2496, ends 192: 2944
 *   two tensor-parallel GPUs (eq. T1; Korthikanti's 10 s b h + 24 s b h / t
 *     + 5 a s^2 b / t): whole 64 (4 x 2 + 2) = 640, split (64 x 2 x 4 +
 *     256 x 2 x 2) / 2 = 768, scores 320 / 2 = 160: 3 x 1568 + 192 = 4896
 * A Llama-like variant: fp32 (E = 4), gated SiLU, f = 8 (s b f = 64),
 * kv_heads 1 of 2, no dropout, an LM head over V = 10:
 *   block 64 x 4 x (6 + 2 x 1/2) + 64 x 4 x 4 = 1792 + 1024 = 2816;
 *   scores 64 x 4 = 256; three blocks 9216; ends: final norm 64 x 4 =
 *   256, head input 256, fp32 log-softmax 4 x 4 x 2 x 10 = 320; 10048 B */
static void test_activations_by_hand(void **state)
{
    static const int64_t numel[] = {100};
    cp_model *m = make_model(numel, NULL, 1);
    cp_xformer x = {.layers = 3, .hidden = 8, .heads = 2, .kv_heads = 2, .ffn = 32, .seq = 4,
                    .dropout = 0.1};
    (void)state;
    m->dtype = CP_FP16;
    m->batch = 2;
    m->xf = x;
    assert_near(cp_activation_bytes(m, 0, 1, 0, 0), 7680, 0);
    assert_near(cp_activation_bytes(m, 0, 1, 0, 1), 6912, 0);
    assert_near(cp_activation_bytes(m, 0, 1, 1, 0), 2944, 0);
    assert_near(cp_activation_bytes(m, 0, 2, 0, 0), 4896, 0);
    m->dtype = CP_FP32;
    m->xf.ffn = 8;
    m->xf.kv_heads = 1;
    m->xf.swiglu = 1;
    m->xf.dropout = 0;
    m->xf.vocab = 10;
    assert_near(cp_activation_bytes(m, 0, 1, 0, 0), 10048, 0);
    /* no batch or no dimensions: nothing estimated */
    m->batch = 0;
    assert_near(cp_activation_bytes(m, 0, 1, 0, 0), 0, 0);
    m->batch = 2;
    m->xf.layers = 0;
    assert_near(cp_activation_bytes(m, 0, 1, 0, 0), 0, 0);
    cp_model_free(m);
}

/* What the memory line adds: bert-large (24 blocks, h 1024, a 16, f 4096,
 * s 128, batch 16, fp32, dropout, no head) on the DGX-1 V100: s b h =
 * 2,097,152, s b f = 8,388,608, a s^2 b = 4,194,304;
 *   block 2097152 (4 x 8 + 2) + 8388608 x 4 x 2 = 138,412,032
 *   scores 4194304 (4 x 2 + 1) = 37,748,736; 24 blocks 4,227,858,432
 *   ends 2097152 (1 + 4) = 10,485,760; 4,238,344,192 B
 * Every term grows with the batch: 264,896,512 B a sample.  Beside DDP's
 * 335141888 x 20 = 6,702,837,760 B of states on the V100's 17.18 GB,
 * (17.18e9 - 6702837760) / 264896512 = 39.55: a batch of up to 39.
 * Under autocast (--activation-dtype fp16, E = 2):
 *   block 2097152 (2 x 8 + 2) + 8388608 x 2 x 2 = 71,303,168
 *   scores 4194304 (2 x 2 + 1) = 20,971,520; 24 blocks 2,214,592,512
 *   ends 2097152 (1 + 2) = 6,291,456; 2,220,883,968 B
 * A measured --activation-gb replaces the estimate. */
static void test_activations_bert_large(void **state)
{
    cp_model *m;
    cp_topo *t;
    cp_predictor pr;
    cp_predict_opts o;
    cp_mem mem;
    cp_err e;
    (void)state;
    assert_int_equal(cp_model_load("models/bert-large.json", &m, &e), CP_OK);
    assert_int_equal(cp_topo_load("topologies/dgx1-v100.json", &t, &e), CP_OK);
    cp_predict_opts_default(&o);
    o.compute_ms = 300;
    assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
    assert_int_equal(cp_model_states(&pr, &o, &mem, &e), CP_OK);
    assert_near(mem.activations, 4238344192.0, 0);
    assert_true(mem.act_estimated);
    assert_near(mem.total, mem.states + 4238344192.0, 1e-3);
    assert_near(mem.max_batch, 39, 0);
    o.act_bytes = 2;
    assert_int_equal(cp_model_states(&pr, &o, &mem, &e), CP_OK);
    assert_near(mem.activations, 2220883968.0, 0);
    o.act_bytes = 0;
    o.activation_gb = 3;
    assert_int_equal(cp_model_states(&pr, &o, &mem, &e), CP_OK);
    assert_near(mem.activations, 3e9, 0);
    assert_false(mem.act_estimated);
    cp_predictor_free(&pr);
    cp_topo_free(t);
    cp_model_free(m);
}

/* Eq. M1 on the square (4 GPUs) for the 12 MiB + 4 MiB fp32 model: Psi =
 * 4 Mi parameters, 16 MiB of weights and as much gradient; Adam's two fp32
 * moments 32 MiB.
 *   DDP: 16 + 16 + 32 + 16 (buckets) = 80 MiB; with gradient_as_bucket_view
 *     64; with SGD (one moment, 16) 64; fp16 gradients (mixed precision:
 *     Adam 8 + an fp32 master 4 = 12 bytes a parameter): Psi (2 + 2 + 12 +
 *     2) = 18 x 4 Mi = 75,497,472 B
 *   Horovod: as DDP, its 64 MiB fusion buffer capped by the 16 MiB of
 *     gradients: 80 MiB
 *   ZeRO-1: weights 16, gradients 16 (every one kept), Adam 32 / 4, the
 *     reduce bucket (5e8 elements, more than the model) 16: 56 MiB
 *   ZeRO-2: weights 16, gradients 16 / 4, Adam 32 / 4, the reduce bucket
 *     16: 44 MiB
 *   FSDP, every layer a unit: 16 / 4 + 16 / 4 + 32 / 4 = 16, gathered two
 *     units (12 + 4) and the largest unit's gradient (12): 28: 44 MiB; with
 *     SHARD_GRAD_OP every parameter (16) and a unit's gradient (12): 44 MiB
 *   ZeRO-3: the two tensors (3 Mi and 1 Mi elements, both over the 1e5
 *     persistence threshold) make one fetch group kept from forward to
 *     backward: gathered 16; shards 16 and the reduce bucket 16: 48 MiB */
static void test_model_states_by_hand(void **state)
{
    static const struct {
        cp_framework fw;
        int sharding, view, optimizer, grad_bytes;
        double want;
    } cases[] = {
        {CP_FW_DDP, 0, 0, CP_OPT_ADAM, 0, 80 * MIB},
        {CP_FW_DDP, 0, 1, CP_OPT_ADAM, 0, 64 * MIB},
        {CP_FW_DDP, 0, 0, CP_OPT_SGD, 0, 64 * MIB},
        {CP_FW_DDP, 0, 0, CP_OPT_ADAM, 2, 75497472},
        {CP_FW_HOROVOD, 0, 0, CP_OPT_ADAM, 0, 80 * MIB},
        {CP_FW_ZERO1, 0, 0, CP_OPT_ADAM, 0, 56 * MIB},
        {CP_FW_ZERO2, 0, 0, CP_OPT_ADAM, 0, 44 * MIB},
        {CP_FW_FSDP, 0, 0, CP_OPT_ADAM, 0, 44 * MIB},
        {CP_FW_FSDP, CP_SHARD_GRAD_OP, 0, CP_OPT_ADAM, 0, 44 * MIB},
        {CP_FW_ZERO3, 0, 0, CP_OPT_ADAM, 0, 48 * MIB},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        square_case c;
        cp_predict_opts o;
        cp_mem mem;
        cp_err e;
        cp_predict_opts_default(&o);
        o.compute_ms = 30;
        o.framework = cases[i].fw;
        o.fsdp_sharding = cases[i].sharding;
        o.fsdp_wrap_mb = CP_WRAP_LAYER;
        o.bucket_view = cases[i].view;
        o.optimizer = cases[i].optimizer;
        o.grad_bytes = cases[i].grad_bytes;
        if (cp_framework_deepspeed(cases[i].fw))
            o.bucket_mb = 0; /* DeepSpeed's default, as the command line sets it */
        square_open_with(&c, &o, 0, 0);
        assert_int_equal(cp_model_states(&c.pr, &c.o, &mem, &e), CP_OK);
        if (fabs(mem.total - cases[i].want) > 1e-6)
            fail_msg("case %zu: %.0f B, want %.0f", i, mem.total, cases[i].want);
        assert_near(mem.capacity, 0, 0); /* the square gives no GPU memory */
        c.o.activation_gb = 0.5; /* given activations add to the states, whatever they are */
        assert_int_equal(cp_model_states(&c.pr, &c.o, &mem, &e), CP_OK);
        assert_near(mem.states, cases[i].want, 1e-6);
        assert_near(mem.total, cases[i].want + 0.5e9, 1e-6);
        square_close(&c);
    }
}

/* The ZeRO paper's Table 1 (Rajbhandari et al., SC'20): a 7.5B-parameter
 * model, mixed-precision Adam (K = 12), 64 GPUs: (2 + 2 + 12) x 7.5e9 = 120
 * GB per GPU under plain data parallelism, 2 x 7.5e9 + 14 x 7.5e9 / 64 =
 * 31.4 GB with optimizer states partitioned (stage 1: 4 x 7.5e9 + 12 x
 * 7.5e9 / 64 = 31.40625e9), 16.6 GB with gradients too (stage 2), 16 x
 * 7.5e9 / 64 = 1.9 GB with parameters too (stage 3).  The paper counts no
 * buffers and no gathered parameters; neither do these sums.  Eight DGX
 * A100 hosts: 64 GPUs of 42.95 GB. */
static void test_model_states_zero_paper(void **state)
{
    static const int64_t numel[] = {7500000000LL};
    cp_model *m = make_model(numel, NULL, 1);
    cp_topo *t;
    cp_predict_opts o;
    cp_predictor pr;
    cp_mem mem;
    cp_err e;
    (void)state;
    assert_int_equal(cp_topo_load_hosts("topologies/dgx-a100.json", 8, &t, &e), CP_OK);
    cp_predict_opts_default(&o);
    o.compute_ms = 1000;
    o.grad_bytes = 2;
    assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
    o.bucket_view = 1;
    assert_int_equal(cp_model_states(&pr, &o, &mem, &e), CP_OK);
    assert_near(mem.total, 120e9, 1e-3);
    assert_true(mem.total > mem.capacity); /* does not fit a 40 GB A100 */
    assert_near(mem.capacity, 42.95e9, 1e-3);
    o.framework = CP_FW_ZERO1;
    assert_int_equal(cp_model_states(&pr, &o, &mem, &e), CP_OK);
    assert_near(mem.weights + mem.grads + mem.optim, 30e9 + 12 * 7.5e9 / 64, 1e-3);
    o.framework = CP_FW_ZERO2;
    assert_int_equal(cp_model_states(&pr, &o, &mem, &e), CP_OK);
    assert_near(mem.weights + mem.grads + mem.optim, 15e9 + 14 * 7.5e9 / 64, 1e-3);
    o.framework = CP_FW_ZERO3;
    assert_int_equal(cp_model_states(&pr, &o, &mem, &e), CP_OK);
    assert_near(mem.weights + mem.grads + mem.optim, 16 * 7.5e9 / 64, 1e-3); /* 1.875 GB */
    cp_predictor_free(&pr);
    cp_topo_free(t);
    cp_model_free(m);
}

/* FSDP SHARD_GRAD_OP (eq. Z3) on the square of test_fsdp_by_hand: forward
 * as there (AG0 [0, .19174368], AG1 [.19174368, .25765824], forward ends
 * 10.19174368); backward gathers nothing: bwd1 10.19174368 -> 15.19174368,
 * RS1 [15.19174368, 15.25765824], bwd0 -> 30.19174368, RS0 -> 30.38348736.
 * Iteration 30.38348736 + 1 = 31.38348736: FULL_SHARD's 31.44940192 less
 * the 4 MiB gather (.06591456) that delayed backward; comm 2 x .19174368 +
 * 2 x .06591456 = .51531648, four operations.  HYBRID_SHARD on one host is
 * FULL_SHARD. */
static void test_fsdp_grad_op_by_hand(void **state)
{
    square_case c;
    cp_prediction p;
    cp_err e;
    (void)state;
    sharded_square_open(&c, CP_FW_FSDP, CP_SHARD_GRAD_OP, 1);
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 1, &p, &e), CP_OK);
    assert_true(p.available);
    assert_int_equal(p.nruns, 4);
    assert_near(p.runs[2].start_ms, 15.19174368, 1e-9);
    assert_near(p.runs[3].finish_ms, 30.38348736, 1e-9);
    assert_near(p.iteration_ms, 31.38348736, 1e-9);
    assert_near(p.comm_ms, 0.51531648, 1e-9);
    cp_prediction_free(&p);
    c.o.fsdp_sharding = CP_SHARD_HYBRID;
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 0, &p, &e), CP_OK);
    assert_near(p.iteration_ms, 31.44940192, 1e-9);
    cp_prediction_free(&p);
    square_close(&c);
}

/* FSDP HYBRID_SHARD (eq. Z3) on two hosts of the NVLink pair with a NIC
 * (testtopo.h: in-host gather or reduce-scatter 1 + 0.5 S / 50e3 us, the
 * ring of peers 12 + 0.5 S / 5e3 us), the model and compute of
 * test_fsdp_by_hand (units 12 and 4 MiB; forward 7.5 + 2.5, backward 15 +
 * 5, optimizer 4):
 *   in host: 12 MiB 126.82912 us, 4 MiB 42.94304 us; peers: 12 MiB
 *   1270.2912 us, 4 MiB 431.4304 us.
 *   forward:  AG0 [0, .12682912], AG1 [.12682912, .16977216]; fwd0
 *             .12682912 -> 7.62682912, fwd1 -> 10.12682912
 *   backward: AG1 [10.12682912, 10.16977216]; bwd1 -> 15.16977216; AG0 as
 *             bwd1 starts [10.16977216, 10.29660128]; RS1 [15.16977216,
 *             15.2127152], AR1 among peers [15.2127152, 15.6441456]; bwd0
 *             -> 30.16977216; RS0 [30.16977216, 30.29660128], AR0
 *             [30.29660128, 31.56689248]
 *   optimizer on a shard of the host's two GPUs: 4 / 2 = 2 ms; iteration
 *   33.56689248, compute 32, exposed 1.56689248; comm 3 x .12682912 +
 *   3 x .04294304 + 1.2702912 + .4314304 = 2.21103808; eight operations. */
static void test_fsdp_hybrid_by_hand(void **state)
{
    static const int64_t numel[] = {3 * MIB, MIB};
    cp_model *m = make_model(numel, NULL, 2);
    cp_topo *two = test_pair_nic_hosts(2);
    cp_predict_opts o;
    cp_predictor pr;
    cp_prediction p;
    cp_err e;
    (void)state;
    m->optimizer_ms = 4;
    sharded_opts(&o, CP_FW_FSDP, CP_SHARD_HYBRID, 1);
    assert_int_equal(cp_predictor_init(&pr, m, two, &o, &e), CP_OK);
    assert_int_equal(cp_predict(&pr, CP_S_RING, &o, 1, &p, &e), CP_OK);
    assert_true(p.available);
    assert_int_equal(p.nruns, 8);
    assert_near(p.runs[3].finish_ms, 10.29660128, 1e-9);
    assert_string_equal(p.runs[4].how, "reducescatter/host-ring");
    assert_near(p.runs[4].finish_ms, 15.2127152, 1e-9);
    assert_string_equal(p.runs[5].how, "allreduce/peers");
    assert_near(p.runs[5].finish_ms, 15.6441456, 1e-9);
    assert_near(p.runs[7].start_ms, 30.29660128, 1e-9);
    assert_near(p.iteration_ms, 33.56689248, 1e-9);
    assert_near(p.compute_ms, 32.0, 1e-9);
    assert_near(p.exposed_ms, 1.56689248, 1e-9);
    assert_near(p.comm_ms, 2.21103808, 1e-9);
    cp_prediction_free(&p);
    /* tree cannot gather or reduce-scatter: unavailable, with the reason */
    assert_int_equal(cp_predict(&pr, CP_S_TREE, &o, 0, &p, &e), CP_OK);
    assert_false(p.available);
    assert_non_null(strstr(p.why_not, "ReduceScatter"));
    cp_predictor_free(&pr);
    cp_topo_free(two);
    cp_model_free(m);
}

/* FSDP wrap policies on the square (AllGather and ReduceScatter of S bytes:
 * 3 + 0.75 S / 50e3 us: 4 MiB 0.06591456 ms, 12 MiB 0.19174368 ms).  Layers
 * "emb" 4 MiB, "blk.0.attn" 8 MiB, "blk.0.mlp" 4 MiB, "blk.1" 4 MiB; 30 ms
 * by parameters: forward 2, 4, 2, 2, backward 4, 8, 4, 4.
 * Block policy: root {emb} 4 MiB, unit 0 {blk.0.*} 12 MiB, unit 1 {blk.1}.
 *   forward:  AG root [0, .06591456]; emb -> 2.06591456; AG u0 [.06591456,
 *             .25765824]; blk.0 -> 8.06591456; AG u1 [.25765824, .3235728];
 *             blk.1 -> 10.06591456
 *   backward: AG u1 [10.06591456, 10.13182912]; blk.1 10.13182912 ->
 *             14.13182912; AG u0 issued as it starts [10.13182912,
 *             10.3235728]; RS u1 [14.13182912, 14.19774368]; blk.0 ->
 *             26.13182912; emb (root kept) -> 30.13182912; RS u0
 *             [26.13182912, 26.3235728]; RS root [30.13182912, 30.19774368]
 *   iteration 30.19774368; comm 5 x .06591456 + 3 x .19174368 = .90480384.
 * Size policy, 10 MiB: {emb, blk.0.attn} 12 MiB (4 < 10, then 12 >= 10),
 * {blk.0.mlp, blk.1} 8 MiB: two units, six operations. */
static void test_fsdp_wrap_by_hand(void **state)
{
    static const int64_t numel[] = {MIB, 2 * MIB, MIB, MIB};
    static const char *const names[] = {"emb", "blk.0.attn", "blk.0.mlp", "blk.1"};
    static const double run_mib[] = {4, 12, 4, 4, 12, 4, 12, 4};
    cp_model *m = calloc(1, sizeof *m);
    cp_topo *t = test_nvlink_square(25, 25);
    cp_predict_opts o;
    cp_predictor pr;
    cp_prediction p;
    cp_err e;
    int i;
    (void)state;
    m->name = strdup("wrap");
    m->dtype = CP_FP32;
    m->ntensors = m->nlayers = 4;
    m->tensors = calloc(4, sizeof *m->tensors);
    m->layers = calloc(4, sizeof *m->layers);
    for (i = 0; i < 4; i++) {
        m->tensors[i].name = strdup(names[i]);
        m->tensors[i].numel = numel[i];
        m->tensors[i].layer = i;
        m->layers[i].name = strdup(names[i]);
        m->layers[i].fwd_ms = m->layers[i].bwd_ms = -1;
    }
    m->split = CP_SPLIT_PARAMS;
    assert_int_equal(cp_model_finish(m, &e), CP_OK);
    cp_predict_opts_default(&o);
    o.compute_ms = 30;
    o.framework = CP_FW_FSDP; /* default wrap: blocks */
    assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
    assert_int_equal(cp_predict(&pr, CP_S_RING, &o, 1, &p, &e), CP_OK);
    assert_int_equal(p.nruns, 8);
    for (i = 0; i < 8; i++)
        assert_near(p.runs[i].bytes, run_mib[i] * MIB, 0);
    assert_string_equal(p.runs[5].how, "reducescatter/ring");
    assert_near(p.runs[4].start_ms, 10.13182912, 1e-9);
    assert_near(p.runs[5].start_ms, 14.13182912, 1e-9);
    assert_near(p.runs[6].finish_ms, 26.3235728, 1e-9);
    assert_near(p.runs[7].start_ms, 30.13182912, 1e-9);
    assert_near(p.iteration_ms, 30.19774368, 1e-9);
    assert_near(p.comm_ms, 0.90480384, 1e-9);
    cp_prediction_free(&p);
    o.fsdp_wrap_mb = 10;
    assert_int_equal(cp_predict(&pr, CP_S_RING, &o, 1, &p, &e), CP_OK);
    assert_int_equal(p.nruns, 6);
    assert_near(p.runs[0].bytes, 12 * MIB, 0);
    assert_near(p.runs[1].bytes, 8 * MIB, 0);
    cp_prediction_free(&p);
    cp_predictor_free(&pr);
    cp_topo_free(t);
    cp_model_free(m);
}

/* What-if (predict --what-if): the timeline square with NVLink twice as
 * fast, 50 GB/s a link: ring AllReduce 6 us + 1.5 S / 100e3 us, so the
 * 12 MiB bucket ready at 30 ms finishes at 30 + (6 + 188.74368) us =
 * 30.19474368 ms, the iteration.  On two p3dn hosts doubling the network
 * doubles the replica's NIC too: 100 Gb/s EFA, 12.5 GB/s, becomes 25. */
static void test_scale_kind_by_hand(void **state)
{
    square_case c;
    cp_topo *p3;
    cp_prediction p;
    cp_err e;
    int k, nics = 0;
    (void)state;
    square_open(&c, 0, 1, 0);
    cp_predictor_free(&c.pr);
    cp_topo_scale_kind(c.t, CP_NVLINK, 2);
    cp_topo_scale_kind(c.t, CP_PCIE, 3); /* no PCIe here: nothing changes */
    assert_int_equal(cp_predictor_init(&c.pr, c.m, c.t, &c.o, &e), CP_OK);
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 0, &p, &e), CP_OK);
    assert_near(p.iteration_ms, 30.19474368, 1e-9);
    square_close(&c);
    assert_int_equal(cp_topo_load_hosts("topologies/aws-p3dn.json", 2, &p3, &e), CP_OK);
    cp_topo_scale_kind(p3, CP_NET, 2);
    for (k = 0; k < p3->rep_base->nnodes; k++)
        if (p3->rep_base->nodes[k].kind == CP_NIC) {
            assert_near(p3->rep_base->nodes[k].net_gbs, 25.0, 1e-12);
            nics++;
        }
    assert_true(nics > 0);
    for (k = 0; k < p3->nlinks; k++)
        if (p3->links[k].kind == CP_NET)
            assert_near(p3->links[k].gbs[0], 25.0, 1e-12);
    cp_topo_free(p3);
}

/* Eq. P9, stragglers.  The expected maximum of n standard normals: 0 for
 * one, 1/sqrt(pi) = 0.5641895835 for two, 3/(2 sqrt(pi)) = 0.8462843753 for
 * three (closed forms), 1.0293753730 for four (tabulated, Teichroew 1956).
 * The timeline square (4 GPUs) with a step-to-step variation of 10%: every
 * compute time x (1 + 0.1 x 1.0293753730) = 1.1029375373; layer 0 ready at
 * 30 x that = 33.088126119, its 12 MiB bucket done 0.38348736 later:
 * iteration 33.471613479; the wait for the slowest GPU 3.088126119 ms. */
static void test_stragglers_by_hand(void **state)
{
    square_case c;
    cp_predict_opts o;
    cp_prediction p;
    cp_err e;
    (void)state;
    assert_near(cp_expected_max_normal(1), 0.0, 0);
    assert_near(cp_expected_max_normal(2), 0.5641895835, 1e-9);
    assert_near(cp_expected_max_normal(3), 0.8462843753, 1e-9);
    assert_near(cp_expected_max_normal(4), 1.0293753730, 1e-9);
    cp_predict_opts_default(&o);
    o.compute_ms = 30;
    o.jitter = 0.1;
    square_open_with(&c, &o, 0, 0);
    assert_near(c.pr.straggle_ms, 3.088126119, 1e-8);
    assert_int_equal(cp_predict(&c.pr, CP_S_RING, &c.o, 0, &p, &e), CP_OK);
    assert_near(p.iteration_ms, 33.471613479, 1e-8);
    assert_near(p.compute_ms, 33.088126119, 1e-8);
    square_close(&c);
}

/* Eq. P0 by hand: layers of 0.75e12 and 0.25e12 forward FLOPs per sample,
 * batch 2, backward 2 x forward, utilisation 0.5, on GPUs of 10 FP32 and 100
 * FP16 TFLOP/s:
 *   fp32 model: 3 x 1e12 x 2 / (10e12 x 0.5) s = 1.2 s = 1200 ms
 *   fp16 or bf16 model: the half-precision peak, 3 x 1e12 x 2 / (100e12 x 0.5)
 *   = 120 ms; a GPU without one falls back to FP32: 1200 ms. */
static void test_compute_estimate_by_hand(void **state)
{
    static const int64_t numel[] = {MIB, MIB};
    static const double flops[] = {0.75e12, 0.25e12};
    cp_model *m = make_model(numel, flops, 2);
    cp_topo *t = test_nvlink_square(25, 25);
    cp_predictor pr;
    cp_predict_opts o;
    cp_err e;
    int g;
    (void)state;
    m->batch = 2;
    for (g = 0; g < t->ngpus; g++) {
        t->nodes[t->gpus[g]].tflops = 10;
        t->nodes[t->gpus[g]].tflops_fp16 = 100;
    }
    assert_near(cp_compute_estimate_ms(m, t, 0.5), 1200.0, 1e-9);
    m->dtype = CP_BF16;
    assert_near(cp_compute_estimate_ms(m, t, 0.5), 120.0, 1e-9);
    m->dtype = CP_FP16;
    assert_near(cp_compute_estimate_ms(m, t, 0.5), 120.0, 1e-9);
    /* the predictor uses it when nothing measured is given */
    cp_predict_opts_default(&o);
    assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
    assert_string_equal(pr.compute_source, "estimated");
    assert_near(pr.single_ms, 120.0, 1e-9);
    cp_predictor_free(&pr);
    for (g = 0; g < t->ngpus; g++)
        t->nodes[t->gpus[g]].tflops_fp16 = 0;
    assert_near(cp_compute_estimate_ms(m, t, 0.5), 1200.0, 1e-9);
    cp_topo_free(t);
    cp_model_free(m);
}

/* Invariants (issue 4): iteration >= compute, exposed <= comm; a machine
 * with every link 10x faster never predicts a slower iteration; one GPU:
 * iteration = compute. */
/* Every framework, FSDP under each sharding strategy (eq. Z3) and ZeRO with
 * the optimizer offloaded (eq. Z6): the variants the invariant and one-GPU
 * tests run.  (Tensor parallelism is a large-model layout's: test_llm.c.) */
static const struct {
    cp_framework fw;
    int sharding, offload;
} variants[] = {
    {CP_FW_DDP, 0, 0},
    {CP_FW_HOROVOD, 0, 0},
    {CP_FW_ZERO1, 0, 0},
    {CP_FW_ZERO2, 0, 0},
    {CP_FW_FSDP, 0, 0},
    {CP_FW_FSDP, CP_SHARD_GRAD_OP, 0},
    {CP_FW_FSDP, CP_SHARD_HYBRID, 0},
    {CP_FW_FSDP, CP_SHARD_HYBRID | CP_SHARD_GRAD_OP, 0},
    {CP_FW_ZERO3, 0, 0},
    {CP_FW_MIRRORED, 0, 0},
    {CP_FW_ZERO2, 0, 1},
    {CP_FW_ZERO3, 0, 1},
};
#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))

static void set_variant(cp_predict_opts *o, int v)
{
    o->framework = variants[v].fw;
    o->fsdp_sharding = variants[v].sharding;
    o->offload = variants[v].offload;
    if (cp_framework_deepspeed(o->framework))
        o->bucket_mb = 0; /* DeepSpeed's default, as the command line sets it */
}

static void check_invariants(const char *model, const char *topo, int hosts)
{
    cp_model *m;
    cp_topo *t, *fast;
    cp_predictor pr, pf;
    cp_predict_opts o;
    cp_err e;
    int s, l, fw;
    assert_int_equal(cp_model_load(model, &m, &e), CP_OK);
    assert_int_equal(cp_topo_load_hosts(topo, hosts, &t, &e), CP_OK);
    fast = cp_topo_clone(t);
    assert_non_null(fast);
    for (l = 0; l < fast->nlinks; l++) {
        fast->links[l].gbs[0] *= 10;
        fast->links[l].gbs[1] *= 10;
    }
    for (fw = 0; fw < NVARIANTS; fw++) {
        cp_predict_opts_default(&o);
        o.compute_ms = 250;
        set_variant(&o, fw);
        assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
        assert_int_equal(cp_predictor_init(&pf, m, fast, &o, &e), CP_OK);
        for (s = 0; s < CP_STRATEGIES; s++) {
            cp_prediction a, b;
            assert_int_equal(cp_predict(&pr, (cp_strategy)s, &o, 0, &a, &e), CP_OK);
            assert_int_equal(cp_predict(&pf, (cp_strategy)s, &o, 0, &b, &e), CP_OK);
            if (!a.available)
                continue;
            if (a.iteration_ms < a.compute_ms - 1e-9 || a.exposed_ms > a.comm_ms + 1e-9)
                fail_msg("%s on %s, framework %d, strategy %s: iteration %.4f compute %.4f "
                         "exposed %.4f comm %.4f", model, topo, fw,
                         cp_strategy_name((cp_strategy)s), a.iteration_ms, a.compute_ms,
                         a.exposed_ms, a.comm_ms);
            assert_true(b.available);
            if (b.iteration_ms > a.iteration_ms + 1e-9)
                fail_msg("%s on %s, framework %d: strategy %s is slower with 10x links "
                         "(%.4f > %.4f ms)", model, topo, fw,
                         cp_strategy_name((cp_strategy)s), b.iteration_ms, a.iteration_ms);
        }
        cp_predictor_free(&pr);
        cp_predictor_free(&pf);
    }
    cp_topo_free(fast);
    cp_topo_free(t);
    cp_model_free(m);
}

static void test_invariants(void **state)
{
    static const char *const models[] = {"models/resnet50.json", "models/vgg16.json",
                                         "models/bert-large.json", "models/gpt2.json"};
    static const char *const topos[] = {"topologies/dgx1-v100.json", "topologies/dgx-a100.json",
                                        "topologies/hgx-h100.json", "topologies/pcie-t4.json",
                                        "topologies/aws-p3.16xlarge.json"};
    size_t i, j;
    (void)state;
    for (i = 0; i < sizeof models / sizeof models[0]; i++)
        for (j = 0; j < sizeof topos / sizeof topos[0]; j++)
            check_invariants(models[i], topos[j], 1);
    check_invariants("models/bert-large.json", "topologies/dgx-a100.json", 4);
    check_invariants("models/resnet50.json", "topologies/aws-p3dn.json", 2);
}

/* One GPU: nothing to synchronise, iteration = compute exactly. */
static void test_one_gpu(void **state)
{
    static const int64_t numel[] = {MIB, MIB};
    cp_model *m = make_model(numel, NULL, 2);
    cp_topo *t = cp_topo_new("one");
    cp_predictor pr;
    cp_predict_opts o;
    cp_prediction p;
    cp_err e;
    int fw;
    (void)state;
    cp_topo_add_node(t, "g0", CP_GPU, 0);
    assert_int_equal(cp_topo_index(t, &e), CP_OK);
    for (fw = 0; fw < NVARIANTS; fw++) { /* every framework and sharding */
        if (variants[fw].offload)
            continue; /* the host's optimizer step is work a lone GPU still does */
        cp_predict_opts_default(&o);
        o.compute_ms = 12.5;
        set_variant(&o, fw);
        o.jitter = 0.05; /* one GPU waits for nobody (eq. P9) */
        assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
        assert_int_equal(cp_predict(&pr, CP_S_AUTO, &o, 0, &p, &e), CP_OK);
        assert_near(p.iteration_ms, 12.5, 0);
        assert_near(p.compute_ms, 12.5, 0);
        assert_near(p.exposed_ms, 0, 0);
        assert_near(p.comm_ms, 0, 0);
        if (o.framework == CP_FW_FSDP) { /* eq. M1: a one-GPU shard is the whole, */
            cp_mem mem;                  /* nothing gathered: 2 Mi x (4 + 4 + 8) B */
            assert_int_equal(cp_model_states(&pr, &o, &mem, &e), CP_OK);
            assert_near(mem.total, 32 * MIB, 1e-6);
        }
        cp_predictor_free(&pr);
    }
    cp_topo_free(t);
    cp_model_free(m);
}

/* Published (../shared/data/README.md): ResNet-50 v1.5, PyTorch FP32, DGX-1
 * 16 GB, batch 112 per GPU: 367 img/s on one GPU = 112 / 367 = 305.2 ms,
 * 2855 img/s on eight = 112 / (2855 / 8) = 313.8 ms.  The eight-GPU
 * iteration within 5% of 313.8 is a band [298.1, 329.5] that holds the
 * one-GPU 305.2 itself: a model with no communication passed it.  What the
 * pair measures is what eight GPUs add, tN - t1 (issue 24 item 14):
 *   the throughputs are rounded to whole images a second, so
 *   t1 in [112 / 367.5, 112 / 366.5] = [304.76, 305.59] ms and
 *   t8 in [896 / 2855.5, 896 / 2854.5] = [313.78, 313.89] ms:
 *   tN - t1 in [8.19, 9.13] ms measured.
 * The model's part of it (docs/model.md P7 and the ring), by hand:
 *   DDP's copies, into the buckets and back, 2 passes of c(S) = 2 S /
 *   mem_gbs on S = 25,557,032 x 4 = 102,228,128 B at 900 GB/s:
 *   2 x 2 x 102228128 / 900e6 = 0.4543 ms, on the compute stream;
 *   the all-reduces of every bucket: at least the ring's bytes over every
 *   NVLink a V100 has, 1.75 x 102228128 / (6 x 25e6 B/ms) = 1.193 ms of
 *   communication, some of it exposed after the last bucket is ready.
 * So tN - t1 > 0.4543 and comm >= 1.193; and it cannot exceed the
 * measured 9.13 ms (the rest of the measured gap is not communication:
 * the one-GPU run stepped SGD once per 8 micro-batches, docs/model.md P1,
 * a known bias the model does not correct). */
static void test_resnet50_dgx1(void **state)
{
    cp_model *m;
    cp_topo *t;
    cp_predictor pr;
    cp_predict_opts o;
    cp_prediction p;
    cp_err e;
    (void)state;
    assert_int_equal(cp_model_load("models/resnet50.json", &m, &e), CP_OK);
    assert_int_equal(cp_topo_load("topologies/dgx1-v100.json", &t, &e), CP_OK);
    cp_predict_opts_default(&o);
    o.compute_ms = 112.0 / 367.0 * 1000; /* 305.18 ms */
    assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
    assert_int_equal(cp_predict(&pr, CP_S_AUTO, &o, 0, &p, &e), CP_OK);
    assert_rel(p.iteration_ms, 112.0 / (2855.0 / 8) * 1000, 0.05); /* 313.8 ms */
    assert_true(p.comm_ms >= 1.75 * 102228128.0 / (6 * 25e6));            /* 1.193 ms */
    assert_true(p.exposed_ms > 0);
    assert_true(p.iteration_ms - o.compute_ms > 2 * 2 * 102228128.0 / 900e6); /* 0.4543 */
    assert_true(p.iteration_ms - o.compute_ms <= 896.0 / 2854.5 * 1000 - 112.0 / 367.5 * 1000);
    cp_predictor_free(&pr);
    cp_topo_free(t);
    cp_model_free(m);
}

/* Published (../shared/data/README.md): VGG16, TensorFlow replicated +
 * NCCL, DGX-1 P100, batch 64: 154 img/s on one GPU = 415.6 ms, 1081 img/s
 * on eight = 473.6 ms.  That run all-reduced after backward, as
 * MirroredStrategy does (eq. P11); the model, by hand:
 *   gradients 138,357,544 x 4 = 553,430,176 B
 *   pack and split, one pass each at 732 GB/s: 2 x 2 x 553430176 / 732e6
 *     = 3.0242 ms
 *   ring all-reduce over the cube-mesh's four NVLink 1 rings (4 x 20 GB/s
 *     x 0.875, docs/model.md): 1.75 x 553430176 / 70e6 = 13.8358 ms, plus
 *     14 steps of latency, under 0.1 ms
 *   iteration 415.6 + 3.0242 + 13.8358 = 432.46 ms (+ < 0.1)
 * 8.7% under the measurement: the gap issue 4 leaves open (docs/model.md,
 * "Against published measurements").  DDP's overlap hides all but 0.1 ms
 * of the all-reduce: 418.7 ms. */
static void test_vgg16_mirrored_p100(void **state)
{
    cp_model *m;
    cp_topo *t;
    cp_predictor pr;
    cp_predict_opts o;
    cp_prediction p, ddp;
    cp_err e;
    (void)state;
    assert_int_equal(cp_model_load("models/vgg16.json", &m, &e), CP_OK);
    assert_int_equal(cp_topo_load("topologies/dgx1-p100.json", &t, &e), CP_OK);
    cp_predict_opts_default(&o);
    o.compute_ms = 64.0 / 154.0 * 1000; /* 415.58 ms */
    assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
    assert_int_equal(cp_predict(&pr, CP_S_AUTO, &o, 0, &ddp, &e), CP_OK);
    cp_predictor_free(&pr);
    o.framework = CP_FW_MIRRORED;
    assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
    assert_near(pr.copy_ms, 4 * 553430176.0 / 732e6, 1e-9);
    assert_int_equal(cp_predict(&pr, CP_S_AUTO, &o, 0, &p, &e), CP_OK);
    assert_between(p.comm_ms, 1.75 * 553430176.0 / 70e6, 1.75 * 553430176.0 / 70e6 + 0.1);
    assert_near(p.exposed_ms, p.comm_ms, 1e-9);
    assert_between(p.iteration_ms, 64.0 / 154.0 * 1000 + 3.0242 + 13.8358,
                      64.0 / 154.0 * 1000 + 3.0242 + 13.8358 + 0.1);
    assert_between(ddp.iteration_ms, 64.0 / 154.0 * 1000 + 3.0242,
                      64.0 / 154.0 * 1000 + 3.0242 + 0.2);
    cp_predictor_free(&pr);
    cp_topo_free(t);
    cp_model_free(m);
}

/* Horovod: two tensors ready together fuse into one buffer below the
 * threshold, and are split into two above it. */
static void test_horovod_fusion(void **state)
{
    static const int64_t numel[] = {MIB, MIB};
    static const double flops[] = {0, 1}; /* layer 0 costs nothing: both ready together */
    cp_model *m = make_model(numel, flops, 2);
    cp_topo *t;
    cp_predictor pr;
    cp_predict_opts o;
    cp_prediction p;
    cp_err e;
    (void)state;
    assert_int_equal(cp_topo_load("topologies/dgx1-v100.json", &t, &e), CP_OK);
    cp_predict_opts_default(&o);
    o.framework = CP_FW_HOROVOD;
    o.compute_ms = 20;
    assert_int_equal(cp_predictor_init(&pr, m, t, &o, &e), CP_OK);
    /* 4 MiB + 4 MiB = 8 MiB <= 64 MiB: one fused buffer */
    assert_int_equal(cp_predict(&pr, CP_S_RING, &o, 1, &p, &e), CP_OK);
    assert_int_equal(p.nruns, 1);
    assert_near(p.runs[0].bytes, 8.0 * MIB, 0);
    assert_int_equal(p.runs[0].ntensors, 2);
    /* eq. P7: the fused buffer is copied in and out at the V100's 900 GB/s,
     * 4 x 8388608 B / 900e6 B/ms = 0.0372827022 ms on top of the all-reduce */
    assert_near(p.comm_ms - cp_coll_time_us(&pr.coll, CP_OP_ALLREDUCE, CP_ALG_RING,
                                            8.0 * MIB) / 1e3, 0.0372827022, 1e-9);
    /* the buffer starts on a cycle boundary: ready at 20 ms, cycles of 5 ms */
    assert_near(p.runs[0].start_ms, 20.0, 1e-9);
    cp_prediction_free(&p);
    o.fusion_mb = 6; /* 4 + 4 > 6: two buffers */
    assert_int_equal(cp_predict(&pr, CP_S_RING, &o, 1, &p, &e), CP_OK);
    assert_int_equal(p.nruns, 2);
    /* both issued on the cycle at 20 ms, when both are ready: no wait for a
     * cycle; each lone tensor is scaled in place (one pass, 2 x 4194304 B /
     * 900e6 B/ms); the second's wait behind the first is queueing, not
     * communication */
    assert_near(p.runs[1].start_ms, p.runs[0].finish_ms, 1e-9);
    assert_near(p.comm_ms, 2 * (cp_coll_time_us(&pr.coll, CP_OP_ALLREDUCE, CP_ALG_RING,
                                                 4.0 * MIB) / 1e3 + 2 * 4194304.0 / 900e6),
                1e-9);
    cp_prediction_free(&p);
    cp_predictor_free(&pr);
    cp_topo_free(t);
    cp_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compute_split),   cmocka_unit_test(test_ddp_buckets),
        cmocka_unit_test(test_timeline_by_hand),
        cmocka_unit_test(test_protocols_by_hand), cmocka_unit_test(test_invariants),
        cmocka_unit_test(test_one_gpu),         cmocka_unit_test(test_resnet50_dgx1),
        cmocka_unit_test(test_horovod_fusion),  cmocka_unit_test(test_copies_by_hand),
        cmocka_unit_test(test_vgg16_mirrored_p100),
        cmocka_unit_test(test_compress_hook_by_hand), cmocka_unit_test(test_mirrored_by_hand),
        cmocka_unit_test(test_activations_by_hand), cmocka_unit_test(test_activations_bert_large),
        cmocka_unit_test(test_accumulation_by_hand), cmocka_unit_test(test_zero2_by_hand),
        cmocka_unit_test(test_batch_scale_by_hand),
        cmocka_unit_test(test_zero1_by_hand), cmocka_unit_test(test_offload_by_hand),
        cmocka_unit_test(test_offload_one_gpu_by_hand),
        cmocka_unit_test(test_fsdp_by_hand),
        cmocka_unit_test(test_fsdp_grad_op_by_hand),
        cmocka_unit_test(test_sharded_accumulation_by_hand),
        cmocka_unit_test(test_zero3_by_hand),
        cmocka_unit_test(test_model_states_by_hand),
        cmocka_unit_test(test_model_states_zero_paper),
        cmocka_unit_test(test_fsdp_hybrid_by_hand),
        cmocka_unit_test(test_fsdp_wrap_by_hand),    cmocka_unit_test(test_compute_estimate_by_hand),
        cmocka_unit_test(test_scale_kind_by_hand), cmocka_unit_test(test_stragglers_by_hand),
    };
    return cmocka_run_group_tests_name("predict", tests, NULL, NULL);
}
