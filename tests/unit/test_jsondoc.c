/*
 * test_jsondoc.c - positions of JSON values, strict keys and typed getters.
 *
 * Expected lines and columns are counted by hand in the literal texts below
 * (columns are 1-based bytes).
 */
#include "testutil.h"

#include "core/fileio.h"
#include "core/jsondoc.h"

#include <signal.h>
#include <sys/stat.h>

/* Line 1: {  Line 2:   "a": 1,  Line 3:   "links": [  Line 4:     {"gbs": -25},
 * Line 5:     {"gbs": 3, "x": true}  Line 6:   ]  Line 7: } */
static const char doc_text[] = "{\n"
                               "  \"a\": 1,\n"
                               "  \"links\": [\n"
                               "    {\"gbs\": -25},\n"
                               "    {\"gbs\": 3, \"x\": true}\n"
                               "  ]\n"
                               "}\n";

static void load_text(cp_jdoc *d, const char *text)
{
    cp_err e;
    assert_int_equal(cp_jdoc_load_text(d, "t.json", text, strlen(text), &e), CP_OK);
}

static void test_locate_member_value(void **state)
{
    cp_jdoc d;
    int line, col;
    const json_t *l0;
    (void)state;
    load_text(&d, doc_text);
    l0 = json_array_get(json_object_get(d.root, "links"), 0);
    cp_jdoc_locate(&d, l0, "gbs", &line, &col);
    /* line 4 is `    {"gbs": -25},`: 4 spaces, {, "gbs" (5), :, space -> '-' at col 13 */
    assert_int_equal(line, 4);
    assert_int_equal(col, 13);
    cp_jdoc_free(&d);
}

static void test_locate_object_itself(void **state)
{
    cp_jdoc d;
    int line, col;
    const json_t *l1;
    (void)state;
    load_text(&d, doc_text);
    l1 = json_array_get(json_object_get(d.root, "links"), 1);
    cp_jdoc_locate(&d, l1, NULL, &line, &col);
    /* second element starts at the '{' after four spaces on line 5 */
    assert_int_equal(line, 5);
    assert_int_equal(col, 5);
    /* a missing key falls back to the object's own position */
    cp_jdoc_locate(&d, l1, "nope", &line, &col);
    assert_int_equal(line, 5);
    assert_int_equal(col, 5);
    /* a singleton value (true) found through its parent and key:
     * `    {"gbs": 3, "x": true}` -> 't' is at 4+1+5+2+1+2+3+2 + 1 = col 21 */
    cp_jdoc_locate(&d, l1, "x", &line, &col);
    assert_int_equal(line, 5);
    assert_int_equal(col, 21);
    cp_jdoc_free(&d);
}

static void test_fail_message_and_path(void **state)
{
    cp_jdoc d;
    cp_err e;
    const json_t *l0;
    (void)state;
    load_text(&d, doc_text);
    l0 = json_array_get(json_object_get(d.root, "links"), 0);
    assert_int_equal(cp_jdoc_fail(&d, &e, l0, "gbs", "links[0]", "bad %d", 7), CP_EINPUT);
    assert_string_equal(e.file, "t.json");
    assert_int_equal(e.line, 4);
    assert_int_equal(e.col, 13);
    assert_string_equal(e.where, "links[0].gbs");
    assert_string_equal(e.msg, "bad 7");
    assert_string_equal(e.src_line, "    {\"gbs\": -25},");
    cp_jdoc_free(&d);
}

static void test_syntax_error_position(void **state)
{
    cp_jdoc d;
    cp_err e;
    /* truncated after the comma on line 2: jansson reports end of input on line 2 */
    const char *text = "{\n  \"a\": 1,\n";
    (void)state;
    assert_int_equal(cp_jdoc_load_text(&d, "x.json", text, strlen(text), &e), CP_EINPUT);
    assert_string_equal(e.file, "x.json");
    assert_true(e.line >= 2);
    assert_non_null(strstr(e.msg, "invalid JSON"));
    assert_null(d.root);
}

