/*
 * test_svg.c - the SVG charts: where a bar lands and what the axis says,
 * computed by hand from the layout constants of src/out/svg.c.
 */
#include "testutil.h"

#include "out/svg.h"

/* The chart (bars, or else the timeline) written to memory, as a string
 * the caller frees. */
static char *render(const cp_bars *bars, const cp_gantt *gantt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(bars ? cp_svg_bars(bars, f) : cp_svg_gantt(gantt, f), 0);
    fclose(f);
    return buf;
}

/* One category, two series of 1 and 2, a reference line at 1.  The top is
 * 2; the step is the smallest of 0.1, 0.2, 0.5 x 10^0 that cuts 2 into at
 * most six ticks: 0.5.  The plot is 320 px high from y = 60: the bar of 2
 * is 320 px from y 60, the bar of 1 160 px from y 220.  A slot needs 2 x 12
 * + 12 = 36 px from x = 70, but the canvas is at least 480 px wide, so the
 * one group spreads over 480 - 70 - 20 = 390 px and its two bars (24 px)
 * sit in the middle: 70 + (390 - 24) / 2 = 253, and 265. */
static void test_bars_by_hand(void **state)
{
    static const char *const cat[] = {"m on t"};
    static const char *const ser[] = {"ring", "a<b"};
    static const double val[] = {1, 2};
    cp_bars c = {"title", "speed-up", 1, cat, 2, ser, val, 1.0};
    char *svg;
    (void)state;
    svg = render(&c, NULL);
    assert_non_null(strstr(svg, "<rect x=\"253\" y=\"220.0\" width=\"10\" height=\"160.0\""));
    assert_non_null(strstr(svg, "<rect x=\"265\" y=\"60.0\" width=\"10\" height=\"320.0\""));
    assert_non_null(strstr(svg, ">0.5</text>"));
    assert_non_null(strstr(svg, ">a&lt;b</text>")); /* legend text escaped */
    free(svg);
}

/* A timeline of 100 ms over 760 px from x = 190: a bar of [25, 50] ms
 * starts at 190 + 0.25 x 760 = 380 and is 190 px wide; lane 1 sits at
 * y = 60 + 1 x (22 + 8) = 90.  Ticks every 20 ms (100 / 10 would be ten
 * ticks, 100 / 20 five): the last, 100, at x = 950, its label 20 px above
 * the bottom of a chart 60 + 2 x 30 + 40 = 160 px high, y = 140.  A 0.01 ms
 * bar still gets 0.5 px. */
static void test_gantt_by_hand(void **state)
{
    static const char *const legend[] = {"compute", "all-reduce"};
    cp_gantt_bar compute[] = {{0, 25, 0, "forward"}};
    cp_gantt_bar comm[] = {{25, 50, 1, "bucket \"0\" & more"}, {60, 60.01, 1, "tiny"}};
    cp_gantt_lane lanes[] = {{"ring: compute", compute, 1}, {"ring: communication", comm, 2}};
    cp_gantt g = {"t", 2, lanes, 2, legend, 100};
    char *svg;
    (void)state;
    svg = render(NULL, &g);
    assert_non_null(strstr(svg, "<rect x=\"380.00\" y=\"90\" width=\"190.00\" height=\"22\""));
    assert_non_null(strstr(svg, "<rect x=\"190.00\" y=\"60\" width=\"190.00\" height=\"22\""));
    assert_non_null(strstr(svg, "<rect x=\"646.00\" y=\"90\" width=\"0.50\""));
    assert_non_null(strstr(svg, "<text x=\"950.00\" y=\"140\" text-anchor=\"middle\">100</text>"));
    assert_null(strstr(svg, ">120</text>"));
    assert_non_null(strstr(svg, "<title>bucket &quot;0&quot; &amp; more</title>"));
    free(svg);
}

/* Issue 24, item 19: text placed by its width.  DejaVu Sans advances
 * (thousandths of an em): r 411, i 278, n 634, g 635, so "ring" at 11 px is
 * 1958 / 1000 x 11 = 21.538 px; a non-ASCII character counts one em. */
static void test_text_width(void **state)
{
    (void)state;
    assert_near(cp_svg_text_px("ring", 11), 21.538, 1e-9);
    assert_near(cp_svg_text_px("", 11), 0, 0);
    assert_near(cp_svg_text_px("\xc3\x97", 10), 10, 1e-9); /* a two-byte character */
}

/* Legend entries sit one after the other by their width, not in fixed
 * 90 px slots (which overlapped "a-paper-emu-vs-mpi"): entry 1 starts at
 * 70 + 14 + ceil(width of entry 0) + 16.  "a-paper-emu-vs-mpi" is
 * a 613 + - 361 + p 635 + a 613 + p 635 + e 615 + r 411 + - 361 + e 615 +
 * m 974 + u 634 + - 361 + v 592 + s 521 + - 361 + m 974 + p 635 + i 278
 * = 10,212 thousandths, 112.332 px at 11 px: 113, so entry 1's swatch is at
 * 70 + 14 + 113 + 16 = 213.  A rotated label of 40 characters of "m"
 * (974 x 40 / 1000 x 11 = 428.56 px) reaches 0.866 x 428.56 = 371.1 px
 * down, so the space under the plot grows from the label gap 12 to
 * 12 + ceil(371.1 + 0.5 x 2.596) + 8 = 393: the chart is 60 + 320 + 393 =
 * 773 px high. */
static void test_bars_layout(void **state)
{
    static const char *const cat[] = {"mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm"};
    static const char *const ser[] = {"a-paper-emu-vs-mpi", "b"};
    static const double val[] = {1, 1};
    cp_bars c = {"title", "speed-up", 1, cat, 2, ser, val, 1.0};
    char *svg;
    (void)state;
    svg = render(&c, NULL);
    assert_non_null(strstr(svg, "<rect x=\"213\" y=\"30\" width=\"10\" height=\"10\""));
    assert_non_null(strstr(svg, "height=\"773\""));
    free(svg);
}

/* A timeline lists in its legend only the colours its bars use: of
 * "compute", "all-reduce", "all-gather", the last is never drawn. */
static void test_gantt_legend_drawn_only(void **state)
{
    static const char *const legend[] = {"compute", "all-reduce", "all-gather"};
    cp_gantt_bar compute[] = {{0, 25, 0, "forward"}};
    cp_gantt_bar comm[] = {{25, 50, 1, "bucket"}};
    cp_gantt_lane lanes[] = {{"ring: compute", compute, 1}, {"ring: communication", comm, 1}};
    cp_gantt g = {"t", 2, lanes, 3, legend, 100};
    char *svg;
    (void)state;
    svg = render(NULL, &g);
    assert_non_null(strstr(svg, ">all-reduce</text>"));
    assert_null(strstr(svg, ">all-gather</text>"));
    free(svg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bars_by_hand),
        cmocka_unit_test(test_gantt_by_hand),
        cmocka_unit_test(test_text_width),
        cmocka_unit_test(test_bars_layout),
        cmocka_unit_test(test_gantt_legend_drawn_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
