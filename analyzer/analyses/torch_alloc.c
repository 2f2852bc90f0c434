/* PyTorch's caching allocator from the bridge's records (torch_alloc.h). Per record O(1) but
 * for a snapshot's end, which walks its segments and blocks once (O(blocks), plus sorting the
 * sites of its live blocks). Memory: the snapshot being read, the series (bounded per device),
 * the interned frames and stacks, the OOMs (bounded).
 *
 * The allocator's rules used here (c10/cuda/CUDACachingAllocator.cpp; reference/
 * pytorch_allocator.md): an OOM's figures are PyTorch's own (the observer's size, limit and
 * device free; memory_stats in the observer: allocated, reserved; reserved - allocated is what
 * the message calls "reserved by PyTorch but unallocated"). Before it raises, PyTorch has
 * released every segment with no live block, so the free bytes left sit in partly used
 * segments, pinned by their live blocks. A request of the observer's size R == 2 MiB comes from
 * the small pool (requests <= 1 MiB; small blocks never serve large requests), larger ones from
 * the large pool; R is the segment size PyTorch asked for, so a free block of R would have
 * served it. */
#include "analyses/torch_alloc.h"

#include <stdlib.h>
#include <string.h>

#include "analyses/sites.h"
#include "analyses/stacks.h"
#include "base/util.h"

#define SMALL_SEGMENT (2ull << 20) /* kSmallBuffer */

const char *ga_torch_why_name(unsigned why)
{
    static const char *const n[] = {"periodic", "oom", "peak", "exit", "start"};
    return why < sizeof(n) / sizeof(n[0]) ? n[why] : "unknown";
}

const char *ga_torch_state_name(unsigned state)
{
    static const char *const n[] = {"inactive", "active_allocated", "active_pending_free"};
    return state < sizeof(n) / sizeof(n[0]) ? n[state] : "unknown";
}

const char *ga_torch_verdict_name(enum ga_torch_verdict v)
{
    switch (v) {
    case GA_TORCH_FRAGMENTATION:
        return "fragmentation";
    case GA_TORCH_CACHED:
        return "cached";
    case GA_TORCH_EXHAUSTED:
        return "exhausted";
    case GA_TORCH_LIMIT:
        return "limit";
    case GA_TORCH_OTHER_PROCESSES:
        return "other_processes";
    }
    return "unknown";
}

const char *ga_torch_verdict_advice(enum ga_torch_verdict v)
{
    switch (v) {
    case GA_TORCH_FRAGMENTATION:
        return "PyTorch's free memory is split across segments that a few live tensors pin: set "
               "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or max_split_size_mb to stop "
               "large blocks from being split), allocate long-lived tensors first; "
               "torch.cuda.empty_cache() does not help (PyTorch already released every free "
               "segment before raising)";
    case GA_TORCH_CACHED:
        return "PyTorch's cache held the memory; it released its free segments and the retry "
               "succeeded: nothing failed, but each such retry synchronizes the device "
               "(garbage_collection_threshold releases earlier, expandable_segments:True grows "
               "in place)";
    case GA_TORCH_EXHAUSTED:
        return "live tensors hold the memory: smaller batch, activation checkpointing, lower "
               "precision, or shard the model; start with the Python lines holding the most";
    case GA_TORCH_LIMIT:
        return "torch.cuda.set_per_process_memory_fraction() refused the request, not the "
               "device: raise the fraction or lower the usage";
    case GA_TORCH_OTHER_PROCESSES:
        return "other processes hold memory on this device: check nvidia-smi, give the job its "
               "own GPU (CUDA_VISIBLE_DEVICES)";
    }
    return "";
}

const char *ga_torch_site_source_name(enum ga_torch_site_source s)
{
    switch (s) {
    case GA_TORCH_SITE_BLOCK:
        return "block";
    case GA_TORCH_SITE_SEGMENT:
        return "segment";
    case GA_TORCH_SITE_NONE:
        break;
    }
    return "none";
}

void ga_torch_init(struct ga_torch *t)
{
    memset(t, 0, sizeof(*t));
}

