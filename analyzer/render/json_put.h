/* The JSON builders every JSON renderer file uses, the report's or the several traces' (render/
 * json.h adds the single report's). Includes no model of a trace: a renderer that reads only a
 * model view includes this, not json.h. */
#ifndef GA_JSON_PUT_H
#define GA_JSON_PUT_H

#include <stdint.h>

#include <json-c/json.h>

#define GA_SCHEMA_VERSION 1 /* the JSON report's schema_version (docs/REPORT_JSON.md) */

typedef struct json_object jobj;

static inline void put(jobj *o, const char *key, jobj *v)
{
    json_object_object_add(o, key, v);
}

static inline jobj *ju64(uint64_t v)
{
    return json_object_new_uint64(v);
}

static inline jobj *ji64(int64_t v)
{
    return json_object_new_int64(v);
}

/* A string from the trace as a JSON string (invalid UTF-8 replaced: ga_utf8_clean), or null for
 * NULL. Every string that comes from the trace goes through it. */
jobj *ga_json_str(const char *s);

#endif
