/* One pass: the reader feeds every host record, in time order, to each analysis. */
#include "model/state.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/demangle.h"
#include "base/util.h"

/* The memory analysis has just added failure o: what the pools hold on its device, as they stand
 * before this record reaches them. */
static __attribute__((cold, noinline)) void oom_pools(const struct ga_pools *p, struct ga_oom *o)
{
    struct ga_pool_evidence ev;
    ga_pools_oom_evidence(p, o->device, o->requested, &ev);
    o->have_pools = ev.pools > 0 || ev.reserved_unused > 0;
    o->pools.reserved_unused = ev.reserved_unused;
    o->pools.largest_free = ev.largest_free;
    o->pools.pools = ev.pools;
    o->pools.pool = ev.pool_index >= 0 ? ev.pool_id : 0;
    o->pools.pool_name = ev.pool_name;
}

/* Each analysis gets only the record types of its mask (unit_report checks that it ignores the
 * others): per type, one byte of ROUTE_* bits says which. A type past the masks' 64 bits goes
 * to all, as every type did before them. */
enum {
    ROUTE_FACTS = 1,
    ROUTE_MEMORY = 2,
    ROUTE_TIMELINE = 4,
    ROUTE_GAPS = 8,
    ROUTE_STACKS = 16,
    ROUTE_SITES = 32
};
#define IN_MASK(mask, t) (((mask) >> (t)) & 1)
#define ROUTES_OF(t)                                                                               \
    ((uint8_t)(IN_MASK(GA_FACTS_TYPES, t) * ROUTE_FACTS |                                          \
               IN_MASK(GA_MEMORY_TYPES, t) * ROUTE_MEMORY |                                        \
               IN_MASK(GA_TIMELINE_TYPES, t) * ROUTE_TIMELINE |                                    \
               IN_MASK(GA_GAPS_TYPES, t) * ROUTE_GAPS |                                            \
               IN_MASK(GA_STACKS_TYPES, t) * ROUTE_STACKS |                                        \
               IN_MASK(GA_SITES_TYPES, t) * ROUTE_SITES))
static const uint8_t route_all = 0xff;
#define TYPE_ANY 0xffffu /* deliver's type when the caller does not know it as a constant */

static void set_routes(struct ga_report *r)
{
    for (unsigned t = 0; t < 64; t++)
        r->routes[t] = ROUTES_OF(t);
}

void ga_report_init(struct ga_report *r, const char *path)
{
    memset(r, 0, sizeof(*r));
    r->m.path = path;
    set_routes(r);
    ga_facts_init(&r->facts);
    ga_memory_init(&r->mem);
    ga_pools_init(&r->pools);
    r->pools.mem = &r->mem;
    ga_timeline_init(&r->tl);
    ga_gpu_init(&r->gpu);
    ga_gaps_init(&r->gaps, GA_GAPS_TOP);
    r->gpu.gaps = &r->gaps; /* the GPU analysis hands each activity on as it goes */
    ga_nvml_init(&r->nvml);
    r->gaps.busy_hook = ga_nvml_busy; /* busy intervals laid over the NVML samples */
    r->gaps.busy_ctx = &r->nvml;
    ga_hostidle_init(&r->hostidle);
    r->gaps.gap_hook = ga_hostidle_gap; /* every gap, for the host samples' join */
    r->gaps.gap_ctx = &r->hostidle;
    r->hostidle.host_max = &r->gpu.host_max; /* (a gap is joined once the host records pass it) */
    r->hostidle.gaps = &r->gaps;
    ga_stacks_init(&r->stacks);
    ga_sites_init(&r->sites, NULL);
    ga_torch_init(&r->torch);
    r->torch.mem = &r->mem; /* blocks without frames: their segments' driver allocations */
    ga_tmv_init(&r->torchmap);
    ga_tiers_init(&r->tiers);
    ga_tv_init(&r->tierview);
    ga_demangle_reset();
}

int ga_report_ignore_frames(struct ga_report *r, const char *regex, char *err, size_t n)
{
    ga_sites_free(&r->sites);
    if (ga_sites_init(&r->sites, regex) == 0) return 0;
    snprintf(err, n, "%s", r->sites.ignore_error);
    ga_sites_init(&r->sites, NULL);
    return -1;
}

