/*
 * families.c - route families for the planner (see families.h and
 * docs/planner.md, eqs. Q1-Q4).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/families.h"

static const char *const fam_names[CP_FAMS] = {"allreduce", "proxy-bw", "proxy-lat",
                                               "proxy-ring", "ps", "pool"};

const char *cp_fam_name(cp_fam_kind k)
{
    return (unsigned)k < CP_FAMS ? fam_names[k] : "?";
}

void cp_families_free(cp_families *fs)
{
    int k;
    for (k = 0; k < CP_FAMS; k++) {
        cp_pattern_free(&fs->f[k].load);
        cp_packing_free(&fs->f[k].pk);
        free(fs->f[k].client_dev);
    }
    if (fs->pool) {
        cp_pool_free(fs->pool);
        free(fs->pool);
    }
    memset(fs, 0, sizeof *fs);
}

/* Scratch shared by the builders. */
typedef struct fbuild {
    const cp_topo *t;
    double *load;   /* [CP_NRES] */
    cp_err *e;
} fbuild;

/* Add the route from -> to to the load; its hop latency, or -1. */
static double add_route(fbuild *b, int from, int to, double scale)
{
    return cp_route_load(b->t, from, to, scale, b->load);
}

/* K devices each serving every GPU with `scale` of the bytes (eq. Q1): every
 * GPU pushes to and pulls from each device, and each device sums N inputs.
 * Adds to b->load; *lat_us = the slowest push hop + the slowest pull hop.
 * One widest-route search per device and one per GPU (N + K), not one per
 * route (2 N K), which made the ps footprint of 128 hosts take seconds.
 * 1 when every route exists, 0 when one is missing, -1 out of memory. */
static int devices_load(fbuild *b, const int *dev, int K, double scale, double *lat_us)
{
    const cp_topo *t = b->t;
    double up = 0, down = 0;
    int i, k;
    for (k = 0; k < K; k++) { /* device -> every GPU, and the device's sums */
        cp_reach r;
        if (cp_reach_from(t, dev[k], &r, b->e))
            return -1;
        for (i = 0; i < t->ngpus; i++) {
            cp_route rt;
            cp_err tmp;
            if (cp_route_find(t, dev[k], t->gpus[i], &r, &rt, &tmp) != CP_OK || rt.gbs <= 0) {
                cp_reach_free(&r);
                return 0;
            }
            cp_route_add_load(&rt, scale, b->load);
            if (cp_route_hop_us(&rt) > down)
                down = cp_route_hop_us(&rt);
        }
        cp_reach_free(&r);
        b->load[2 * t->nlinks + dev[k]] += scale * t->ngpus;
    }
    for (i = 0; i < t->ngpus; i++) { /* every GPU -> each device */
        cp_reach r;
        if (cp_reach_from(t, t->gpus[i], &r, b->e))
            return -1;
        for (k = 0; k < K; k++) {
            cp_route rt;
            cp_err tmp;
            if (cp_route_find(t, t->gpus[i], dev[k], &r, &rt, &tmp) != CP_OK || rt.gbs <= 0) {
                cp_reach_free(&r);
                return 0;
            }
            cp_route_add_load(&rt, scale, b->load);
            if (cp_route_hop_us(&rt) > up)
                up = cp_route_hop_us(&rt);
        }
        cp_reach_free(&r);
    }
    *lat_us = up + down;
    return 1;
}

/* One device d serving every GPU: devices_load for K = 1.  Returns the
 * latency, -1 when some GPU cannot reach d, -2 out of memory. */
static double device_load(fbuild *b, int d, double scale)
{
    double lat = 0;
    int rc = devices_load(b, &d, 1, scale, &lat);
    return rc == 1 ? lat : rc == 0 ? -1 : -2;
}

static void clear(fbuild *b)
{
    memset(b->load, 0, (size_t)CP_NRES(b->t) * sizeof *b->load);
}

int cp_device_load(const cp_topo *t, int dev, double *load, double *lat_us)
{
    fbuild b;
    cp_err e;
    double l;
    b.t = t;
    b.e = &e;
    b.load = load;
    clear(&b);
    l = device_load(&b, dev, 1.0);
    if (lat_us)
        *lat_us = l;
    return l < 0 ? -1 : 0;
}

/* Memory devices that can reduce. */
static int memdevs(const cp_topo *t, int *out)
{
    int i, n = 0;
    for (i = 0; i < t->nnodes && n < CP_FAM_MAX_DEV; i++)
        if (t->nodes[i].kind == CP_MEMDEV && t->nodes[i].reduce_gbs > 0)
            out[n++] = i;
    return n;
}

