/*
 * suggest.h - "did you mean ...?": the nearest of a few known words to one
 * the user mistyped (an unknown command, option or import format).
 *
 * The distance is the optimal string alignment distance (Levenshtein's
 * insertions, deletions and substitutions, plus swapping two adjacent
 * characters, the commonest typo: "predcit"), as git's help.c uses.  A
 * word is suggested only when it is close for its length, so that "-x"
 * suggests nothing.  Cost: O(len(a) x len(b)) per candidate, on words of
 * at most 63 bytes.
 */
#ifndef CP_CLI_SUGGEST_H
#define CP_CLI_SUGGEST_H

/* Optimal string alignment distance between a and b (each cut at 63
 * bytes). */
int cli_edit_distance(const char *a, const char *b);

/* The candidate nearest to `word` (the first of equals), or NULL when none
 * is within (len(word) + 2) / 3 edits, at most 3 (1 edit for a word of 1
 * to 3 bytes, 2 for 4 to 6, 3 from 7).  cands: n strings, borrowed. */
const char *cli_nearest(const char *word, const char *const *cands, int n);

#endif
