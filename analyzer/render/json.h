/* Shared by the JSON renderer's files. */
#ifndef GA_REPORT_JSON_H
#define GA_REPORT_JSON_H

#include <json-c/json.h>

#include "model/state.h"
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

/* json_gpu.c: writes the document root (with flags) and a newline; with --all-gaps streams each
 * device's gaps where the document holds their marker. 0, or -1 (said on stderr) on an error. */
int ga_json_write(const struct ga_report *r, struct json_object *root, int flags, FILE *out);
struct json_object *ga_json_timeline(const struct ga_report *r);
/* json_gpu.c: top_kernels (by GPU time, or by launches without GPU kernels), and the GPU
 * timeline fields added to the timeline object. */
struct json_object *ga_json_top_kernels(const struct ga_report *r);
void ga_json_gpu_timeline(const struct ga_report *r, struct json_object *timeline);
#endif
