/* Shared by the JSON renderer's files. */
#ifndef GA_REPORT_JSON_H
#define GA_REPORT_JSON_H

#include <json-c/json.h>

#include "report.h"

struct json_object *ga_json_memory(const struct ga_report *r);
struct json_object *ga_json_timeline(const struct ga_report *r);

#endif