/* A record to the analyses of its type's route. The most common types come with `type` a
 * constant (ga_report_event): their route is one too, and the tests below fold away. Otherwise
 * the route is read through a pointer where tested (kept in a register across the calls, the
 * value cost more in spills than the loads). */
__attribute__((always_inline)) static inline void deliver(struct ga_report *r,
                                                          const struct ga_event *ev, unsigned type)
{
    const uint8_t known = type < 64 ? ROUTES_OF(type) : 0;
    const uint8_t *to = type < 64 ? &known : ev->type < 64 ? &r->routes[ev->type] : &route_all;
    ga_facts_time(&r->facts, ev);
    if (*to & ROUTE_FACTS) ga_facts_event(&r->facts, ev);
    if (*to & ROUTE_MEMORY) {
        size_t n_ooms = r->mem.n_ooms;
        ga_memory_event(&r->mem, ev);
        if (r->mem.n_ooms != n_ooms) oom_pools(&r->pools, &r->mem.ooms[n_ooms]);
    }
    /* pools: every record (its last time); after memory: reads the peak */
    if (type == GT_REC_ALLOC)
        ga_pools_alloc_event(&r->pools, ev);
    else if (type == GT_REC_FREE)
        ga_pools_free_event(&r->pools, ev);
    else if (type < 64 && !IN_MASK(GA_POOLS_TYPES, type))
        ga_pools_tick(&r->pools);
    else
        ga_pools_event(&r->pools, ev);
    if (*to & ROUTE_TIMELINE) ga_timeline_event(&r->tl, ev);
    /* gpu: every record (a host record's time may let activities leave) */
    if (type == GT_REC_ALLOC)
        ga_gpu_alloc_event(&r->gpu, ev);
    else if (type == GT_REC_FREE)
        ga_gpu_free_event(&r->gpu, ev);
    else if (type == GT_REC_LAUNCH)
        ga_gpu_launch_event(&r->gpu, ev);
    else if (type == GT_REC_SPAN)
        ga_gpu_span_event(&r->gpu, ev);
    else
        ga_gpu_event(&r->gpu, ev);
    if (*to & ROUTE_GAPS) {
        if (type == GT_REC_ALLOC)
            ga_gaps_alloc_event(&r->gaps, ev);
        else if (type == GT_REC_FREE)
            ga_gaps_free_event(&r->gaps, ev);
        else if (type == GT_REC_SPAN)
            ga_gaps_span_event(&r->gaps, ev);
        else
            ga_gaps_event(&r->gaps, ev);
    }
    if (*to & ROUTE_STACKS) ga_stacks_event(&r->stacks, ev);
    if (*to & ROUTE_SITES) ga_sites_event(&r->sites, ev);
    ga_torch_event(&r->torch, ev);
    if (ev->type == GT_REC_TORCH_SNAP) {
        ga_tmv_event(&r->torchmap, &r->torch, ev);
        ga_tiers_snap_end(&r->tiers, &r->torch, ev, r->mem.live_total);
    }
    if (ev->type == GT_REC_TORCH_ROLES || ev->type == GT_REC_TORCH_STEP)
        ga_tiers_event(&r->tiers, ev);
    if (ev->type == GT_REC_TORCH_TRACE) ga_tiers_trace(&r->tiers, ev);
    if (ev->type == GT_REC_TORCH_STATS && ev->sub == GT_TORCH_START) ga_tiers_start(&r->tiers, ev);
    if (ev->type >= GT_REC_NVML && ev->type <= GT_REC_NVML_PROC) ga_nvml_event(&r->nvml, ev);
    if (ev->type == GT_REC_GPU_KERNEL && !ga_nvml_off(&r->nvml))
        ga_nvml_kernel(&r->nvml, &ev->r->gpu_kernel);
    if (ev->type == GT_REC_HOST_SAMPLE) ga_hostidle_event(&r->hostidle, ev);
    /* the hooked calls' starts: a thread has written the samples it took before them */
    if (type == GT_REC_LAUNCH)
        ga_hostidle_call(&r->hostidle, ev->tid, ev->r->launch.ts);
    else if (type == GT_REC_SPAN)
        ga_hostidle_call(&r->hostidle, ev->tid, ev->r->span.ts_enter);
    else if (type == GT_REC_FREE)
        ga_hostidle_call(&r->hostidle, ev->tid, ev->r->free.ts);
    else if (type == GT_REC_ALLOC && ev->r->alloc.dur_ns && ev->r->alloc.dur_ns != UINT32_MAX &&
             ev->r->alloc.ts > ev->r->alloc.dur_ns) /* (stamped after the call: its duration known) */
        ga_hostidle_call(&r->hostidle, ev->tid, ev->r->alloc.ts - ev->r->alloc.dur_ns);
}

