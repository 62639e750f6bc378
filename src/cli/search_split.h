/*
 * search_split.h - `search` split over processes: each process searches
 * every nparts-th candidate (cp_search_in.part, .nparts) and an exchange
 * brings the rankings together, so that a program built with MPI
 * (src/mpisearch/, coarse-search under mpirun) runs the command's own
 * code and prints the answer one process would.
 */
#ifndef CP_CLI_SEARCH_SPLIT_H
#define CP_CLI_SEARCH_SPLIT_H

#include "llm/search.h"

typedef struct cli_search_split {
    int part, nparts;     /* this process's share of the candidates */
    /* after this process's search: exchange with the others; on the
     * printing process *out becomes the merged ranking with the summed
     * counts.  CP_OK or a status with e filled. */
    int (*exchange)(const cp_search_in *in, cp_search_out *out, void *ctx, cp_err *e);
    void *ctx;
    int print;            /* this process prints (the others stay silent) */
} cli_search_split;

/* `coarse-plan search ARGS` with the candidates split as sp says (NULL:
 * one process); the exit status. */
int cli_search_main(int argc, char **argv, const cli_search_split *sp);

#endif
