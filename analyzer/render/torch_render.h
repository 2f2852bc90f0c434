/* The PyTorch allocator's part of the reports (torch_render.c): it reads the allocator view
 * alone (model/view_torch.h). */
#ifndef GA_TORCH_RENDER_H
#define GA_TORCH_RENDER_H

#include <stdio.h>

#include "model/view_torch.h"

struct json_object;

/* memory.allocators[]. */
void ga_json_torch(const struct ga_vtorch *v, struct json_object *memory);
/* A breakdown's Python sites, and the rest as "(other sites)" (memory.allocators[].
 * peak_breakdown.by_site, memory.ooms[].pinned_by). */
struct json_object *ga_json_torch_sites(const struct ga_vtorch_sites *s);
/* The allocator section of the text report (nothing without the bridge's records). */
void ga_text_torch(const struct ga_vtorch *v, FILE *o);
/* "3.00 MiB file:line; ..." of a breakdown's first GA_VTORCH_BRIEF sites after lead, one line
 * (nothing without sites). */
void ga_text_torch_sites(const struct ga_vtorch_sites *s, FILE *o, const char *lead);

#endif
