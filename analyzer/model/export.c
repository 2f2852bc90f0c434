/* A trace export's pass (export.h): the report's sink with the writer's calls after each record,
 * and the GPU analysis's activity sink turned into the model's activities. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/export.h"
#include "model/state.h"
#include "base/demangle.h"
#include "base/hashmap.h"
#include "base/util.h"

struct xp {
    struct ga_report *r;
    const struct ga_xsink *s;
    void *ctx;
    struct ga_map names; /* (name_id, func) -> 1 + index into name */
    char **name;
    size_t n_name, name_cap;
    struct ga_map threads;             /* host tids named */
    uint64_t pool_reserved, pool_used; /* the pools' last values handed */
};

/* The demangled kernel name, once per (GPU name id, launch function). */
static const char *kernel_name(struct xp *x, const struct ga_gpu_act *a)
{
    int added = 0;
    uint64_t *i = ga_map_upsert(&x->names, a->name_id, a->linked ? a->func : ~0ull, 0, &added);
    if (added) {
        const char *raw = ga_gpu_act_name(&x->r->gpu, &x->r->tl, a);
        char *d = ga_demangle(raw);
        x->name = ga_xgrow(x->name, &x->name_cap, x->n_name, sizeof(*x->name));
        x->name[x->n_name++] = d ? d : ga_xstrdup(raw);
        *i = x->n_name;
    }
    return x->name[*i - 1];
}

static void on_act(void *ctx, const struct ga_gpu_act *a, const struct ga_gpu_launch *la)
{
    struct xp *x = ctx;
    char buf[64];
    struct ga_xact o = {.device = a->device,
                        .stream = a->stream,
                        .start = a->start,
                        .end = a->end,
                        .graph_id = a->graph_id};
    if (a->kind == GA_GPU_KERNEL) {
        o.kind = GA_XACT_KERNEL;
        o.name = kernel_name(x, a);
    } else if (a->kind == GA_GPU_MEMSET) { /* Kineto's names, the kinds are enough here */
        o.kind = GA_XACT_SET;
        o.name = "Memset (Device)";
        o.bytes = a->bytes;
    } else {
        o.kind = GA_XACT_COPY;
        snprintf(buf, sizeof(buf), "Memcpy %s", ga_copy_kind_name(a->copy_kind));
        o.name = buf;
        o.bytes = a->bytes;
    }
    if (la && a->kind == GA_GPU_KERNEL) { /* copies' calls are exported unlinked (above) */
        o.linked = 1;
        o.corr = la->corr;
        o.launch_tid = la->tid;
        o.launch_ts = la->ts;
    }
    x->s->act(x->ctx, &o);
}

/* The pools' reserved and used bytes over all devices (annotated and stream-ordered pools),
 * handed when they change. */
static void pools(struct xp *x, uint64_t ts)
{
    const struct ga_pools *p = &x->r->pools;
    uint64_t reserved = 0, used = 0;
    for (size_t i = 0; i < p->ndev; i++) {
        reserved += p->devs[i].now.reserved + p->devs[i].stream_reserved;
        used += p->devs[i].now.used + p->devs[i].stream_used;
    }
    if (reserved == x->pool_reserved && used == x->pool_used) return;
    x->pool_reserved = reserved;
    x->pool_used = used;
    x->s->pools(x->ctx, ts, reserved, used);
}

static void thread(struct xp *x, const struct ga_event *ev)
{
    int added = 0;
    ga_map_upsert(&x->threads, ev->r->thread.tid, 0, 0, &added);
    if (added) x->s->thread(x->ctx, ev->r->thread.tid, ev->str[0], ev->str_len[0]);
}

/* An allocation's call began its duration before its time stamp (taken after the call). */
static uint64_t before(uint64_t ts, uint32_t dur)
{
    return dur < ts ? dur : 0;
}

