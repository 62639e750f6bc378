/*
 * usage.h - usage errors and the value checks behind the option kinds:
 * what both the option parser (opt.c) and the commands (cli.h, which
 * includes this) need.  A header of its own so that opt.c need not include
 * cli.h, whose CLI_MODEL_OPTIONS tables include opt.h (no include circle,
 * docs/architecture.md).  Defined in cli.c.
 */
#ifndef CP_CLI_USAGE_H
#define CP_CLI_USAGE_H

/* Print "coarse-plan: error: <msg>" and a hint to stderr; returns 2. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The value checks behind the option kinds (opt.h), for callbacks too: each
 * stores and returns 0, or prints the usage error naming opt and returns 2.
 * A whole number in [1, max] (CLI_K_INT's message):
 *   "--gpus: expected a whole number from 1 to 256, got '0'" */
int cli_parse_count(const char *cmd, const char *opt, const char *arg, int max, int *out);

/* A number in (0, max] (CLI_K_DOUBLE's message). */
int cli_parse_positive(const char *cmd, const char *opt, const char *arg, double max,
                       double *out);

/* An element type option (--grad-dtype, --activation-dtype): fp32, fp16 or
 * bf16 as bytes per element; 0 or a usage error. */
int cli_parse_dtype(const char *cmd, const char *opt, const char *arg, int *bytes);

#endif