/* proxy-bw and proxy-lat from one pattern per device. */
static int sharded(fbuild *b, const cp_coll *c, cp_families *fs, const int *dev, int nd)
{
    cp_pattern *p = calloc((size_t)nd, sizeof *p);
    cp_family *bw = &fs->f[CP_FAM_PROXY_BW], *lat = &fs->f[CP_FAM_PROXY_LAT];
    double *dlat = calloc((size_t)nd, sizeof *dlat), *rate1 = calloc((size_t)nd, sizeof *rate1);
    int k, best = -1, rc = CP_OK, np = 0;
    if (!p || !dlat || !rate1) {
        rc = cp_fail(b->e, CP_EINTERNAL, "out of memory");
        goto done;
    }
    for (k = 0; k < nd; k++, np++) {
        cp_packing one;
        clear(b);
        dlat[k] = device_load(b, dev[k], 1.0);
        if (dlat[k] < -1) {
            rc = CP_EINTERNAL;
            goto done;
        }
        if (dlat[k] < 0) {
            rc = cp_fail(b->e, CP_EINPUT, "memory device %s cannot be reached from every GPU",
                         b->t->nodes[dev[k]].id);
            goto done;
        }
        dlat[k] += c->launch_us;
        if (cp_pattern_from_res(b->t, b->load, CP_NRES(b->t), NULL, 0, dlat[k], &p[k]) ||
            cp_pack(b->t, &p[k], 1, &one, b->e)) {
            rc = CP_EINTERNAL;
            goto done;
        }
        rate1[k] = one.total;
        cp_packing_free(&one);
        if (best < 0 || dlat[k] < dlat[best] - 1e-9 ||
            (dlat[k] <= dlat[best] + 1e-9 && rate1[k] > rate1[best]))
            best = k;
    }
    /* proxy-bw: the throughput-maximising mix over all devices (LP) */
    if ((rc = cp_pack(b->t, p, nd, &bw->pk, b->e)))
        goto done;
    clear(b);
    bw->gbs = bw->pk.total;
    bw->lat_us = 0;
    for (k = 0; k < nd; k++) {
        double sh = bw->pk.rate[k] / bw->pk.total;
        int q;
        if (sh <= 0)
            continue;
        bw->dev[bw->ndev] = dev[k];
        bw->share[bw->ndev++] = sh;
        for (q = 0; q < p[k].nuse; q++)
            b->load[p[k].arc[q]] += sh * p[k].use[q];
        if (dlat[k] > bw->lat_us)
            bw->lat_us = dlat[k];
    }
    if ((rc = cp_pattern_from_res(b->t, b->load, CP_NRES(b->t), NULL, 0, bw->lat_us, &bw->load)))
        goto done;
    bw->available = 1;
    /* proxy-lat: the single device with the lowest latency */
    lat->gbs = rate1[best];
    lat->lat_us = dlat[best];
    lat->ndev = 1;
    lat->dev[0] = dev[best];
    lat->share[0] = 1;
    if ((rc = cp_pack(b->t, &p[best], 1, &lat->pk, b->e)))
        goto done;
    lat->load = p[best]; /* the device's own pattern becomes the family's */
    memset(&p[best], 0, sizeof p[best]);
    lat->available = 1;
done:
    for (k = 0; k < np; k++)
        cp_pattern_free(&p[k]);
    free(p);
    free(dlat);
    free(rate1);
    return rc;
}

/* The device a GPU pushes to in proxy-ring: lowest route latency, then
 * widest; -2 when a route search ran out of memory (not "no device"). */
static int nearest_device(const cp_topo *t, int g, const int *dev, int nd)
{
    int k, best = -1;
    double bl = 0, bw = 0;
    for (k = 0; k < nd; k++) {
        cp_route r;
        cp_err tmp;
        double l;
        int rc = cp_route_find(t, g, dev[k], NULL, &r, &tmp);
        if (rc == CP_EINTERNAL)
            return -2;
        if (rc != CP_OK)
            continue;
        l = cp_route_hop_us(&r);
        if (best < 0 || l < bl - 1e-9 || (l <= bl + 1e-9 && r.gbs > bw)) {
            best = k;
            bl = l;
            bw = r.gbs;
        }
    }
    return best < 0 ? -1 : dev[best];
}

