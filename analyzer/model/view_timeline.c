/* The page's timeline view: see view_timeline.h. */
#include "model/view_timeline.h"

#include <stdlib.h>
#include <string.h>

#include "gputrace/trace_api.h"
#include "base/demangle.h"
#include "base/util.h"

void ga_tlv_init(struct ga_tlv *v)
{
    memset(v, 0, sizeof(*v));
    v->acts = ga_xmalloc(GA_TLV_ACTS * sizeof(*v->acts));
    v->host = ga_xmalloc(GA_TLV_HOST * sizeof(*v->host));
}

static uint32_t name_of(struct ga_tlv *v, const struct ga_gpu_act *a)
{
    int added = 0;
    uint64_t key2 = a->kind == GA_GPU_KERNEL ? (a->linked ? a->func : ~0ull) : 1u + a->kind;
    uint64_t key1 = a->kind == GA_GPU_KERNEL ? a->name_id : 0x100000000ull + a->copy_kind;
    uint64_t *i = ga_map_upsert(&v->name_idx, key1, key2, v->n_names, &added);
    if (added) {
        v->name_act = ga_xgrow(v->name_act, &v->names_cap, v->n_names, sizeof(*v->name_act));
        v->name_act[v->n_names++] = *a;
    }
    return (uint32_t)*i;
}

void ga_tlv_act(void *ctx, const struct ga_gpu_act *a, const struct ga_gpu_launch *la)
{
    struct ga_tlv *v = ctx;
    (void)la;
    v->acts_total++;
    if (v->full) return;
    if (v->n_acts == GA_TLV_ACTS) {
        v->full = 1;
        v->window_end = a->start;
        return;
    }
    v->acts[v->n_acts++] =
        (struct ga_tlv_act){a->start, a->end, a->device, a->stream, name_of(v, a), a->kind};
}

void ga_tlv_host_event(struct ga_tlv *v, const struct ga_event *ev)
{
    uint64_t s, e;
    if (ev->sub >= GT_API_MAX) return;
    unsigned fam = gt_api_table[ev->sub].family;
    if (ev->type == GT_REC_SPAN &&
        (fam == GT_FAM_SYNC || fam == GT_FAM_COPY || fam == GT_FAM_WAIT)) {
        s = ev->r->span.ts_enter;
        e = ev->r->span.ts_exit > s ? ev->r->span.ts_exit : s;
    } else if (ev->type == GT_REC_ALLOC) {
        e = ev->r->alloc.ts;
        s = ev->r->alloc.dur_ns < e ? e - ev->r->alloc.dur_ns : e;
    } else if (ev->type == GT_REC_FREE) {
        s = ev->r->free.ts;
        e = s + ev->r->free.dur_ns;
    } else {
        return;
    }
    v->host_total++;
    if (v->n_host < GA_TLV_HOST && !(v->full && s >= v->window_end))
        v->host[v->n_host++] = (struct ga_tlv_host){s, e, ev->tid, ev->sub};
}

void ga_tlv_finish(struct ga_tlv *v, const struct ga_gpu *g, const struct ga_timeline *tl)
{
    v->names = ga_xcalloc(v->n_names ? v->n_names : 1, sizeof(*v->names));
    for (size_t i = 0; i < v->n_names; i++) {
        const char *raw = ga_gpu_act_name(g, tl, &v->name_act[i]);
        char *d = v->name_act[i].kind == GA_GPU_KERNEL ? ga_demangle(raw) : NULL;
        v->names[i] = d ? d : ga_xstrdup(raw);
    }
    free(v->name_act);
    v->name_act = NULL;
    ga_map_free(&v->name_idx);
    if (!v->full) return;
    size_t k = 0;
    for (size_t i = 0; i < v->n_host; i++)
        if (v->host[i].start < v->window_end) v->host[k++] = v->host[i];
    v->n_host = k;
}

void ga_tlv_free(struct ga_tlv *v)
{
    for (size_t i = 0; v->names && i < v->n_names; i++)
        free(v->names[i]);
    free(v->names);
    free(v->name_act);
    free(v->acts);
    free(v->host);
    ga_map_free(&v->name_idx);
    memset(v, 0, sizeof(*v));
}