__attribute__((noinline)) static void deliver_other(struct ga_report *r, const struct ga_event *ev)
{
    deliver(r, ev, TYPE_ANY);
}

void ga_report_event(void *report, const struct ga_event *ev)
{
    struct ga_report *r = report;
    if (!r->started) {
        r->mem.t0 = r->read.header.start_monotonic_ns;
        r->pools.t0 = r->mem.t0;
        r->tiers.real_minus_mono =
            (int64_t)(r->read.header.start_realtime_ns - r->read.header.start_monotonic_ns);
        r->started = 1;
    }
    switch (ev->type) {
    case GT_REC_ALLOC:
        deliver(r, ev, GT_REC_ALLOC);
        break;
    case GT_REC_FREE:
        deliver(r, ev, GT_REC_FREE);
        break;
    case GT_REC_LAUNCH:
        deliver(r, ev, GT_REC_LAUNCH);
        break;
    case GT_REC_SPAN:
        deliver(r, ev, GT_REC_SPAN);
        break;
    default:
        deliver_other(r, ev);
        break;
    }
    if (r->tap) r->tap(r->tap_ctx, ev);
}

int64_t ga_report_rel(const struct ga_report *r, uint64_t ts)
{
    return (int64_t)(ts - r->read.header.start_monotonic_ns);
}

uint64_t ga_report_duration(const struct ga_report *r)
{
    if (!ga_facts_have_ts(&r->facts)) return 0;
    int64_t d = ga_report_rel(r, r->facts.last_ts);
    return d > 0 ? (uint64_t)d : 0;
}

/* Two stacks lead to the same call site (the unknown site only from the same stack). */
static int same_site(void *ctx, uint32_t a, uint32_t b)
{
    const struct ga_site *x = ga_sites_of_stack(ctx, a), *y = ga_sites_of_stack(ctx, b);
    return x || y ? x == y : a == b;
}

