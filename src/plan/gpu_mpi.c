/*
 * gpu_mpi.c - the planner's GPU-side family as the COARSE paper ran it:
 * MPI AllReduce staged through host memory (cost/mpi.h) instead of NCCL's
 * (plan --gpu-collective mpi, strategy coarse-mpi; docs/planner.md).
 *
 * The family keeps its place (CP_FAM_ALLREDUCE) so plans, the simulator and
 * the LP need no new kind; what changes is its time (cp_mpi_allreduce_us)
 * and its footprint: every GPU's bytes go up its PCIe path to its nearest
 * CPU socket and come back down, which is what the proxies and the
 * parameter server compete with on PCIe machines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths/route.h"
#include "plan/families.h"

int cp_gpu_collective_parse(const char *name, int *gpu_mpi)
{
    if (strcmp(name, "nccl") != 0 && strcmp(name, "mpi") != 0)
        return -1;
    *gpu_mpi = strcmp(name, "mpi") == 0;
    return 0;
}

/* The route from GPU g to the socket of its host that it reaches widest,
 * then nearest (the one its rank is bound next to), as cp_mpi places
 * ranks; 0 when there is none. */
static int socket_route(const cp_topo *t, int g, int up, cp_route *out, int *sock)
{
    int k, found = 0;
    for (k = 0; k < t->nnodes; k++) {
        cp_route r;
        cp_err tmp;
        if (t->nodes[k].kind != CP_CPU || t->nodes[k].host != t->nodes[g].host ||
            t->nodes[k].reduce_gbs <= 0)
            continue;
        if ((up ? cp_route_find(t, g, k, NULL, &r, &tmp) : cp_route_find(t, k, g, NULL, &r, &tmp)) ==
                CP_OK &&
            r.gbs > 0 &&
            (!found || r.gbs > out->gbs * (1 + 1e-9) ||
             (r.gbs > out->gbs * (1 - 1e-9) && cp_route_hop_us(&r) < cp_route_hop_us(out)))) {
            *out = r;
            *sock = k;
            found = 1;
        }
    }
    return found;
}

/* Add the MPI family's footprint of the GPUs of host `host` (-1: every GPU)
 * to load (arcs, then nodes): each byte up the GPU's path to its socket and
 * back down, and (n-1)/n of it summed in that socket's memory. */
static void add_mpi_loads(const cp_topo *t, const cp_mpi *m, int host, double *load)
{
    int i, up;
    for (i = 0; i < t->ngpus; i++)
        for (up = 0; up < 2; up++) {
            cp_route r;
            int sock;
            if ((host >= 0 && t->nodes[t->gpus[i]].host != host) ||
                !socket_route(t, t->gpus[i], up, &r, &sock))
                continue;
            cp_route_add_load(&r, 1.0, load); /* one byte each way per byte */
            if (up) /* every rank sums (n-1)/n of the buffer in its socket's memory */
                load[2 * t->nlinks + sock] += (m->per_host - 1.0) / m->per_host;
        }
}

/* The same footprint on a machine of H > 2 identical hosts
 * (cp_topo_replicate), by symmetry, as the ps family's: host 0's loads in a
 * two-host window, copied to every host's links and sockets (replicas lay
 * out shared nodes first, then H blocks of P nodes, and H blocks of the
 * same links).  Routing every GPU of the machine took 66 s at --hosts 1024
 * (8,192 GPUs, one search of the whole graph each).  1 done, 0 not a
 * host-major replica (the caller routes every GPU), -1 out of memory. */
static int mpi_loads_symmetric(const cp_topo *t, const cp_mpi *m, double *load, cp_err *e)
{
    cp_topo *w = NULL;
    double *wl;
    int k, c, H = t->rep_hosts, L, P, shared;
    if (H <= 2 || !t->rep_base)
        return 0;
    if (cp_topo_replicate(t->rep_base, 2, &w, e))
        return -1;
    L = w->nlinks / 2;
    P = (t->nnodes - w->nnodes) / (H - 2);
    shared = w->nnodes - 2 * P;
    if (t->nlinks != L * H || shared < 0 || t->nnodes != shared + H * P) {
        cp_topo_free(w);
        return 0;
    }
    if (!(wl = calloc((size_t)CP_NRES(w) + 1, sizeof *wl))) {
        cp_topo_free(w);
        return -1;
    }
    add_mpi_loads(w, m, 0, wl);
    for (k = 0; k < 2 * t->nlinks; k++) /* arc 2l+d of host h = arc 2(l mod L)+d of host 0 */
        load[k] = wl[2 * ((k >> 1) % L) + (k & 1)];
    for (c = shared; c < t->nnodes; c++) /* node shared+hP+j = node shared+j of host 0 */
        load[2 * t->nlinks + c] = wl[2 * w->nlinks + shared + (c - shared) % P];
    free(wl);
    cp_topo_free(w);
    return 1;
}

int cp_families_use_mpi(cp_families *fs, cp_err *e)
{
    const cp_topo *t = fs->topo;
    const cp_mpi *m = &fs->coll->mpi;
    cp_family *f = &fs->f[CP_FAM_ALLREDUCE];
    double *load, big = 1e9;
    int i;
    fs->gpu_mpi = 1;
    cp_pattern_free(&f->load);
    memset(&f->load, 0, sizeof f->load);
    f->available = m->available;
    if (!m->available) {
        snprintf(f->why_not, sizeof f->why_not, "%s", m->why_not);
        cp_families_regroup(fs);
        return CP_OK;
    }
    if (!(load = calloc((size_t)CP_NRES(t) + 1, sizeof *load)))
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    i = mpi_loads_symmetric(t, m, load, e);
    if (i < 0) {
        free(load);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    if (i == 0)
        add_mpi_loads(t, m, -1, load);
    /* bucket bytes per second of a large bucket, latency aside */
    f->gbs = big / ((cp_mpi_allreduce_us(m, big) - cp_mpi_allreduce_us(m, 0)) * 1e3);
    f->lat_us = cp_mpi_allreduce_us(m, 0);
    i = cp_pattern_from_res(t, load, CP_NRES(t), NULL, 0, 0, &f->load);
    free(load);
    if (i)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    cp_families_regroup(fs);
    return CP_OK;
}