/* Most devices whose ring order is searched (7! orders at most). */
#define RING_SEARCH_MAX 8

/* The ring perm's slowest route (w[a][b]: route a -> b GB/s); kept in
 * keep when strictly wider than *best. */
static void ring_score(double w[][RING_SEARCH_MAX], const int *perm, int D, double *best,
                       int *keep)
{
    double lo = -1;
    int k;
    for (k = 0; k < D; k++) {
        int a = perm[k], b = perm[(k + 1) % D];
        double x = w[a][b] < w[b][a] ? w[a][b] : w[b][a];
        if (lo < 0 || x < lo)
            lo = x;
    }
    if (lo > *best * (1 + 1e-9)) {
        *best = lo;
        memcpy(keep, perm, (size_t)D * sizeof *perm);
    }
}

/* Order used[0..D) so that the ring's slowest device-to-device route (either
 * direction) is as wide as it can be: devices with NVLinks between them (GPUs
 * emulating memory devices, dgx1-v100-emu) must be neighbours, or the ring
 * crosses the socket link where it need not.  The first order found wins
 * ties, so the order of first use is kept unless another is strictly
 * better.  Every order with used[0] first is tried (D <= RING_SEARCH_MAX). */
static void order_ring(const cp_topo *t, int *used, int D)
{
    double w[RING_SEARCH_MAX][RING_SEARCH_MAX], best = -1;
    int perm[RING_SEARCH_MAX], c[RING_SEARCH_MAX], keep[RING_SEARCH_MAX], i, j;
    if (D < 4 || D > RING_SEARCH_MAX)
        return; /* three or fewer: every order is the same ring */
    for (i = 0; i < D; i++)
        for (j = 0; j < D; j++) {
            cp_route r;
            cp_err tmp;
            w[i][j] = i != j && cp_route_find(t, used[i], used[j], NULL, &r, &tmp) == CP_OK
                          ? r.gbs
                          : 0;
        }
    for (i = 0; i < D; i++) {
        perm[i] = i;
        c[i] = 0;
    }
    ring_score(w, perm, D, &best, keep);
    /* Heap's algorithm over the n = D - 1 positions after the first */
    for (i = 1; i < D - 1;) {
        if (c[i] < i) {
            int x = (i % 2) ? c[i] : 0, tmpv = perm[1 + x];
            perm[1 + x] = perm[1 + i];
            perm[1 + i] = tmpv;
            ring_score(w, perm, D, &best, keep);
            c[i]++;
            i = 1;
        } else {
            c[i] = 0;
            i++;
        }
    }
    for (i = 0; i < D; i++)
        perm[i] = used[keep[i]];
    memcpy(used, perm, (size_t)D * sizeof *used);
}

/* proxy-ring (eq. Q2): nearest device per GPU, devices all-reduce among
 * themselves over two opposite rings, each carrying half. */
static int decentralised(fbuild *b, const cp_coll *c, cp_families *fs, const int *dev, int nd)
{
    const cp_topo *t = b->t;
    cp_family *f = &fs->f[CP_FAM_PROXY_RING];
    int i, k, D = 0, used[CP_FAM_MAX_DEV], clients[CP_FAM_MAX_DEV];
    double up = 0, down = 0, hop = 0, x;
    f->client_dev = malloc((size_t)t->ngpus * sizeof *f->client_dev);
    if (!f->client_dev)
        return cp_fail(b->e, CP_EINTERNAL, "out of memory");
    clear(b);
    memset(clients, 0, sizeof clients);
    for (i = 0; i < t->ngpus; i++) {
        int d = nearest_device(t, t->gpus[i], dev, nd);
        if (d == -2)
            return cp_fail(b->e, CP_EINTERNAL, "out of memory");
        f->client_dev[i] = d;
        for (k = 0; k < D && used[k] != d; k++)
            ;
        if (k == D)
            used[D++] = d;
        clients[k]++;
        if ((x = add_route(b, t->gpus[i], d, 1)) > up)
            up = x;
        if (x == -2 || (x = add_route(b, d, t->gpus[i], 1)) == -2)
            return cp_fail(b->e, CP_EINTERNAL, "out of memory");
        if (x > down)
            down = x;
    }
    if (D < 2) {
        snprintf(f->why_not, sizeof f->why_not, "every GPU's nearest memory device is the same "
                                                "one: proxy-lat covers it");
        return CP_OK;
    }
    {
        int orig[CP_FAM_MAX_DEV], cnt[CP_FAM_MAX_DEV], q;
        memcpy(orig, used, (size_t)D * sizeof *used);
        memcpy(cnt, clients, (size_t)D * sizeof *clients);
        order_ring(t, used, D);
        for (k = 0; k < D; k++) /* clients follow their device */
            for (q = 0; q < D; q++)
                if (orig[q] == used[k])
                    clients[k] = cnt[q];
    }
    for (k = 0; k < D; k++) {
        int nx = used[(k + 1) % D];
        double fwd = add_route(b, used[k], nx, (double)(D - 1) / D);
        double rev = add_route(b, nx, used[k], (double)(D - 1) / D);
        if (fwd < 0 || rev < 0) {
            snprintf(f->why_not, sizeof f->why_not, "memory devices %s and %s cannot reach each "
                     "other", t->nodes[used[k]].id, t->nodes[nx].id);
            return CP_OK;
        }
        if (fwd > hop)
            hop = fwd;
        b->load[2 * t->nlinks + used[k]] += clients[k] + (double)(D - 1) / D;
        f->dev[k] = used[k];
        f->share[k] = 1.0 / D;
    }
    f->ndev = D;
    f->lat_us = c->launch_us + up + 2 * (D - 1) * hop + down;
    if (cp_pattern_from_res(t, b->load, CP_NRES(t), NULL, 0, f->lat_us, &f->load) ||
        cp_pack(t, &f->load, 1, &f->pk, b->e))
        return CP_EINTERNAL;
    f->gbs = f->pk.total;
    f->available = 1;
    return CP_OK;
}

