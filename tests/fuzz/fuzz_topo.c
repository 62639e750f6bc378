/*
 * fuzz_topo.c - libFuzzer target: topology JSON (cp_jdoc_load_text +
 * cp_topo_load_doc), and the collective model built on what loads.
 *
 * After a successful load the topology's invariants are checked (endpoints
 * exist and differ, bandwidths and latencies within the loader's bounds,
 * every GPU reaches every other, calibration in range), the `info -t`
 * printers run into /dev/null (they compute every GPU's widest routes),
 * the topology is cloned and, when it is one host with a NIC, replicated
 * over two hosts.  Small inputs then get the collective model
 * (cp_coll_build) on one host and on two, and every predicted time must
 * be a finite non-negative number.
 *
 * The collective build searches rings and solves packing LPs: about a
 * second on an 8-GPU NVSwitch machine under the sanitizers.  It runs only
 * on inputs of at most COLL_MAX_BYTES with at most COLL_MAX_GPUS GPUs per
 * host, so that the fuzzer keeps its speed on the loader.  Those inputs also
 * get `predict` with a small model (every strategy and framework, compute estimated from
 * the GPUs' tflops when they have them): every available prediction must be
 * finite.
 */
#include <jansson.h>
#include <math.h>

#include "cli/summary.h"
#include "cost/collective.h"
#include "fuzz.h"
#include "load/load.h"
#include "predict/predict.h"

#define COLL_MAX_BYTES 8192
#define COLL_MAX_GPUS 8

static void check_topo(const cp_topo *t)
{
    int i, k, peer, via;
    FUZZ_REQUIRE(t->name && t->ngpus >= 1 && t->ngpus <= CP_MAX_GPUS);
    FUZZ_REQUIRE(t->nnodes >= t->ngpus && t->nnodes <= CP_MAX_NODES);
    FUZZ_REQUIRE(t->nlinks >= 0 && t->nlinks <= CP_MAX_LINKS);
    FUZZ_REQUIRE(t->nhosts >= 1);
    FUZZ_REQUIRE(t->fabric_reduce_gbs == 0 || (t->fabric_reduce_gbs >= 1e-3 && t->fabric_reduce_gbs <= 1e5));
    FUZZ_REQUIRE(t->fabric_taper == 0 || (t->fabric_taper >= 1 && t->fabric_taper <= 64));
    for (i = 0; i < t->nnodes; i++) {
        const cp_node *n = &t->nodes[i];
        FUZZ_REQUIRE(n->id && n->id[0]);
        FUZZ_REQUIRE((unsigned)n->kind < CP_NODE_KINDS);
        FUZZ_REQUIRE(n->reduce_gbs >= 0 && n->net_gbs >= 0 && n->net_lat_us >= 0);
        FUZZ_REQUIRE(n->reduce_gbs <= 1e5 && n->mem_gbs <= 1e5 && n->net_gbs <= 1e5);
        FUZZ_REQUIRE(n->net_lat_us <= 1e6 && n->capacity_gb <= 1e9);
        FUZZ_REQUIRE((n->kind == CP_NIC) == (n->net_gbs > 0));
    }
    for (i = 0; i < t->nlinks; i++) {
        const cp_link *l = &t->links[i];
        FUZZ_REQUIRE(l->a >= 0 && l->a < t->nnodes && l->b >= 0 && l->b < t->nnodes);
        FUZZ_REQUIRE(l->a != l->b && (unsigned)l->kind < CP_LINK_KINDS);
        for (k = 0; k < 2; k++)
            FUZZ_REQUIRE(l->gbs[k] > 0 && l->gbs[k] <= 1e5);
        FUZZ_REQUIRE(l->lat_us > 0 && l->lat_us <= 1e6);
    }
    for (i = 0; i < t->nnodes; i++)
        FUZZ_REQUIRE(t->adj_off[i] <= t->adj_off[i + 1]);
    FUZZ_REQUIRE(t->adj_off[t->nnodes] == 2 * t->nlinks);
    for (k = 0; k < CP_LINK_KINDS; k++) {
        FUZZ_REQUIRE(t->calib.kind[k].bw_eff > 0 && t->calib.kind[k].bw_eff <= 1);
        FUZZ_REQUIRE(t->calib.kind[k].step_us >= 0 && isfinite(t->calib.kind[k].step_us));
        FUZZ_REQUIRE(t->calib.kind[k].simple_us >= 0 &&
                     t->calib.kind[k].simple_us <= CP_MAX_STEP_US);
    }
    FUZZ_REQUIRE(t->calib.launch_us >= 0 && isfinite(t->calib.launch_us));
    FUZZ_REQUIRE(cp_topo_unreachable_gpu(t, &peer, &via) == -1);
}

static void print_topo(const cp_topo *t)
{
    cp_err e;
    char *s;
    json_t *j = cli_topo_json(t);
    FUZZ_REQUIRE(j != NULL);
    s = json_dumps(j, JSON_REAL_PRECISION(12));
    FUZZ_REQUIRE(s != NULL);
    free(s);
    json_decref(j);
    cli_summary_topo(t, fuzz_sink());
    cp_err_clear(&e);
    fuzz_check_status(cli_info_topo(t, fuzz_sink(), &e), &e);
}

/* Every predicted time is a finite number >= 0, or negative for "not
 * available"; the tuner's pick must be available. */
