/*
 * mpi.c - MPI AllReduce staged through host memory (see mpi.h and
 * docs/model.md eq. P12).
 *
 * What TensorFlow and Horovod did without NCCL: every rank's gradient
 * buffer goes to host memory, Open MPI all-reduces it there with the
 * algorithm its fixed rules pick, and the result comes back.  The host part
 * is priced step by step from the bytes each step moves through every
 * socket's memory and across the socket link, so the placement of ranks on
 * sockets (each next to its GPU) and the socket link's 6-22 GB/s show up
 * as they do on the machine.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cost/mpi.h"
#include "paths/route.h"

const char *cp_mpi_alg_name(int alg)
{
    switch (alg) {
    case CP_MPI_NONOVERLAP: return "reduce+bcast";
    case CP_MPI_RECDBL: return "recursive-doubling";
    case CP_MPI_RING:
    case CP_MPI_SEGRING: return "ring";
    case CP_MPI_RABENSEIFNER: return "rabenseifner";
    default: return "han";
    }
}

/* A rule row: below thresholds[i] bytes use alg[i]; at or above the last
 * threshold use alg[n]. */
typedef struct rule {
    int maxp;                /* applies to p < maxp */
    int n;
    double below[7];
    int alg[8];
} rule;

/* B3, commutative ops, p < 4096 (from there on the last row). */
static const rule b3[] = {
    {4, 6, {8, 4096, 8192, 16384, 65536, 262144}, {4, 3, 4, 3, 4, 5, 6}},
    {8, 2, {16, 8192}, {4, 3, 6}},
    {16, 1, {8192}, {3, 6}},
    {32, 2, {64, 4096}, {5, 3, 6}},
    {64, 1, {128}, {5, 6}},
    {128, 1, {262144}, {3, 6}},
    {256, 2, {131072, 262144}, {2, 3, 6}},
    {512, 1, {4096}, {2, 6}},
    {2048, 2, {2048, 16384}, {2, 3, 6}},
    {4096, 3, {2048, 4096, 16384}, {2, 5, 3, 6}},
    {1 << 30, 3, {2048, 16384, 32768}, {2, 5, 3, 6}},
};

cp_mpi_alg cp_mpi_choose(int p, double bytes)
{
    size_t r;
    int i;
    for (r = 0; r + 1 < sizeof b3 / sizeof b3[0] && p >= b3[r].maxp; r++)
        ;
    for (i = 0; i < b3[r].n && bytes >= b3[r].below[i]; i++)
        ;
    return (cp_mpi_alg)b3[r].alg[i];
}

/* ------------------------------------------------------------------------ */
/* One step of a shared-memory algorithm                                     */

typedef struct step {
    double mem[CP_MPI_MAX_SOCK];                   /* bytes through each socket's memory */
    double cross[CP_MPI_MAX_SOCK][CP_MPI_MAX_SOCK]; /* bytes from socket a to b */
    int crossed;
} step;

/* Rank `from` sends `bytes` to rank `to`, which sums them into its buffer
 * when `sum`: the single copy reads the sender's socket and writes the
 * receiver's; a sum reads two operands and writes one at the receiver. */
static void msg(const cp_mpi *m, step *s, int from, int to, double bytes, int sum)
{
    int a = m->rank_sock[from], b = m->rank_sock[to];
    s->mem[a] += bytes;
    s->mem[b] += bytes + (sum ? 3 * bytes : 0);
    if (a != b) {
        s->cross[a][b] += bytes;
        s->crossed = 1;
    }
}

/* The step's time: its messages run at once, so the busiest socket memory
 * or socket-link direction sets it, plus one message latency. */
static double step_us(const cp_mpi *m, const step *s)
{
    double us = 0;
    int a, b;
    for (a = 0; a < m->nsock; a++) {
        if (s->mem[a] / (m->sock_gbs[a] * 1e3) > us)
            us = s->mem[a] / (m->sock_gbs[a] * 1e3);
        for (b = 0; b < m->nsock; b++)
            if (m->link_gbs > 0 && s->cross[a][b] / (m->link_gbs * 1e3) > us)
                us = s->cross[a][b] / (m->link_gbs * 1e3);
    }
    return CP_MPI_STEP_US + (s->crossed ? m->link_lat_us : 0) + us;
}

