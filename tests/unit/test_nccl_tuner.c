/*
 * test_nccl_tuner.c - the NCCL tuner rules (src/out/nccl_tuner.c) read back
 * line by line against the example plugin's format
 * (../shared/data/nccl-tests/NOTES.md): '#' comments, lines of at most 256
 * characters, eight comma-separated fields, known collective, algorithm
 * and protocol names, an explicit channel count (never -1), the machine's
 * nNodes and nRanks, and per collective inclusive ranges that tile
 * 0 .. 2^64 - 1 with no gap and no overlap.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include "load/load.h"
#include "out/nccl_tuner.h"

typedef struct parsed {
    int rules, ops;          /* rules read, collectives seen */
    int ring, nvls, tree;    /* rules naming each algorithm */
    char first_proto[8], last_proto[8]; /* of allreduce's first and last range */
    int min_nvls_channels;   /* fewest channels of an nvls rule (0: none) */
} parsed;

static int one_of(const char *s, const char *const *names)
{
    for (; *names; names++)
        if (strcmp(s, *names) == 0)
            return 1;
    return 0;
}

/* A decimal uint64 without sign or spaces. */
static uint64_t u64(const char *s)
{
    char *end;
    unsigned long long v;
    if (!*s || *s < '0' || *s > '9')
        fail_msg("'%s' is not a byte count", s);
    v = strtoull(s, &end, 10);
    if (*end)
        fail_msg("'%s' is not a byte count", s);
    return (uint64_t)v;
}

/* Check one rule line against the format and the ranges so far. */
static void check_rule(char *line, int nodes, int ranks, char *prev_op, uint64_t *next_min,
                       parsed *out)
{
    static const char *const colls[] = {"broadcast", "reduce", "allgather", "reducescatter",
                                        "allreduce", NULL};
    static const char *const algs[] = {"tree", "ring", "collnet_direct", "collnet_chain",
                                       "nvls", "nvls_tree", "pat", NULL};
    static const char *const protos[] = {"ll", "ll128", "simple", NULL};
    char *f[9], *save = NULL, *tok;
    int n = 0, ch;
    uint64_t lo, hi;
    for (tok = strtok_r(line, ",", &save); tok && n < 9; tok = strtok_r(NULL, ",", &save))
        f[n++] = tok;
    if (n != 8)
        fail_msg("%d fields, expected 8", n);
    assert_true(one_of(f[0], colls));
    assert_true(one_of(f[3], algs));
    assert_true(one_of(f[4], protos));
    lo = u64(f[1]);
    hi = u64(f[2]);
    ch = atoi(f[5]);
    assert_true(ch >= 1); /* explicit: -1 would leave the example on one channel */
    assert_int_equal(atoi(f[6]), nodes);
    assert_int_equal(atoi(f[7]), ranks);
    assert_true(lo <= hi);
    if (strcmp(f[0], prev_op) != 0) {
        /* a new collective: the previous one ended at 2^64 - 1 */
        assert_true(prev_op[0] == 0 || *next_min == 0);
        snprintf(prev_op, 16, "%s", f[0]);
        assert_true(lo == 0);
        out->ops++;
        if (strcmp(f[0], "allreduce") == 0)
            snprintf(out->first_proto, sizeof out->first_proto, "%s", f[4]);
    } else {
        assert_true(lo == *next_min); /* no gap, no overlap */
    }
    if (strcmp(f[0], "allreduce") == 0)
        snprintf(out->last_proto, sizeof out->last_proto, "%s", f[4]);
    *next_min = hi + 1; /* wraps to 0 after 2^64 - 1 */
    out->ring += strcmp(f[3], "ring") == 0;
    out->tree += strcmp(f[3], "tree") == 0;
    if (strcmp(f[3], "nvls") == 0 || strcmp(f[3], "nvls_tree") == 0) {
        out->nvls++;
        if (out->min_nvls_channels == 0 || ch < out->min_nvls_channels)
            out->min_nvls_channels = ch;
    }
    out->rules++;
}

