/*
 * check.h - the usage error and the value checks every option goes
 * through: opt.c's kinds (OPT_INT, OPT_DOUBLE, OPT_DTYPE) and the commands'
 * callbacks.  A module of its own so that the parser (opt.c) needs neither
 * cli.h nor the pipeline it declares, and cli.h can hold the option tables
 * (no include circle: docs/architecture.md).
 */
#ifndef CP_CLI_CHECK_H
#define CP_CLI_CHECK_H

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

/* --hosts N (1 .. CP_MAX_HOSTS) and --gpus G (1 .. CLI_MAX_GPUS). */
int cli_parse_hosts(const char *cmd, const char *arg, int *out);
int cli_parse_gpus(const char *cmd, const char *arg, int *out);

/* An element type option (--grad-dtype, --activation-dtype): fp32, fp16 or
 * bf16 as bytes per element; 0 or a usage error. */
int cli_parse_dtype(const char *cmd, const char *opt, const char *arg, int *bytes);

/* The largest --hosts (the loader's CP_MAX_HOSTS) and --gpus (GPUs of each
 * host a job uses) take. */
#define CLI_MAX_GPUS 256

#endif
