/*
 * fileio.c - whole-file reads with a size cap, atomic writes (see fileio.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fileio.h"

/* Read a stream of unknown size (a pipe, a terminal) up to the cap. */
static int read_stream(FILE *f, const char *path, char **text, size_t *len, cp_err *e)
{
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf)
        return cp_fail_at(e, CP_EINTERNAL, path, 0, 0, NULL, "out of memory");
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
        if (n == cap) {
            char *p;
            if (cap >= CP_MAX_INPUT_BYTES) {
                free(buf);
                return cp_fail_at(e, CP_EINPUT, path, 0, 0, NULL,
                                  "input is larger than the limit of %zu bytes (256 MiB)",
                                  CP_MAX_INPUT_BYTES);
            }
            cap = cap * 2 > CP_MAX_INPUT_BYTES ? CP_MAX_INPUT_BYTES : cap * 2;
            p = realloc(buf, cap + 1);
            if (!p) {
                free(buf);
                return cp_fail_at(e, CP_EINTERNAL, path, 0, 0, NULL, "out of memory");
            }
            buf = p;
        }
    }
    if (ferror(f)) {
        free(buf);
        return cp_fail_at(e, CP_EINTERNAL, path, 0, 0, NULL, "read failed");
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return CP_OK;
}

/* What a non-regular file is, for the message. */
static const char *file_type_name(mode_t mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISFIFO(mode) ? "a named pipe"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a file";
}

/* Refuse anything but a regular file, by its type alone.  Opening a named
 * pipe for reading blocks until a writer comes (forever, when none does),
 * and a device such as /dev/zero never ends, so inputs are checked before
 * they are opened; standard input is named "-" (or /dev/stdin). */
static int refuse_irregular(const char *path, const struct stat *st, cp_err *e)
{
    if (S_ISREG(st->st_mode))
        return CP_OK;
    return cp_fail_at(e, CP_EINPUT, path, 0, 0, NULL,
                      "not a regular file (%s); give a file, or \"-\" to read standard "
                      "input", file_type_name(st->st_mode));
}

int cp_read_file(const char *path, char **text, size_t *len, cp_err *e)
{
    FILE *f;
    struct stat st;
    char *buf;
    size_t n;
    int fd;

    *text = NULL;
    *len = 0;
    if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdin") == 0)
        return read_stream(stdin, "<stdin>", text, len, e);
    if (stat(path, &st) != 0)
        return cp_fail_at(e, CP_EINPUT, path, 0, 0, NULL, "cannot open: %s", strerror(errno));
    if (refuse_irregular(path, &st, e))
        return CP_EINPUT;
    /* O_NONBLOCK: should the path become a FIFO between stat and open, the
     * open returns at once and fstat below refuses it */
    fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return cp_fail_at(e, CP_EINPUT, path, 0, 0, NULL, "cannot open: %s", strerror(errno));
    if (fstat(fd, &st) != 0) {
        close(fd);
        return cp_fail_at(e, CP_EINTERNAL, path, 0, 0, NULL, "fstat failed: %s",
                          strerror(errno));
    }
    if (refuse_irregular(path, &st, e)) {
        close(fd);
        return CP_EINPUT;
    }
    if (!(f = fdopen(fd, "rb"))) {
        close(fd);
        return cp_fail_at(e, CP_EINTERNAL, path, 0, 0, NULL, "out of memory");
    }
    if ((unsigned long long)st.st_size > CP_MAX_INPUT_BYTES) {
        fclose(f);
        return cp_fail_at(e, CP_EINPUT, path, 0, 0, NULL,
                          "file is %lld bytes; the limit is %zu (256 MiB)",
                          (long long)st.st_size, CP_MAX_INPUT_BYTES);
    }
    buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        fclose(f);
        return cp_fail_at(e, CP_EINTERNAL, path, 0, 0, NULL, "out of memory");
    }
    n = fread(buf, 1, (size_t)st.st_size, f);
    if (ferror(f)) {
        free(buf);
        fclose(f);
        return cp_fail_at(e, CP_EINTERNAL, path, 0, 0, NULL, "read failed");
    }
    fclose(f);
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return CP_OK;
}

/* Directory part of `path` ("." when none), as a new string. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n;
    char *d;
    if (!slash)
        return strdup(".");
    n = (size_t)(slash - path);
    if (n == 0)
        n = 1; /* "/file" lives in "/" */
    d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

