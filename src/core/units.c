/*
 * units.c - sizes, counts and times (see units.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/units.h"

/* Largest size accepted on the command line: 1 PiB. */
#define MAX_SIZE ((int64_t)1 << 50)

int cp_parse_double(const char *s, double *out)
{
    char *end;
    double x;
    if (!s || !*s)
        return -1;
    errno = 0;
    x = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(x))
        return -1;
    *out = x;
    return 0;
}

int cp_parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long x;
    if (!s || !*s)
        return -1;
    errno = 0;
    x = strtol(s, &end, 10);
    if (end == s || *end || errno == ERANGE || x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

int cp_parse_size(const char *s, int64_t *out)
{
    char *end;
    double x, mult = 1;
    if (!s || !*s)
        return -1;
    errno = 0;
    x = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(x) || x < 0)
        return -1;
    switch (*end) {
    case 'k': case 'K': mult = 1024.0; end++; break;
    case 'm': case 'M': mult = 1048576.0; end++; break;
    case 'g': case 'G': mult = 1073741824.0; end++; break;
    case 't': case 'T': mult = 1099511627776.0; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return -1;
    x *= mult;
    if (x > (double)MAX_SIZE || x != floor(x))
        return -1;
    *out = (int64_t)x;
    return 0;
}

const char *cp_fmt_bytes(double bytes, char *buf, size_t cap)
{
    static const char *const unit[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    int u = 0;
    while (bytes >= 1000 && u < 5) {
        bytes /= 1000;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%.0f B", bytes);
    else
        snprintf(buf, cap, "%.*f %s", bytes < 10 ? 2 : 1, bytes, unit[u]);
    return buf;
}

const char *cp_fmt_count(int64_t n, char *buf, size_t cap)
{
    char digits[32];
    int len, i, j = 0, neg = n < 0;
    unsigned long long u = neg ? 0ULL - (unsigned long long)n : (unsigned long long)n;
    len = snprintf(digits, sizeof digits, "%llu", u);
    if (cap == 0)
        return buf;
    if (neg && (size_t)j + 1 < cap)
        buf[j++] = '-';
    for (i = 0; i < len && (size_t)j + 1 < cap; i++) {
        if (i > 0 && (len - i) % 3 == 0 && (size_t)j + 2 < cap)
            buf[j++] = ',';
        buf[j++] = digits[i];
    }
    buf[j] = '\0';
    return buf;
}

double cp_round(double x, int decimals)
{
    double p = pow(10.0, decimals);
    double r = round(x * p) / p;
    return r == 0 ? 0.0 : r; /* never print -0 */
}

double cp_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