static struct ga_torch_dev *dev_of(struct ga_torch *t, int32_t device)
{
    for (size_t i = 0; i < t->n_devs; i++)
        if (t->devs[i].device == device) return &t->devs[i];
    t->devs = ga_xgrow(t->devs, &t->devs_cap, t->n_devs, sizeof(*t->devs));
    struct ga_torch_dev *d = &t->devs[t->n_devs++];
    memset(d, 0, sizeof(*d));
    d->device = device;
    d->series_stride = 1;
    return d;
}

const struct ga_torch_dev *ga_torch_dev_of(const struct ga_torch *t, int32_t device)
{
    for (size_t i = 0; i < t->n_devs; i++)
        if (t->devs[i].device == device) return &t->devs[i];
    return NULL;
}

/* ---- series ---------------------------------------------------------------------------------- */

static void series_add(struct ga_torch_dev *d, const struct ga_torch_frag *f)
{
    if (d->series_seen++ % d->series_stride) return;
    if (d->n_series == GA_TORCH_SERIES_MAX) { /* keep every other point, then half as many */
        for (size_t i = 0; i < d->n_series / 2; i++)
            d->series[i] = d->series[2 * i];
        d->n_series /= 2;
        d->series_stride *= 2;
    }
    d->series = ga_xgrow(d->series, &d->series_cap, d->n_series, sizeof(*d->series));
    d->series[d->n_series++] = *f;
}

static void on_stats(struct ga_torch *t, const struct ga_event *ev)
{
    const struct gt_rec_torch_stats *r = &ev->r->torch_stats;
    struct ga_torch_dev *d = dev_of(t, r->device);
    if (r->allocated_peak > d->peak_allocated) {
        d->peak_allocated = r->allocated_peak;
        d->peak_allocated_ts = r->ts;
    }
    if (r->reserved_peak > d->peak_reserved) d->peak_reserved = r->reserved_peak;
    if (ev->sub == GT_TORCH_EXIT) {
        d->have_exit = 1;
        d->cached_at_exit = r->reserved;
        d->allocated_at_exit = r->allocated;
    }
    struct ga_torch_frag f = {
        .ts = r->ts,
        .reserved = r->reserved,
        .allocated = r->allocated,
        .free_in_segments = r->reserved - (r->allocated < r->reserved ? r->allocated : r->reserved),
        .inactive_split = r->inactive_split,
        .largest_free = UINT64_MAX,
        .largest_free_large = UINT64_MAX,
        .largest_free_small = UINT64_MAX,
        .partly_used = UINT64_MAX,
        .partly_used_bytes = UINT64_MAX,
        .pinning_blocks = UINT64_MAX,
        .pinning_bytes = UINT64_MAX,
        .segments = r->segments};
    series_add(d, &f);
}

/* ---- frames and stacks ----------------------------------------------------------------------- */

static void on_frame(struct ga_torch *t, const struct ga_event *ev)
{
    int added;
    uint64_t *v = ga_map_upsert(&t->frame_idx, ev->r->torch_frame.id, 0, 0, &added);
    if (!added) return;
    t->frames = ga_xgrow(t->frames, &t->frames_cap, t->n_frames, sizeof(*t->frames));
    struct ga_torch_frame *f = &t->frames[t->n_frames++];
    f->file = ga_utf8_clean(ev->str[0], ev->str_len[0]);
    f->name = ga_utf8_clean(ev->str[1], ev->str_len[1]);
    f->line = ev->r->torch_frame.line;
    *v = t->n_frames;
}

static void on_stack(struct ga_torch *t, const struct ga_event *ev)
{
    uint32_t n = ev->str_len[0] / 4;
    if (!n || ga_map_find(&t->stack_idx, ev->r->torch_stack.id, 0)) return; /* empty, or known */
    t->stack_frames = ga_xgrow(t->stack_frames, &t->stack_frames_cap, t->n_stack_frames + n - 1,
                               sizeof(*t->stack_frames));
    memcpy(t->stack_frames + t->n_stack_frames, ev->str[0], 4ull * n);
    *ga_map_upsert(&t->stack_idx, ev->r->torch_stack.id, 0, 0, NULL) =
        (t->n_stack_frames + 1) | (uint64_t)n << 32;
    t->n_stack_frames += n;
}

