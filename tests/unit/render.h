/* A report rendered as text or JSON into a malloc'd string, for the unit tests to search. */
#ifndef GT_TEST_RENDER_H
#define GT_TEST_RENDER_H

#include <stdio.h>

#include "model/state.h"

static inline char *render(const struct ga_report *r, int json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (json)
        ga_render_json(&r->m, f);
    else
        ga_render_text(&r->m, f);
    fclose(f);
    return buf;
}

#endif