static void test_top_level_must_be_object(void **state)
{
    cp_jdoc d;
    cp_err e;
    (void)state;
    assert_int_equal(cp_jdoc_load_text(&d, "x.json", "[1, 2]", 6, &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "JSON object"));
    assert_int_equal(e.line, 1);
}

static void test_duplicate_keys_rejected(void **state)
{
    cp_jdoc d;
    cp_err e;
    const char *text = "{\"a\": 1, \"a\": 2}";
    (void)state;
    assert_int_equal(cp_jdoc_load_text(&d, "x.json", text, strlen(text), &e), CP_EINPUT);
    assert_non_null(strstr(e.msg, "duplicate"));
}

static void test_overflowing_number_rejected(void **state)
{
    cp_jdoc d;
    cp_err e;
    const char *text = "{\"gbs\": 1e309}";
    (void)state;
    assert_int_equal(cp_jdoc_load_text(&d, "x.json", text, strlen(text), &e), CP_EINPUT);
    assert_int_equal(e.line, 1);
}

static void test_unknown_key(void **state)
{
    static const char *const allowed[] = {"a", "links", NULL};
    cp_jdoc d;
    cp_err e;
    const char *text = "{\"a\": 1,\n \"note\": \"fine\",\n \"lnks\": []}";
    (void)state;
    load_text(&d, text);
    assert_int_equal(cp_jdoc_check_keys(&d, &e, d.root, "", allowed), CP_EINPUT);
    assert_string_equal(e.where, "lnks");
    assert_non_null(strstr(e.msg, "unknown key \"lnks\""));
    /* line 3 is ` "lnks": []`: the value '[' is at col 10 */
    assert_int_equal(e.line, 3);
    assert_int_equal(e.col, 10);
    cp_jdoc_free(&d);
}

static void test_note_must_be_string(void **state)
{
    static const char *const allowed[] = {NULL};
    cp_jdoc d;
    cp_err e;
    (void)state;
    load_text(&d, "{\"note\": 3}");
    assert_int_equal(cp_jdoc_check_keys(&d, &e, d.root, "", allowed), CP_EINPUT);
    cp_jdoc_free(&d);
}

static void test_number_getter_rules(void **state)
{
    cp_jdoc d;
    cp_err e;
    double x = 42;
    (void)state;
    load_text(&d, "{\"neg\": -25, \"zero\": 0, \"mzero\": -0.0, \"ok\": 2.5, \"s\": \"7\"}");
    assert_int_equal(cp_jget_num(&d, &e, d.root, "", "neg", CP_POS, "a positive number", &x),
                     CP_EINPUT);
    assert_non_null(strstr(e.msg, "got -25"));
    assert_int_equal(cp_jget_num(&d, &e, d.root, "", "zero", CP_POS, "p", &x), CP_EINPUT);
    assert_int_equal(cp_jget_num(&d, &e, d.root, "", "mzero", CP_NONNEG, "nn", &x), CP_EINPUT);
    assert_int_equal(cp_jget_num(&d, &e, d.root, "", "zero", CP_NONNEG, "nn", &x), CP_OK);
    assert_near(x, 0.0, 0);
    assert_int_equal(cp_jget_num(&d, &e, d.root, "", "s", 0, "a number", &x), CP_EINPUT);
    assert_int_equal(cp_jget_num(&d, &e, d.root, "", "ok", CP_POS, "p", &x), CP_OK);
    assert_near(x, 2.5, 0);
    /* absent and optional: untouched */
    x = 9;
    assert_int_equal(cp_jget_num(&d, &e, d.root, "", "missing", 0, "p", &x), CP_OK);
    assert_near(x, 9, 0);
    assert_int_equal(cp_jget_num(&d, &e, d.root, "", "missing", CP_REQ, "p", &x), CP_EINPUT);
    assert_non_null(strstr(e.msg, "missing required key \"missing\""));
    cp_jdoc_free(&d);
}