static const struct ga_torch_frame *frame_of(const struct ga_torch *t, uint32_t id)
{
    const uint64_t *v = ga_map_find(&t->frame_idx, id, 0);
    return v ? &t->frames[*v - 1] : NULL;
}

/* Frames of torch itself (its Python files) are never a site. */
static int framework_file(const char *file)
{
    return strstr(file, "/torch/") != NULL || strstr(file, "gputrace_torch.py") != NULL;
}

size_t ga_torch_stack_frames(const struct ga_torch *t, uint32_t stack,
                             const struct ga_torch_frame **out, size_t max)
{
    const uint64_t *v = stack ? ga_map_find(&t->stack_idx, stack, 0) : NULL;
    if (!v) return 0;
    const uint32_t *ids = t->stack_frames + ((uint32_t)*v - 1);
    uint32_t count = (uint32_t)(*v >> 32);
    size_t n = 0;
    for (uint32_t i = 0; i < count && n < max; i++)
        if ((out[n] = frame_of(t, ids[i]))) n++;
    return n;
}

const char *ga_torch_site_label(const struct ga_torch *t, uint32_t stack, char *buf, size_t n)
{
    const uint64_t *v = stack ? ga_map_find(&t->stack_idx, stack, 0) : NULL;
    if (!v) return NULL;
    const uint32_t *ids = t->stack_frames + ((uint32_t)*v - 1);
    uint32_t count = (uint32_t)(*v >> 32);
    const struct ga_torch_frame *pick = NULL;
    for (uint32_t i = 0; i < count && !pick; i++) {
        const struct ga_torch_frame *f = frame_of(t, ids[i]);
        if (f && !framework_file(f->file)) pick = f;
    }
    if (!pick) pick = frame_of(t, ids[0]);
    if (!pick) return NULL;
    const char *base = strrchr(pick->file, '/');
    snprintf(buf, n, "%s:%u (%s)", base ? base + 1 : pick->file, pick->line, pick->name);
    return buf;
}

/* ---- snapshots ------------------------------------------------------------------------------- */

static void snap_begin(struct ga_torch *t, const struct gt_rec_torch_snap *r)
{
    t->in_snap = 1;
    t->cur_snap = r->id;
    t->cur_why = r->why;
    t->snapshot_flags |= r->flags;
    t->n_segs = t->n_blks = 0;
}

static void on_segment(struct ga_torch *t, const struct ga_event *ev)
{
    const struct gt_rec_torch_segment *r = &ev->r->torch_segment;
    if (!t->in_snap || r->snap != t->cur_snap) return;
    t->segs = ga_xgrow(t->segs, &t->segs_cap, t->n_segs, sizeof(*t->segs));
    t->segs[t->n_segs++] = (struct ga_torch_seg){.addr = r->addr,
                                                 .size = r->size,
                                                 .device = r->device,
                                                 .small = ev->sub == GT_TORCH_POOL_SMALL,
                                                 .expandable = r->expandable != 0,
                                                 .first = (uint32_t)t->n_blks};
}

static void on_block(struct ga_torch *t, const struct ga_event *ev)
{
    const struct gt_rec_torch_block *r = &ev->r->torch_block;
    if (!t->in_snap || r->snap != t->cur_snap || !t->n_segs) return;
    t->blks = ga_xgrow(t->blks, &t->blks_cap, t->n_blks, sizeof(*t->blks));
    t->blks[t->n_blks++] = (struct ga_torch_blk){.addr = r->addr,
                                                 .size = r->size,
                                                 .requested = r->requested,
                                                 .stack = r->stack,
                                                 .state = (uint8_t)ev->sub};
    t->segs[t->n_segs - 1].n++;
}

