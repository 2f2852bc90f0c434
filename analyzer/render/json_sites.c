/* --json: host call stacks: memory.by_site, memory.by_library, timeline.launch_sites,
 * timeline.sync_sites and the top-level stacks object (docs/REPORT_JSON.md), and the call-site
 * object every JSON list of sites uses. Reads the sites view alone (model/view_sites.h): its
 * lists are already capped (GA_VSITES_MAX, the rest counted in KEY_omitted) and their frames
 * budgeted (docs/REPORT_JSON.md, "Bounds"); a stack cut short says so in frames_truncated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/sites.h"
#include "render/json_put.h"

static jobj *frame_obj(const struct ga_vframe *f)
{
    jobj *o = json_object_new_object();
    put(o, "function", ga_json_str(f->func));
    put(o, "file", ga_json_str(f->file));
    put(o, "line", f->line ? ju64(f->line) : NULL);
    put(o, "module", ga_json_str(f->module_path));
    put(o, "offset", f->module_path ? ju64(f->offset) : NULL);
    put(o, "inlined", json_object_new_boolean(f->inlined));
    put(o, "symbolized_by", ga_json_str(f->symbolized_by));
    return o;
}

jobj *ga_json_vsite(const struct ga_vsite *x, const struct ga_vstack *stack, size_t frames)
{
    jobj *o = json_object_new_object(), *a = json_object_new_array();
    const struct ga_vframe *f = x ? x->frame : NULL;
    put(o, "site", ga_json_str(f ? f->label_path : "<unknown>"));
    put(o, "function", ga_json_str(f ? f->func : NULL));
    put(o, "file", ga_json_str(f ? f->file : NULL));
    put(o, "line", f && f->line ? ju64(f->line) : NULL);
    put(o, "module", ga_json_str(f ? f->module_path : NULL));
    put(o, "library", ga_json_str(x ? x->library_path : NULL));
    put(o, "symbolized_by", ga_json_str(f ? f->symbolized_by : NULL));
    put(o, "stacks", ju64(x ? x->stacks : 0));
    size_t total = stack ? stack->total : 0;
    if (frames > (stack ? stack->n : 0)) frames = stack ? stack->n : 0;
    for (size_t i = 0; i < frames; i++)
        json_object_array_add(a, frame_obj(stack->frames[i]));
    put(o, "stack", a);
    put(o, "frames_truncated", ju64(total - frames));
    return o;
}

/* parent.KEY = the list's site objects, each with the fields `fields` adds; KEY_omitted. */
static void put_list(jobj *parent, const char *key, const struct ga_vsite_list *l,
                     void (*fields)(jobj *, const struct ga_vsite_stats *))
{
    char k[128];
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < l->n; i++) {
        const struct ga_vsite_row *row = &l->rows[i];
        jobj *o = ga_json_vsite(row->site, row->stack, row->frames);
        fields(o, &row->st);
        json_object_array_add(a, o);
    }
    snprintf(k, sizeof(k), "%s_omitted", key);
    put(parent, key, a);
    put(parent, k, ju64(l->omitted));
}

static void alloc_fields(jobj *o, const struct ga_vsite_stats *s)
{
    put(o, "count", ju64(s->allocs));
    put(o, "bytes", ju64(s->alloc_bytes));
    put(o, "failed", ju64(s->alloc_failed));
    put(o, "leaked_bytes", ju64(s->leaked_bytes));
    put(o, "leaked_count", ju64(s->leaked_count));
}

static void launch_fields(jobj *o, const struct ga_vsite_stats *s)
{
    put(o, "count", ju64(s->launches));
    put(o, "failed", ju64(s->launch_failed));
}

static void sync_fields(jobj *o, const struct ga_vsite_stats *s)
{
    put(o, "calls", ju64(s->syncs));
    put(o, "time_ns", ju64(s->sync_ns));
}

static void by_library(const struct ga_vsites *v, jobj *memory)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_libs; i++) {
        const struct ga_vlibrary *l = &v->libs[i];
        jobj *o = json_object_new_object();
        put(o, "library", ga_json_str(l->path));
        put(o, "name", ga_json_str(l->name));
        put(o, "count", ju64(l->st.allocs));
        put(o, "bytes", ju64(l->st.alloc_bytes));
        put(o, "failed", ju64(l->st.alloc_failed));
        put(o, "leaked_bytes", ju64(l->st.leaked_bytes));
        json_object_array_add(a, o);
    }
    put(memory, "by_library", a);
    put(memory, "by_library_omitted", ju64(v->libs_omitted));
}

static jobj *stacks_summary(const struct ga_vsites *v)
{
    jobj *o = json_object_new_object(), *by = json_object_new_object();
    put(o, "recorded", json_object_new_boolean(v->have_stacks));
    put(o, "unique_stacks", ju64(v->unique_stacks));
    put(o, "nodes", ju64(v->nodes));
    put(o, "modules", ju64(v->modules));
    put(o, "dladdr_symbols", ju64(v->dladdr_symbols));
    for (unsigned k = 0; k < GA_VSYM_SOURCES; k++)
        put(by, v->source_names[k], ju64(v->frames_by_source[k]));
    put(o, "ips_symbolized_by", by);
    put(o, "allocs_without_stack", ju64(v->allocs_without_stack));
    put(o, "launches_without_stack", ju64(v->launches_without_stack));
    put(o, "syncs_without_stack", ju64(v->syncs_without_stack));
    return o;
}

void ga_json_sites(const struct ga_vsites *v, jobj *root, jobj *memory, jobj *timeline)
{
    put_list(memory, "by_site", &v->by_bytes, alloc_fields);
    by_library(v, memory);
    put_list(timeline, "launch_sites", &v->by_launches, launch_fields);
    put_list(timeline, "sync_sites", &v->by_sync, sync_fields);
    put(root, "stacks", stacks_summary(v));
}
