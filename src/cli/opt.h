/*
 * opt.h - option tables: each subcommand declares its options once, and one
 * parser reads them and writes `--help` (after git's parse-options.h).
 *
 * A command builds an array of cli_option with the OPT_* macros below, each
 * entry holding the option's names, the kind of argument it takes, its
 * bounds, where the value goes and its help line, and ends it with
 * OPT_END().  cli_parse() runs getopt_long over argv with that table, so
 * long options may be abbreviated and options may follow the positional
 * arguments, as before; each value is checked by its kind and stored.  The
 * same table prints the command's --help, so what is parsed and what is
 * documented cannot drift (docs/cli.md is checked against --help as well).
 *
 * Adding an option is one line in the command's table, e.g.
 *     OPT_DOUBLE(0, "cycle-ms", "C", &o->p.cycle_ms, 1e5, "Horovod cycle time (ms, default 5)"),
 * plus the code that uses the value (docs/cli.md, "Adding an option").
 *
 * Usage errors print as they always have ("coarse-plan: error: --gpus:
 * expected a whole number from 1 to 256, got '0'" and a hint; exit 2).
 * A value is named by its short form when it has one ("-m"), else its long
 * form ("--gpus").  Nothing here allocates; tables and values belong to the
 * caller.
 */
#ifndef CP_CLI_OPT_H
#define CP_CLI_OPT_H

#include <stdio.h>

typedef enum cli_opt_kind {
    CLI_K_END,      /* the table's terminator */
    CLI_K_FLAG,     /* no argument: *(int *)value = 1 */
    CLI_K_STRING,   /* *(const char **)value = the argument (argv's storage) */
    CLI_K_INT,      /* a whole number in [lo, hi] into *(int *)value */
    CLI_K_DOUBLE,   /* a number in (0, hi] into *(double *)value */
    CLI_K_DTYPE,    /* fp32 | fp16 | bf16 as bytes per element, *(int *)value */
    CLI_K_LIST,     /* comma-separated items appended to (const char **)value, *count
                     * of them, at most hi (the items point into argv) */
    CLI_K_CALLBACK, /* fn(cmd, arg, value): CP_OK or a usage error (cli_usage) */
    CLI_K_OPTARG,   /* the same with an optional argument, given as --name=ARG
                     * only (getopt's optional_argument); fn gets NULL without */
} cli_opt_kind;

typedef struct cli_option {
    cli_opt_kind kind;
    int short_name;        /* 'm', or 0 for a long option only */
    const char *long_name; /* "model" (without the dashes), or NULL */
    const char *argh;      /* the argument in --help ("FILE"); NULL: takes none */
    void *value;           /* where the parsed value goes (see the kinds) */
    int *count;            /* CLI_K_LIST: items so far; else NULL */
    double lo, hi;         /* CLI_K_INT [lo, hi]; CLI_K_DOUBLE (0, hi]; CLI_K_LIST max */
    int (*fn)(const char *cmd, char *arg, void *value); /* CLI_K_CALLBACK */
    int *seen;             /* when not NULL, set to 1 when the option is given */
    const char *help;      /* one paragraph, wrapped by --help; "\n" breaks a line */
} cli_option;

#define OPT_FLAG(s, l, ptr, h) {CLI_K_FLAG, s, l, NULL, ptr, NULL, 0, 0, NULL, NULL, h}
#define OPT_STRING(s, l, argh, ptr, h) {CLI_K_STRING, s, l, argh, ptr, NULL, 0, 0, NULL, NULL, h}
#define OPT_INT(s, l, argh, ptr, lo, hi, h) {CLI_K_INT, s, l, argh, ptr, NULL, lo, hi, NULL, NULL, h}
#define OPT_DOUBLE(s, l, argh, ptr, hi, h) {CLI_K_DOUBLE, s, l, argh, ptr, NULL, 0, hi, NULL, NULL, h}
/* OPT_DOUBLE that also records that it was given (a default that depends on it) */
#define OPT_DOUBLE_SEEN(s, l, argh, ptr, hi, seen, h)                                  \
    {CLI_K_DOUBLE, s, l, argh, ptr, NULL, 0, hi, NULL, seen, h}
#define OPT_DTYPE(s, l, argh, ptr, h) {CLI_K_DTYPE, s, l, argh, ptr, NULL, 0, 0, NULL, NULL, h}
#define OPT_LIST(s, l, argh, items, n, max, h) {CLI_K_LIST, s, l, argh, items, n, 0, max, NULL, NULL, h}
#define OPT_CALLBACK(s, l, argh, ptr, fn, h) {CLI_K_CALLBACK, s, l, argh, ptr, NULL, 0, 0, fn, NULL, h}
#define OPT_CALLBACK_OPTARG(s, l, argh, ptr, fn, h)                                    \
    {CLI_K_OPTARG, s, l, argh, ptr, NULL, 0, 0, fn, NULL, h}
#define OPT_END() {CLI_K_END, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL}

/* What --help prints around the table. */
typedef struct cli_usage_text {
    const char *usage; /* the synopsis lines, each starting "usage: " or spaces */
    const char *about; /* the paragraphs before the options, or NULL */
    const char *after; /* the paragraphs after them, or NULL */
} cli_usage_text;

/* cli_parse's answer when it printed --help: the command returns 0. */
#define CLI_HELP (-1)

/* The most options one table may hold (a limit of the getopt_long arrays
 * cli_parse builds on its stack; predict, the largest, has 35). */
#define CLI_MAX_OPTIONS 96

/* Print "coarse-plan: error: <msg>" and a hint to stderr; returns 2
 * (cli.c, as the value checks below: declared here so that the parser
 * need not include cli.h, which includes this header). */
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

/* Parse argv[1..argc-1] (argv[0] is the command word) against opts, for
 * command `cmd` (named in usage errors).  -h and --help print the help
 * built from u and opts and return CLI_HELP.  Stops at the first bad option:
 * a usage error is printed and CP_EINPUT (2) returned.  On CP_OK, *first is
 * the index in argv of the first positional argument (argc when none; GNU
 * order: positional arguments are moved after the options). */
int cli_parse(const char *cmd, const cli_usage_text *u, const cli_option *opts, int argc,
              char **argv, int *first);

/* Write the help of u and opts to f (what -h prints). */
void cli_print_help(const cli_usage_text *u, const cli_option *opts, FILE *f);

/* A usage error for the first positional argument past `first` when the
 * command takes none: "unexpected argument 'X'"; CP_OK when there is none. */
int cli_no_args(const char *cmd, int argc, char **argv, int first);

#endif
