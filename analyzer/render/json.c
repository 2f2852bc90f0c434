/* --json: the report model as ONE JSON object, schema in docs/REPORT_JSON.md (keep in step). */
#include <stdlib.h>
#include <string.h>

#include "render/json.h"
#include "render/mem.h"
#include "render/nvml.h"
#include "render/run.h"
#include "render/sites.h"
#include "render/torch_render.h"
#include "base/util.h"

int ga_render_json(const struct ga_model *r, FILE *out)
{
    jobj *root = json_object_new_object();
    put(root, "schema_version", ji64(GA_SCHEMA_VERSION));
    put(root, "generator", ga_json_str(GA_GENERATOR));
    ga_json_run_head(&r->run, root);
    jobj *memory = ga_json_memory(&r->memview, &r->poolview, &r->nvmlview);
    jobj *timeline = ga_json_timeline(r);
    ga_json_torch(&r->torchview, memory);
    ga_json_sites(&r->siteview, root, memory, timeline);
    put(root, "memory", memory);
    put(root, "timeline", timeline);
    put(root, "device_state", ga_json_device_state(&r->nvmlview));
    ga_json_run_tail(&r->run, root);
    int flags = JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE;
    int rc = ga_json_write(&r->gpuview, root, flags, out);
    json_object_put(root);
    return rc;
}
