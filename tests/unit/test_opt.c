/*
 * test_opt.c - the option-table parser (src/cli/opt.c): each kind stores
 * what it should and refuses what it should with the exact usage message,
 * getopt_long's conventions survive (abbreviations, positional arguments
 * moved after the options, missing values), and --help is laid out from the
 * table (names, argument, help wrapped at column 26 within 80 columns).
 */
#include "testutil.h"

#include "cli/cli.h"
#include "cli/opt.h"
#include "cli/suggest.h"

/* What a command under test prints on stderr, captured through a temporary
 * file standing in for descriptor 2. */
typedef struct capture {
    FILE *tmp;
    int saved;
    char text[2048];
} capture;

static void capture_start(capture *c)
{
    fflush(stderr);
    c->tmp = tmpfile();
    assert_non_null(c->tmp);
    c->saved = dup(2);
    assert_true(c->saved >= 0);
    assert_true(dup2(fileno(c->tmp), 2) >= 0);
}

static const char *capture_end(capture *c)
{
    size_t n;
    fflush(stderr);
    assert_true(dup2(c->saved, 2) >= 0);
    close(c->saved);
    rewind(c->tmp);
    n = fread(c->text, 1, sizeof c->text - 1, c->tmp);
    c->text[n] = '\0';
    fclose(c->tmp);
    return c->text;
}

static const cli_usage_text usage = {"usage: coarse-plan t [OPTIONS]\n", NULL, NULL};

/* The values one table fills. */
typedef struct vals {
    int flag, count, bytes, seen, cb_calls, nitems;
    double x;
    const char *file, *items[3];
} vals;

static int count_cb(const char *cmd, char *arg, void *value)
{
    vals *v = value;
    (void)cmd;
    v->cb_calls++;
    return strcmp(arg, "bad") == 0 ? cli_usage(cmd, "--cb: bad") : CP_OK;
}

/* Parse argv (NULL-terminated words after the command word) with the table
 * below; the status, *first and the captured stderr in err. */
static int parse(vals *v, char **words, int *first, capture *err)
{
    const cli_option table[] = {
        OPT_FLAG('f', "flag", &v->flag, "a flag"),
        OPT_STRING('m', "model", "FILE", &v->file, "a file"),
        OPT_INT(0, "count", "N", &v->count, 1, 8, "a count from 1 to 8"),
        OPT_DOUBLE_SEEN(0, "compute-ms", "T", &v->x, 100, &v->seen, "a time in (0, 100]"),
        OPT_DTYPE(0, "dtype", "T", &v->bytes, "an element type"),
        OPT_LIST('l', "list", "A[,B..]", v->items, &v->nitems, 3, "at most three items"),
        OPT_CALLBACK(0, "cb", "X", v, count_cb, "a callback"),
        OPT_INT(0, "gpus", "G", &v->count, 1, 8, "GPUs"),
        OPT_INT(0, "gpus-per-thread", "G", &v->count, 1, 8, "GPUs per thread"),
        OPT_END()};
    char *argv[24];
    int argc = 0, rc;
    argv[argc++] = "t";
    while (*words && argc < 23)
        argv[argc++] = *words++;
    argv[argc] = NULL;
    memset(v, 0, sizeof *v);
    capture_start(err);
    rc = cli_parse("t", &usage, table, argc, argv, first);
    capture_end(err);
    return rc;
}

static void test_kinds_store(void **state)
{
    char ab[] = "a,b", c[] = "c"; /* lists cut their argument: not string literals */
    char *w[] = {"-f", "--model", "m.json", "--count", "8", "--compute-ms", "100", "--dtype",
                 "bf16", "-l", ab, "--list", c, "--cb", "ok", NULL};
    vals v;
    capture err;
    int first;
    (void)state;
    assert_int_equal(parse(&v, w, &first, &err), CP_OK);
    assert_string_equal(err.text, "");
    assert_int_equal(first, 16);           /* argc: no positional argument */
    assert_int_equal(v.flag, 1);
    assert_string_equal(v.file, "m.json");
    assert_int_equal(v.count, 8);          /* the upper bound is allowed */
    assert_near(v.x, 100, 0);              /* (0, 100]: 100 is in */
    assert_int_equal(v.seen, 1);
    assert_int_equal(v.bytes, 2);          /* bf16: 2 bytes per element */
    assert_int_equal(v.nitems, 3);         /* "a,b" then "c": the list grows */
    assert_string_equal(v.items[2], "c");
    assert_int_equal(v.cb_calls, 1);
}