/* The host stack of the driver allocation behind segment g, 0 unknown: a segment's address is
 * the pointer cuMemAlloc returned (memory.c's live allocations, namespace 1); an expandable
 * segment is a VA range whose first mapped handle (cuMemCreate, namespace 3) its first block
 * made. */
static uint32_t segment_stack(const struct ga_torch *t, const struct ga_torch_seg *g)
{
    enum { NS_DEVPTR = 1, NS_PHYS = 3 }; /* memory.c's namespaces */
    if (!t->mem) return 0;
    uint32_t k = UINT32_MAX;
    if (!g->expandable) {
        k = ga_live_find(t->mem, NS_DEVPTR, g->addr);
    } else {
        const uint64_t *h = ga_map_find(&t->vmm, g->addr, 0);
        if (h) k = ga_live_find(t->mem, NS_PHYS, *h);
    }
    return k == UINT32_MAX ? 0 : t->mem->slab[k].stack;
}

/* Keyed by the block's own stack, else by its segment's driver stack (<< 32: never a block's
 * key), else 0. */
static void sites_add(struct ga_torch_sites *s, struct ga_map *idx, struct ga_torch_site **all,
                      size_t *n_all, size_t *cap, const struct ga_torch_blk *b, uint32_t seg_stack)
{
    int added;
    uint64_t key = b->stack ? b->stack : (uint64_t)seg_stack << 32;
    uint64_t *v = ga_map_upsert(idx, key, 0, 0, &added);
    if (added) {
        *all = ga_xgrow(*all, cap, *n_all, sizeof(**all));
        (*all)[*n_all] = (struct ga_torch_site){.stack = b->stack,
                                                .seg_stack = b->stack ? 0 : seg_stack,
                                                .source = b->stack    ? GA_TORCH_SITE_BLOCK
                                                          : seg_stack ? GA_TORCH_SITE_SEGMENT
                                                                      : GA_TORCH_SITE_NONE};
        *v = (*n_all)++;
    }
    (*all)[*v].bytes += b->size;
    (*all)[*v].count++;
    s->total += b->size;
}

static int by_bytes(const void *a, const void *b)
{
    const struct ga_torch_site *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    if (x->stack != y->stack) return x->stack < y->stack ? -1 : 1;
    return x->seg_stack < y->seg_stack ? -1 : x->seg_stack > y->seg_stack;
}

/* The live blocks of device `dev` in the current snapshot (only those of partly used segments
 * when `pinning`), by stack, largest first. */
static void snap_sites(const struct ga_torch *t, int32_t dev, int pinning, struct ga_torch_sites *s)
{
    struct ga_map idx = {0};
    struct ga_torch_site *all = NULL;
    size_t n_all = 0, cap = 0;
    memset(s, 0, sizeof(*s));
    for (size_t i = 0; i < t->n_segs; i++) {
        const struct ga_torch_seg *g = &t->segs[i];
        if (g->device != dev) continue;
        int has_free = 0;
        for (uint32_t k = 0; k < g->n; k++)
            has_free |= t->blks[g->first + k].state == GT_TORCH_INACTIVE;
        if (pinning && !has_free) continue;
        uint32_t seg_stack = UINT32_MAX; /* looked up for the first block without frames */
        for (uint32_t k = 0; k < g->n; k++) {
            const struct ga_torch_blk *b = &t->blks[g->first + k];
            if (b->state == GT_TORCH_INACTIVE) continue;
            if (!b->stack && seg_stack == UINT32_MAX) seg_stack = segment_stack(t, g);
            sites_add(s, &idx, &all, &n_all, &cap, b, seg_stack == UINT32_MAX ? 0 : seg_stack);
        }
    }
    if (n_all) qsort(all, n_all, sizeof(*all), by_bytes);
    for (size_t i = 0; i < n_all; i++) {
        if (i < GA_TORCH_SITES_MAX) {
            s->s[s->n++] = all[i];
        } else {
            s->other_bytes += all[i].bytes;
            s->other_count += all[i].count;
        }
    }
    free(all);
    ga_map_free(&idx);
}