/* The allreduce family: its cost comes from the collective model; its
 * footprint is the packed rings' load on every arc (one host), or, when the
 * model has no per-arc rings (several hosts), its binding links. */
static int allreduce_family(fbuild *b, const cp_coll *c, cp_families *fs)
{
    cp_family *f = &fs->f[CP_FAM_ALLREDUCE];
    const cp_phase *ring = &c->cost[CP_OP_ALLREDUCE][CP_ALG_RING].phase[0];
    int alg, k, q;
    clear(b);
    f->available = c->cost[CP_OP_ALLREDUCE][CP_ALG_RING].available;
    f->gbs = ring->factor > 0 ? ring->bw_gbs / ring->factor : ring->bw_gbs;
    if (c->ring_use) {
        /* per GB/s of bucket bytes the ring moves factor x its pattern */
        for (k = 0; k < 2 * b->t->nlinks; k++)
            b->load[k] = ring->factor * c->ring_use[k];
    } else {
        for (alg = 0; alg < CP_ALGS; alg++) {
            const cp_alg_cost *a = &c->cost[CP_OP_ALLREDUCE][alg];
            if (alg == CP_ALG_PS || !a->available || cp_coll_arcs(c) != b->t)
                continue;
            for (k = 0; k < a->nphases; k++)
                for (q = 0; q < a->phase[k].nbind; q++)
                    b->load[a->phase[k].bind_arc[q]] = 1; /* marks: binds it */
        }
    }
    return cp_pattern_from_res(b->t, b->load, CP_NRES(b->t), NULL, 0, 0, &f->load)
               ? CP_EINTERNAL
               : CP_OK;
}

/* The ps footprint of a machine of H > 2 identical hosts (cp_topo_replicate),
 * by symmetry: every host's links carry what host 0's carry.  Host 0's
 * loads come from a two-host window in which host 1 stands for the H - 1
 * others (its GPUs and sockets carry H - 1 times the share), as the
 * collective model's ps does; they are then copied to every host's links
 * (replicas lay out H blocks of the same links, host-major).  One window of
 * 2 n GPUs and 2 K sockets instead of H n x H K routes: --hosts 1024 took
 * seconds per plan, and counted only the first CP_FAM_MAX_DEV sockets.
 * 1 done, 0 some route missing, 2 not a host-major replica (the caller
 * routes every pair instead), -1 error (b->e set). */
