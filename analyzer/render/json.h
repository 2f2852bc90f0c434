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

/* json_timeline.c: the timeline object (the run's launches and spans, the GPU view's fields). */
struct json_object *ga_json_timeline(const struct ga_report *r);

#endif