/* The fragmentation of device `dev` in the current snapshot. */
static void snap_frag(const struct ga_torch *t, int32_t dev, uint64_t ts, struct ga_torch_frag *f)
{
    memset(f, 0, sizeof(*f));
    f->ts = ts;
    for (size_t i = 0; i < t->n_segs; i++) {
        const struct ga_torch_seg *g = &t->segs[i];
        if (g->device != dev) continue;
        uint64_t live = 0, live_n = 0, free_b = 0;
        f->segments++;
        f->reserved += g->size;
        for (uint32_t k = 0; k < g->n; k++) {
            const struct ga_torch_blk *b = &t->blks[g->first + k];
            if (b->state == GT_TORCH_INACTIVE) {
                free_b += b->size;
                if (b->size > f->largest_free) f->largest_free = b->size;
                uint64_t *pool = g->small ? &f->largest_free_small : &f->largest_free_large;
                if (b->size > *pool) *pool = b->size;
            } else {
                live += b->size, live_n++;
                if (b->state == GT_TORCH_ACTIVE) f->allocated += b->size;
            }
        }
        f->free_in_segments += free_b;
        if (live && free_b) {
            f->partly_used++;
            f->partly_used_bytes += g->size;
            f->pinning_blocks += live_n;
            f->pinning_bytes += live;
        }
    }
    f->inactive_split = UINT64_MAX; /* a stats figure */
}

static struct ga_torch_oom *oom_of_snap(struct ga_torch *t, uint32_t snap)
{
    for (size_t i = t->n_ooms; i-- > 0;)
        if (t->ooms[i].snap == snap) return &t->ooms[i];
    return NULL;
}

static void snap_end(struct ga_torch *t, const struct ga_event *ev)
{
    const struct gt_rec_torch_snap *r = &ev->r->torch_snap;
    if (!t->in_snap || r->id != t->cur_snap) return;
    t->in_snap = 0;
    if (t->n_segs != r->segments || t->n_blks != r->blocks) { /* records lost: not whole */
        t->incomplete_snapshots++;
        return;
    }
    t->snapshots++;
    if (r->why == GT_TORCH_EXIT) {
        t->exit_segs = ga_xgrow(t->exit_segs, &t->exit_segs_cap, t->n_segs, sizeof(*t->segs));
        if (t->n_segs) memcpy(t->exit_segs, t->segs, t->n_segs * sizeof(*t->segs));
        t->n_exit_segs = t->n_segs;
    }
    int32_t devs[64];
    size_t nd = 0;
    for (size_t i = 0; i < t->n_segs && nd < 64; i++) {
        size_t k = 0;
        while (k < nd && devs[k] != t->segs[i].device)
            k++;
        if (k == nd) devs[nd++] = t->segs[i].device;
    }
    struct ga_torch_oom *o = r->why == GT_TORCH_OOM ? oom_of_snap(t, r->id) : NULL;
    if (o && !nd) devs[nd++] = o->device; /* an OOM with no segment at all */
    for (size_t i = 0; i < nd; i++) {
        struct ga_torch_dev *d = dev_of(t, devs[i]);
        struct ga_torch_frag f;
        snap_frag(t, devs[i], r->ts, &f);
        series_add(d, &f);
        if (!d->have_at_peak || f.allocated > d->at_peak.allocated) {
            d->at_peak = f;
            d->have_at_peak = 1;
            snap_sites(t, devs[i], 0, &d->peak_sites);
        }
        if (o && o->device == devs[i]) {
            o->have_snap = 1;
            o->frag = f;
            o->largest_fit =
                o->requested <= SMALL_SEGMENT ? f.largest_free_small : f.largest_free_large;
            snap_sites(t, devs[i], 1, &o->pinning);
        }
    }
}

/* ---- OOMs ------------------------------------------------------------------------------------ */

