/* JSON lookups for the unit tests: JGET(root, "a", "b", "#0") follows object keys and, with
 * "#<index>", array elements; NULL where the path does not exist. */
#ifndef GT_UNIT_JPATH_H
#define GT_UNIT_JPATH_H

#include <json-c/json.h>
#include <stdlib.h>

static inline json_object *jget(json_object *o, const char *const *path)
{
    for (; o && *path; path++) {
        json_object *x = NULL;
        if ((*path)[0] == '#')
            x = json_object_array_get_idx(o, (size_t)atoi(*path + 1));
        else if (!json_object_object_get_ex(o, *path, &x))
            x = NULL;
        o = x;
    }
    return o;
}
#define JGET(o, ...) jget(o, (const char *const[]){__VA_ARGS__, NULL})

#endif
