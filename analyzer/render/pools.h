/* The pools' renderers: they read the pools view alone (model/view_pools.h). */
#ifndef GA_RENDER_POOLS_H
#define GA_RENDER_POOLS_H

#include <stdio.h>

#include "model/view_pools.h"

struct json_object;

/* text_pools.c: the memory section's pool lines. */
void ga_text_pools(const struct ga_vpools *v, FILE *o);
/* json_pools.c: memory.fragmentation, added to the memory object. */
void ga_json_pools(const struct ga_vpools *v, struct json_object *memory);

#endif