static void test_int_and_enum_getters(void **state)
{
    static const char *const names[] = {"gpu", "cpu", NULL};
    cp_jdoc d;
    cp_err e;
    int64_t v = 0;
    int k = -1;
    (void)state;
    load_text(&d, "{\"n\": 5, \"f\": 1.5, \"big\": 99, \"kind\": \"cpu\", \"bad\": \"gpux\"}");
    assert_int_equal(cp_jget_int(&d, &e, d.root, "", "n", CP_REQ, 1, 10, &v), CP_OK);
    assert_int_equal(v, 5);
    assert_int_equal(cp_jget_int(&d, &e, d.root, "", "f", 0, 1, 10, &v), CP_EINPUT);
    assert_int_equal(cp_jget_int(&d, &e, d.root, "", "big", 0, 1, 10, &v), CP_EINPUT);
    assert_int_equal(cp_jget_enum(&d, &e, d.root, "", "kind", CP_REQ, names, NULL, &k), CP_OK);
    assert_int_equal(k, 1);
    assert_int_equal(cp_jget_enum(&d, &e, d.root, "", "bad", CP_REQ, names, NULL, &k),
                     CP_EINPUT);
    assert_non_null(strstr(e.msg, "expected one of: gpu, cpu"));
    cp_jdoc_free(&d);
}

static void test_elem_lines(void **state)
{
    cp_jdoc d;
    int lines[2];
    (void)state;
    load_text(&d, doc_text);
    cp_jdoc_elem_lines(&d, json_object_get(d.root, "links"), lines);
    assert_int_equal(lines[0], 4);
    assert_int_equal(lines[1], 5);
    cp_jdoc_free(&d);
}

static void test_missing_file(void **state)
{
    cp_jdoc d;
    cp_err e;
    (void)state;
    assert_int_equal(cp_jdoc_load(&d, "/nonexistent/x.json", &e), CP_EINPUT);
    assert_string_equal(e.file, "/nonexistent/x.json");
    assert_non_null(strstr(e.msg, "cannot open"));
}

/* Issue 24, item 11: a named pipe given as an input must be refused before
 * it is opened: open(2) on a FIFO for reading blocks until a writer comes,
 * so a FIFO nobody writes to hung every command.  alarm(5) turns a hang
 * into a failed test (SIGALRM kills the suite) instead of a stuck run; a
 * directory is refused the same way, and "-" still means standard input. */
static void test_fifo_refused_without_blocking(void **state)
{
    char dir[] = "/tmp/cp-fifo-XXXXXX", path[64];
    char *text = NULL;
    size_t len = 0;
    cp_err e;
    int rc;
    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/in.json", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    alarm(5);
    rc = cp_read_file(path, &text, &len, &e);
    alarm(0);
    assert_int_equal(rc, CP_EINPUT);
    assert_null(text);
    assert_string_equal(e.file, path);
    assert_non_null(strstr(e.msg, "not a regular file"));
    assert_non_null(strstr(e.msg, "named pipe"));
    unlink(path);
    rc = cp_read_file(dir, &text, &len, &e); /* a directory */
    assert_int_equal(rc, CP_EINPUT);
    assert_non_null(strstr(e.msg, "directory"));
    rmdir(dir);
}

/* A character device (/dev/zero would be read to the 256 MiB cap) is
 * refused by the same check, before anything is read. */
static void test_device_refused(void **state)
{
    char *text = NULL;
    size_t len = 0;
    cp_err e;
    (void)state;
    assert_int_equal(cp_read_file("/dev/zero", &text, &len, &e), CP_EINPUT);
    assert_null(text);
    assert_non_null(strstr(e.msg, "not a regular file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_locate_member_value),
        cmocka_unit_test(test_locate_object_itself),
        cmocka_unit_test(test_fail_message_and_path),
        cmocka_unit_test(test_syntax_error_position),
        cmocka_unit_test(test_top_level_must_be_object),
        cmocka_unit_test(test_duplicate_keys_rejected),
        cmocka_unit_test(test_overflowing_number_rejected),
        cmocka_unit_test(test_unknown_key),
        cmocka_unit_test(test_note_must_be_string),
        cmocka_unit_test(test_number_getter_rules),
        cmocka_unit_test(test_int_and_enum_getters),
        cmocka_unit_test(test_elem_lines),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_fifo_refused_without_blocking),
        cmocka_unit_test(test_device_refused),
    };
    return cmocka_run_group_tests_name("jsondoc", tests, NULL, NULL);
}
