/* Shared by the JSON renderer's files. */
#ifndef GA_REPORT_JSON_H
#define GA_REPORT_JSON_H

#include <json-c/json.h>

#include "model/report.h"
#include "render/gpu.h"
#include "render/json_put.h" /* put, ju64, ji64, ga_json_str */

/* The API's name ("api#N" for ids this reader does not know). */
static inline jobj *api_name(unsigned api)
{
    char buf[16];
    return json_object_new_string(ga_api_label(api, buf));
}

/* Nanoseconds from the trace start, or null when not known. */
static inline jobj *jtime(const struct ga_report *r, uint64_t ts, int known)
{
    return known ? json_object_new_int64(ga_report_rel(r, ts)) : NULL;
}

struct json_object *ga_json_memory(const struct ga_report *r);
struct json_object *ga_json_timeline(const struct ga_report *r);
/* json_site_report.c, for the files not yet on the model's views. One call-site object (site, function, file, line, module, library, stack of `stack`), for
 * sites outside lists: their stacks share one frame budget per report. */
struct json_object *ga_json_site(const struct ga_report *r, const struct ga_site *x, uint32_t stack);
/* A site list: at most 1,000 sites (the rest counted), its stacks sharing one frame budget. */
struct ga_json_list {
    struct json_object *arr;
    size_t omitted, frames_left;
};
void ga_json_list_init(struct ga_json_list *l);
/* Appends x's site object and returns it for the caller's fields; NULL (and counted) when full. */
struct json_object *ga_json_list_site(const struct ga_report *r, struct ga_json_list *l,
                                      const struct ga_site *x, uint32_t stack);
/* parent.KEY = the list, parent.KEY_omitted = sites left out. */
void ga_json_list_put(struct json_object *parent, const char *key, struct ga_json_list *l);
/* json_peak.c: memory.peak_breakdown, memory.leaks, memory.temporaries, and the evidence
 * fields of one memory.ooms[] entry. */
void ga_json_peak(const struct ga_report *r, struct json_object *memory);
void ga_json_oom_evidence(const struct ga_report *r, const struct ga_oom *x,
                          const struct ga_oom_view *v, struct json_object *o);

#endif