/* Each kind's refusal, word for word, and exit status 2. */
static void test_bounds_refused(void **state)
{
    static const struct {
        const char *opt, *arg, *msg;
    } cases[] = {
        {"--count", "0", "--count: expected a whole number from 1 to 8, got '0'"},
        {"--count", "9", "--count: expected a whole number from 1 to 8, got '9'"},
        {"--compute-ms", "0", "--compute-ms: expected a number in (0, 100], got '0'"},
        {"--compute-ms", "100.5", "--compute-ms: expected a number in (0, 100], got '100.5'"},
        {"--dtype", "int8", "--dtype: expected fp32, fp16 or bf16, got 'int8'"},
        {"-l", "a,b,c,d", "-l: at most 3 values"}, /* the short name, as compare's -m */
        {"--cb", "bad", "--cb: bad"},
    };
    size_t k;
    (void)state;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *w[] = {(char *)cases[k].opt, NULL, NULL};
        char arg[32], want[200];
        vals v;
        capture err;
        int first;
        snprintf(arg, sizeof arg, "%s", cases[k].arg); /* lists cut their argument */
        w[1] = arg;
        snprintf(want, sizeof want, "coarse-plan: error: %s\nTry 'coarse-plan t --help'.\n",
                 cases[k].msg);
        assert_int_equal(parse(&v, w, &first, &err), CP_EINPUT);
        assert_string_equal(err.text, want);
    }
}

/* getopt_long underneath: an unambiguous prefix is the option, an
 * ambiguous one (gpus, gpus-per-thread) is unknown, a missing value is
 * named, and positional arguments move after the options. */
static void test_getopt_conventions(void **state)
{
    char *abbrev[] = {"--comp", "50", NULL};
    char *ambiguous[] = {"--gpu", "2", NULL};
    char *exact[] = {"--gpus", "2", NULL};
    char *missing[] = {"--count", NULL};
    char *unknown[] = {"-x", NULL};
    char *mixed[] = {"in.json", "-f", "out.json", NULL};
    char *dashdash[] = {"--", "-f", NULL};
    vals v;
    capture err;
    int first;
    (void)state;
    assert_int_equal(parse(&v, abbrev, &first, &err), CP_OK);
    assert_near(v.x, 50, 0);
    assert_int_equal(parse(&v, ambiguous, &first, &err), CP_EINPUT);
    assert_string_equal(err.text, "coarse-plan: error: ambiguous option '--gpu' (--gpus, "
                                  "--gpus-per-thread)\nTry 'coarse-plan t --help'.\n");
    assert_int_equal(parse(&v, exact, &first, &err), CP_OK); /* an exact name wins */
    assert_int_equal(v.count, 2);
    assert_int_equal(parse(&v, missing, &first, &err), CP_EINPUT);
    assert_string_equal(err.text, "coarse-plan: error: option '--count' needs a value\n"
                                  "Try 'coarse-plan t --help'.\n");
    assert_int_equal(parse(&v, unknown, &first, &err), CP_EINPUT);
    assert_string_equal(err.text, "coarse-plan: error: unknown option '-x'\n"
                                  "Try 'coarse-plan t --help'.\n");
    /* argv: t in.json -f out.json -> t -f in.json out.json; the files at 2, 3 */
    assert_int_equal(parse(&v, mixed, &first, &err), CP_OK);
    assert_int_equal(v.flag, 1);
    assert_int_equal(first, 2);
    assert_string_equal(mixed[0], "in.json"); /* the caller's words are not moved */
    /* after "--", "-f" is an argument: argv t -- -f, first at 2, flag unset */
    assert_int_equal(parse(&v, dashdash, &first, &err), CP_OK);
    assert_int_equal(first, 2);
    assert_int_equal(v.flag, 0);
}

/* cli_no_args names the first positional argument. */
static void test_no_args(void **state)
{
    char *argv[] = {"t", "-f", "extra", NULL};
    capture err;
    (void)state;
    capture_start(&err);
    assert_int_equal(cli_no_args("t", 3, argv, 3), CP_OK);
    assert_int_equal(cli_no_args("t", 3, argv, 2), CP_EINPUT);
    capture_end(&err);
    assert_string_equal(err.text, "coarse-plan: error: unexpected argument 'extra'\n"
                                  "Try 'coarse-plan t --help'.\n");
}

/* --help from a table: the layout derived by hand.  "  -m, --model FILE"
 * is 18 characters, so its help starts after 8 spaces at column 26;
 * "      --a-very-long-option-name X" is 33, past column 26, so its help
 * starts on the next line.  Lines hold at most 79 characters: after ten
 * "aaaa" the line is 26 + 10 x 4 + 9 spaces = 75 long, and an eleventh
 * word would make it 75 + 1 + 4 = 80, so it wraps. */
