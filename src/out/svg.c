/*
 * svg.c - grouped bar charts and timelines (see svg.h).
 *
 * Bars: a left margin for the y axis, one slot per category, bars side by
 * side inside a slot, category labels rotated under the axis, a legend on
 * top.  The y range starts at 0 and ends at the largest value rounded up to
 * a "nice" step (1, 2 or 5 times a power of ten).
 *
 * Timelines: one row per lane under a legend, lane labels in a left
 * margin, a time axis in ms at the bottom with "nice" ticks.
 *
 * Every text is placed from its width (cp_svg_text_px, DejaVu Sans's
 * advances): legend entries one after the other, wrapped onto a new row
 * when the next would pass the right edge; the margins grow until the
 * longest rotated category label, and the title, fit in the canvas
 * (issue 24, item 19: fixed 90 px legend slots overlapped, and the bottom
 * margin cut 8 of 12 labels of reports/paper-reproduction.svg).
 * tests/cli/svg.sh renders every chart with rsvg-convert and checks it.
 */
#include <math.h>

#include "out/svg.h"

#define W_MARGIN 70
#define H_TOP 60
#define H_PLOT 320
#define SLOT_MIN 36
#define FONT_PX 11       /* the charts' text */
#define TITLE_PX 14      /* their titles */
#define LEGEND_ROW 16    /* px between legend rows */
#define LABEL_GAP 12     /* below the x axis, where a category label ends */

/* Series colours: colour-blind safe (Okabe-Ito). */
static const char *const colour[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                     "#CC79A7", "#56B4E9", "#F0E442", "#000000"};

/* Advance widths of ASCII 32..126 in DejaVu Sans, thousandths of an em, read
 * from the font's hmtx table (units per em 2048).  DejaVu Sans is what
 * fontconfig gives "sans-serif" on Debian, where rsvg-convert renders the
 * reports; Arial and Helvetica, what browsers pick elsewhere, are
 * narrower, so a layout that fits here fits there. */
static const short em_1000[95] = {
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337,
    636, 636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531,
    1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787,
    603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500,
    500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612,
    635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838};

/* DejaVu Sans's ascent and descent, thousandths of an em (hhea). */
#define ASCENT_1000 928
#define DESCENT_1000 236

double cp_svg_text_px(const char *s, double size_px)
{
    double em = 0;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch >= 32 && ch < 127)
            em += em_1000[ch - 32];
        else if ((ch & 0xC0) != 0x80) /* a character outside ASCII: one em */
            em += 1000;
    }
    return em / 1000 * size_px;
}

/* Escape text for XML. */
static void put_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* Smallest 1/2/5 x 10^k step that cuts [0, top] into at most 6 ticks. */
static double nice_step(double top)
{
    double p = pow(10, floor(log10(top > 0 ? top : 1))), m[] = {0.1, 0.2, 0.5, 1, 2, 5, 10};
    int i;
    for (i = 0; i < 7; i++)
        if (top / (m[i] * p) <= 6)
            return m[i] * p;
    return 10 * p;
}

/* The legend as swatches and labels from x = left, wrapped before the
 * right edge; draws only the entries with show[k] set (all when show is
 * NULL).  With f NULL it only counts: returns the number of rows. */
static int legend(FILE *f, const char *const *label, int n, const int *show, int left,
                  int width)
{
    int k, x = left, row = 0;
    for (k = 0; k < n; k++) {
        int w;
        if (show && !show[k])
            continue;
        w = 14 + (int)ceil(cp_svg_text_px(label[k], FONT_PX));
        if (x > left && x + w > width - 10) { /* the next entry starts a row */
            x = left;
            row++;
        }
        if (f) {
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                       "<text x=\"%d\" y=\"%d\">", x, 30 + row * LEGEND_ROW, colour[k % 8],
                    x + 14, 39 + row * LEGEND_ROW);
            put_text(f, label[k]);
            fputs("</text>\n", f);
        }
        x += w + 16;
    }
    return row + 1;
}

/* A bar chart's geometry: the left margin and slot, the canvas, the plot's
 * top and the space under it for the rotated category labels. */
typedef struct bars_box {
    int left, slot, width, top, bottom;
} bars_box;

