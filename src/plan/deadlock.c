/*
 * deadlock.c - cycle check on the wait-for graph of a plan (see deadlock.h).
 */
#include <stdlib.h>
#include <string.h>

#include "plan/deadlock.h"

int cp_check_waits(int nparts, const int *const *seq, const int *seq_len, int nops,
                   const char *const *part_names, cp_err *e)
{
    int p, i, nedges = 0, head = 0, tail = 0, done = 0, rc = CP_OK;
    int *indeg = calloc((size_t)nops + 1, sizeof *indeg);
    int *off = calloc((size_t)nops + 2, sizeof *off);
    int *to, *fill, *queue;

    for (p = 0; p < nparts; p++)
        nedges += seq_len[p] > 0 ? seq_len[p] - 1 : 0;
    to = malloc((size_t)(nedges + 1) * sizeof *to);
    fill = calloc((size_t)nops + 1, sizeof *fill);
    queue = malloc((size_t)(nops + 1) * sizeof *queue);
    if (!indeg || !off || !to || !fill || !queue) {
        rc = cp_fail(e, CP_EINTERNAL, "out of memory");
        goto done;
    }
    for (p = 0; p < nparts; p++)
        for (i = 0; i + 1 < seq_len[p]; i++) {
            int a = seq[p][i], b = seq[p][i + 1];
            if (a < 0 || a >= nops || b < 0 || b >= nops) {
                rc = cp_fail(e, CP_EINPUT, "%s lists operation %d; operations are 0 to %d",
                             part_names ? part_names[p] : "a participant", a < 0 || a >= nops ? a : b,
                             nops - 1);
                goto done;
            }
            off[a + 1]++;
            indeg[b]++;
        }
    for (i = 0; i < nops; i++)
        off[i + 1] += off[i];
    for (p = 0; p < nparts; p++)
        for (i = 0; i + 1 < seq_len[p]; i++) {
            int a = seq[p][i];
            to[off[a] + fill[a]++] = seq[p][i + 1];
        }
    for (i = 0; i < nops; i++)
        if (indeg[i] == 0)
            queue[tail++] = i;
    while (head < tail) {
        int v = queue[head++], k;
        done++;
        for (k = off[v]; k < off[v + 1]; k++)
            if (--indeg[to[k]] == 0)
                queue[tail++] = to[k];
    }
    if (done < nops) {
        /* name two operations still waiting: one on the cycle and its wait */
        int a = -1, b = -1, k;
        for (i = 0; i < nops && a < 0; i++)
            if (indeg[i] > 0)
                a = i;
        for (i = 0; i < nops && b < 0; i++)
            for (k = off[i]; k < off[i + 1]; k++)
                if (to[k] == a && indeg[i] > 0)
                    b = i;
        rc = cp_fail(e, CP_EINPUT, "the processing orders can deadlock: operation %d waits for "
                                   "operation %d, which waits (through other participants) "
                                   "for it", a, b);
    }
done:
    free(indeg);
    free(off);
    free(to);
    free(fill);
    free(queue);
    return rc;
}
