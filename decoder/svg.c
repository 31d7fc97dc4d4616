/* svg.c - see svg.h. Sizes are CSS pixels; text is escaped by html.c. */
#include "svg.h"

#include <inttypes.h>

#include "fmt.h"
#include "html.h"

enum { BW = 320, BH = 170, BL = 40, BR = 8, BT = 10, BB = 36 }; /* bar chart: size, margins */
enum { HW = 980, HL = 230, HR = 20, HT = 6, HROW = 14, HB = 40 }; /* heat strip */

void d9_svg_bars(FILE *out, const struct d9_bar *b, size_t n, const char *attrs)
{
    uint64_t max = 0, total = 0;
    for (size_t i = 0; i < n; i++) {
        max = b[i].count > max ? b[i].count : max;
        total += b[i].count;
    }
    fprintf(out, "<svg class=\"chart bars\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                 "viewBox=\"0 0 %d %d\" %s>\n", BW, BH, BW, BH, attrs);
    double pw = BW - BL - BR, ph = BH - BT - BB;
    fprintf(out, "<line class=\"axis\" x1=\"%d\" y1=\"%g\" x2=\"%d\" y2=\"%g\"/>\n", BL, BT + ph, BW - BR, BT + ph);
    if (!n || !max) {
        fprintf(out, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">no values</text>\n</svg>\n", BL + pw / 2,
                BT + ph / 2);
        return;
    }
    for (int k = 0; k <= 2; k++) { /* y: 0, max/2, max */
        double y = BT + ph - ph * k / 2;
        fprintf(out, "<line class=\"grid\" x1=\"%d\" y1=\"%g\" x2=\"%d\" y2=\"%g\"/>"
                     "<text class=\"ylab\" x=\"%d\" y=\"%g\" text-anchor=\"end\">%" PRIu64 "</text>\n",
                BL, y, BW - BR, y, BL - 4, y + 4, max * (uint64_t)k / 2);
    }
    double w = pw / (double)n;
    size_t every = (n + 5) / 6; /* at most 6 x labels */
    for (size_t i = 0; i < n; i++) {
        char lo[24], hi[24];
        double h = ph * (double)b[i].count / (double)max, x = BL + w * (double)i;
        if (b[i].count && h < 2)
            h = 2; /* a non-empty bar stays visible */
        d9_fmt_dur(lo, sizeof(lo), b[i].lo);
        if (b[i].hi == UINT64_MAX)
            snprintf(hi, sizeof(hi), "more");
        else
            d9_fmt_dur(hi, sizeof(hi), b[i].hi);
        fprintf(out, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" data-count=\"%" PRIu64
                     "\" data-lo=\"%" PRIu64 "\" data-hi=\"%" PRIu64 "\"><title>%s .. %s: %" PRIu64 " (%.1f%%)</title></rect>\n",
                x + 0.5, BT + ph - h, w > 2 ? w - 1 : w, h, b[i].count, b[i].lo, b[i].hi, lo, hi, b[i].count,
                100.0 * (double)b[i].count / (double)total);
        if (i % every == 0)
            fprintf(out, "<text class=\"xlab\" x=\"%.1f\" y=\"%d\">%s</text>\n", x, BH - BB + 14, lo);
    }
    fprintf(out, "<text class=\"xlab\" x=\"%d\" y=\"%d\" text-anchor=\"end\">duration (log2 bins) &#8594;</text>\n",
            BW - BR, BH - 4);
    fputs("</svg>\n", out);
}

/* Busy fraction -> fill: light blue (idle) to dark blue (busy). */
static double lightness(double f) { return 92.0 - 62.0 * (f > 1 ? 1 : f); }

void d9_svg_heat(FILE *out, const struct d9_heat_row *rows, size_t nrows, size_t nbins, uint64_t bin_ns,
                 uint64_t span_ns)
{
    double pw = HW - HL - HR, w = nbins ? pw / (double)nbins : pw;
    int h = HT + (int)nrows * HROW + HB;
    fprintf(out, "<svg class=\"chart heat\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                 "viewBox=\"0 0 %d %d\">\n", HW, h, HW, h);
    for (size_t r = 0; r < nrows; r++) {
        double y = HT + (double)r * HROW;
        fprintf(out, "<g class=\"row\" %s><text class=\"rlab\" x=\"%d\" y=\"%g\" text-anchor=\"end\">", rows[r].attrs,
                HL - 6, y + HROW - 3);
        d9_html_text(out, rows[r].label);
        fputs("</text>\n", out);
        /* Runs of bins of the same shade (to 1%) are one rect: smaller pages. */
        for (size_t i = 0; i < nbins;) {
            double f = rows[r].frac[i];
            size_t j = i + 1;
            while (j < nbins && (int)(rows[r].frac[j] * 100 + 0.5) == (int)(f * 100 + 0.5) &&
                   (rows[r].frac[j] < 0) == (f < 0))
                j++;
            if (f >= 0) {
                char a[24], b[24];
                fprintf(out, "<rect x=\"%.1f\" y=\"%g\" width=\"%.1f\" height=\"%d\" fill=\"hsl(212,75%%,%.0f%%)\">"
                             "<title>",
                        HL + w * (double)i, y + 1, w * (double)(j - i), HROW - 2, lightness(f));
                d9_html_text(out, rows[r].label);
                fprintf(out, ": %.0f%% busy, %s .. %s</title></rect>\n", 100 * f,
                        d9_fmt_dur(a, sizeof(a), bin_ns * i), d9_fmt_dur(b, sizeof(b), bin_ns * j));
            }
            i = j;
        }
        fputs("</g>\n", out);
    }
    double y0 = HT + (double)nrows * HROW;
    fprintf(out, "<line class=\"axis\" x1=\"%d\" y1=\"%g\" x2=\"%d\" y2=\"%g\"/>\n", HL, y0 + 1, HW - HR, y0 + 1);
    double shown = (double)bin_ns * (double)nbins; /* the axis spans the bins drawn */
    for (int k = 0; k <= 5 && shown > 0; k++) {
        char t[24];
        double x = HL + pw * k / 5;
        fprintf(out, "<line class=\"axis\" x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\"/>"
                     "<text class=\"xlab\" x=\"%g\" y=\"%g\" text-anchor=\"%s\">%s</text>\n",
                x, y0 + 1, x, y0 + 5, x, y0 + 17, k == 0 ? "start" : k == 5 ? "end" : "middle",
                d9_fmt_dur(t, sizeof(t), (uint64_t)(shown * k / 5)));
    }
    char sp[24];
    fprintf(out, "<text class=\"xlab\" x=\"%d\" y=\"%d\" text-anchor=\"end\">time since the trace start (span %s, "
                 "bins of ",
            HW - HR, h - 4, d9_fmt_dur(sp, sizeof(sp), span_ns));
    fprintf(out, "%s) &#8594;</text>\n", d9_fmt_dur(sp, sizeof(sp), bin_ns));
    for (int k = 0; k <= 4; k++) /* legend: 0, 25, .. 100% busy */
        fprintf(out, "<rect x=\"%d\" y=\"%g\" width=\"18\" height=\"10\" fill=\"hsl(212,75%%,%.0f%%)\"/>"
                     "<text class=\"xlab\" x=\"%d\" y=\"%g\">%d%%</text>\n",
                4 + k * 46, y0 + 22, lightness(k / 4.0), 24 + k * 46, y0 + 31, k * 25);
    fputs("</svg>\n", out);
}
