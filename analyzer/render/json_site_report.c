/* Call-site objects for the JSON renderer files that still read struct ga_report (json_peak.c):
 * the site and stack resolved in the report's stack table (model/view_stack.h), formatted by
 * ga_json_vsite. Bounds as in json_sites.c: a list lists at most GA_VSITES_MAX sites (the rest
 * counted), its stacks share GA_VSITES_LIST_FRAMES frames; site objects outside lists share
 * LOOSE_FRAMES per report. */
#include <stdio.h>
#include <string.h>

#include "render/json.h"
#include "render/sites.h"

#define LOOSE_FRAMES 16384

/* The table interns on first use; the report is otherwise only read. */
static struct ga_vstacks *table(const struct ga_report *r)
{
    return (struct ga_vstacks *)&r->stackview;
}

static jobj *site_obj(const struct ga_report *r, const struct ga_site *x, uint32_t stack,
                      size_t *budget)
{
    const struct ga_vstack *s = ga_vstacks_stack(table(r), stack);
    size_t k = s ? s->n : 0;
    if (k > *budget) k = *budget;
    *budget -= k;
    return ga_json_vsite(ga_vstacks_site(table(r), x), s, k);
}

void ga_json_list_init(struct ga_json_list *l)
{
    memset(l, 0, sizeof(*l));
    l->arr = json_object_new_array();
    l->frames_left = GA_VSITES_LIST_FRAMES;
}

struct json_object *ga_json_list_site(const struct ga_report *r, struct ga_json_list *l,
                                      const struct ga_site *x, uint32_t stack)
{
    if (json_object_array_length(l->arr) >= GA_VSITES_MAX) {
        l->omitted++;
        return NULL;
    }
    jobj *o = site_obj(r, x, stack, &l->frames_left);
    json_object_array_add(l->arr, o);
    return o;
}

void ga_json_list_put(struct json_object *parent, const char *key, struct ga_json_list *l)
{
    char k[128];
    snprintf(k, sizeof(k), "%s_omitted", key);
    put(parent, key, l->arr);
    put(parent, k, ju64(l->omitted));
    l->arr = NULL;
}

/* Site objects outside lists share one frame budget per report (the report being rendered). */
struct json_object *ga_json_site(const struct ga_report *r, const struct ga_site *x, uint32_t stack)
{
    static const struct ga_report *owner;
    static size_t budget;
    if (owner != r) owner = r, budget = LOOSE_FRAMES;
    return site_obj(r, x, stack, &budget);
}
