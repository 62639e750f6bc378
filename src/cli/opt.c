/*
 * opt.c - the one option parser (see opt.h): getopt_long driven by a
 * command's table, each value checked by its kind, and --help written from
 * the same table.
 *
 * getopt_long is kept underneath so that everything users relied on stays:
 * abbreviated long options (--comp for --compute-ms when unambiguous),
 * options after positional arguments, "--" ending the options, and the same
 * words in every usage error.  Cost: one pass over argv and one scan of the
 * table per option, with the getopt arrays on the stack.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/check.h"
#include "cli/opt.h"
#include "cli/suggest.h"
#include "core/err.h"
#include "core/units.h"

/* getopt_long's code for table entry i when it has no short name: clear of
 * every char a short option can be. */
#define LONG_CODE 256

/* --help lines stay under HELP_WIDTH characters (79 at most: an 80-column
 * terminal shows them without wrapping), the help starting at HELP_COL. */
#define HELP_WIDTH 80
#define HELP_COL 26

/* How a value is named in a usage error: "-m" when it has a short form,
 * else "--gpus". */
static const char *opt_name(const cli_option *o, char *buf, size_t len)
{
    if (o->short_name)
        snprintf(buf, len, "-%c", o->short_name);
    else
        snprintf(buf, len, "--%s", o->long_name);
    return buf;
}

/* Append the comma-separated items of arg (kept in argv's storage, which
 * strtok_r cuts) to o's list. */
static int add_items(const char *cmd, const cli_option *o, char *arg, const char *name)
{
    const char **items = o->value;
    char *save = NULL, *tok;
    for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*o->count >= (int)o->hi)
            return cli_usage(cmd, "%s: at most %d values", name, (int)o->hi);
        items[(*o->count)++] = tok;
    }
    return CP_OK;
}

/* Check and store one option's argument by its kind. */
static int store(const char *cmd, const cli_option *o, char *arg)
{
    char name[80];
    opt_name(o, name, sizeof name);
    if (o->seen)
        *o->seen = 1;
    switch (o->kind) {
    case CLI_K_FLAG: *(int *)o->value = 1; return CP_OK;
    case CLI_K_STRING: *(const char **)o->value = arg; return CP_OK;
    case CLI_K_INT: {
        long n;
        if (o->lo == 1) /* the usual count: cli.c's message */
            return cli_parse_count(cmd, name, arg, (int)o->hi, o->value);
        if (cp_parse_long(arg, (long)o->lo, (long)o->hi, &n))
            return cli_usage(cmd, "%s: expected a whole number from %ld to %ld, got '%s'", name,
                             (long)o->lo, (long)o->hi, arg);
        *(int *)o->value = (int)n;
        return CP_OK;
    }
    case CLI_K_DOUBLE: return cli_parse_positive(cmd, name, arg, o->hi, o->value);
    case CLI_K_DTYPE: return cli_parse_dtype(cmd, name, arg, o->value);
    case CLI_K_LIST: return add_items(cmd, o, arg, name);
    case CLI_K_CALLBACK:
    case CLI_K_OPTARG: return o->fn(cmd, arg, o->value);
    case CLI_K_END: break;
    }
    return CP_EINTERNAL; /* not reached: find() never returns the terminator */
}

/* The getopt_long arrays for a table: short options in optstring (":h"
 * first: report missing values, and -h for help; at most three characters
 * an option), every long option in lo with "help" last.  Returns the number
 * of entries. */
static int build_getopt(const cli_option *opts, char *optstring, struct option *lo)
{
    int i, n = 0, s = 0;
    optstring[s++] = ':';
    optstring[s++] = 'h';
    for (i = 0; i < CLI_MAX_OPTIONS && opts[i].kind != CLI_K_END; i++) {
        const cli_option *o = &opts[i];
        int code = o->short_name ? o->short_name : LONG_CODE + i;
        if (o->short_name) {
            optstring[s++] = (char)o->short_name;
            if (o->argh)
                optstring[s++] = ':';
            if (o->argh && o->kind == CLI_K_OPTARG)
                optstring[s++] = ':'; /* "c::": the value only as -cVALUE */
        }
        if (o->long_name) {
            lo[n].name = o->long_name;
            lo[n].has_arg = o->kind == CLI_K_OPTARG ? optional_argument
                            : o->argh               ? required_argument
                                                    : no_argument;
            lo[n].flag = NULL;
            lo[n++].val = code;
        }
    }
    optstring[s] = '\0';
    lo[n].name = "help";
    lo[n].has_arg = no_argument;
    lo[n].flag = NULL;
    lo[n++].val = 'h';
    memset(&lo[n], 0, sizeof lo[n]);
    return i;
}

/* The table entry getopt_long's code c stands for, or NULL. */
static const cli_option *find(const cli_option *opts, int nopts, int c)
{
    int i;
    if (c >= LONG_CODE)
        return c - LONG_CODE < nopts ? &opts[c - LONG_CODE] : NULL;
    for (i = 0; i < nopts; i++)
        if (opts[i].short_name == c)
            return &opts[i];
    return NULL;
}

/* The word that followed an option with an optional value given without
 * one (`--offload pool`): getopt takes the value only as `--offload=pool`,
 * so `pool` became a positional argument, and cli_no_args says what was
 * meant.  One command line is parsed per process. */
static const char *optarg_next, *optarg_opt;

/* 1 when two or more candidates start with `word` (getopt refuses an
 * abbreviation that fits several), listed "--a, --b" in list. */
