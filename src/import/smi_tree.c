/*
 * smi_tree.c - stages 3 and 4 of import smi-topo (smi_internal.h,
 * docs/import.md): devices on sockets, from the NUMA/CPU affinity column
 * when it agrees with the cells, else from the cells (PIX/PXB/PHB/NODE:
 * same socket, SYS: different ones, NV: unknown, placed first-fit); then
 * the PCIe tree: PIX groups under one switch, PXB groups under a common
 * upstream switch, everything else on its socket's CPU, and every cell
 * checked against it, so a matrix no tree explains is refused at the first
 * cell that disagrees.
 */
#include <stdlib.h>
#include <string.h>

#include "import/smi_internal.h"

/* ------------------------------------------------------------------------ */
/* 3. Sockets                                                                */

/* Union-find with the smallest index as the root, so a group is named by
 * its first device in the header's order. */
int smi_find(int *p, int x)
{
    while (p[x] != x) {
        p[x] = p[p[x]];
        x = p[x];
    }
    return x;
}

void smi_unite(int *p, int a, int b)
{
    a = smi_find(p, a);
    b = smi_find(p, b);
    if (a < b)
        p[b] = a;
    else if (b < a)
        p[a] = b;
}

static int same_socket_cell(int rel)
{
    return rel == R_PIX || rel == R_PXB || rel == R_PHB || rel == R_NODE;
}

/* A usable affinity value: present and not N/A. */
static int aff_ok(const tok *t)
{
    return t->len > 0 && !smi_tok_is(t, "N/A");
}

static int aff_eq(const tok *a, const tok *b)
{
    return a->len == b->len && memcmp(a->s, b->s, (size_t)a->len) == 0;
}

/* The affinity column to group GPUs by: NUMA Affinity when every GPU has
 * one, else CPU Affinity likewise, else -1. */
static int pick_affinity(const smi *m)
{
    int kind, g;
    for (kind = AFF_NUMA; kind >= AFF_CPU; kind--) {
        for (g = 0; g < m->ngpu && aff_ok(&m->dev[g].aff[kind]); g++)
            ;
        if (g == m->ngpu && m->ngpu > 0)
            return kind;
    }
    return -1;
}

/* Groups that must share a socket: the same-socket cells, and (aff >= 0)
 * GPUs with one affinity value.  0 when the affinity contradicts the cells
 * (two values in a group, or SYS inside one). */
static int socket_groups(const smi *m, int aff, int *p)
{
    int i, j;
    for (i = 0; i < m->ndev; i++)
        p[i] = i;
    for (i = 0; i < m->ndev; i++)
        for (j = 0; j < i; j++)
            if (same_socket_cell(smi_at(m, i, j)->rel) ||
                (aff >= 0 && i < m->ngpu && aff_eq(&m->dev[i].aff[aff], &m->dev[j].aff[aff])))
                smi_unite(p, i, j);
    if (aff < 0)
        return 1;
    for (i = 0; i < m->ndev && m->dev[i].gpu; i++) { /* one value per group (GPUs first) */
        int r = smi_find(p, i);
        for (j = 0; j < i; j++)
            if (smi_find(p, j) == r && !aff_eq(&m->dev[i].aff[aff], &m->dev[j].aff[aff]))
                return 0;
    }
    for (i = 0; i < m->ndev; i++)
        for (j = 0; j < i; j++)
            if (smi_at(m, i, j)->rel == R_SYS && smi_find(p, i) == smi_find(p, j))
                return 0;
    return 1;
}

/* May group r (root of p) join socket s?  Not when a SYS cell separates
 * them, nor when both carry different affinity values. */
static int fits(const smi *m, const int *root, int r, int s, int aff)
{
    int a, b;
    for (a = r; a < m->ndev; a++) {
        if (root[a] != r)
            continue;
        for (b = 0; b < m->ndev; b++) {
            if (m->sock[b] != s)
                continue;
            if (smi_at(m, a, b)->rel == R_SYS)
                return 0;
            if (aff >= 0 && a < m->ngpu && b < m->ngpu &&
                !aff_eq(&m->dev[a].aff[aff], &m->dev[b].aff[aff]))
                return 0;
        }
    }
    return 1;
}

