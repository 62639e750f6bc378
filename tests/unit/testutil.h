/*
 * testutil.h - what every cmocka suite here needs: the cmocka includes in
 * the order cmocka demands, a tolerance assertion for doubles, temporary
 * input files written from strings, and the location of the shared
 * reference data (tests read it in place, never copy it).
 *
 * Suites run from the repository root (make does that).
 */
#ifndef CP_TESTUTIL_H
#define CP_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reference data shipped beside the project (see ../shared/data/README.md). */
/* SHARED_DATA: overridable (make unit CFLAGS=-DSHARED_DATA=...) to run the
 * suites as a machine without the reference data would */
#ifndef SHARED_DATA
#define SHARED_DATA "../shared/data"
#endif

/* |a - b| <= tol, with both values printed on failure. */
#define assert_near(a, b, tol)                                                          \
    do {                                                                                \
        double a_ = (a), b_ = (b), t_ = (tol);                                          \
        if (!(fabs(a_ - b_) <= t_))                                                     \
            fail_msg("%s = %.9g, expected %s = %.9g (tolerance %g)", #a, a_, #b, b_, t_); \
    } while (0)

/* lo <= a <= hi, with the values printed on failure. */
#define assert_between(a, lo, hi)                                                       \
    do {                                                                                \
        double a_ = (a), l_ = (lo), h_ = (hi);                                          \
        if (!(a_ >= l_ && a_ <= h_))                                                    \
            fail_msg("%s = %.9g, expected in [%.9g, %.9g]", #a, a_, l_, h_);            \
    } while (0)

/* Relative closeness: |a - b| <= rel * |b|. */
#define assert_rel(a, b, rel) assert_near((a), (b), fabs((double)(b)) * (rel))

/* Write `text` to a fresh temporary file; returns its path (static buffer
 * per call site is not needed: the caller frees it with free()). */
static inline char *write_temp(const char *text)
{
    char *path = strdup("/tmp/cp-test-XXXXXX.json");
    int fd;
    FILE *f;
    if (!path)
        return NULL;
    fd = mkstemps(path, 5);
    if (fd < 0) {
        free(path);
        return NULL;
    }
    f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        free(path);
        return NULL;
    }
    fputs(text, f);
    fclose(f);
    return path;
}

/* Remove and free a path from write_temp. */
static inline void drop_temp(char *path)
{
    if (path) {
        unlink(path);
        free(path);
    }
}

/* 1 when the shared reference data folder is present. */
static inline int have_shared_data(void)
{
    return access(SHARED_DATA "/README.md", R_OK) == 0;
}

#endif
