/* --json with several traces: one process's object, the single-trace report rendered while its
 * model exists and indented into the "processes" array (render/json_multi.c writes the rest). */
#include <stdio.h>

#include "model/multi.h"
#include "render/json.h"

static int render(const void *r, FILE *f)
{
    return ga_render_json(r, f);
}

int ga_json_multi_process(const struct ga_model *r, size_t i, FILE *o)
{
    return ga_json_indented(o, i ? ",\n    " : "\n    ", "    ", render, r);
}
