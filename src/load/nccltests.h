/*
 * nccltests.h - reading the output of NVIDIA's nccl-tests (all_reduce_perf
 * and friends): the measured table to calibrate against.
 *
 * Accepted: the verbatim console output, with anything around it (the
 * reference files carry a source header and markdown fences).  A data row is
 * a line whose first two fields are integers (size, count) and whose third
 * is a type name; the out-of-place time is the first time column.  Rows
 * with a root column (newer nccl-tests) are recognised by their field count.
 * The header line "# nThread T nGpus G ..." gives the GPUs per thread.
 */
#ifndef CP_NCCLTESTS_H
#define CP_NCCLTESTS_H

#include "core/err.h"

typedef struct cp_nccl_row {
    double bytes;     /* size column */
    double time_us;   /* out-of-place time */
    double busbw;     /* out-of-place busbw as printed, GB/s */
    int line;         /* line in the file */
} cp_nccl_row;

typedef struct cp_nccl_table {
    cp_nccl_row *rows;   /* owned, increasing size */
    int nrows;
    int gpus_per_thread; /* nGpus from the header, 1 when absent */
    int nthreads;        /* nThread from the header, 1 when absent */
} cp_nccl_table;

/* Parse `path`.  CP_EINPUT with the line of a malformed row, or when the file
 * has no data row at all. */
int cp_nccl_load(const char *path, cp_nccl_table *t, cp_err *e);

void cp_nccl_free(cp_nccl_table *t);

#endif