static void on_oom(struct ga_torch *t, const struct ga_event *ev)
{
    const struct gt_rec_torch_oom *r = &ev->r->torch_oom;
    if (t->n_ooms >= GA_TORCH_OOMS_MAX) {
        t->ooms_dropped++;
        return;
    }
    t->ooms = ga_xgrow(t->ooms, &t->ooms_cap, t->n_ooms, sizeof(*t->ooms));
    struct ga_torch_oom *o = &t->ooms[t->n_ooms++];
    memset(o, 0, sizeof(*o));
    *o = (struct ga_torch_oom){.ts = r->ts,
                               .tid = ev->tid,
                               .device = r->device,
                               .requested = r->requested,
                               .limit = r->limit,
                               .device_free = r->device_free,
                               .device_total = r->device_total,
                               .allocated = r->allocated,
                               .reserved = r->reserved,
                               .fraction_set = r->fraction_set != 0,
                               .stack = r->stack,
                               .snap = r->snap};
    o->frag.largest_free = o->largest_fit = UINT64_MAX; /* until its snapshot says */
    dev_of(t, r->device);
}

/* Which physical handle backs which address: expandable segments are VA ranges PyTorch maps
 * cuMemCreate handles into. */
static void on_vmm(struct ga_torch *t, const struct ga_event *ev)
{
    const struct gt_rec_vmm_map *r = &ev->r->vmm_map;
    if (r->result != 0) return;
    if (ev->sub == GT_API_cuMemMap)
        *ga_map_upsert(&t->vmm, r->addr, 0, 0, NULL) = r->handle;
    else if (ev->sub == GT_API_cuMemUnmap)
        ga_map_remove(&t->vmm, r->addr, 0, NULL);
}

void ga_torch_event_(struct ga_torch *t, const struct ga_event *ev)
{
    switch (ev->type) {
    case GT_REC_VMM_MAP:
        on_vmm(t, ev);
        break;
    case GT_REC_TORCH_STATS:
        t->present = 1;
        on_stats(t, ev);
        break;
    case GT_REC_TORCH_SNAP:
        t->present = 1;
        if (ev->sub == GT_SNAP_BEGIN)
            snap_begin(t, &ev->r->torch_snap);
        else
            snap_end(t, ev);
        break;
    case GT_REC_TORCH_SEGMENT:
        on_segment(t, ev);
        break;
    case GT_REC_TORCH_BLOCK:
        on_block(t, ev);
        break;
    case GT_REC_TORCH_FRAME:
        on_frame(t, ev);
        break;
    case GT_REC_TORCH_STACK:
        on_stack(t, ev);
        break;
    case GT_REC_TORCH_OOM:
        t->present = 1;
        on_oom(t, ev);
        break;
    }
}

/* ---- verdicts and the merge with the driver's failures --------------------------------------- */

/* The rules, in this order (docs/ANALYSES.md, "PyTorch allocator OOMs"): R = the request,
 * A = allocated, U = reserved - A (free inside segments), D = device free, F = the largest free
 * block of R's pool, others = what the device's total leaves after D and PyTorch's reserve. */
static enum ga_torch_verdict judge(const struct ga_torch_oom *o)
{
    uint64_t r = o->requested, u = o->reserved > o->allocated ? o->reserved - o->allocated : 0;
    uint64_t d = o->device_free, f = o->have_snap ? o->largest_fit : 0;
    uint64_t used = o->reserved + d;
    uint64_t others = o->device_total > used ? o->device_total - used : 0;
    if (o->fraction_set && o->reserved + r > o->limit && d >= r) return GA_TORCH_LIMIT;
    if (u + (d < r ? d : 0) >= r && f < r) return GA_TORCH_FRAGMENTATION;
    if (others >= r && others > o->reserved / 2) return GA_TORCH_OTHER_PROCESSES;
    return GA_TORCH_EXHAUSTED;
}

static enum ga_verdict as_memory_verdict(enum ga_torch_verdict v)
{
    switch (v) {
    case GA_TORCH_FRAGMENTATION:
        return GA_VERDICT_FRAGMENTATION;
    case GA_TORCH_CACHED:
        return GA_VERDICT_CACHED;
    case GA_TORCH_LIMIT:
        return GA_VERDICT_LIMIT;
    case GA_TORCH_OTHER_PROCESSES:
        return GA_VERDICT_OTHER_PROCESSES;
    case GA_TORCH_EXHAUSTED:
        break;
    }
    return GA_VERDICT_EXHAUSTED;
}

