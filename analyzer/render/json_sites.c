/* --json: host call stacks: memory.by_site, memory.by_library, timeline.launch_sites,
 * timeline.sync_sites and the top-level stacks object (docs/REPORT_JSON.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/json.h"
#include "base/util.h"

/* Bounds that keep a hostile trace (tens of thousands of sites with 256-frame stacks) from
 * making gigabytes of JSON, set so that ordinary reports are untouched (docs/REPORT_JSON.md,
 * "Bounds"). A site list lists at most SITES_MAX sites and counts the rest in KEY_omitted; a
 * stack lists at most STACK_FRAMES frames; the stacks of one list share LIST_FRAMES frames, and
 * site objects outside lists (failed allocations, largest allocations, holders) share
 * LOOSE_FRAMES per report. A stack cut short says so: frames_truncated = frames left out. */
#define SITES_MAX    1000
#define STACK_FRAMES 256
#define LIST_FRAMES  16384
#define LOOSE_FRAMES 16384
#define ALL_FRAMES   4096 /* frames looked at per stack to count what was left out */

/* Symbolization caches are filled by ga_sites_finish; lookups here only read them. */
static struct ga_stacks *stacks_of(const struct ga_report *r)
{
    return (struct ga_stacks *)&r->stacks;
}

static const char *module_path(const struct ga_report *r, uint32_t m)
{
    return m == GA_NO_MODULE ? NULL : r->stacks.mods[m].path;
}

static jobj *frame_obj(const struct ga_report *r, const struct ga_frame *f)
{
    jobj *o = json_object_new_object();
    put(o, "function", ga_json_str(f->func));
    put(o, "file", ga_json_str(f->file));
    put(o, "line", f->line ? ju64(f->line) : NULL);
    put(o, "module", ga_json_str(module_path(r, f->module)));
    put(o, "offset",
        f->module == GA_NO_MODULE ? NULL : ju64(f->ip - r->stacks.mods[f->module].base));
    put(o, "inlined", json_object_new_boolean(f->inlined));
    put(o, "symbolized_by", ga_json_str(ga_sym_source_name(f->source)));
    return o;
}

/* o.stack: at most STACK_FRAMES frames and at most *budget (which it spends); o.frames_truncated:
 * how many frames of the stack are not listed. */
static void put_stack(const struct ga_report *r, jobj *o, uint32_t stack, size_t *budget)
{
    static const struct ga_frame *fr[ALL_FRAMES];
    jobj *a = json_object_new_array();
    size_t n = stack ? ga_sites_stack_frames(stacks_of(r), stack, fr, ALL_FRAMES) : 0;
    size_t k = n < STACK_FRAMES ? n : STACK_FRAMES;
    if (k > *budget) k = *budget;
    *budget -= k;
    for (size_t i = 0; i < k; i++)
        json_object_array_add(a, frame_obj(r, fr[i]));
    put(o, "stack", a);
    put(o, "frames_truncated", ju64(n - k));
}

/* The fields every site entry has: what and where the call site is. */
static jobj *site_obj(const struct ga_report *r, const struct ga_site *x, uint32_t stack,
                      size_t *budget)
{
    jobj *o = json_object_new_object();
    char label[1024];
    const struct ga_frame *f = x->frame;
    put(o, "site", ga_json_str(f ? ga_frame_label(&r->stacks, f, label, sizeof(label), 1) : "<unknown>"));
    put(o, "function", ga_json_str(f ? f->func : NULL));
    put(o, "file", ga_json_str(f ? f->file : NULL));
    put(o, "line", f && f->line ? ju64(f->line) : NULL);
    put(o, "module", ga_json_str(f ? module_path(r, f->module) : NULL));
    put(o, "library", ga_json_str(module_path(r, x->library)));
    put(o, "symbolized_by", ga_json_str(f ? ga_sym_source_name(f->source) : NULL));
    put(o, "stacks", ju64(x->stacks));
    put_stack(r, o, stack, budget);
    return o;
}

void ga_json_list_init(struct ga_json_list *l)
{
    memset(l, 0, sizeof(*l));
    l->arr = json_object_new_array();
    l->frames_left = LIST_FRAMES;
}

struct json_object *ga_json_list_site(const struct ga_report *r, struct ga_json_list *l,
                                      const struct ga_site *x, uint32_t stack)
{
    if (json_object_array_length(l->arr) >= SITES_MAX) {
        l->omitted++;
        return NULL;
    }
    jobj *o = site_obj(r, x, stack, &l->frames_left);
    json_object_array_add(l->arr, o);
    return o;
}

void ga_json_list_put(struct json_object *parent, const char *key, struct ga_json_list *l)
{
    char k[128];
    snprintf(k, sizeof(k), "%s_omitted", key);
    put(parent, key, l->arr);
    put(parent, k, ju64(l->omitted));
    l->arr = NULL;
}

