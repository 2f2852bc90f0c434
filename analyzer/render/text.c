/* The terminal report: one screen, most important first. Sizes are human (KiB/MiB/GiB), times
 * are milliseconds from the trace start; --json has the exact numbers. */
#include "model/report.h"
#include "render/gpu.h"
#include "render/nvml.h"
#include "render/run.h"
#include "render/sites.h"
#include "render/mem.h"

void ga_render_text(const struct ga_model *r, FILE *o)
{
    ga_text_run_head(&r->run, o);
    ga_text_memory(&r->memview, &r->poolview, &r->torchview, o);
    ga_text_ooms(&r->memview, &r->nvmlview, o);
    ga_text_run_calls(&r->run, o);
    ga_text_sites(&r->siteview, r->show_stacks, o);
    ga_text_gpu(&r->gpuview, r->show_stacks, o);
    ga_text_nvml(&r->nvmlview, o);
    ga_text_run_tail(&r->run, o);
}