/* A driver failure belongs to the allocator's OOM when it is the same thread's, on the same
 * device, before it, and no successful allocation of that thread came between: its retry (the
 * thread's next allocation call, memory.c) failed too, or came after the OOM. */
static int absorbed_by(const struct ga_oom *x, const struct ga_torch_oom *o)
{
    return x->tid == o->tid && x->device == o->device && x->ts <= o->ts &&
           x->result == GA_CUDA_ERROR_OUT_OF_MEMORY && !x->alloc &&
           (x->retry != GA_RETRY_OK || x->retry_ts > o->ts);
}

/* The entry an allocator OOM becomes in m->ooms: PyTorch's figures, the first merged driver
 * failure's call stack and holders (the driver-level view at that moment). */
static struct ga_oom as_memory_oom(const struct ga_torch_oom *o, struct ga_oom *first)
{
    struct ga_oom x = {0};
    if (first) {
        x = *first;
        first->holders = NULL; /* moved */
        first->n_holders = 0;
    } else {
        x.api = GT_API_NONE;
        x.result = GA_CUDA_ERROR_OUT_OF_MEMORY;
    }
    x.ts = o->ts;
    x.tid = o->tid;
    x.device = o->device;
    x.requested = o->requested;
    x.free_bytes = o->device_free;
    x.total_bytes = o->device_total;
    x.held = o->reserved;
    x.unaccounted = o->device_total > o->device_free + o->reserved
                        ? o->device_total - o->device_free - o->reserved
                        : 0;
    x.verdict = as_memory_verdict(o->verdict);
    x.alloc = o;
    x.retry = GA_RETRY_NONE; /* the driver's retries happened inside this one allocation */
    x.freed_before_retry = x.freed_count = x.retry_ts = x.retry_size = 0;
    return x;
}

/* A driver failure on a device with the bridge whose retry succeeded after frees: PyTorch
 * released its cache (release_cached_blocks) and the retry succeeded. */
static void mark_cached(const struct ga_torch *t, struct ga_memory *m)
{
    if (!t->present) return;
    for (size_t i = 0; i < m->n_ooms; i++) {
        struct ga_oom *x = &m->ooms[i];
        if (!x->alloc && x->retry == GA_RETRY_OK && x->freed_count &&
            x->result == GA_CUDA_ERROR_OUT_OF_MEMORY && ga_torch_dev_of(t, x->device)) {
            x->verdict = GA_VERDICT_CACHED;
            x->allocator_cached = 1;
        }
    }
}

static void mark_live_cached(struct ga_memory *m, unsigned ns, uint64_t key)
{
    uint32_t k = ga_live_find(m, ns, key);
    if (k == UINT32_MAX) return;
    struct ga_live *e = &m->slab[k];
    if (e->cached || !ga_kind_is_device(e->kind)) return;
    e->cached = 1;
    m->cached_bytes += e->size;
    m->cached_count++;
    m->leaked_bytes -= e->size < m->leaked_bytes ? e->size : m->leaked_bytes;
    if (m->leaked_count) m->leaked_count--;
}

/* The driver allocations PyTorch still held as segments at exit are its cache, not leaks: a
 * segment's address is the pointer cuMemAlloc returned; an expandable segment is a VA range
 * whose mapped physical handles (cuMemCreate) are its memory. */
void ga_torch_cached_at_exit(const struct ga_torch *t, struct ga_memory *m)
{
    enum { NS_DEVPTR = 1, NS_PHYS = 3 }; /* memory.c's namespaces */
    for (size_t i = 0; i < t->n_exit_segs; i++)
        if (!t->exit_segs[i].expandable) mark_live_cached(m, NS_DEVPTR, t->exit_segs[i].addr);
    const struct ga_map_slot *slot;
    for (size_t i = 0; ga_map_next(&t->vmm, &i, &slot);)
        for (size_t k = 0; k < t->n_exit_segs; k++) {
            const struct ga_torch_seg *g = &t->exit_segs[k];
            if (g->expandable && slot->a >= g->addr && slot->a - g->addr < g->size)
                mark_live_cached(m, NS_PHYS, slot->value);
        }
}

