/*
 * nccl_rules.c - NCCL's sizing rules (see nccl_rules.h).  Every constant is
 * NCCL 2.30.7's, from ../shared/data/nccl-tests/TUNING-FACTS.md (section
 * named beside it); the search is reduced to its first successful speed
 * (docs/collectives.md, "Channels per size" says what it leaves out).
 */
#include <math.h>
#include <string.h>

#include "cost/nccl_rules.h"

int cp_nccl_gpu_cc(const char *model)
{
    /* longer names first: "A100" contains "A10", "GH200" "H200" */
    static const struct { const char *part; int cc; } parts[] = {
        {"GB200", 100}, {"B200", 100}, {"GH200", 90}, {"H200", 90}, {"H100", 90},
        {"A100", 80},   {"A30", 80},   {"A10", 86},   {"T4", 75},   {"V100", 70}, {"P100", 60},
    };
    size_t k;
    for (k = 0; model && k < sizeof parts / sizeof *parts; k++)
        if (strstr(model, parts[k].part))
            return parts[k].cc;
    return 0;
}

double cp_nccl_nvlink_unit(int cc)
{
    if (cc >= 100)
        return 40.1 / 50;
    if (cc >= 90)
        return 20.6 / 25;
    if (cc >= 70 || cc == 0)
        return 20.0 / 25;
    return 18.0 / 20; /* P100: NVLink 1, 20 GB/s a brick */
}

/* The first speed of a ladder at or below `cap` (the slowest when none). */
static double first_speed(const double *ladder, int n, double cap)
{
    int k;
    for (k = 0; k < n; k++)
        if (ladder[k] <= cap * (1 + 1e-9))
            return ladder[k];
    return ladder[n - 1];
}

