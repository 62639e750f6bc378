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
 */
#include <math.h>
#include <string.h>

#include "out/svg.h"

#define W_MARGIN 70
#define H_TOP 60
#define H_PLOT 320
#define H_BOTTOM 170
#define SLOT_MIN 36

/* Series colours: colour-blind safe (Okabe-Ito). */
static const char *const colour[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                     "#CC79A7", "#56B4E9", "#F0E442", "#000000"};

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

int cp_svg_bars(const cp_bars *c, FILE *f)
{
    double top = isfinite(c->ref) && c->ref > 0 ? c->ref : 0, step;
    int i, s, slot, width, nticks;
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
    slot = c->nser * 12 + 12;
    if (slot < SLOT_MIN)
        slot = SLOT_MIN;
    width = W_MARGIN + c->ncat * slot + 20;
    if (width < 480)
        width = 480;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n",
            width, H_TOP + H_PLOT + H_BOTTOM);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"%d\" y=\"18\" "
               "font-size=\"14\">", W_MARGIN);
    put_text(f, c->title);
    fputs("</text>\n", f);
    for (s = 0; s < c->nser; s++) { /* legend */
        fprintf(f, "<rect x=\"%d\" y=\"30\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" "
                   "y=\"39\">", W_MARGIN + s * 90, colour[s % 8], W_MARGIN + s * 90 + 14);
        put_text(f, c->ser[s]);
        fputs("</text>\n", f);
    }
    for (i = 0; i <= nticks; i++) { /* y grid and labels */
        double y = i * step, py = H_TOP + H_PLOT - y / top * H_PLOT;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                W_MARGIN, py, width - 20, py, W_MARGIN - 6, py + 4, y);
    }
    fprintf(f, "<text transform=\"translate(14,%d) rotate(-90)\" text-anchor=\"middle\">",
            H_TOP + H_PLOT / 2);
    put_text(f, c->ylabel);
    fputs("</text>\n", f);
    for (i = 0; i < c->ncat; i++) {
        int x0 = W_MARGIN + i * slot + 6;
        for (s = 0; s < c->nser; s++) {
            double v = c->val[i * c->nser + s], h;
            if (!(v >= 0) || !isfinite(v))
                continue;
            h = v / top * H_PLOT;
            fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"10\" height=\"%.1f\" fill=\"%s\">"
                       "<title>%g</title></rect>\n",
                    x0 + s * 12, H_TOP + H_PLOT - h, h, colour[s % 8], v);
        }
        fprintf(f, "<text transform=\"translate(%d,%d) rotate(-60)\" text-anchor=\"end\">",
                x0 + c->nser * 6, H_TOP + H_PLOT + 12);
        put_text(f, c->cat[i]);
        fputs("</text>\n", f);
    }
    if (c->ref > 0) {
        double py = H_TOP + H_PLOT - c->ref / top * H_PLOT;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"black\" "
                   "stroke-dasharray=\"4,3\"/>\n", W_MARGIN, py, width - 20, py);
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n</svg>\n",
            W_MARGIN, H_TOP + H_PLOT, width - 20, H_TOP + H_PLOT);
    return ferror(f) ? -1 : 0;
}

#define G_LABEL 190  /* left margin for lane labels */
#define G_PLOT 760   /* width of the time axis */
#define G_LANE 22    /* height of a lane */
#define G_GAP 8      /* between lanes */

int cp_svg_gantt(const cp_gantt *g, FILE *f)
{
    double end = isfinite(g->end) && g->end > 0 ? g->end : 1, step;
    int i, k, lx, nticks, height = H_TOP + g->nlane * (G_LANE + G_GAP) + 40;
    step = nice_step(end);
    nticks = (int)floor(end / step + 1e-9);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n",
            G_LABEL + G_PLOT + 30, height);
    fputs("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", f);
    fprintf(f, "<text x=\"%d\" y=\"18\" font-size=\"14\">", 10);
    put_text(f, g->title);
    fputs("</text>\n", f);
    for (k = 0, lx = 10; k < g->nlegend && k < 8; k++) { /* ~6.5 px a character */
        fprintf(f, "<rect x=\"%d\" y=\"30\" width=\"10\" height=\"10\" fill=\"%s\"/><text "
                   "x=\"%d\" y=\"39\">", lx, colour[k], lx + 14);
        put_text(f, g->legend[k]);
        fputs("</text>\n", f);
        lx += 14 + (int)(6.5 * (double)strlen(g->legend[k])) + 14;
    }
    for (i = 0; i <= nticks; i++) { /* time grid */
        double x = G_LABEL + i * step / end * G_PLOT;
        fprintf(f, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" stroke=\"#ddd\"/>"
                   "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
                x, H_TOP - 6, x, height - 34, x, height - 20, i * step);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">ms</text>\n",
            G_LABEL + G_PLOT / 2, height - 6);
    for (i = 0; i < g->nlane; i++) {
        const cp_gantt_lane *l = &g->lane[i];
        int y = H_TOP + i * (G_LANE + G_GAP);
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