void ga_torch_finish(struct ga_torch *t, struct ga_memory *m)
{
    mark_cached(t, m);
    if (!t->n_ooms) return;
    struct ga_oom *out = ga_xcalloc(m->n_ooms + t->n_ooms, sizeof(*out));
    size_t n = 0, i = 0;
    for (size_t k = 0; k < t->n_ooms; k++) {
        struct ga_torch_oom *o = &t->ooms[k];
        o->verdict = judge(o);
        struct ga_oom *first = NULL;
        for (; i < m->n_ooms && m->ooms[i].ts <= o->ts; i++) {
            struct ga_oom *x = &m->ooms[i];
            if (absorbed_by(x, o)) {
                o->driver_failures++;
                if (!first)
                    first = x;
                else
                    free(x->holders);
                continue;
            }
            out[n++] = *x;
        }
        out[n++] = as_memory_oom(o, first);
    }
    for (; i < m->n_ooms; i++)
        out[n++] = m->ooms[i];
    free(m->ooms);
    m->ooms = out;
    m->n_ooms = n;
    m->oom_cap = m->n_ooms + t->n_ooms;
}

/* Resolves the segments' call sites and merges the entries of one call site (distinct driver
 * stacks may lead to the same line). Only the kept entries are merged: a site whose bytes were
 * spread over stacks past GA_TORCH_SITES_MAX keeps those in other_bytes. */
static void attribute_sites(struct ga_torch_sites *s, const struct ga_sites *sites)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->s[i].source == GA_TORCH_SITE_SEGMENT)
            s->s[i].seg_site = ga_sites_of_stack(sites, s->s[i].seg_stack);
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        struct ga_torch_site *x = &s->s[i];
        size_t k = 0;
        if (x->seg_site)
            while (k < n && s->s[k].seg_site != x->seg_site)
                k++;
        if (x->seg_site && k < n) {
            s->s[k].bytes += x->bytes;
            s->s[k].count += x->count;
        } else {
            s->s[n++] = *x;
        }
    }
    s->n = n;
    if (n) qsort(s->s, n, sizeof(*s->s), by_bytes);
}

void ga_torch_attribute(struct ga_torch *t, const struct ga_sites *sites)
{
    for (size_t i = 0; i < t->n_devs; i++)
        attribute_sites(&t->devs[i].peak_sites, sites);
    for (size_t i = 0; i < t->n_ooms; i++)
        attribute_sites(&t->ooms[i].pinning, sites);
}

const char *ga_torch_entry_label(const struct ga_torch *t, const struct ga_stacks *st,
                                 const struct ga_torch_site *s, char *buf, size_t n)
{
    if (s->source == GA_TORCH_SITE_BLOCK) return ga_torch_site_label(t, s->stack, buf, n);
    if (s->source != GA_TORCH_SITE_SEGMENT) return NULL;
    if (s->seg_site && s->seg_site->frame) return ga_frame_label(st, s->seg_site->frame, buf, n, 0);
    return NULL;
}

void ga_torch_free(struct ga_torch *t)
{
    for (size_t i = 0; i < t->n_frames; i++) {
        free(t->frames[i].file);
        free(t->frames[i].name);
    }
    free(t->frames);
    free(t->stack_frames);
    ga_map_free(&t->frame_idx);
    ga_map_free(&t->stack_idx);
    ga_map_free(&t->vmm);
    for (size_t i = 0; i < t->n_devs; i++)
        free(t->devs[i].series);
    free(t->devs);
    free(t->ooms);
    free(t->segs);
    free(t->exit_segs);
    free(t->blks);
    memset(t, 0, sizeof(*t));
}
