/*
 * coarse_search.c - `coarse-search`, the layout search spread over Open MPI
 * ranks: `mpirun -n K coarse-search ARGS` takes `coarse-plan search`'s
 * arguments, every rank searches every K-th candidate (cli/search_split.h),
 * and rank 0 gathers each rank's best layouts and counts, prices the
 * gathered layouts again with the same evaluation (results hold pointers
 * to static names, which differ between processes; layouts are plain
 * numbers) and prints the ranking one process would (docs/cli.md,
 * "Searching over MPI ranks").  Built only where mpicc exists, like
 * coarse-run.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "cli/search_split.h"

/* What a rank sends rank 0: its counts, then its best layouts with their
 * candidate numbers. */
typedef struct summary {
    long considered, dominated, pruned_memory, pruned_bound, priced;
    double min_memory_gb;
    int groups, nhits;
} summary;

typedef struct packed {
    cp_layout l;
    long index;
} packed;

/* Out of memory on any rank ends every rank: the ranking needs them all.
 * MPI_Abort is not declared noreturn, so exit follows it. */
static _Noreturn void abort_all(void)
{
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static int gather(const cp_search_in *in, cp_search_out *out, void *ctx, cp_err *e)
{
    int rank, size, i, r, total = 0, rc = CP_OK;
    summary mine, *all = NULL;
    packed *send = NULL, *recv = NULL;
    int *counts = NULL, *displs = NULL;
    (void)ctx;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    memset(&mine, 0, sizeof mine);
    mine.considered = out->considered, mine.dominated = out->dominated;
    mine.pruned_memory = out->pruned_memory, mine.pruned_bound = out->pruned_bound;
    mine.priced = out->priced, mine.min_memory_gb = out->min_memory_gb;
    mine.groups = out->groups, mine.nhits = out->nhits;
    send = calloc((size_t)out->nhits + 1, sizeof *send);
    if (rank == 0) {
        all = calloc((size_t)size, sizeof *all);
        counts = calloc((size_t)size, sizeof *counts);
        displs = calloc((size_t)size, sizeof *displs);
    }
    if (!send || (rank == 0 && (!all || !counts || !displs)))
        abort_all();
    for (i = 0; i < out->nhits; i++) {
        send[i].l = out->hits[i].l;
        send[i].index = out->hits[i].index;
    }
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0,
               MPI_COMM_WORLD);
    if (rank == 0)
        for (r = 0; r < size; r++) {
            counts[r] = all[r].nhits * (int)sizeof(packed);
            displs[r] = total * (int)sizeof(packed);
            total += all[r].nhits;
        }
    if (rank == 0 && !(recv = calloc((size_t)total + 1, sizeof *recv)))
        abort_all();
    MPI_Gatherv(send, out->nhits * (int)sizeof(packed), MPI_BYTE, recv, counts, displs,
                MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        cp_layout *ls = calloc((size_t)total + 1, sizeof *ls);
        long *idx = calloc((size_t)total + 1, sizeof *idx);
        cp_search_out merged;
        if (!ls || !idx)
            abort_all();
        for (i = 0; i < total; i++) {
            ls[i] = recv[i].l;
            idx[i] = recv[i].index;
        }
        rc = cp_search_reprice(in, ls, idx, total, &merged, e);
        if (rc == CP_OK) {
            merged.min_memory_gb = all[0].min_memory_gb;
            for (r = 0; r < size; r++) {
                merged.considered += all[r].considered;
                merged.dominated += all[r].dominated;
                merged.pruned_memory += all[r].pruned_memory;
                merged.pruned_bound += all[r].pruned_bound;
                merged.priced += all[r].priced;
                merged.groups += all[r].groups;
                if (all[r].min_memory_gb < merged.min_memory_gb)
                    merged.min_memory_gb = all[r].min_memory_gb;
            }
            cp_search_free(out);
            *out = merged;
        }
        free(ls);
        free(idx);
    }
    free(send);
    free(recv);
    free(all);
    free(counts);
    free(displs);
    return rc;
}

int main(int argc, char **argv)
{
    cli_search_split sp;
    int rank, size, rc;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    memset(&sp, 0, sizeof sp);
    sp.part = rank;
    sp.nparts = size;
    sp.exchange = gather;
    sp.print = rank == 0;
    /* argv[0] stands for the subcommand, as coarse-plan's dispatcher hands it */
    rc = cli_search_main(argc, argv, &sp);
    MPI_Finalize();
    return rc;
}