/* Every group on the first socket it fits, in the header's order; a group
 * that fits none opens a new socket. */
static void place_sockets(smi *m, int *p, int aff)
{
    int i, s, joined = 0;
    for (i = 0; i < m->ndev; i++) {
        p[i] = smi_find(p, i);
        m->sock[i] = -1;
    }
    for (i = 0; i < m->ndev; i++) {
        int a;
        if (p[i] != i)
            continue;
        for (s = 0; s < m->nsock && !fits(m, p, i, s, aff); s++)
            ;
        if (s == m->nsock)
            m->nsock++;
        else
            joined = 1;
        for (a = i; a < m->ndev; a++)
            if (p[a] == i)
                m->sock[a] = s;
    }
    if (joined && aff < 0)
        smi_note(m, "devices with no PCIe cell between them (joined by NVLink only) share a socket "
                    "unless a SYS cell separates them");
}

int smi_sockets(smi *m)
{
    int *p = calloc((size_t)m->ndev, sizeof *p);
    int aff = pick_affinity(m);
    static const char *const col[] = {"CPU Affinity", "NUMA Affinity"};
    char buf[512];
    if (!p)
        return smi_oom(m);
    if (aff >= 0 && !socket_groups(m, aff, p)) {
        snprintf(buf, sizeof buf, "the %s column disagrees with the cells (one value across a "
                 "SYS cell, or two values on one socket): ignored, sockets from the cells",
                 col[aff]);
        smi_note(m, buf);
        aff = -1;
    }
    if (aff < 0)
        socket_groups(m, -1, p);
    else {
        snprintf(buf, sizeof buf, "sockets from the %s column", col[aff]);
        smi_note(m, buf);
    }
    place_sockets(m, p, aff);
    free(p);
    return CP_OK;
}

/* ------------------------------------------------------------------------ */
/* 4. The PCIe tree                                                          */

void smi_pcie_groups(smi *m)
{
    int i, j;
    for (i = 0; i < m->ndev; i++)
        m->pix[i] = m->pxb[i] = i;
    for (i = 0; i < m->ndev; i++)
        for (j = 0; j < i; j++) {
            int rel = smi_at(m, i, j)->rel;
            if (rel == R_PIX)
                smi_unite(m->pix, i, j);
            if (rel == R_PIX || rel == R_PXB)
                smi_unite(m->pxb, i, j);
        }
    for (i = 0; i < m->ndev; i++) {
        m->pix[i] = smi_find(m->pix, i);
        m->pxb[i] = smi_find(m->pxb, i);
    }
}

/* What the tree says device i and j are joined by. */
static int tree_rel(const smi *m, int i, int j)
{
    if (m->pix[i] == m->pix[j])
        return R_PIX;
    if (m->pxb[i] == m->pxb[j])
        return R_PXB;
    return m->sock[i] == m->sock[j] ? R_PHB : R_SYS;
}

/* Every cell but NV must say what the tree says (PHB and NODE alike). */
int smi_check_tree(smi *m)
{
    static const char *const why[] = {
        [R_PIX] = "under one PCIe switch (PIX)",
        [R_PXB] = "under switches with a common upstream switch (PXB)",
        [R_PHB] = "on one CPU socket under no common switch (PHB or NODE)",
        [R_SYS] = "on different CPU sockets (SYS)",
    };
    int i, j;
    char a[16];
    for (i = 0; i < m->ndev; i++)
        for (j = 0; j < m->ndev; j++) {
            const cell *c = smi_at(m, i, j);
            int want = tree_rel(m, i, j);
            if (i == j || c->rel == R_NV || c->rel == want || (want == R_PHB && c->rel == R_NODE))
                continue;
            return smi_fail_at(m, c->line, c->col, "%s -> %s is %s, but other cells put %s and "
                               "%s %s: no PCIe tree fits every cell", m->dev[i].name,
                               m->dev[j].name, smi_cell_text(c, a, sizeof a), m->dev[i].name,
                               m->dev[j].name, why[want]);
        }
    return CP_OK;
}
