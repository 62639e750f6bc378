/*
 * check.c - the usage error and the option value checks (see check.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/check.h"
#include "core/err.h"
#include "core/units.h"
#include "topo/topo.h"

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fputs("coarse-plan: error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'coarse-plan %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
    return CP_EINPUT;
}

int cli_parse_count(const char *cmd, const char *opt, const char *arg, int max, int *out)
{
    long n;
    if (cp_parse_long(arg, 1, max, &n))
        return cli_usage(cmd, "%s: expected a whole number from 1 to %d, got '%s'", opt, max,
                         arg);
    *out = (int)n;
    return CP_OK;
}

int cli_parse_positive(const char *cmd, const char *opt, const char *arg, double max,
                       double *out)
{
    if (cp_parse_double(arg, out) || !(*out > 0) || *out > max)
        return cli_usage(cmd, "%s: expected a number in (0, %g], got '%s'", opt, max, arg);
    return CP_OK;
}

int cli_parse_hosts(const char *cmd, const char *arg, int *out)
{
    return cli_parse_count(cmd, "--hosts", arg, CP_MAX_HOSTS, out);
}

int cli_parse_gpus(const char *cmd, const char *arg, int *out)
{
    return cli_parse_count(cmd, "--gpus", arg, CLI_MAX_GPUS, out);
}

int cli_parse_dtype(const char *cmd, const char *opt, const char *arg, int *bytes)
{
    if (strcmp(arg, "fp32") == 0)
        *bytes = 4;
    else if (strcmp(arg, "fp16") == 0 || strcmp(arg, "bf16") == 0)
        *bytes = 2;
    else
        return cli_usage(cmd, "%s: expected fp32, fp16 or bf16, got '%s'", opt, arg);
    return CP_OK;
}