/* Per-channel speeds the search tries (GB/s, TUNING-FACTS A7). */
static const double intra_default[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
static const double intra_sm90[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
static const double intra_sm100[] = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
static const double inter_default[] = {48, 30, 28, 24, 20, 18, 15, 12, 10, 9,
                                       7,  6,  5,  4,  3,  2.4, 1.2, 0.24, 0.12};
static const double inter_sm90[] = {48, 45, 42, 40, 30, 24, 22, 20, 17.5,
                                    15, 12, 6,  3,  2.4, 1.2, 0.24, 0.12};
static const double inter_sm100[] = {96, 86, 80, 48, 45.1, 42, 40, 30, 24, 22,
                                     20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The intra-host speed: the first of the ladder within the widest pair and
 * the GPU's total; PCIe-only hosts run at NCCL's PCI_BW, 12 GB/s (A7). */
static double intra_speed(const cp_nccl_topo *t)
{
    double cap = t->pair_gbs < t->intra_gbs ? t->pair_gbs : t->intra_gbs;
    if (!t->nvlink)
        return 12.0 < cap || cap <= 0 ? 12.0 : cap;
    if (t->cc >= 100)
        return first_speed(intra_sm100, LEN(intra_sm100), cap);
    if (t->cc >= 90)
        return first_speed(intra_sm90, LEN(intra_sm90), cap);
    return first_speed(intra_default, LEN(intra_default), cap);
}

static double inter_speed(const cp_nccl_topo *t)
{
    if (t->cc >= 100)
        return first_speed(inter_sm100, LEN(inter_sm100), t->nic_gbs);
    if (t->cc >= 90)
        return first_speed(inter_sm90, LEN(inter_sm90), t->nic_gbs);
    return first_speed(inter_default, LEN(inter_default), t->nic_gbs);
}

int cp_nccl_search(const cp_nccl_topo *t, int *graph_out, double *speed_out)
{
    double s, total = t->nvlink ? t->intra_gbs : 12.0;
    int graph;
    if (t->hosts > 1 && t->nics > 0 && t->nic_gbs > 0) {
        /* every NIC carries floor(line rate / speed) channels, and a host's
         * GPUs must carry them at that speed */
        s = inter_speed(t);
        graph = t->nics * (int)floor(t->nic_gbs / s + 1e-9);
        if (t->gpus > 1 && total / s < graph)
            graph = (int)floor(total / s + 1e-9);
    } else {
        s = intra_speed(t);
        graph = (int)floor(total / s + 1e-9);
    }
    graph = graph < 1 ? 1 : graph > 32 ? 32 : graph;
    /* ncclTopoDupChannels: doubled (speed halved) unless the speed is under
     * 25, or Ampere+ under 50 with more than 4 channels */
    if (!(s < 25) && !(t->cc > 80 && s < 50 && graph > 4)) {
        graph = graph * 2 > 32 ? 32 : graph * 2;
        s /= 2;
    }
    if (graph_out)
        *graph_out = graph;
    if (speed_out)
        *speed_out = s;
    /* Hopper+ across hosts: doubled again when fast and few (A6) */
    if (t->cc >= 90 && t->hosts > 1 && s > 45 && graph < 16)
        graph *= 2;
    /* tree0/tree1 pairs: comm->nChannels = min(64, 2 nChannels) (A6) */
    return 2 * graph > 64 ? 64 : 2 * graph;
}

int cp_nccl_channels(const cp_nccl_topo *t)
{
    return cp_nccl_search(t, NULL, NULL);
}

/* ------------------------------------------------------------------------ */
/* NCCL's tuner (TUNING-FACTS A1-A5)                                         */

/* Base latencies, us, [tree, ring][LL, Simple, LL128] (A1). */
static const double base_lat[2][3] = {{6.8, 8.4, 14.0}, {6.6, 8.4, 14.0}};
/* hwLatencies [NVLINK, PCI, NET][tree, ring][LL, Simple, LL128] (A1). */
static const double hw_lat[3][2][3] = {
    {{0.6, 4.0, 1.25}, {0.6, 3.4, 1.9}},
    {{1.0, 4.0, 1.9}, {1.0, 5.7, 2.5}},
    {{5.0, 14.0, 8.5}, {2.7, 14.0, 4.0}},
};
/* Per-channel caps, GB/s, [Volta, Ampere, Hopper, Blackwell][N1, N2, N4] (A3). */
static const double ring_ll128_max[4][3] = {
    {20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}};
static const double tree_ll128_max[4][3] = {
    {20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
static const double tree_max[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
/* treeCorrectionFactor [LL, Simple, LL128][log2i(bytes / 64)] (A5). */
static const double tree_corr[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0,
     1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9,
     .9},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0,
     1.0, 1.0},
};

static int log2i(double x)
{
    int k = 0;
    while (x >= 2) {
        x /= 2;
        k++;
    }
    return k;
}

/* NCCL's latency of a ring or tree AllReduce (A2). */
static double tuner_lat(const cp_nccl_topo *t, int alg, int proto)
{
    int N = t->gpus * t->hosts, H = t->hosts, intra = t->nvlink ? 0 : 1;
    double il = hw_lat[intra][alg][proto], nl = hw_lat[2][t->gpus == 1 ? 0 : alg][proto];
    if (alg == 1) { /* ring: 2(N-1) steps, 2(H-1) of them across the network */
        int inter = H > 1 ? 2 * (H - 1) : 0;
        double over = proto == 1 ? 3.0 : 1.0; /* netOverhead 1 us (x86), x3 Simple */
        if (H > 1 && il < over)
            il = over;
        return base_lat[1][proto] + (2 * (N - 1) - inter) * il + inter * nl;
    }
    return base_lat[0][proto] + 2 * ((t->gpus - 1) * il + log2i(H) * nl);
}

/* NCCL's bus bandwidth of a ring or tree AllReduce (A4, steps 1-4). */
static double tuner_busbw(const cp_nccl_topo *t, int alg, int proto, int graph, double s)
{
    int gen = t->cc >= 100 ? 3 : t->cc >= 90 ? 2 : t->cc >= 80 ? 1 : 0;
    int col = t->hosts <= 2 ? t->hosts - 1 : 2;
    double bus = graph * s, cap;
    if (alg == 1) {
        if (proto == 0)
            return fmin(cp_nccl_ll_max_gbs(t->cc, t->hosts), 0.5 * bus);
        return proto == 2 ? fmin(0.92 * bus, graph * ring_ll128_max[gen][col]) : bus;
    }
    bus = fmin(0.92 * bus, graph * tree_max[gen][col]);
    if (proto == 0)
        bus = fmin(bus / 3.8, cp_nccl_ll_max_gbs(t->cc, t->hosts));
    else if (proto == 2)
        bus = fmin(bus * (t->hosts == 1 ? 7.0 / 9 : 120.0 / 128), graph * tree_ll128_max[gen][col]);
    cap = t->cc >= 90 || t->gpus == 1 ? 0.85 : 1; /* pattern TREE: every NIC byte on one GPU */
    return bus * cap;
}

double cp_nccl_tuner_us(const cp_nccl_topo *t, int alg, int proto, double bytes)
{
    int graph, N = t->gpus * t->hosts, idx;
    double s, lat = tuner_lat(t, alg, proto), alg_bw;
    cp_nccl_search(t, &graph, &s);
    alg_bw = tuner_busbw(t, alg, proto, graph, s);
    alg_bw *= alg == 1 ? (double)N / (2 * (N - 1)) : 0.5;
    idx = log2i(bytes / 64);
    if (alg == 0 && bytes >= 64 && idx < 23)
        alg_bw *= tree_corr[proto][idx];
    if (alg == 1 && proto == 1 && t->hosts > 1 && bytes / ((double)2 * graph * N) >= 64)
        lat *= t->cc < 80 ? 1.9 : 1.4; /* ring plateau, comm->nChannels = 2 graph */
    return lat + bytes / (1000 * alg_bw);
}

double cp_nccl_chan_bytes(int proto, int tree, int ranks)
{
    double nt = tree ? 640 : proto == 2 ? 640 : 512;
    double per = proto == 1 ? 64 : 8;
    if (proto == 0 && !tree)
        per *= ranks > 1 ? ranks : 1; /* Ring LL's threshold is x nRanks */
    return nt * per;
}

int cp_nccl_nc(double bytes, double chan_bytes, int nc_max)
{
    int nc = nc_max;
    if (chan_bytes <= 0 || nc < 1)
        return nc < 1 ? 1 : nc;
    if (bytes < nc * chan_bytes)
        nc = (int)floor(bytes / chan_bytes);
    return nc < 1 ? 1 : nc;
}

double cp_nccl_ll_max_gbs(int cc, int hosts)
{
    if (hosts > 2)
        return 20.4;
    if (hosts == 2)
        return 39.0;
    if (cc >= 100)
        return 282.0;
    if (cc >= 90)
        return 141.0;
    if (cc >= 80)
        return 87.7;
    return 39.0;
}

double cp_nccl_ll_channel_gbs(int cc)
{
    return cp_nccl_ll_max_gbs(cc, 1) / (cc >= 80 ? 24 : 12);
}
