/*
 * fileio.h - reading whole input files and writing output files atomically.
 *
 * Inputs are read whole (they are small: the largest shipped model is under a
 * megabyte) with a size cap so that a wrong path to a disk image is refused
 * before we allocate for it.  Outputs go to a temporary file in the target's
 * directory and are renamed over the target only when complete, so a reader
 * never sees half a plan; "-" means standard output.
 */
#ifndef CP_FILEIO_H
#define CP_FILEIO_H

#include <stddef.h>
#include <stdio.h>

#include "core/err.h"

/* Largest input file we read: 256 MiB.  The biggest realistic input (a model
 * of a million tensors) is about 100 MiB of JSON; anything larger is a
 * mistake, and reading it would need that much memory again for the tree. */
#define CP_MAX_INPUT_BYTES ((size_t)256 << 20)

/* Read all of `path` into a new NUL-terminated buffer (*text, owned by the
 * caller, free()), its length in *len.  "-" (or "/dev/stdin") reads
 * standard input, which may be a pipe.  Any other path must name a regular
 * file: a named pipe, a device, a socket or a directory is refused by its
 * type before it is opened (opening a FIFO for reading blocks until a
 * writer comes).  CP_EINPUT if it is not a regular file, cannot be opened
 * or is too large, CP_EINTERNAL on read or allocation failure. */
int cp_read_file(const char *path, char **text, size_t *len, cp_err *e);

/* An output file being written.  Open with cp_out_open, write to ->f, then
 * either cp_out_commit (rename into place) or cp_out_abort (remove). */
typedef struct cp_outfile {
    FILE *f;          /* where to write: the temporary file, or memory for "-" */
    char *path;       /* final path, owned; NULL for stdout */
    char *tmp_path;   /* temporary path in the same directory, owned */
    char *mem;        /* "-" or a device: the output so far (open_memstream), owned */
    size_t memlen;
    char *dev_path;   /* an existing non-regular file (/dev/null, a FIFO), owned */
} cp_outfile;

/* The last part of a path in out (cap bytes), without its extension when
 * strip_ext: "dir/aws-p4d-24xl-topo.xml" -> "aws-p4d-24xl-topo",
 * "org/Llama-2-7b-hf/" -> "Llama-2-7b-hf".  The default name an importer
 * gives what it converts. */
void cp_base_name(const char *path, int strip_ext, char *out, size_t cap);

/* Start writing `path` ("-" = stdout).  On error nothing is created.
 * Standard output is held in memory until cp_out_commit, so a command that
 * fails half-way prints nothing a pipeline could take for a result; so is
 * an existing file that is not a regular one (/dev/null, a FIFO), which is
 * written in place at commit: renaming a temporary over it would replace
 * the device. */
int cp_out_open(cp_outfile *o, const char *path, cp_err *e);

/* Finish: flush, close and rename into place.  On error the temporary file is
 * removed and the target is left as it was. */
int cp_out_commit(cp_outfile *o, cp_err *e);

/* Give up: close and remove the temporary file.  NULL ->f is a no-op. */
void cp_out_abort(cp_outfile *o);

/* 1 when the two paths name the same existing file (same device and inode),
 * so that an output cannot overwrite an input. */
int cp_same_file(const char *a, const char *b);

/* FNV-1a 64-bit hash of a buffer: used to record which input a plan was
 * made from.  Not cryptographic; it detects edits, not attacks. */
unsigned long long cp_hash64(const void *buf, size_t len);

#endif