static int ambiguous(const char *word, const char *const *cands, int n, char *list, size_t cap)
{
    int i, hits = 0;
    size_t len = strlen(word), at = 0;
    list[0] = '\0';
    for (i = 0; i < n; i++)
        if (len > 0 && strncmp(cands[i], word, len) == 0) {
            int w = snprintf(list + at, cap - at, "%s--%s", hits ? ", " : "", cands[i]);
            if (w > 0 && at + (size_t)w < cap)
                at += (size_t)w;
            hits++;
        }
    return hits >= 2;
}

/* An unknown long option: the nearest long name of the table (or "help"),
 * compared without the dashes and any "=VALUE". */
static int unknown_option(const char *cmd, const cli_option *opts, int nopts, const char *arg)
{
    const char *cands[CLI_MAX_OPTIONS + 1], *near;
    char word[64], list[256];
    int i, n = 0;
    if (strncmp(arg, "--", 2) != 0)
        return cli_usage(cmd, "unknown option '%s'", arg);
    snprintf(word, sizeof word, "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
    for (i = 0; i < nopts; i++)
        if (opts[i].long_name)
            cands[n++] = opts[i].long_name;
    cands[n++] = "help";
    if (ambiguous(word, cands, n, list, sizeof list))
        return cli_usage(cmd, "ambiguous option '%s' (%s)", arg, list);
    if (!(near = cli_nearest(word, cands, n)))
        return cli_usage(cmd, "unknown option '%s'", arg);
    return cli_usage(cmd, "unknown option '%s'; did you mean '--%s'?", arg, near);
}

int cli_parse(const char *cmd, const cli_usage_text *u, const cli_option *opts, int argc,
              char **argv, int *first)
{
    char optstring[3 * CLI_MAX_OPTIONS + 3];
    struct option lo[CLI_MAX_OPTIONS + 2];
    int c, rc = CP_OK, nopts = build_getopt(opts, optstring, lo);
    opterr = 0;
    optind = 1;
    while (rc == CP_OK && (c = getopt_long(argc, argv, optstring, lo, NULL)) != -1) {
        const cli_option *o;
        if (c == 'h') {
            cli_print_help(u, opts, stdout);
            return CLI_HELP;
        }
        if (c == ':')
            return cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
        if (c == '?' || !(o = find(opts, nopts, c)))
            return unknown_option(cmd, opts, nopts, argv[optind - 1]);
        if (o->kind == CLI_K_OPTARG && !optarg && optind < argc && argv[optind][0] != '-') {
            optarg_next = argv[optind];
            optarg_opt = o->long_name;
        }
        rc = store(cmd, o, optarg);
    }
    *first = optind;
    return rc;
}

int cli_no_args(const char *cmd, int argc, char **argv, int first)
{
    if (first < argc && argv[first] == optarg_next && optarg_opt)
        return cli_usage(cmd, "unexpected argument '%s'; did you mean '--%s=%s'? (an optional "
                              "value follows '=')", argv[first], optarg_opt, argv[first]);
    if (first < argc)
        return cli_usage(cmd, "unexpected argument '%s'", argv[first]);
    return CP_OK;
}

/* Write text wrapped below HELP_WIDTH, every line but the first indented to
 * HELP_COL (the first continues at column col); "\n" in text breaks the
 * line there. */
static void wrap(const char *text, int col, FILE *f)
{
    const char *p = text;
    while (*p) {
        size_t w = strcspn(p, " \n");
        if (col > HELP_COL && col + 1 + (int)w >= HELP_WIDTH) {
            fprintf(f, "\n%*s", HELP_COL, "");
            col = HELP_COL;
        } else if (col > HELP_COL) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, w, f);
        col += (int)w;
        p += w;
        if (*p == '\n') {
            fprintf(f, "\n%*s", HELP_COL, "");
            col = HELP_COL;
        }
        while (*p == ' ' || *p == '\n')
            p++;
    }
    fputc('\n', f);
}

/* One option's lines: "  -m, --model FILE" then its help from HELP_COL
 * (on the next line when the names reach that column). */
static void print_option(const cli_option *o, FILE *f)
{
    char left[128];
    int n;
    if (o->short_name && o->long_name)
        n = snprintf(left, sizeof left, "  -%c, --%s", o->short_name, o->long_name);
    else if (o->short_name)
        n = snprintf(left, sizeof left, "  -%c", o->short_name);
    else
        n = snprintf(left, sizeof left, "      --%s", o->long_name);
    if (o->argh && n > 0 && (size_t)n < sizeof left)
        n += snprintf(left + n, sizeof left - (size_t)n,
                      o->kind == CLI_K_OPTARG ? "[=%s]" : " %s", o->argh);
    fputs(left, f);
    if (n >= HELP_COL) {
        fprintf(f, "\n%*s", HELP_COL, "");
        n = HELP_COL;
    } else {
        fprintf(f, "%*s", HELP_COL - n, "");
        n = HELP_COL;
    }
    wrap(o->help, n, f);
}

void cli_print_help(const cli_usage_text *u, const cli_option *opts, FILE *f)
{
    int i;
    fputs(u->usage, f);
    if (u->about)
        fprintf(f, "\n%s", u->about);
    fputc('\n', f);
    for (i = 0; i < CLI_MAX_OPTIONS && opts[i].kind != CLI_K_END; i++)
        print_option(&opts[i], f);
    fprintf(f, "  -h, --help%*sthis help\n", HELP_COL - 12, "");
    if (u->after)
        fprintf(f, "\n%s", u->after);
}