void cp_base_name(const char *path, int strip_ext, char *out, size_t cap)
{
    size_t n = strlen(path);
    const char *b;
    char *dot;
    while (n > 1 && path[n - 1] == '/')
        n--;
    for (b = path + n; b > path && b[-1] != '/'; b--)
        ;
    snprintf(out, cap, "%.*s", (int)(n - (size_t)(b - path)), b);
    dot = strip_ext ? strrchr(out, '.') : NULL;
    if (dot && dot != out)
        *dot = '\0';
}

int cp_out_open(cp_outfile *o, const char *path, cp_err *e)
{
    char *dir;
    int fd;
    size_t cap;

    struct stat st;

    memset(o, 0, sizeof *o);
    if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            return cp_fail_at(e, CP_EINPUT, path, 0, 0, NULL,
                              "cannot create output: it is a directory");
        if (!(o->dev_path = strdup(path)))
            return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    if (strcmp(path, "-") == 0 || o->dev_path) {
        o->f = open_memstream(&o->mem, &o->memlen);
        if (!o->f)
            cp_out_abort(o);
        return o->f ? CP_OK : cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    dir = dir_of(path);
    if (!dir)
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    cap = strlen(dir) + 32;
    o->tmp_path = malloc(cap);
    o->path = strdup(path);
    if (!o->tmp_path || !o->path) {
        free(dir);
        cp_out_abort(o);
        return cp_fail(e, CP_EINTERNAL, "out of memory");
    }
    snprintf(o->tmp_path, cap, "%s/.coarse-plan.XXXXXX", dir);
    free(dir);
    fd = mkstemp(o->tmp_path);
    if (fd < 0) {
        int err = errno;
        free(o->tmp_path);
        o->tmp_path = NULL;
        cp_out_abort(o);
        return cp_fail_at(e, CP_EINPUT, path, 0, 0, NULL, "cannot create output: %s",
                          strerror(err));
    }
    (void)fchmod(fd, 0644);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        close(fd);
        cp_out_abort(o);
        return cp_fail_at(e, CP_EINTERNAL, path, 0, 0, NULL, "fdopen failed");
    }
    return CP_OK;
}

int cp_out_commit(cp_outfile *o, cp_err *e)
{
    int bad;
    if (!o->path) { /* "-" or a device: now the whole output exists, write it */
        FILE *to = stdout;
        char where[256];
        snprintf(where, sizeof where, "%s", o->dev_path ? o->dev_path : "standard output");
        bad = ferror(o->f) != 0;
        bad |= fclose(o->f) != 0;
        o->f = NULL;
        if (!bad && o->dev_path && !(to = fopen(o->dev_path, "w")))
            bad = 1;
        if (!bad) {
            bad = fwrite(o->mem, 1, o->memlen, to) != o->memlen || fflush(to) != 0;
            if (to != stdout && fclose(to) != 0)
                bad = 1;
        }
        cp_out_abort(o);
        return bad ? cp_fail(e, CP_EINTERNAL, "writing to %s failed", where) : CP_OK;
    }
    bad = fflush(o->f) != 0 || ferror(o->f);
    if (fclose(o->f) != 0)
        bad = 1;
    o->f = NULL;
    if (bad || rename(o->tmp_path, o->path) != 0) {
        int err = errno;
        char path[256];
        snprintf(path, sizeof path, "%s", o->path);
        cp_out_abort(o);
        return cp_fail_at(e, CP_EINTERNAL, path, 0, 0, NULL, "writing output failed: %s",
                          strerror(err));
    }
    free(o->tmp_path);
    free(o->path);
    memset(o, 0, sizeof *o);
    return CP_OK;
}

void cp_out_abort(cp_outfile *o)
{
    if (o->f)
        fclose(o->f);
    free(o->mem);
    free(o->dev_path);
    if (o->tmp_path)
        unlink(o->tmp_path);
    free(o->tmp_path);
    free(o->path);
    memset(o, 0, sizeof *o);
}

int cp_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
        return 0;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

unsigned long long cp_hash64(const void *buf, size_t len)
{
    const unsigned char *p = buf;
    unsigned long long h = 1469598103934665603ULL; /* FNV-1a offset basis */
    size_t i;
    for (i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ULL; /* FNV-1a 64-bit prime */
    }
    return h;
}