static void by_site(const struct ga_report *r, jobj *memory)
{
    size_t n;
    struct ga_json_list l;
    const struct ga_site **v = ga_sites_sorted(&r->sites, GA_SITES_BY_BYTES, &n);
    ga_json_list_init(&l);
    for (size_t i = 0; i < n; i++) {
        jobj *o = ga_json_list_site(r, &l, v[i], v[i]->top_alloc);
        if (!o) continue;
        put(o, "count", ju64(v[i]->st.allocs));
        put(o, "bytes", ju64(v[i]->st.alloc_bytes));
        put(o, "failed", ju64(v[i]->st.alloc_failed));
        put(o, "leaked_bytes", ju64(v[i]->st.leaked_bytes));
        put(o, "leaked_count", ju64(v[i]->st.leaked_count));
    }
    free(v);
    ga_json_list_put(memory, "by_site", &l);
}

static void by_library(const struct ga_report *r, jobj *memory)
{
    size_t n;
    struct ga_library *v = ga_libraries_sorted(&r->sites, &n);
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < n && i < SITES_MAX; i++) {
        jobj *o = json_object_new_object();
        const char *path = module_path(r, v[i].module);
        put(o, "library", ga_json_str(path));
        put(o, "name", ga_json_str(path ? r->stacks.mods[v[i].module].name : NULL));
        put(o, "count", ju64(v[i].st.allocs));
        put(o, "bytes", ju64(v[i].st.alloc_bytes));
        put(o, "failed", ju64(v[i].st.alloc_failed));
        put(o, "leaked_bytes", ju64(v[i].st.leaked_bytes));
        json_object_array_add(a, o);
    }
    free(v);
    put(memory, "by_library", a);
    put(memory, "by_library_omitted", ju64(n > SITES_MAX ? n - SITES_MAX : 0));
}

static void launch_sites(const struct ga_report *r, jobj *timeline)
{
    size_t n;
    struct ga_json_list l;
    const struct ga_site **v = ga_sites_sorted(&r->sites, GA_SITES_BY_LAUNCHES, &n);
    ga_json_list_init(&l);
    for (size_t i = 0; i < n; i++) {
        jobj *o = ga_json_list_site(r, &l, v[i], v[i]->top_launch);
        if (!o) continue;
        put(o, "count", ju64(v[i]->st.launches));
        put(o, "failed", ju64(v[i]->st.launch_failed));
    }
    free(v);
    ga_json_list_put(timeline, "launch_sites", &l);
}

static void sync_sites(const struct ga_report *r, jobj *timeline)
{
    size_t n;
    struct ga_json_list l;
    const struct ga_site **v = ga_sites_sorted(&r->sites, GA_SITES_BY_SYNC, &n);
    ga_json_list_init(&l);
    for (size_t i = 0; i < n; i++) {
        jobj *o = ga_json_list_site(r, &l, v[i], v[i]->top_sync);
        if (!o) continue;
        put(o, "calls", ju64(v[i]->st.syncs));
        put(o, "time_ns", ju64(v[i]->st.sync_ns));
    }
    free(v);
    ga_json_list_put(timeline, "sync_sites", &l);
}

static jobj *stacks_summary(const struct ga_report *r)
{
    const struct ga_stacks *st = &r->stacks;
    jobj *o = json_object_new_object(), *by = json_object_new_object();
    put(o, "recorded", json_object_new_boolean(r->sites.have_stacks));
    put(o, "unique_stacks", ju64(r->sites.n_stacks));
    put(o, "nodes", ju64(st->defined));
    put(o, "modules", ju64(st->n_mods));
    put(o, "dladdr_symbols", ju64(st->n_syms));
    for (unsigned k = 0; k <= GA_SYM_UNKNOWN; k++)
        put(by, ga_sym_source_name(k), ju64(st->frames_by_source[k]));
    put(o, "ips_symbolized_by", by);
    put(o, "allocs_without_stack", ju64(r->sites.no_stack_allocs));
    put(o, "launches_without_stack", ju64(r->sites.no_stack_launches));
    put(o, "syncs_without_stack", ju64(r->sites.no_stack_syncs));
    return o;
}

void ga_json_sites(const struct ga_report *r, struct json_object *root, struct json_object *memory,
                   struct json_object *timeline)
{
    by_site(r, memory);
    by_library(r, memory);
    launch_sites(r, timeline);
    sync_sites(r, timeline);
    put(root, "stacks", stacks_summary(r));
}

/* Site objects outside lists share one frame budget per report (the report being rendered). */
struct json_object *ga_json_site(const struct ga_report *r, const struct ga_site *x, uint32_t stack)
{
    static const struct ga_report *owner;
    static size_t budget;
    if (owner != r) owner = r, budget = LOOSE_FRAMES;
    return site_obj(r, x, stack, &budget);
}
