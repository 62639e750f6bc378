/*
 * dtree.h - NCCL's double binary tree over hosts, as traffic: how many
 * bytes each host's network interfaces send and receive per byte of an
 * AllReduce buffer (docs/collectives.md, "Trees across hosts").
 *
 * NCCL builds its inter-node trees over nodes, not ranks
 * (src/graph/trees.cc, ncclGetBtree and ncclGetDtree; TUNING-FACTS A10):
 * tree 0 is a binary tree rooted at node 0 with one child; tree 1 is its
 * mirror (node H-1-r) when H is even, its shift by one when H is odd; each
 * carries half of the buffer.  In a tree carrying T bytes every edge carries
 * T each way (the reduction goes up, the broadcast comes down), so a host
 * sends and receives (parent + children) x T in that tree.  Summed over the
 * two trees of S/2 each, the busiest host moves
 *
 *     f(H) x S each way,  f(H) = max over hosts (deg0 + deg1) / 2
 *
 * which is 1 on two hosts (each host the root of one tree and the leaf of
 * the other: S, where a ring moves 2(N-1)/N S), 1.5 on three, and 2 on
 * 2^k >= 4 hosts (every host but the two ends interior in one tree).
 *
 * Cost: O(H) per call, no allocation.  Nothing is owned.
 */
#ifndef CP_DTREE_H
#define CP_DTREE_H

#include <stddef.h>

/* Network edges (parent + children) of host r in NCCL's binary tree over
 * `hosts` hosts (ncclGetBtree), 0 when hosts < 2 or r is out of range. */
int cp_btree_degree(int hosts, int r);

/* Edges of host r in the double binary tree: tree 0 in *deg0, tree 1 (mirror
 * or shift) in *deg1. */
void cp_dtree_degrees(int hosts, int r, int *deg0, int *deg1);

/* f(H): bytes the busiest host sends (and receives) over the network per byte
 * of AllReduce buffer; the first such host to *busiest when not NULL.  0 with
 * fewer than two hosts. */
double cp_dtree_net_factor(int hosts, int *busiest);

/* One line for --explain: the busiest host's roles and its per-NIC traffic
 * per direction with `nics` NICs a host, e.g. "2 hosts: host 0 is the root of
 * tree 0 (1 edge) and a leaf of tree 1 (1 edge): it sends and receives 1 x S
 * over the network, 0.25 x S per NIC (4 NICs)". */
void cp_dtree_describe(int hosts, int nics, char *buf, size_t len);

struct cp_coll;

/* cp_dtree_describe for the tree AllReduce of a built model across its hosts,
 * with the NICs of its host 0; buf gets "" on one host. */
void cp_coll_tree_traffic(const struct cp_coll *c, char *buf, size_t len);

#endif
