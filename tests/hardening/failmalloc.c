/*
 * failmalloc.c - an allocation-failure shim for the out-of-memory test
 * (tests/hardening/oom.sh, issue 24 item 5), in the manner of SQLite's
 * test harness: LD_PRELOAD it and the FAILMALLOC_AT-th call (0-based) to
 * malloc, calloc or realloc returns NULL with errno ENOMEM; every other call
 * goes to glibc.  With FAILMALLOC_STATS set, the number of calls is written
 * to standard error at exit, which tells the test how far to count.
 *
 * Only the plain build uses it: AddressSanitizer replaces the allocator
 * itself, and the two cannot be preloaded together.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* glibc's own allocator, under the names it exports for this purpose */
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t k, size_t n);
void *__libc_realloc(void *p, size_t n);

static long fail_at = -1; /* the call to fail; -1: none */
static long calls;        /* calls so far */
static int stats;

/* Read the settings once, before main: getenv does not allocate. */
__attribute__((constructor)) static void setup(void)
{
    const char *at = getenv("FAILMALLOC_AT");
    fail_at = at && *at ? strtol(at, NULL, 10) : -1;
    stats = getenv("FAILMALLOC_STATS") != NULL;
}

/* Whether this call is the one to fail. */
static int failing(void)
{
    return calls++ == fail_at;
}

__attribute__((destructor)) static void report(void)
{
    if (stats)
        fprintf(stderr, "failmalloc: %ld calls\n", calls);
}

void *malloc(size_t n)
{
    if (failing()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    if (failing()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    if (failing()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, n);
}
