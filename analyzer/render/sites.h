/* The call sites' renderers: they read the sites view alone (model/view_sites.h), and the
 * resolved stacks any renderer can print (model/view_stack.h). */
#ifndef GA_RENDER_SITES_H
#define GA_RENDER_SITES_H

#include <stddef.h>
#include <stdio.h>

#include "model/view_sites.h"
#include "model/view_stack.h"

struct json_object;

/* text_sites.c: allocations, launches and blocking time by call site and library; with
 * show_stacks (--stacks) each site's heaviest stack. Nothing without stacks in the trace. */
void ga_text_sites(const struct ga_vsites *v, int show_stacks, FILE *o);
/* json_sites.c: memory.by_site/by_library, timeline.launch_sites/sync_sites, and the top-level
 * stacks object. */
void ga_json_sites(const struct ga_vsites *v, struct json_object *root, struct json_object *memory,
                   struct json_object *timeline);
/* One call-site object: site, function, file, line, module, library, symbolized_by, stacks, and
 * the first `frames` frames of stack as "stack" (frames_truncated: those not listed). x NULL:
 * the unknown site. */
struct json_object *ga_json_vsite(const struct ga_vsite *x, const struct ga_vstack *stack,
                                  size_t frames);

#endif