static int pow2_floor(int n)
{
    int p = 1;
    while (2 * p <= n)
        p *= 2;
    return p;
}

/* Real rank of virtual rank v once the first 2r ranks are folded into r
 * (the odd one of each pair carries on, B2). */
static int real_rank(int v, int r)
{
    return v < r ? 2 * v + 1 : v + r;
}

/* Recursive doubling (B2): the 2r extra ranks fold in with a full-message
 * send (even to odd), log2 p' full exchanges with a sum, the result goes
 * back to the folded ranks. */
static double recdbl_us(const cp_mpi *m, int n, double S)
{
    int p2 = pow2_floor(n), r = n - p2, mask, v, i;
    double us = 0;
    step s;
    if (r > 0) {
        memset(&s, 0, sizeof s);
        for (i = 0; i < r; i++)
            msg(m, &s, 2 * i, 2 * i + 1, S, 1);
        us += step_us(m, &s);
    }
    for (mask = 1; mask < p2; mask <<= 1) {
        memset(&s, 0, sizeof s);
        for (v = 0; v < p2; v++)
            msg(m, &s, real_rank(v, r), real_rank(v ^ mask, r), S, 1);
        us += step_us(m, &s);
    }
    if (r > 0) {
        memset(&s, 0, sizeof s);
        for (i = 0; i < r; i++)
            msg(m, &s, 2 * i + 1, 2 * i, S, 0);
        us += step_us(m, &s);
    }
    return us;
}

/* Rabenseifner (B2): fold the 2r extra ranks with half-vector exchanges
 * (each of a pair sends half and sums the other half, then the even one
 * hands its summed half over), recursive-halving reduce-scatter (S/2, S/4,
 * ... with a sum), recursive-doubling all-gather back up, and the full
 * result to the folded ranks. */
static double rabenseifner_us(const cp_mpi *m, int n, double S)
{
    int p2 = pow2_floor(n), r = n - p2, mask, v, i;
    double us = 0, part = S;
    step s;
    if (r > 0) {
        memset(&s, 0, sizeof s);
        for (i = 0; i < r; i++) {
            msg(m, &s, 2 * i, 2 * i + 1, S / 2, 1);
            msg(m, &s, 2 * i + 1, 2 * i, S / 2, 1);
        }
        us += step_us(m, &s);
        memset(&s, 0, sizeof s);
        for (i = 0; i < r; i++)
            msg(m, &s, 2 * i, 2 * i + 1, S / 2, 0);
        us += step_us(m, &s);
    }
    for (mask = 1; mask < p2; mask <<= 1) {
        part /= 2;
        memset(&s, 0, sizeof s);
        for (v = 0; v < p2; v++)
            msg(m, &s, real_rank(v, r), real_rank(v ^ mask, r), part, 1);
        us += step_us(m, &s);
    }
    for (mask = p2 >> 1; mask > 0; mask >>= 1) {
        memset(&s, 0, sizeof s);
        for (v = 0; v < p2; v++)
            msg(m, &s, real_rank(v, r), real_rank(v ^ mask, r), part, 0);
        us += step_us(m, &s);
        part *= 2;
    }
    if (r > 0) {
        memset(&s, 0, sizeof s);
        for (i = 0; i < r; i++)
            msg(m, &s, 2 * i + 1, 2 * i, S, 0);
        us += step_us(m, &s);
    }
    return us;
}

/* Ring (B2): n-1 reduce-scatter steps of S/n to the next rank with a sum,
 * n-1 all-gather steps of S/n; recursive doubling when S/n is under one
 * element (count < comm_size). */