static int ps_load_symmetric(fbuild *b, double *lat_us, int *nservers)
{
    const cp_topo *t = b->t;
    cp_topo *w = NULL;
    double H = t->rep_hosts, up = 0, down = 0;
    int g, c, k, K = 0, rc = 1, per_host_links, nres_w;
    fbuild wb;
    if (cp_topo_replicate(t->rep_base, 2, &w, b->e))
        return -1;
    per_host_links = w->nlinks / 2;
    nres_w = CP_NRES(w);
    wb.t = w;
    wb.e = b->e;
    wb.load = calloc((size_t)nres_w + 1, sizeof *wb.load);
    if (!wb.load || t->nlinks != per_host_links * t->rep_hosts) {
        free(wb.load);
        cp_topo_free(w);
        return wb.load ? 2 : (cp_fail(b->e, CP_EINTERNAL, "out of memory"), -1);
    }
    for (c = 0; c < w->nnodes; c++)
        K += w->nodes[c].kind == CP_CPU && w->nodes[c].reduce_gbs > 0 && w->nodes[c].host == 0;
    for (g = 0; g < w->ngpus && rc == 1; g++)
        for (c = 0; c < w->nnodes && rc == 1; c++) {
            const cp_node *n = &w->nodes[c];
            int gh = w->nodes[w->gpus[g]].host;
            double share, u, d;
            if (n->kind != CP_CPU || !(n->reduce_gbs > 0))
                continue;
            /* a remote GPU or socket of the window is H - 1 of them */
            share = (n->host == gh ? 1.0 : H - 1) / (K * H);
            u = cp_route_load(w, w->gpus[g], c, share, wb.load);
            d = cp_route_load(w, c, w->gpus[g], share, wb.load);
            if (u < 0 || d < 0)
                rc = 0;
            if (u > up)
                up = u;
            if (d > down)
                down = d;
        }
    if (rc == 1) {
        for (k = 0; k < 2 * t->nlinks; k++) /* arc 2l+d of host h = arc 2(l mod L)+d of host 0 */
            b->load[k] = wb.load[2 * ((k >> 1) % per_host_links) + (k & 1)];
        for (c = 0; c < t->nnodes; c++)
            if (t->nodes[c].kind == CP_CPU && t->nodes[c].reduce_gbs > 0)
                b->load[2 * t->nlinks + c] = t->ngpus / (K * H); /* sums N pushes of 1/(K H) */
        *lat_us = up + down;
        *nservers = (int)(K * H);
    }
    free(wb.load);
    cp_topo_free(w);
    return rc;
}

/* ps footprint: a 1/K share to each reducing socket (timing comes from the
 * collective model). */
static int ps_family(fbuild *b, const cp_coll *c, cp_families *fs)
{
    const cp_topo *t = b->t;
    cp_family *f = &fs->f[CP_FAM_PS];
    int i, K = 0, total = 0, *cpus;
    double lat;
    if (!c->cost[CP_OP_ALLREDUCE][CP_ALG_PS].available) {
        snprintf(f->why_not, sizeof f->why_not, "%s", c->cost[CP_OP_ALLREDUCE][CP_ALG_PS].why_not);
        return CP_OK;
    }
    if (!(cpus = malloc((size_t)t->nnodes * sizeof *cpus)))
        return cp_fail(b->e, CP_EINTERNAL, "out of memory");
    for (i = 0; i < t->nnodes; i++)
        if (t->nodes[i].kind == CP_CPU && t->nodes[i].reduce_gbs > 0)
            cpus[K++] = i;
    clear(b);
    i = t->rep_base && t->rep_hosts > 2 ? ps_load_symmetric(b, &lat, &total) : 2;
    if (i == 2) {
        clear(b);
        i = devices_load(b, cpus, K, 1.0 / K, &lat);
        total = K;
    }
    f->ndev = K < CP_FAM_MAX_DEV ? K : CP_FAM_MAX_DEV; /* listed; all of them carry load */
    for (K = 0; i == 1 && K < f->ndev; K++) {
        f->dev[K] = cpus[K];
        f->share[K] = 1.0 / total;
    }
    free(cpus);
    if (i != 1) {
        f->ndev = 0;
        return i < 0 ? CP_EINTERNAL : CP_OK; /* 0: some route missing, no ps */
    }
    if (cp_pattern_from_res(t, b->load, CP_NRES(t), NULL, 0, 0, &f->load) ||
        cp_pack(t, &f->load, 1, &f->pk, b->e))
        return CP_EINTERNAL;
    f->gbs = f->pk.total;
    f->available = 1;
    return CP_OK;
}

/* Two families conflict when some resource both use would be over capacity
 * with both running at full speed: then they cannot overlap and must share
 * a chain (eq. Q3). */
static int conflict(const cp_topo *t, const cp_family *a, const cp_family *b)
{
    int i, j;
    for (i = 0; i < a->load.nuse; i++)
        for (j = 0; j < b->load.nuse; j++)
            if (a->load.arc[i] == b->load.arc[j] &&
                a->load.use[i] * a->gbs + b->load.use[j] * b->gbs >
                    cp_res_cap(t, a->load.arc[i]) * (1 + 1e-9))
                return 1;
    return 0;
}

