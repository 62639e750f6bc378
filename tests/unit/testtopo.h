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

/* One host of `gpus` GPUs (1 or 2), two joined by a 50 GB/s NVLink, each
 * on PCIe switch "sw" by its own 12 GB/s link; every hop 1 us; not indexed
 * yet (the callers add what hangs off the switch).  *sw: the switch. */
static inline cp_topo *test_gpus_on_switch(const char *name, int gpus, int *sw)
{
    cp_topo *t = cp_topo_new(name);
    int g[2], i;
    char id[16];
    for (i = 0; i < gpus; i++) {
        snprintf(id, sizeof id, "g%d", i);
        g[i] = cp_topo_add_node(t, id, CP_GPU, 0);
    }
    *sw = cp_topo_add_node(t, "sw", CP_PCIE_SWITCH, 0);
    if (gpus == 2)
        cp_topo_add_link(t, g[0], g[1], CP_NVLINK, 50, 0, 1.0);
    for (i = 0; i < gpus; i++)
        cp_topo_add_link(t, g[i], *sw, CP_PCIE, 12, 0, 1.0);
    return t;
}

/* One host of two GPUs joined by one 50 GB/s NVLink, both on a PCIe switch
 * (12 GB/s) with one NIC (PCIe 12, network 10 GB/s, 2 us NIC to NIC); every
 * bus hop 1 us; indexed, uncalibrated.  Replicated over hosts, it is the
 * smallest machine with a hierarchical AllReduce worked by hand
 * (test_collective.c): in-host phases 1 + 0.5 S / 50e3 us, the ring of peers
 * over two hosts 12 + 0.5 S / 5e3 us. */
static inline cp_topo *test_nvlink_pair_nic(void)
{
    int sw, nic;
    cp_err e;
    cp_topo *one = test_gpus_on_switch("pair", 2, &sw);
    nic = cp_topo_add_node(one, "nic", CP_NIC, 0);
    one->nodes[nic].net_gbs = 10;
    one->nodes[nic].net_lat_us = 2;
    cp_topo_add_link(one, nic, sw, CP_PCIE, 12, 0, 1.0);
    assert_int_equal(cp_topo_index(one, &e), CP_OK);
    return one;
}

/* test_nvlink_pair_nic replicated over `hosts` hosts (--hosts). */
static inline cp_topo *test_pair_nic_hosts(int hosts)
{
    cp_topo *one = test_nvlink_pair_nic(), *many = NULL;
    cp_err e;
    assert_int_equal(cp_topo_replicate(one, hosts, &many, &e), CP_OK);
    cp_topo_free(one);
    return many;
}

/* The same `gpus` GPUs (1 or 2) on their switch, the switch on CPU socket
 * cpu0 by one 16 GB/s uplink; cpu0 sums at 10 GB/s (reduce_gbs), so it
 * streams 30 GB/s of memory.  Indexed, uncalibrated.  Two GPUs copying to
 * the socket at once share the uplink: 8 GB/s each, 2 us away; one alone
 * copies at its own link's 12 GB/s (test_predict.c, offload). */
static inline cp_topo *test_pair_host(int gpus)
{
    int sw, cpu;
    cp_err e;
    cp_topo *t = test_gpus_on_switch("pair-host", gpus, &sw);
    cpu = cp_topo_add_node(t, "cpu0", CP_CPU, 0);
    t->nodes[cpu].reduce_gbs = 10;
    cp_topo_add_link(t, sw, cpu, CP_PCIE, 16, 0, 1.0);
    assert_int_equal(cp_topo_index(t, &e), CP_OK);
    return t;
}

#endif