/* Labels are rotated by -60 degrees about their end, LABEL_GAP under the
 * axis: a label of L px reaches 0.866 L down and 0.5 L left, plus its
 * glyphs' ascent across the line (0.866 of it to the left) and descent
 * (0.5 of it down).  The margins are made to hold the longest. */
static bars_box bars_layout(const cp_bars *c)
{
    bars_box b;
    double lmax = 0, asc = ASCENT_1000 / 1000.0 * FONT_PX, desc = DESCENT_1000 / 1000.0 * FONT_PX;
    int i, need;
    for (i = 0; i < c->ncat; i++) {
        double l = cp_svg_text_px(c->cat[i], FONT_PX);
        if (l > lmax)
            lmax = l;
    }
    b.slot = c->nser * 12 + 12;
    if (b.slot < SLOT_MIN)
        b.slot = SLOT_MIN;
    b.left = W_MARGIN;
    need = (int)ceil(0.5 * lmax + 0.866 * asc + 2) - (6 + c->nser * 6); /* first label's anchor */
    if (need > b.left)
        b.left = need;
    b.width = b.left + c->ncat * b.slot + 20;
    if (b.width < 480)
        b.width = 480;
    need = W_MARGIN + (int)ceil(cp_svg_text_px(c->title, TITLE_PX)) + 10;
    if (need > b.width)
        b.width = need;
    if (c->note) {
        need = 10 + (int)ceil(cp_svg_text_px(c->note, FONT_PX)) + 10;
        if (need > b.width)
            b.width = need;
    }
    if (c->ncat > 0 && (b.width - b.left - 20) / c->ncat > b.slot) /* a wide title or note: */
        b.slot = (b.width - b.left - 20) / c->ncat;                 /* the groups spread under it */
    b.top = H_TOP + LEGEND_ROW * (legend(NULL, c->ser, c->nser, NULL, W_MARGIN, b.width) - 1);
    b.bottom = LABEL_GAP + (int)ceil(0.866 * lmax + 0.5 * desc) + 8;
    if (b.bottom < 40)
        b.bottom = 40;
    if (c->note)
        b.bottom += 18;
    return b;
}

int cp_svg_bars(const cp_bars *c, FILE *f)
{
    double top = isfinite(c->ref) && c->ref > 0 ? c->ref : 0, step;
    bars_box bx = bars_layout(c);
    int i, s, nticks, height = bx.top + H_PLOT + bx.bottom, base = bx.top + H_PLOT;
    for (i = 0; i < c->ncat * c->nser; i++) /* a NaN or infinity is not drawn */
        if (isfinite(c->val[i]) && c->val[i] > top)
            top = c->val[i];
    if (!(top > 0) || !isfinite(top))
        top = 1;
    step = nice_step(top);
    nticks = (int)ceil(top / step - 1e-9); /* at most 6 (nice_step); an integer bounds the grid */
    if (nticks < 1)
        nticks = 1;
    top = nticks * step;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "font-family=\"sans-serif\" font-size=\"%d\">\n",
            bx.width, height, FONT_PX);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"%d\" y=\"18\" "
               "font-size=\"%d\">", W_MARGIN, TITLE_PX);
    put_text(f, c->title);
    fputs("</text>\n", f);
    legend(f, c->ser, c->nser, NULL, W_MARGIN, bx.width);
    for (i = 0; i <= nticks; i++) { /* y grid and labels */
        double y = i * step, py = base - y / top * H_PLOT;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                bx.left, py, bx.width - 20, py, bx.left - 6, py + 4, y);
    }
    fprintf(f, "<text transform=\"translate(14,%d) rotate(-90)\" text-anchor=\"middle\">",
            bx.top + H_PLOT / 2);
    put_text(f, c->ylabel);
    fputs("</text>\n", f);
    for (i = 0; i < c->ncat; i++) {
        int x0 = bx.left + i * bx.slot + (bx.slot - c->nser * 12) / 2; /* centred in its slot */
        for (s = 0; s < c->nser; s++) {
            double v = c->val[i * c->nser + s], h;
            if (!(v >= 0) || !isfinite(v))
                continue;
            h = v / top * H_PLOT;
            fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"10\" height=\"%.1f\" fill=\"%s\">"
                       "<title>%g</title></rect>\n",
                    x0 + s * 12, base - h, h, colour[s % 8], v);
        }
        fprintf(f, "<text transform=\"translate(%d,%d) rotate(-60)\" text-anchor=\"end\">",
                x0 + c->nser * 6, base + LABEL_GAP);
        put_text(f, c->cat[i]);
        fputs("</text>\n", f);
    }
    if (c->ref > 0) {
        double py = base - c->ref / top * H_PLOT;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"black\" "
                   "stroke-dasharray=\"4,3\"/>\n", bx.left, py, bx.width - 20, py);
    }
    if (c->note) { /* under the labels: what the chart leaves out, and why */
        fprintf(f, "<text x=\"10\" y=\"%d\">", height - 8);
        put_text(f, c->note);
        fputs("</text>\n", f);
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n</svg>\n",
            bx.left, base, bx.width - 20, base);
    return ferror(f) ? -1 : 0;
}

