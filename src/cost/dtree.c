/*
 * dtree.c - NCCL's double binary tree over hosts as network traffic
 * (dtree.h; docs/collectives.md, "Trees across hosts").  The construction
 * follows NCCL 2.30's src/graph/trees.cc (TUNING-FACTS A10): only the
 * degrees matter for traffic, so the trees are never stored.
 */
#include <stdio.h>

#include "cost/collective.h"
#include "cost/dtree.h"

/* ncclGetBtree's neighbours of rank r of n, counted: the root has one child
 * (bit/2, bit the smallest power of two >= n); any other rank has a parent
 * and children r -/+ lowbit/2 while they are in range (down1 shrinks its
 * step until it fits or vanishes; down0 = r - lowbit/2 is always in range). */
int cp_btree_degree(int hosts, int r)
{
    int bit, lowbit, deg;
    if (hosts < 2 || r < 0 || r >= hosts)
        return 0;
    if (r == 0)
        return 1;
    for (bit = 1; !(r & bit); bit <<= 1) /* lowest set bit of r */
        ;
    deg = 1; /* the parent: (r ^ bit) | (bit << 1), or r ^ bit past the end */
    lowbit = bit >> 1;
    if (lowbit == 0)
        return deg; /* odd ranks are leaves */
    deg++;          /* down0 = r - lowbit */
    while (lowbit > 0 && r + lowbit >= hosts)
        lowbit >>= 1;
    return deg + (lowbit > 0);
}

/* Tree 1 relabels tree 0: mirror for an even count, shift by one for an odd
 * one (ncclGetDtree); a relabelling keeps degrees, so host r has in tree 1
 * the degree of the rank it plays in tree 0. */
void cp_dtree_degrees(int hosts, int r, int *deg0, int *deg1)
{
    int r1 = hosts % 2 == 0 ? hosts - 1 - r : (r - 1 + hosts) % hosts;
    *deg0 = cp_btree_degree(hosts, r);
    *deg1 = cp_btree_degree(hosts, r1);
}

double cp_dtree_net_factor(int hosts, int *busiest)
{
    int r, best = -1, d0, d1;
    for (r = 0; r < hosts && hosts >= 2; r++) {
        cp_dtree_degrees(hosts, r, &d0, &d1);
        if (d0 + d1 > best) {
            best = d0 + d1;
            if (busiest)
                *busiest = r;
        }
    }
    return best > 0 ? best / 2.0 : 0; /* each tree carries S/2 over each edge each way */
}

/* A tree role in words: the root has one child, an interior host a parent
 * and children, a leaf only its parent. */
static const char *role(int r, int deg)
{
    return r == 0 ? "the root" : deg == 1 ? "a leaf" : "interior";
}

void cp_dtree_describe(int hosts, int nics, char *buf, size_t len)
{
    int h = 0, d0, d1, r1;
    double f = cp_dtree_net_factor(hosts, &h);
    cp_dtree_degrees(hosts, h, &d0, &d1);
    r1 = hosts % 2 == 0 ? hosts - 1 - h : (h - 1 + hosts) % hosts;
    if (nics > 0)
        snprintf(buf, len, "%d hosts: host %d is %s of tree 0 (%d edge%s) and %s of tree 1 "
                 "(%d edge%s), each tree S/2: it sends and receives %.3g x S over the network, "
                 "%.3g x S per NIC (%d NIC%s)", hosts, h, role(h, d0), d0, d0 == 1 ? "" : "s",
                 role(r1, d1), d1, d1 == 1 ? "" : "s", f, f / nics, nics, nics == 1 ? "" : "s");
    else
        snprintf(buf, len, "%d hosts: host %d is %s of tree 0 (%d edge%s) and %s of tree 1 "
                 "(%d edge%s), each tree S/2: it sends and receives %.3g x S over the network",
                 hosts, h, role(h, d0), d0, d0 == 1 ? "" : "s", role(r1, d1), d1,
                 d1 == 1 ? "" : "s", f);
}

void cp_coll_tree_traffic(const cp_coll *c, char *buf, size_t len)
{
    const cp_topo *t = cp_coll_arcs(c);
    int v, nics = 0;
    if (len)
        buf[0] = 0;
    if (c->nhosts < 2)
        return;
    for (v = 0; v < t->nnodes; v++)
        nics += t->nodes[v].kind == CP_NIC && t->nodes[v].host == 0;
    cp_dtree_describe(c->nhosts, nics, buf, len);
}
