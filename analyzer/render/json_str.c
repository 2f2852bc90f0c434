/* The one way a string from the trace becomes a JSON string (render/json_put.h). A file of its
 * own: every JSON file uses it, and json.c calls the others, so in json.c it would close a cycle. */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "render/json_put.h"

jobj *ga_json_str(const char *s)
{
    if (!s) return NULL;
    char *c = ga_utf8_clean(s, strlen(s));
    jobj *o = json_object_new_string(c);
    free(c);
    return o;
}