static double ring_us(const cp_mpi *m, int n, double S)
{
    int k, i;
    double us = 0;
    step s;
    if (S / n < 4)
        return recdbl_us(m, n, S);
    for (k = 0; k < 2 * (n - 1); k++) {
        memset(&s, 0, sizeof s);
        for (i = 0; i < n; i++)
            msg(m, &s, i, (i + 1) % n, S / n, k < n - 1);
        us += step_us(m, &s);
    }
    return us;
}

/* Binomial reduce of S to rank 0 (sum) or broadcast from it: ceil(log2 n)
 * steps of the full message (used for reduce+bcast and HAN's intra-node
 * stages). */
static double binomial_us(const cp_mpi *m, int n, double S, int reduce)
{
    int mask, i;
    double us = 0;
    step s;
    for (mask = 1; mask < n; mask <<= 1) {
        memset(&s, 0, sizeof s);
        for (i = 0; i < n; i++)
            if ((i & (2 * mask - 1)) == mask)
                msg(m, &s, reduce ? i : i - mask, reduce ? i - mask : i, S, reduce);
        us += step_us(m, &s);
    }
    return us;
}

static double one_node_us(const cp_mpi *m, int n, double S, cp_mpi_alg alg)
{
    switch (alg) {
    case CP_MPI_RECDBL: return recdbl_us(m, n, S);
    case CP_MPI_RING:
    case CP_MPI_SEGRING: return ring_us(m, n, S);
    case CP_MPI_RABENSEIFNER: return rabenseifner_us(m, n, S);
    default: return binomial_us(m, n, S, 1) + binomial_us(m, n, S, 0);
    }
}

/* HAN across hosts (B6): 512 KiB segments through four stages (intra-node
 * reduce to the leader, leaders' reduce and broadcast over the network as
 * libnbc binomial trees, intra-node broadcast); consecutive segments
 * overlap the stages, so num_segments + 3 rounds of the slowest stage. */
static double han_us(const cp_mpi *m, double S)
{
    double seg = S < CP_MPI_HAN_SEG ? S : CP_MPI_HAN_SEG, nseg = ceil(S / CP_MPI_HAN_SEG);
    double up = ceil(log2((double)m->nhosts)) * (m->net_lat_us + seg / (m->net_gbs * 1e3));
    double lr = binomial_us(m, m->per_host, seg, 1), lb = binomial_us(m, m->per_host, seg, 0);
    double worst = up;
    if (lr > worst)
        worst = lr;
    if (lb > worst)
        worst = lb;
    return (nseg + 3) * worst;
}

double cp_mpi_host_us(const cp_mpi *m, double bytes, int *alg)
{
    cp_mpi_alg a;
    if (alg)
        *alg = 0;
    if (!m->available || m->nranks <= 1)
        return m->available ? 0 : -1;
    if (m->nhosts > 1)
        return han_us(m, bytes);
    a = cp_mpi_choose(m->per_host, bytes);
    if (alg)
        *alg = (int)a;
    return one_node_us(m, m->per_host, bytes, a);
}

double cp_mpi_allreduce_us(const cp_mpi *m, double bytes)
{
    double host = cp_mpi_host_us(m, bytes, NULL);
    if (host < 0)
        return -1;
    if (m->nranks <= 1)
        return 0;
    return m->sync_us + 2 * m->copy_us + bytes / (m->d2h_gbs * 1e3) + host +
           bytes / (m->h2d_gbs * 1e3);
}

/* ------------------------------------------------------------------------ */
/* Building                                                                  */

/* Index in sock[] of the socket GPU g reaches widest (then soonest), or -1. */
static int nearest_socket(const cp_topo *t, int g, const int *sock, int K)
{
    int q, best = -1;
    double bg = 0, bl = 0;
    for (q = 0; q < K; q++) {
        cp_route r;
        cp_err tmp;
        if (cp_route_find(t, g, sock[q], NULL, &r, &tmp) != CP_OK || r.gbs <= 0)
            continue;
        if (best < 0 || r.gbs > bg * (1 + 1e-9) ||
            (r.gbs > bg * (1 - 1e-9) && cp_route_hop_us(&r) < bl)) {
            best = q;
            bg = r.gbs;
            bl = cp_route_hop_us(&r);
        }
    }
    return best;
}