/* Union conflicting families into groups. */
void cp_families_regroup(cp_families *fs)
{
    int i, j, parent[CP_FAMS], id[CP_FAMS];
    for (i = 0; i < CP_FAMS; i++)
        parent[i] = i;
    for (i = 0; i < CP_FAMS; i++)
        for (j = i + 1; j < CP_FAMS; j++)
            if (fs->f[i].available && fs->f[j].available &&
                conflict(fs->topo, &fs->f[i], &fs->f[j])) {
                int a = i, b = j;
                while (parent[a] != a)
                    a = parent[a];
                while (parent[b] != b)
                    b = parent[b];
                parent[b] = a;
            }
    fs->ngroups = 0;
    for (i = 0; i < CP_FAMS; i++)
        id[i] = -1;
    for (i = 0; i < CP_FAMS; i++) {
        int r = i;
        if (!fs->f[i].available)
            continue;
        while (parent[r] != r)
            r = parent[r];
        if (id[r] < 0)
            id[r] = fs->ngroups++;
        fs->f[i].group = id[r];
    }
}

int cp_families_build(const cp_topo *t, const cp_coll *c, cp_families *fs, cp_err *e)
{
    fbuild b;
    int dev[CP_FAM_MAX_DEV], nd, k, rc;
    memset(fs, 0, sizeof *fs);
    fs->topo = t;
    fs->coll = c;
    for (k = 0; k < CP_FAMS; k++)
        fs->f[k].kind = (cp_fam_kind)k;
    b.t = t;
    b.e = e;
    b.load = calloc((size_t)CP_NRES(t) + 1, sizeof *b.load);
    if (!b.load)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    nd = memdevs(t, dev);
    fs->nmemdev = nd;
    rc = allreduce_family(&b, c, fs);
    if (rc == CP_OK)
        rc = ps_family(&b, c, fs);
    if (rc == CP_OK)
        rc = cp_pool_family_build(t, c, fs, b.load, e);
    if (rc == CP_OK && nd > 0 && t->nhosts == 1 && t->ngpus > 1) {
        rc = sharded(&b, c, fs, dev, nd);
        if (rc == CP_OK)
            rc = decentralised(&b, c, fs, dev, nd);
    }
    for (k = CP_FAM_PROXY_BW; k <= CP_FAM_PROXY_RING; k++)
        if (!fs->f[k].available && !fs->f[k].why_not[0])
            snprintf(fs->f[k].why_not, sizeof fs->f[k].why_not, "%s",
                     nd == 0 ? "the topology has no memory device with reduce_gbs"
                     : t->nhosts > 1 ? "memory-device proxies are planned for one host"
                                     : "one GPU: nothing to synchronise");
    free(b.load);
    if (rc) {
        if (!e->msg[0])
            cp_fail(e, CP_EINTERNAL, "out of memory");
        cp_families_free(fs);
        return rc;
    }
    cp_families_regroup(fs);
    return CP_OK;
}

double cp_family_time_us(const cp_families *fs, cp_fam_kind k, double bytes, const char **how)
{
    const cp_family *f = &fs->f[k];
    int alg;
    double best = -1;
    if (!f->available)
        return -1;
    if (k == CP_FAM_POOL) {
        *how = "pool";
        return cp_pool_family_time_us(fs, bytes);
    }
    if (k == CP_FAM_PS) {
        *how = "ps";
        return cp_coll_time_us(fs->coll, CP_OP_ALLREDUCE, CP_ALG_PS, bytes);
    }
    if (k != CP_FAM_ALLREDUCE) {
        *how = cp_fam_name(k);
        return f->lat_us + bytes / (f->gbs * 1e3);
    }
    if (fs->gpu_mpi) {
        *how = "mpi";
        return cp_mpi_allreduce_us(&fs->coll->mpi, bytes);
    }
    for (alg = 0; alg < CP_ALGS; alg++) {
        double x;
        if (alg == CP_ALG_PS)
            continue;
        x = cp_coll_time_us(fs->coll, CP_OP_ALLREDUCE, (cp_coll_alg)alg, bytes);
        if (x >= 0 && (best < 0 || x < best)) {
            best = x;
            *how = cp_coll_alg_name((cp_coll_alg)alg);
        }
    }
    return best;
}
