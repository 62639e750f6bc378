/*
 * testtopo.h - small machines several suites work by hand.  Include after
 * testutil.h (it uses cmocka's assertions).
 */
#ifndef CP_TESTTOPO_H
#define CP_TESTTOPO_H

#include "topo/topo.h"

/* Four GPUs g0 - g1 - g2 - g3 - g0 joined by NVLink of `gbs` GB/s per
 * direction, the last link (g3 - g0) of `last_gbs`, 1 us each; indexed,
 * uncalibrated (bw_eff 1, step 0, launch 0). */
static inline cp_topo *test_nvlink_square(double gbs, double last_gbs)
{
    cp_topo *t = cp_topo_new("square");
    cp_err e;
    int g[4], i;
    char id[16];
    for (i = 0; i < 4; i++) {
        snprintf(id, sizeof id, "g%d", i);
        g[i] = cp_topo_add_node(t, id, CP_GPU, 0);
    }
    for (i = 0; i < 4; i++)
        cp_topo_add_link(t, g[i], g[(i + 1) % 4], CP_NVLINK, i == 3 ? last_gbs : gbs, 0, 1.0);
    assert_int_equal(cp_topo_index(t, &e), CP_OK);
    return t;
}

#endif
