/* Shared by the JSON renderer's files. */
#ifndef GA_REPORT_JSON_H
#define GA_REPORT_JSON_H

#include <json-c/json.h>

#include "model/report.h"
#include "render/gpu.h"
#include "render/json_put.h" /* put, ju64, ji64, ga_json_str */

/* json_timeline.c: the timeline object. */
struct json_object *ga_json_timeline(const struct ga_model *m);

#endif