static void collective(const cp_topo *t)
{
    static const double sizes[] = {8, 65536, 1 << 20, 1 << 30};
    cp_coll c;
    cp_err e;
    int op, alg, s, rc;
    cp_err_clear(&e);
    rc = cp_coll_build(t, 1, &c, &e);
    fuzz_check_status(rc, &e);
    if (rc)
        return;
    for (op = 0; op < CP_OPS; op++) {
        for (s = 0; s < 4; s++) {
            double us = -1;
            for (alg = 0; alg < CP_ALGS; alg++) {
                double x = cp_coll_time_us(&c, (cp_coll_op)op, (cp_coll_alg)alg, sizes[s]);
                FUZZ_REQUIRE(!isnan(x) && x < INFINITY);
            }
            alg = (int)cp_coll_best(&c, (cp_coll_op)op, sizes[s], &us);
            FUZZ_REQUIRE((unsigned)alg < CP_ALGS);
            FUZZ_REQUIRE(isfinite(us) && us >= 0);
        }
    }
    cp_coll_free(&c);
}

/* Three layers with FLOPs and a batch, so that compute can be estimated
 * from tflops; buckets of several sizes. */
static const char small_model[] =
    "{\"name\": \"fuzz-mlp\", \"dtype\": \"fp32\", \"compute\": {\"batch\": 8},"
    " \"layers\": [{\"flops\": 2e9}, {\"flops\": 6e10}, {\"flops\": 2e4}],"
    " \"tensors\": [{\"name\": \"a\", \"numel\": 1000000, \"layer\": 0},"
    " {\"name\": \"b\", \"numel\": 30000000, \"layer\": 1},"
    " {\"name\": \"c\", \"numel\": 10, \"layer\": 2}]}";

static const cp_model *fuzz_model(void)
{
    static cp_model *m;
    cp_jdoc d;
    cp_err e;
    if (m)
        return m;
    FUZZ_REQUIRE(cp_jdoc_load_text(&d, "fuzz-mlp", small_model, sizeof small_model - 1,
                                   &e) == CP_OK);
    FUZZ_REQUIRE(cp_model_load_doc(&d, &m, &e) == CP_OK);
    cp_jdoc_free(&d);
    return m;
}

/* Every strategy under one framework: finite times, and the invariants
 * every framework keeps (iteration >= compute, exposed <= comm). */
static void predict_fw(const cp_topo *t, cp_framework fw)
{
    const cp_model *m = fuzz_model();
    cp_predict_opts o;
    cp_predictor p;
    cp_err e;
    int s, rc;
    cp_predict_opts_default(&o);
    o.framework = fw;
    /* estimated from tflops when the GPUs have them, else "measured" */
    o.compute_ms = t->nodes[t->gpus[0]].tflops > 0 ? 0 : 50;
    cp_err_clear(&e);
    rc = cp_predictor_init(&p, m, t, &o, &e);
    fuzz_check_status(rc, &e);
    if (rc)
        return;
    for (s = 0; s < CP_STRATEGIES; s++) {
        cp_prediction out;
        memset(&out, 0, sizeof out);
        cp_err_clear(&e);
        rc = cp_predict(&p, (cp_strategy)s, &o, 1, &out, &e);
        fuzz_check_status(rc, &e);
        if (rc == CP_OK && out.available) {
            FUZZ_REQUIRE(isfinite(out.iteration_ms) && out.iteration_ms >= 0);
            FUZZ_REQUIRE(isfinite(out.compute_ms) && out.compute_ms >= 0);
            FUZZ_REQUIRE(isfinite(out.comm_ms) && out.comm_ms >= 0);
            FUZZ_REQUIRE(isfinite(out.exposed_ms));
            FUZZ_REQUIRE(out.iteration_ms >= out.compute_ms * (1 - 1e-9) - 1e-9);
            FUZZ_REQUIRE(out.exposed_ms <= out.comm_ms * (1 + 1e-9) + 1e-9);
        }
        cp_prediction_free(&out);
    }
    cp_predictor_free(&p);
}

static void predict(const cp_topo *t)
{
    int fw;
    for (fw = CP_FW_DDP; fw <= CP_FW_FSDP; fw++)
        predict_fw(t, (cp_framework)fw);
}

static void use_topo(const cp_topo *t, size_t size)
{
    int small = size <= COLL_MAX_BYTES && t->ngpus <= COLL_MAX_GPUS;
    cp_topo *copy = cp_topo_clone(t), *two = NULL;
    cp_err e;
    FUZZ_REQUIRE(copy != NULL);
    FUZZ_REQUIRE(copy->nnodes == t->nnodes && copy->nlinks == t->nlinks);
    check_topo(copy);
    cp_topo_free(copy);
    print_topo(t);
    if (small) {
        collective(t);
        predict(t);
    }
    if (t->nhosts != 1 || cp_topo_count(t, CP_NIC) == 0)
        return;
    cp_err_clear(&e);
    fuzz_check_status(cp_topo_replicate(t, 2, &two, &e), &e);
    if (!two)
        return;
    FUZZ_REQUIRE(two->ngpus == 2 * t->ngpus && two->nhosts == 2);
    check_topo(two);
    if (small)
        collective(two);
    cp_topo_free(two);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cp_jdoc d;
    cp_topo *t = NULL;
    cp_err e;
    int rc;

    cp_err_clear(&e);
    rc = cp_jdoc_load_text(&d, "fuzz-topo.json", (const char *)data, size, &e);
    if (rc == CP_OK) {
        (void)cp_detect_kind(&d);
        rc = cp_topo_load_doc(&d, &t, &e);
        FUZZ_REQUIRE((rc == CP_OK) == (t != NULL));
    }
    fuzz_check_status(rc, &e);
    if (t) {
        check_topo(t);
        use_topo(t, size);
        cp_topo_free(t);
    }
    cp_jdoc_free(&d);
    return 0;
}