static void test_help_layout(void **state)
{
    int flag = 0;
    const char *s = NULL;
    const cli_option table[] = {
        OPT_STRING('m', "model", "FILE", &s, "model JSON"),
        OPT_FLAG(0, "a-very-long-option-name", &flag, "long"),
        OPT_FLAG(0, "wrap", &flag,
                 "aaaa aaaa aaaa aaaa aaaa aaaa aaaa aaaa aaaa aaaa aaaa bbbb cccc dddd"),
        OPT_FLAG(0, "lines", &flag, "one\ntwo"),
        OPT_END()};
    const cli_usage_text u = {"usage: t\n", "About.\n", "After.\n"};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    (void)state;
    assert_non_null(f);
    cli_print_help(&u, table, f);
    fclose(f);
    assert_string_equal(buf,
                        "usage: t\n"
                        "\n"
                        "About.\n"
                        "\n"
                        "  -m, --model FILE        model JSON\n"
                        "      --a-very-long-option-name\n"
                        "                          long\n"
                        "      --wrap              aaaa aaaa aaaa aaaa aaaa aaaa aaaa aaaa aaaa aaaa\n"
                        "                          aaaa bbbb cccc dddd\n"
                        "      --lines             one\n"
                        "                          two\n"
                        "  -h, --help              this help\n"
                        "\n"
                        "After.\n");
    free(buf);
}

/* -h prints the help on stdout and answers CLI_HELP, whatever follows. */
static void test_help_answer(void **state)
{
    char *w[] = {"-h", "--count", "0", NULL};
    vals v;
    capture err;
    int first, saved = dup(1), rc;
    FILE *out = tmpfile();
    (void)state;
    assert_non_null(out);
    fflush(stdout);
    dup2(fileno(out), 1);
    rc = parse(&v, w, &first, &err);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    assert_int_equal(rc, CLI_HELP);
    assert_string_equal(err.text, ""); /* the bad --count after -h is never read */
    assert_true(ftell(out) > 0);
    fclose(out);
}

/* An optional argument comes as --name=ARG only; without one the callback
 * gets NULL, and a separate word stays a positional argument. */
static int optarg_cb(const char *cmd, char *arg, void *value)
{
    (void)cmd;
    *(const char **)value = arg ? arg : "(none)";
    return CP_OK;
}

static void test_optional_argument(void **state)
{
    const char *got = NULL;
    const cli_option table[] = {OPT_CALLBACK_OPTARG(0, "offload", "WHERE", &got, optarg_cb,
                                                    "optional target"),
                                OPT_END()};
    char *bare[] = {"t", "--offload", NULL};
    char *with[] = {"t", "--offload=pool", NULL};
    char *apart[] = {"t", "--offload", "pool", NULL};
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    int first;
    (void)state;
    assert_int_equal(cli_parse("t", &usage, table, 2, bare, &first), CP_OK);
    assert_string_equal(got, "(none)");
    assert_int_equal(cli_parse("t", &usage, table, 2, with, &first), CP_OK);
    assert_string_equal(got, "pool");
    assert_int_equal(cli_parse("t", &usage, table, 3, apart, &first), CP_OK);
    assert_string_equal(got, "(none)");
    assert_int_equal(first, 2); /* "pool" is the first positional argument */
    f = open_memstream(&buf, &len);
    assert_non_null(f);
    cli_print_help(&usage, table, f);
    fclose(f);
    /* "      --offload[=WHERE]" is 23 characters: help at column 26 */
    assert_non_null(strstr(buf, "\n      --offload[=WHERE]   optional target\n"));
    free(buf);
}

/* Issue 24, item 20: "did you mean".  Distances counted by hand: the
 * classic kitten -> sitting is 3 (k->s, e->i, insert g); predcit ->
 * predict is 1 (a swap of two neighbours: plain Levenshtein says 2);
 * ofload -> offload is 1 (insert f); "" -> plan is 4.  Limits: a 7-byte
 * word may be 3 edits off ((7 + 2) / 3), a 1-byte word 1, so "x" is close
 * to no command. */
static void test_suggest(void **state)
{
    static const char *const cmds[] = {"check", "info", "collective", "predict", "plan",
                                       "simulate", "compare", "import", "calibrate", "pod"};
    (void)state;
    assert_int_equal(cli_edit_distance("kitten", "sitting"), 3);
    assert_int_equal(cli_edit_distance("predcit", "predict"), 1);
    assert_int_equal(cli_edit_distance("ofload", "offload"), 1);
    assert_int_equal(cli_edit_distance("", "plan"), 4);
    assert_string_equal(cli_nearest("predcit", cmds, 10), "predict");
    assert_string_equal(cli_nearest("inof", cmds, 10), "info"); /* swap: 1 <= (4+2)/3 = 2 */
    assert_string_equal(cli_nearest("pdo", cmds, 10), "pod");   /* swap: 1 <= 1 */
    assert_null(cli_nearest("x", cmds, 10));
    assert_null(cli_nearest("frobnicate", cmds, 10));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds_store),       cmocka_unit_test(test_bounds_refused),
        cmocka_unit_test(test_getopt_conventions), cmocka_unit_test(test_no_args),
        cmocka_unit_test(test_help_layout),       cmocka_unit_test(test_help_answer),
        cmocka_unit_test(test_optional_argument),
        cmocka_unit_test(test_suggest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