static void host(struct xp *x, const struct ga_event *ev)
{
    char lb[16];
    struct ga_xcall c = {.api = ga_api_label(ev->sub, lb), .tid = ev->tid};
    switch (ev->type) {
    case GT_REC_LAUNCH:
        c.kind = ga_api_enqueues(ev->sub) ? GA_XCALL_SPAN : GA_XCALL_LAUNCH;
        c.ts = ev->r->launch.ts;
        c.dur = ev->r->launch.dur_ns;
        c.result = ev->r->launch.result;
        c.corr = ev->r->launch.corr;
        x->s->call(x->ctx, &c);
        break;
    case GT_REC_SPAN: {
        const struct gt_rec_span *s = &ev->r->span;
        c.kind = GA_XCALL_SPAN;
        c.ts = s->ts_enter;
        c.dur = s->ts_exit > s->ts_enter ? s->ts_exit - s->ts_enter : 0;
        c.result = s->result;
        x->s->call(x->ctx, &c);
        break;
    }
    case GT_REC_ALLOC: {
        const struct gt_rec_alloc *a = &ev->r->alloc;
        c.kind = GA_XCALL_ALLOC;
        c.dur = before(a->ts, a->dur_ns);
        c.ts = a->ts - c.dur;
        c.bytes = a->size;
        c.addr = a->addr;
        c.device = a->device;
        x->s->call(x->ctx, &c);
        x->s->live(x->ctx, a->ts, x->r->mem.live_total);
        break;
    }
    case GT_REC_FREE: {
        const struct gt_rec_free *f = &ev->r->free;
        c.kind = GA_XCALL_FREE;
        c.ts = f->ts;
        c.dur = f->dur_ns;
        c.addr = f->addr;
        c.result = f->result;
        x->s->call(x->ctx, &c);
        x->s->live(x->ctx, f->ts, x->r->mem.live_total);
        break;
    }
    case GT_REC_ALLOC_FAIL: {
        const struct gt_rec_alloc_fail *a = &ev->r->alloc_fail;
        c.kind = GA_XCALL_FAIL;
        c.dur = before(a->ts, a->dur_ns);
        c.ts = a->ts - c.dur;
        c.bytes = a->size;
        c.result = a->result;
        c.free_bytes = a->free_bytes;
        x->s->call(x->ctx, &c);
        break;
    }
    case GT_REC_THREAD:
        thread(x, ev);
        break;
    case GT_REC_NVML_SAMPLE: {
        const struct gt_rec_nvml_sample *n = &ev->r->nvml_sample;
        struct ga_xnvml o = {.device = n->device,
                             .ts = n->ts,
                             .has_sm = !!(n->valid & GT_NVML_HAS_SM_CLOCK),
                             .has_temp = !!(n->valid & GT_NVML_HAS_TEMP),
                             .has_power = !!(n->valid & GT_NVML_HAS_POWER),
                             .has_mem_used = !!(n->valid & GT_NVML_HAS_MEM_USED),
                             .sm_mhz = n->sm_mhz,
                             .temp_c = n->temp_c,
                             .power_mw = n->power_mw,
                             .mem_used = n->mem_used};
        if (x->s->nvml && n->device >= 0) x->s->nvml(x->ctx, &o);
        break;
    }
    default:
        break;
    }
    if (ev->type == GT_REC_ALLOC || ev->type == GT_REC_FREE || ev->type == GT_REC_POOL ||
        ev->type == GT_REC_BLOCK || ev->type == GT_REC_POOL_USAGE || ev->type == GT_REC_OBJECT ||
        ev->type == GT_REC_VMM_MAP)
        pools(x, ev->ts);
}

static void start(struct xp *x)
{
    const struct gt_file_header *h = &x->r->read.header;
    struct ga_xstart s = {h->pid, h->start_realtime_ns, h->start_monotonic_ns};
    x->s->start(x->ctx, &s);
}

static void sink(void *ctx, const struct ga_event *ev)
{
    struct xp *x = ctx;
    if (!x->r->started) start(x);
    ga_report_event(x->r, ev);
    if (!ga_rec_is_gpu(ev->type)) host(x, ev);
}

struct gap_ctx {
    struct xp *x;
    uint32_t device;
};

static int one_gap(void *ctx, const struct ga_gap *g)
{
    struct gap_ctx *c = ctx;
    return c->x->s->gap(c->x->ctx, c->device, g->start, g->dur, ga_cause_name(g->cause));
}

/* Every idle gap, streamed back from the gaps' temporary file (ga_gaps_keep_all) one at a time,
 * per device in time order; without that file (no temporary space) the analysis kept them all
 * in memory instead (top = 0). */
static int gaps(struct xp *x)
{
    const struct ga_gaps *g = &x->r->gaps;
    for (size_t i = 0; i < g->n_devices; i++) {
        const struct ga_gaps_device *d = &g->devices[i];
        struct gap_ctx c = {x, d->device};
        if (!d->n_gaps) continue;
        x->s->gap_track(x->ctx, d->device);
        if (!g->spill) {
            for (size_t k = 0; k < d->n_kept; k++)
                one_gap(&c, &d->gaps[k]);
        } else if (ga_gaps_each(g, d->device, one_gap, &c) != 0) {
            int e = g->spill_errno ? g->spill_errno : errno ? errno : EIO;
            snprintf(x->r->read.error, sizeof(x->r->read.error),
                     "the temporary file of idle gaps: %s", strerror(e));
            return -1;
        }
    }
    return 0;
}

static void xp_free(struct xp *x)
{
    for (size_t i = 0; i < x->n_name; i++)
        free(x->name[i]);
    free(x->name);
    ga_map_free(&x->names);
    ga_map_free(&x->threads);
}

int ga_report_export(struct ga_report *r, const struct ga_xsink *s, void *ctx)
{
    struct xp x = {.r = r, .s = s, .ctx = ctx};
    ga_gaps_keep_all(&r->gaps);
    r->gpu.act_sink = on_act;
    r->gpu.act_ctx = &x;
    int rc = ga_read_trace(r->m.path, sink, &x, &r->read);
    if (rc == 0) {
        if (!r->started) start(&x);
        ga_report_finish(r); /* the held activities leave through on_act */
        s->run(ctx, &r->m.run);
        rc = gaps(&x);
    }
    r->gpu.act_sink = NULL;
    xp_free(&x);
    return rc;
}
