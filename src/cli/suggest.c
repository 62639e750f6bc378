/*
 * suggest.c - the nearest known word to a mistyped one (see suggest.h).
 */
#include <string.h>

#include "cli/suggest.h"

/* Longest word compared; longer ones are cut (no option name comes close). */
#define WORD_MAX 63

int cli_edit_distance(const char *a, const char *b)
{
    int d[WORD_MAX + 1][WORD_MAX + 1];
    int la = (int)strnlen(a, WORD_MAX), lb = (int)strnlen(b, WORD_MAX), i, j;
    for (i = 0; i <= la; i++)
        d[i][0] = i;
    for (j = 0; j <= lb; j++)
        d[0][j] = j;
    for (i = 1; i <= la; i++)
        for (j = 1; j <= lb; j++) {
            int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            int best = sub < del ? sub : del;
            if (ins < best)
                best = ins;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1; /* two neighbours swapped */
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *cli_nearest(const char *word, const char *const *cands, int n)
{
    int k, best = -1, bestd = 0, limit = ((int)strnlen(word, WORD_MAX) + 2) / 3;
    if (limit > 3)
        limit = 3;
    for (k = 0; k < n; k++) {
        int dk = cli_edit_distance(word, cands[k]);
        if (dk <= limit && (best < 0 || dk < bestd)) {
            best = k;
            bestd = dk;
        }
    }
    return best < 0 ? NULL : cands[best];
}
