/* --html: one self-contained page (inline CSS, JS and SVG, nothing fetched) drawn in the browser
 * from the report model: the JSON report (docs/REPORT_JSON.md) and the page's view
 * (model/view_page.h) of each trace, embedded as JSON data blocks. docs/HTML.md. */
#ifndef GA_HTML_H
#define GA_HTML_H

#include <stdio.h>

#include "model/view_page.h"

/* A page being made: the data of each trace is written into memory streams, the page at the
 * end. */
struct ga_html {
    char *data, *events;
    size_t data_len, events_len;
    FILE *data_f, *events_f; /* open memory streams */
    size_t n_ranks;
};

void ga_html_begin(struct ga_html *h);
/* After the run: the rank's page view (timeline, the peak's stacks, PyTorch's maps) into the
 * page's data (the trace's JSON goes through the data stream, by the caller's JSON renderer:
 * single or several-process). */
void ga_html_rank(struct ga_html *h, const struct ga_vpage *v);
/* Frees h without writing (a trace could not be read). */
void ga_html_discard(struct ga_html *h);
/* Writes the page to out and frees h; -1 on a write error. */
int ga_html_end(struct ga_html *h, const char *title, FILE *out);

/* html_assets.S: the page's stylesheet and script (analyzer/render/html/), NUL-terminated. */
extern const char ga_html_css[], ga_html_js[];

#endif