#define G_LABEL 190  /* left margin for lane labels */
#define G_PLOT 760   /* width of the time axis */
#define G_LANE 22    /* height of a lane */
#define G_GAP 8      /* between lanes */

/* Which colours some bar uses: the legend lists only those (a timeline of
 * DDP has no reduce-scatter). */
static void colours_used(const cp_gantt *g, int *used)
{
    int i, k;
    for (k = 0; k < 8; k++)
        used[k] = 0;
    for (i = 0; i < g->nlane; i++)
        for (k = 0; k < g->lane[i].nbar; k++)
            used[(g->lane[i].bar[k].colour % 8 + 8) % 8] = 1;
}

int cp_svg_gantt(const cp_gantt *g, FILE *f)
{
    double end = isfinite(g->end) && g->end > 0 ? g->end : 1, step;
    int i, k, nticks, used[8], width = G_LABEL + G_PLOT + 30, rows, top, height;
    int nleg = g->nlegend < 8 ? g->nlegend : 8;
    colours_used(g, used);
    k = 10 + (int)ceil(cp_svg_text_px(g->title, TITLE_PX)) + 10;
    if (k > width)
        width = k;
    rows = legend(NULL, g->legend, nleg, used, 10, width);
    top = H_TOP + LEGEND_ROW * (rows - 1);
    height = top + g->nlane * (G_LANE + G_GAP) + 40;
    step = nice_step(end);
    nticks = (int)floor(end / step + 1e-9);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "font-family=\"sans-serif\" font-size=\"%d\">\n",
            width, height, FONT_PX);
    fputs("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", f);
    fprintf(f, "<text x=\"%d\" y=\"18\" font-size=\"%d\">", 10, TITLE_PX);
    put_text(f, g->title);
    fputs("</text>\n", f);
    legend(f, g->legend, nleg, used, 10, width);
    for (i = 0; i <= nticks; i++) { /* time grid */
        double x = G_LABEL + i * step / end * G_PLOT;
        fprintf(f, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" stroke=\"#ddd\"/>"
                   "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
                x, top - 6, x, height - 34, x, height - 20, i * step);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">ms</text>\n",
            G_LABEL + G_PLOT / 2, height - 6);
    for (i = 0; i < g->nlane; i++) {
        const cp_gantt_lane *l = &g->lane[i];
        int y = top + i * (G_LANE + G_GAP);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", G_LABEL - 8,
                y + G_LANE / 2 + 4);
        put_text(f, l->label);
        fputs("</text>\n", f);
        for (k = 0; k < l->nbar; k++) {
            const cp_gantt_bar *b = &l->bar[k];
            double x0, w;
            if (!isfinite(b->start) || !isfinite(b->end) || b->end < b->start)
                continue;
            x0 = G_LABEL + b->start / end * G_PLOT;
            w = (b->end - b->start) / end * G_PLOT;
            if (w < 0.5) /* a bar too short to see still shows */
                w = 0.5;
            fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
                       "stroke=\"white\" stroke-width=\"0.3\"><title>",
                    x0, y, w, G_LANE, colour[(b->colour % 8 + 8) % 8]);
            put_text(f, b->tip ? b->tip : "");
            fputs("</title></rect>\n", f);
        }
    }
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}
