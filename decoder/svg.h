/* svg.h - the report's two kinds of chart as inline SVG, written by the
 * decoder itself so a report needs no script and no network to render. */
#ifndef DIAL9_DECODER_SVG_H
#define DIAL9_DECODER_SVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One histogram bar: values in [lo, hi] (ns), count of them. */
struct d9_bar {
    uint64_t lo, hi, count;
};

/* A bar chart, bars left to right, heights linear in count. attrs: more
 * attributes of the <svg> element, already escaped (e.g. data-* for tests). */
void d9_svg_bars(FILE *out, const struct d9_bar *b, size_t n, const char *attrs);

/* One row of a heat strip: label (raw text), attrs of its <g> (escaped),
 * and per bin the fraction in [0, 1] to colour, or < 0: no data (not drawn). */
struct d9_heat_row {
    const char *label;
    const char *attrs;
    const double *frac;
};

/* Rows of nbins bins, bin_ns wide each, the time axis from 0 to span_ns. */
void d9_svg_heat(FILE *out, const struct d9_heat_row *rows, size_t nrows, size_t nbins, uint64_t bin_ns,
                 uint64_t span_ns);

#endif
