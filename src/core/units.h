/*
 * units.h - parsing and printing sizes, counts and times.
 *
 * Sizes on the command line take K/M/G/T suffixes in powers of 1024, as
 * nccl-tests does (-b 8 -e 128M).  Printed byte sizes use decimal units
 * (1 MB = 1e6 bytes) to match bandwidths in GB/s = 1e9 bytes/s.
 */
#ifndef CP_UNITS_H
#define CP_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Parse "8", "128M", "1.5K", "2G" into bytes.  0 on success, -1 when the text
 * is not a size or the value is above 2^50 (1 PiB).  Fractions must give a
 * whole number of bytes. */
int cp_parse_size(const char *s, int64_t *out);

/* Parse a finite double; 0 on success, -1 otherwise. */
int cp_parse_double(const char *s, double *out);

/* Parse a decimal integer in [lo, hi]; 0 on success, -1 otherwise. */
int cp_parse_long(const char *s, long lo, long hi, long *out);

/* "102.2 MB", "8 B", "1.07 GB" into buf; returns buf. */
const char *cp_fmt_bytes(double bytes, char *buf, size_t cap);

/* "25,557,032" into buf; returns buf. */
const char *cp_fmt_count(int64_t n, char *buf, size_t cap);

/* Round to `decimals` decimal places (for stable machine-readable output). */
double cp_round(double x, int decimals);

/* "" when n is 1, else "s": every printed count agrees with its noun
 * ("1 GPU", "2 GPUs"). */
static inline const char *cp_s(long long n)
{
    return n == 1 ? "" : "s";
}

/* Monotonic seconds, for benchmarks. */
double cp_now_s(void);

#endif
