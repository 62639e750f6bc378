/*
 * fuzz_nccl.c - libFuzzer target: nccl-tests output tables (cp_nccl_load),
 * and the calibration fit run on what loads.
 *
 * cp_nccl_load reads a path, so each input is written to one anonymous
 * in-memory file (memfd) and read back through /proc/self/fd: nothing is
 * added to src/ for the fuzzer and nothing touches the disk.  A table that
 * loads must have increasing positive sizes and positive times; it is then
 * fitted (cp_calibrate) to a small machine built in memory, two V100s on
 * NVLink with a NIC, alone and replicated over two hosts, and the fitted
 * calibration and predictions must stay finite and in range.
 */
#define _GNU_SOURCE
#include <math.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cost/calibrate.h"
#include "fuzz.h"
#include "load/nccltests.h"

/* Tables longer than this are loaded but not fitted (each fit rebuilds the
 * collective model seven times; the rows only add arithmetic). */
#define FIT_MAX_ROWS 4096

/* gpu0 = gpu1 over NVLink 2 (one brick, 25 GB/s), both on a PCIe switch
 * with a 100 Gb/s NIC. */
static cp_topo *small_machine(void)
{
    cp_topo *t = cp_topo_new("fuzz-pair");
    cp_err e;
    int g0, g1, sw, nic;
    FUZZ_REQUIRE(t != NULL);
    g0 = cp_topo_add_node(t, "gpu0", CP_GPU, 0);
    g1 = cp_topo_add_node(t, "gpu1", CP_GPU, 0);
    sw = cp_topo_add_node(t, "sw0", CP_PCIE_SWITCH, 0);
    nic = cp_topo_add_node(t, "nic0", CP_NIC, 0);
    FUZZ_REQUIRE(g0 >= 0 && g1 >= 0 && sw >= 0 && nic >= 0);
    t->nodes[nic].net_gbs = 12.5;
    t->nodes[nic].net_lat_us = 3;
    FUZZ_REQUIRE(cp_topo_add_link(t, g0, g1, CP_NVLINK, 25, 0, 0.7) >= 0);
    FUZZ_REQUIRE(cp_topo_add_link(t, g0, sw, CP_PCIE, 12, 0, 0.5) >= 0);
    FUZZ_REQUIRE(cp_topo_add_link(t, g1, sw, CP_PCIE, 12, 0, 0.5) >= 0);
    FUZZ_REQUIRE(cp_topo_add_link(t, nic, sw, CP_PCIE, 12, 0, 0.5) >= 0);
    FUZZ_REQUIRE(cp_topo_index(t, &e) == CP_OK);
    t->calib.launch_us = 5;
    return t;
}

static void check_table(const cp_nccl_table *tab)
{
    int i;
    FUZZ_REQUIRE(tab->nrows >= 1 && tab->rows != NULL);
    FUZZ_REQUIRE(tab->gpus_per_thread >= 1 && tab->nthreads >= 1);
    for (i = 0; i < tab->nrows; i++) {
        const cp_nccl_row *r = &tab->rows[i];
        FUZZ_REQUIRE(r->bytes > 0 && r->time_us > 0 && isfinite(r->time_us));
        FUZZ_REQUIRE(r->busbw >= 0 && r->line >= 1);
        FUZZ_REQUIRE(i == 0 || r->bytes > tab->rows[i - 1].bytes);
    }
}

/* Fit the table to `t` (a copy is modified) and check the result. */
static void fit(const cp_topo *t, const cp_nccl_table *tab)
{
    cp_topo *c = cp_topo_clone(t);
    cp_fit f;
    cp_err e;
    int rc, i, k;
    FUZZ_REQUIRE(c != NULL);
    cp_err_clear(&e);
    rc = cp_calibrate(c, tab, CP_OP_ALLREDUCE, -1, &f, &e);
    fuzz_check_status(rc, &e);
    if (rc == CP_OK) {
        for (k = 0; k < CP_LINK_KINDS; k++) {
            FUZZ_REQUIRE(c->calib.kind[k].bw_eff > 0 && c->calib.kind[k].bw_eff <= 1);
            FUZZ_REQUIRE(c->calib.kind[k].step_us >= 0 && isfinite(c->calib.kind[k].step_us));
        }
        for (i = 0; i < tab->nrows; i++)
            FUZZ_REQUIRE(isfinite(f.pred_us[i]) && f.pred_us[i] >= 0);
    }
    cp_fit_free(&f);
    cp_topo_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static cp_topo *one, *two;
    static char path[64];
    cp_nccl_table tab;
    cp_err e;
    int rc;

    if (fd < 0) {
        fd = memfd_create("fuzz-nccl", 0);
        FUZZ_REQUIRE(fd >= 0);
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        one = small_machine();
        FUZZ_REQUIRE(cp_topo_replicate(one, 2, &two, &e) == CP_OK);
    }
    FUZZ_REQUIRE(ftruncate(fd, 0) == 0);
    FUZZ_REQUIRE(size == 0 || pwrite(fd, data, size, 0) == (ssize_t)size);
    cp_err_clear(&e);
    rc = cp_nccl_load(path, &tab, &e);
    fuzz_check_status(rc, &e);
    if (rc == CP_OK) {
        check_table(&tab);
        if (tab.nrows <= FIT_MAX_ROWS) {
            fit(one, &tab);
            fit(two, &tab);
        }
        cp_nccl_free(&tab);
    }
    return 0;
}
