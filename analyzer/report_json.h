/* Shared by the JSON renderer's files. */
#ifndef GA_REPORT_JSON_H
#define GA_REPORT_JSON_H

#include <json-c/json.h>

#include "report.h"

struct json_object *ga_json_memory(const struct ga_report *r);
struct json_object *ga_json_timeline(const struct ga_report *r);
/* report_json_gpu.c: top_kernels (by GPU time, or by launches without GPU kernels), and the GPU
 * timeline fields added to the timeline object. */
struct json_object *ga_json_top_kernels(const struct ga_report *r);
void ga_json_gpu_timeline(const struct ga_report *r, struct json_object *timeline);

#endif