void ga_report_finish(struct ga_report *r)
{
    r->mem.t0 = r->read.header.start_monotonic_ns;
    ga_memory_finish(&r->mem, ga_facts_have_ts(&r->facts) ? r->facts.last_ts : r->mem.t0);
    ga_torch_cached_at_exit(&r->torch, &r->mem); /* before the leaks by site */
    r->pools.t0 = r->mem.t0;
    ga_pools_finish(&r->pools, ga_facts_have_ts(&r->facts) ? r->facts.last_ts : r->mem.t0);
    ga_timeline_finish(&r->tl);
    ga_gpu_finish(&r->gpu, &r->tl);
    ga_sites_finish(&r->sites, &r->stacks, &r->mem);
    ga_torch_attribute(&r->torch, &r->sites);       /* segments' driver stacks -> call sites */
    ga_memory_judge(&r->mem, same_site, &r->sites); /* a retry comes from the failure's site */
    ga_torch_finish(&r->torch, &r->mem);            /* after the driver failures' verdicts */
    ga_gaps_finish(&r->gaps, &r->sites);
    ga_nvml_finish(&r->nvml); /* after the last busy intervals, which the gaps' finish sweeps */
    ga_hostidle_finish(&r->hostidle, &r->sites, &r->stacks); /* after the last gap */
    ga_idle_host_build(&r->idle_host, &r->hostidle, &r->sites, &r->stacks);
    ga_vrun_build(&r->m.run, r->m.path, &r->read, &r->facts, &r->tl, &r->gpu,
                  r->read.header.start_monotonic_ns, ga_report_duration(r));
    ga_report_gpu_timeline(r, r->m.run.gpu_timeline, sizeof(r->m.run.gpu_timeline));
    r->m.run.caveat = ga_report_gpu_caveat(r, r->m.run.caveat_buf, sizeof(r->m.run.caveat_buf));
    ga_views_build(&r->views, &r->mem, &r->sites);
    ga_vstacks_init(&r->stackview, &r->stacks, &r->sites);
    ga_vgpu_build(&r->m.gpuview, &r->gpu, &r->tl, &r->gaps, &r->hostidle, &r->idle_host, &r->sites,
                  &r->stackview, r->read.header.start_monotonic_ns);
    ga_report_gpu_timeline(r, r->m.gpuview.status, sizeof(r->m.gpuview.status));
    r->m.gpuview.have_caveat =
        ga_report_gpu_caveat(r, r->m.gpuview.caveat, sizeof(r->m.gpuview.caveat)) != NULL;
    ga_vpools_build(&r->m.poolview, &r->pools, r->read.header.start_monotonic_ns);
    ga_vnvml_build(&r->m.nvmlview, &r->nvml, &r->mem, &r->facts, &r->gpu,
                   r->read.header.start_monotonic_ns);
    ga_tv_build(&r->tierview, &r->tiers, &r->torch);
    ga_vcats_build(&r->peakcats, &r->mem, &r->stacks, &r->sites, r->views.libs_at_peak,
                   r->views.n_libs_at_peak, &r->tiers);
    ga_vmem_build(&r->m.memview, r);
    ga_vtorch_build(&r->m.torchview, r);
    /* last: it copies the symbolizer's counts, after every view that resolves stacks */
    ga_vsites_build(&r->m.siteview, &r->sites, &r->stackview);
}

int ga_report_run(struct ga_report *r)
{
    if (ga_read_trace(r->m.path, ga_report_event, r, &r->read) != 0) return -1;
    ga_report_finish(r);
    return 0;
}

/* The shim's reason text without its leading ": ". */
static const char *cupti_reason(const struct ga_facts *f)
{
    const char *reason = f->cupti_reason ? f->cupti_reason : "";
    return strncmp(reason, ": ", 2) == 0 ? reason + 2 : reason;
}

/* The other profiler's name: what the shim put in parentheses after "another profiler holds
 * CUPTI", else its whole reason (older shims wrote just the name). */
static void owner_name(const char *reason, char *buf, size_t n)
{
    static const char prefix[] = "another profiler holds CUPTI";
    size_t len;
    if (strncmp(reason, prefix, sizeof(prefix) - 1) == 0) reason += sizeof(prefix) - 1;
    while (*reason == ' ' || *reason == '(')
        reason++;
    len = strlen(reason);
    while (len && (reason[len - 1] == ')' || reason[len - 1] == ' '))
        len--;
    snprintf(buf, n, "%s%.*s%s", len ? " (" : "", (int)len, reason, len ? ")" : "");
}

static void cupti_failed(const struct ga_facts *f, const char *reason, char *buf, size_t n)
{
    char res[32] = "";
    if (f->cupti.result) snprintf(res, sizeof(res), "CUptiResult %d", f->cupti.result);
    if (!*reason && !*res) reason = "reason not recorded";
    snprintf(buf, n, "unavailable: CUPTI failed (%s%s%s)", reason, *reason && *res ? ", " : "",
             res);
}

const char *ga_report_gpu_caveat(const struct ga_report *r, char *buf, size_t n)
{
    const struct ga_gpu *g = &r->gpu;
    uint64_t got = g->kernel_count + g->memsets.count;
    if (!g->dropped) return NULL;
    for (unsigned k = 0; k < GA_COPY_KINDS; k++)
        got += g->copies[k].count;
    snprintf(buf, n,
             "CUPTI dropped %" PRIu64 " of %" PRIu64 " GPU activity records: GPU busy time, "
             "utilization, kernel, copy and memset figures count only the records delivered "
             "(lower bounds); idle time and idle gaps may hold work that was not recorded "
             "(upper bounds)",
             g->dropped, g->dropped + got);
    return buf;
}