/* Write the rules of `topo` on `hosts` hosts and read every line back. */
static void write_and_parse(const char *topo, int hosts, int nodes, int ranks, parsed *out)
{
    cp_topo *t;
    cp_coll c;
    cp_err e;
    char *path = write_temp("stale content the writer must replace\n"), line[512];
    char prev_op[16] = "";
    uint64_t next_min = 0;
    int n = 0, comments = 0;
    FILE *f;
    memset(out, 0, sizeof *out);
    assert_int_equal(hosts > 1 ? cp_topo_load_hosts(topo, hosts, &t, &e) : cp_topo_load(topo, &t, &e),
                     CP_OK);
    assert_int_equal(cp_coll_build(t, 1, &c, &e), CP_OK);
    assert_int_equal(cp_tuner_write(&c, path, &n, &e), CP_OK);
    f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        assert_true(len > 0 && line[len - 1] == '\n');
        assert_true(len - 1 <= 256); /* the example's line limit */
        line[len - 1] = 0;
        if (line[0] == '#') {
            comments++;
            continue;
        }
        assert_true(line[0] != 0);
        check_rule(line, nodes, ranks, prev_op, &next_min, out);
    }
    fclose(f);
    assert_int_equal(next_min, 0); /* the last range ended at 2^64 - 1 */
    assert_int_equal(out->rules, n);
    assert_true(comments >= 3); /* the header: tool, topology, calibration */
    cp_coll_free(&c);
    cp_topo_free(t);
    drop_temp(path);
}

/* DGX-1 V100, one host: no NVSwitch (no NVLS), no reducing network (no
 * CollNet), and NCCL runs no tree inside one node, so ring is the only
 * algorithm; the four collectives the model covers each tile the sizes.
 * Protocols by hand: the calibration gives Simple 3.04 us more per NVLink
 * step (topologies/dgx1-v100.json), so a tiny buffer goes LL; LL carries 4
 * data bytes per 8 on the wire, half the bandwidth, so 2^63 bytes go
 * Simple. */
static void test_dgx1_rules(void **state)
{
    parsed p;
    (void)state;
    write_and_parse("topologies/dgx1-v100.json", 1, 1, 8, &p);
    assert_int_equal(p.ops, 4);
    assert_int_equal(p.ring, p.rules);
    assert_string_equal(p.first_proto, "ll");
    assert_string_equal(p.last_proto, "simple");
}

/* Two DGX-1 hosts: nNodes 2, nRanks 16 on every line. */
static void test_two_hosts(void **state)
{
    parsed p;
    (void)state;
    write_and_parse("topologies/dgx1-v100.json", 2, 2, 16, &p);
    assert_int_equal(p.ops, 4);
}

/* HGX H100 (NVSwitch with NVLS): AllReduce goes nvls, whose NCCL bandwidth
 * model skips NVLS under two channels (TUNING-FACTS.md A4 step 2), so its
 * rules need at least 2. */
static void test_h100_nvls(void **state)
{
    parsed p;
    (void)state;
    write_and_parse("topologies/hgx-h100.json", 1, 1, 8, &p);
    assert_true(p.nvls > 0);
    assert_true(p.min_nvls_channels >= 2);
}

/* Atomic: an unwritable destination leaves nothing behind and fails. */
static void test_atomic_failure(void **state)
{
    cp_topo *t;
    cp_coll c;
    cp_err e;
    (void)state;
    assert_int_equal(cp_topo_load("topologies/dgx1-v100.json", &t, &e), CP_OK);
    assert_int_equal(cp_coll_build(t, 1, &c, &e), CP_OK);
    assert_int_not_equal(cp_tuner_write(&c, "/nonexistent-cp-dir/tuner.conf", NULL, &e), CP_OK);
    assert_int_not_equal(access("/nonexistent-cp-dir/tuner.conf", F_OK), 0);
    cp_coll_free(&c);
    cp_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dgx1_rules),
        cmocka_unit_test(test_two_hosts),
        cmocka_unit_test(test_h100_nvls),
        cmocka_unit_test(test_atomic_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
