/* --json: the timeline section: the run's launches and blocking calls by API (json_run.c), with
 * the GPU timeline's top kernels and fields (json_gpu.c) between and after them
 * (docs/REPORT_JSON.md). */
#include "render/json.h"
#include "render/run.h"

jobj *ga_json_timeline(const struct ga_model *r)
{
    jobj *o = json_object_new_object();
    ga_json_run_launches(&r->run, o);
    put(o, "top_kernels", ga_json_top_kernels(&r->gpuview));
    ga_json_run_spans(&r->run, o);
    ga_json_gpu_timeline(&r->gpuview, o);
    return o;
}