const char *ga_report_gpu_timeline(const struct ga_report *r, char *buf, size_t n)
{
    const struct ga_facts *f = &r->facts;
    const char *reason = cupti_reason(f);
    char who[200];
    if (!f->have_cupti) {
        snprintf(buf, n,
                 "unavailable: no CUPTI status record (trace from a run without a CUDA init)");
        return buf;
    }
    switch (f->cupti.h.sub) {
    case GT_CUPTI_ON:
        snprintf(buf, n, "available");
        break;
    case GT_CUPTI_OFF_BY_USER:
        snprintf(buf, n, "unavailable: CUPTI turned off by the user (GPUTRACE_CUPTI=off)");
        break;
    case GT_CUPTI_NOT_FOUND:
        snprintf(buf, n, "unavailable: CUPTI not found%s%s", *reason ? ": " : "", reason);
        break;
    case GT_CUPTI_OWNED:
        owner_name(reason, who, sizeof(who));
        snprintf(buf, n, "unavailable: CUPTI is owned by another profiler%s", who);
        break;
    case GT_CUPTI_FAILED:
        cupti_failed(f, reason, buf, n);
        break;
    case GT_CUPTI_TAKEN:
        snprintf(buf, n,
                 "partial: GPU records end where another CUPTI client (torch.profiler, "
                 "Nsight, ...) took CUPTI's activity callbacks; launches after that have no "
                 "GPU times");
        break;
    default:
        snprintf(buf, n, "unavailable: unknown CUPTI status %u", f->cupti.h.sub);
        break;
    }
    return buf;
}

void ga_report_free(struct ga_report *r)
{
    ga_vrun_free(&r->m.run);
    ga_vfolded_free(&r->m.folded);
    ga_views_free(&r->views);
    ga_vpools_free(&r->m.poolview);
    ga_vnvml_free(&r->m.nvmlview);
    ga_vsites_free(&r->m.siteview);
    ga_vgpu_free(&r->m.gpuview);
    ga_vstacks_free(&r->stackview);
    ga_facts_free(&r->facts);
    ga_memory_free(&r->mem);
    ga_pools_free(&r->pools);
    ga_timeline_free(&r->tl);
    ga_gpu_free(&r->gpu);
    ga_gaps_free(&r->gaps);
    ga_sites_free(&r->sites);
    ga_stacks_free(&r->stacks);
    ga_torch_free(&r->torch);
    ga_tmv_free(&r->torchmap);
    ga_tv_free(&r->tierview);
    ga_vcats_free(&r->peakcats);
    ga_vmem_free(&r->m.memview);
    ga_vtorch_free(&r->m.torchview);
    ga_tiers_free(&r->tiers);
    ga_nvml_free(&r->nvml);
    ga_idle_host_free(&r->idle_host);
    ga_hostidle_free(&r->hostidle);
}

const struct ga_vfolded *ga_report_folded(struct ga_report *r, int what)
{
    if (r->m.folded.built && r->m.folded.what == what) return &r->m.folded;
    ga_vfolded_free(&r->m.folded);
    ga_vfolded_build(&r->m.folded, what, &r->mem, &r->sites, &r->gaps, &r->stackview);
    return &r->m.folded;
}

const char *ga_report_kernel_name(const struct ga_report *r, uint32_t name_id)
{
    const uint64_t *i = ga_map_find(&r->gpu.name_idx, name_id, 0);
    return i && *i < r->gpu.n_names ? r->gpu.names[*i] : NULL;
}

struct ga_report *ga_report_new(const char *path)
{
    struct ga_report *r = ga_xcalloc(1, sizeof(*r));
    ga_report_init(r, path);
    return r;
}

void ga_report_delete(struct ga_report *r)
{
    if (!r) return;
    ga_report_free(r);
    free(r);
}

struct ga_model *ga_report_model(struct ga_report *r)
{
    return &r->m;
}

void ga_report_keep_all_gaps(struct ga_report *r)
{
    ga_gaps_keep_all(&r->gaps);
}

void ga_report_read_notes(const struct ga_report *r, struct ga_read_notes *notes)
{
    ga_read_notes_of(&r->read, notes);
}

void ga_report_set_progress(void (*fn)(void *ctx, uint64_t bytes, uint64_t records), void *ctx)
{
    ga_read_set_progress(fn, ctx);
}
