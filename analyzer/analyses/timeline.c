/* Launch and span counting; kernel names resolved once at the end (see timeline.h). */
#include "analyses/timeline.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void ga_timeline_init(struct ga_timeline *t)
{
    memset(t, 0, sizeof(*t));
}

/* Launch APIs whose handle is a CUfunction/CUkernel (graphs and host functions are not). */
static int launches_kernel(unsigned api)
{
    return api >= GT_API_cuLaunchKernel && api <= GT_API_cuLaunchCooperativeKernel_ptsz;
}

/* Adds the launches of cache slot i to handle_launches. */
static void flush_handle(struct ga_timeline *t, size_t i)
{
    *ga_map_upsert(&t->handle_launches, t->recent_handle[i], 0, 0, NULL) += t->recent_count[i];
    t->recent_count[i] = 0;
}

/* Slot i goes to another handle. Out of line, like on_func: the counters' paths need no stack
 * frame. */
__attribute__((noinline)) static void evict_handle(struct ga_timeline *t, size_t i, uint64_t handle)
{
    flush_handle(t, i);
    t->recent_handle[i] = handle;
    t->recent_count[i] = 1;
}

static void count_handle(struct ga_timeline *t, uint64_t handle)
{
    size_t i = (size_t)(handle * 0x9e3779b97f4a7c15ull >> 32) & (GA_TL_HANDLE_CACHE - 1);
    if (t->recent_count[i] && t->recent_handle[i] != handle) {
        evict_handle(t, i, handle);
        return;
    }
    t->recent_handle[i] = handle;
    t->recent_count[i]++;
}

/* An async copy or memset: a call with bytes, in the calls by API (never a launch). */
static void on_enqueue(struct ga_timeline *t, const struct ga_event *ev)
{
    const struct gt_rec_launch *r = &ev->r->launch;
    struct ga_api_calls *c = &t->span[ev->sub];
    if (r->result != 0) {
        c->failed++;
        return;
    }
    c->count++;
    c->total_ns += r->dur_ns;
    c->bytes += ga_enqueue_bytes(r);
}

static void on_launch(struct ga_timeline *t, const struct ga_event *ev)
{
    const struct gt_rec_launch *r = &ev->r->launch;
    if (ga_api_enqueues(ev->sub)) {
        on_enqueue(t, ev);
        return;
    }
    struct ga_api_calls *c = &t->launch[ev->sub < GT_API_MAX ? ev->sub : 0];
    if (r->result != 0) {
        c->failed++;
        t->launch_failed++;
        return;
    }
    c->count++;
    c->total_ns += r->dur_ns;
    t->launch_count++;
    if (launches_kernel(ev->sub)) count_handle(t, r->func);
}

static void on_span(struct ga_timeline *t, const struct ga_event *ev)
{
    const struct gt_rec_span *r = &ev->r->span;
    struct ga_api_calls *c = &t->span[ev->sub < GT_API_MAX ? ev->sub : 0];
    t->span_count++;
    if (r->result != 0)
        c->failed++;
    else
        c->count++;
    if (r->ts_exit > r->ts_enter) c->total_ns += r->ts_exit - r->ts_enter;
    if (ev->sub < GT_API_MAX && gt_api_table[ev->sub].family == GT_FAM_COPY && r->result == 0)
        c->bytes += r->bytes;
}

/* A handle named twice (a module unloaded and its address reused) keeps the latest name. */
__attribute__((noinline)) static void on_func(struct ga_timeline *t, const struct ga_event *ev)
{
    int added = 0;
    uint64_t *idx = ga_map_upsert(&t->handle_name, ev->r->func.handle, 0, t->n_names, &added);
    char *name = ga_xstrndup(ev->str[0], ev->str_len[0]);
    if (!added) {
        free(t->names[*idx]);
        t->names[*idx] = name;
        return;
    }
    t->names = ga_xgrow(t->names, &t->names_cap, t->n_names, sizeof(*t->names));
    t->names[t->n_names++] = name;
}

void ga_timeline_event(struct ga_timeline *t, const struct ga_event *ev)
{
    switch (ev->type) {
    case GT_REC_LAUNCH:
        on_launch(t, ev);
        break;
    case GT_REC_SPAN:
        on_span(t, ev);
        break;
    case GT_REC_FUNC:
        on_func(t, ev);
        break;
    default:
        break;
    }
}

static int by_name(const void *a, const void *b)
{
    const struct ga_kernel *x = a, *y = b;
    return strcmp(x->name, y->name);
}

static int by_count(const void *a, const void *b)
{
    const struct ga_kernel *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

static char *name_of(const struct ga_timeline *t, uint64_t handle)
{
    const uint64_t *idx = ga_map_find(&t->handle_name, handle, 0);
    char buf[48];
    if (idx && t->names[*idx][0]) return ga_xstrdup(t->names[*idx]);
    snprintf(buf, sizeof(buf), "<unknown 0x%" PRIx64 ">", handle);
    return ga_xstrdup(buf);
}

void ga_timeline_finish(struct ga_timeline *t)
{
    const struct ga_map_slot *s;
    size_t n = 0, out = 0;
    for (size_t i = 0; i < GA_TL_HANDLE_CACHE; i++)
        if (t->recent_count[i]) flush_handle(t, i);
    t->kernels =
        ga_xcalloc(t->handle_launches.count ? t->handle_launches.count : 1, sizeof(*t->kernels));
    for (size_t i = 0; ga_map_next(&t->handle_launches, &i, &s);)
        t->kernels[n++] = (struct ga_kernel){name_of(t, s->a), s->value, 0};
    qsort(t->kernels, n, sizeof(*t->kernels), by_name);
    for (size_t i = 0; i < n; i++) { /* several handles can carry one name: merge them */
        if (out && strcmp(t->kernels[out - 1].name, t->kernels[i].name) == 0) {
            t->kernels[out - 1].count += t->kernels[i].count;
            free(t->kernels[i].name);
            continue;
        }
        t->kernels[out++] = t->kernels[i];
    }
    qsort(t->kernels, out, sizeof(*t->kernels), by_count);
    t->n_kernels = out;
}

void ga_timeline_free(struct ga_timeline *t)
{
    for (size_t i = 0; i < t->n_names; i++)
        free(t->names[i]);
    for (size_t i = 0; i < t->n_kernels; i++)
        free(t->kernels[i].name);
    free(t->names);
    free(t->kernels);
    ga_map_free(&t->handle_launches);
    ga_map_free(&t->handle_name);
    memset(t, 0, sizeof(*t));
}