/* The socket link of host 0 (the slower direction, calibrated), and the
 * widest NIC of host 0 for HAN's leaders. */
static void host_links(const cp_topo *t, cp_mpi *m)
{
    int k;
    for (k = 0; k < t->nlinks; k++) {
        const cp_link *l = &t->links[k];
        if (l->kind == CP_SOCKET && t->nodes[l->a].host == 0) {
            double g = cp_arc_cap(t, 2 * k) < cp_arc_cap(t, 2 * k + 1) ? cp_arc_cap(t, 2 * k)
                                                                     : cp_arc_cap(t, 2 * k + 1);
            if (m->link_gbs <= 0 || g < m->link_gbs)
                m->link_gbs = g;
            m->link_lat_us = l->lat_us;
        }
    }
    for (k = 0; k < t->nnodes; k++) {
        const cp_node *n = &t->nodes[k];
        double g = n->net_gbs * t->calib.kind[CP_NET].bw_eff;
        if (n->kind == CP_NIC && n->host == 0 && g > m->net_gbs) {
            m->net_gbs = g;
            m->net_lat_us = n->net_lat_us + t->calib.kind[CP_NET].step_us;
        }
    }
}

static void not_here(cp_mpi *m, const char *why)
{
    m->available = 0;
    snprintf(m->why_not, sizeof m->why_not, "%s", why);
}

int cp_mpi_build(const cp_topo *t, const cp_mpi_in *c, cp_mpi *m, cp_err *e)
{
    int sock[CP_MPI_MAX_SOCK], K = 0, i, n = 0;
    (void)e;
    memset(m, 0, sizeof *m);
    m->nranks = c->nranks;
    m->nhosts = c->nhosts;
    m->per_host = c->per_host;
    for (i = 0; i < t->nnodes && K < CP_MPI_MAX_SOCK; i++)
        if (t->nodes[i].kind == CP_CPU && t->nodes[i].host == 0 && t->nodes[i].reduce_gbs > 0) {
            m->sock_gbs[K] = 3 * t->nodes[i].reduce_gbs;
            sock[K++] = i;
        }
    m->nsock = K;
    if (K == 0 || c->d2h_gbs <= 0 || c->h2d_gbs <= 0) {
        not_here(m, "mpi stages every gradient through host memory: needs a CPU socket with "
                    "reduce_gbs that every GPU reaches");
        return CP_OK;
    }
    if (m->per_host > CP_MPI_MAX_RANKS) {
        not_here(m, "mpi is modelled for at most 64 GPUs per host");
        return CP_OK;
    }
    for (i = 0; i < t->ngpus && n < m->per_host; i++) {
        int g = t->gpus[i];
        if (t->nodes[g].host != 0)
            continue;
        if ((m->rank_sock[n] = nearest_socket(t, g, sock, K)) < 0) {
            not_here(m, "mpi stages through host memory: a GPU reaches no CPU socket");
            return CP_OK;
        }
        n++;
    }
    host_links(t, m);
    if (m->nhosts > 1 && m->net_gbs <= 0) {
        not_here(m, "mpi across hosts needs a NIC on every host");
        return CP_OK;
    }
    m->d2h_gbs = c->d2h_gbs;
    m->h2d_gbs = c->h2d_gbs;
    /* a synchronous cudaMemcpy: its launch, the DMA's request down and its
     * completion back over the route, and the wait for that completion (a
     * launch's worth of driver round trip); before the first, the host waits
     * for the stream that produced the gradient (docs/model.md eq. P12) */
    m->copy_us = 2 * t->calib.launch_us + 2 * c->host_lat_us;
    m->sync_us = t->calib.launch_us;
    m->available = 1;
    return CP_OK;
}
