/* Device state from NVML (see nvml.h; the rules are docs/ANALYSES.md's, "Device state"). */
#include "analyses/nvml.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void ga_nvml_init(struct ga_nvml *x)
{
    memset(x, 0, sizeof(*x));
}

const char *ga_nvml_reason_name(unsigned bit)
{
    static const char *const names[GA_NVML_REASONS] = {"gpu_idle",
                                                       "applications_clocks_setting",
                                                       "sw_power_cap",
                                                       "hw_slowdown",
                                                       "sync_boost",
                                                       "sw_thermal_slowdown",
                                                       "hw_thermal_slowdown",
                                                       "hw_power_brake_slowdown",
                                                       "display_clock_setting"};
    return bit < GA_NVML_REASONS ? names[bit] : "?";
}

static void keep_pending(struct ga_nvml_device *d, uint64_t s, uint64_t e);

/* The device's state, NULL before its first NVML record. */
static struct ga_nvml_device *find_device(struct ga_nvml *x, int32_t device)
{
    for (size_t i = 0; i < x->n_devices; i++)
        if (x->devices[i].device == device) return &x->devices[i];
    return NULL;
}

static struct ga_nvml_device *device_of(struct ga_nvml *x, int32_t device)
{
    struct ga_nvml_device *found = find_device(x, device);
    if (found) return found;
    if (device < 0 || x->n_devices >= 1024) return NULL; /* a hostile trace's device ids */
    x->devices = ga_xgrow(x->devices, &x->devices_cap, x->n_devices, sizeof(*x->devices));
    struct ga_nvml_device *d = &x->devices[x->n_devices++];
    memset(d, 0, sizeof(*d));
    d->device = device;
    d->min_sm_mhz = UINT32_MAX;
    /* the kernels read before this device's first record wait for its samples like the others */
    size_t keep = 0;
    for (size_t i = 0; i < x->n_early; i++) {
        struct ga_nvml_kearly k = x->early[i];
        if (k.device != device) {
            x->early[keep++] = k;
        } else if (d->n_kpend >= GA_NVML_PENDING_MAX) {
            x->early_dropped++;
        } else {
            d->kpend = ga_xgrow(d->kpend, &d->kpend_cap, d->n_kpend, sizeof(*d->kpend));
            d->kpend[d->n_kpend++] =
                (struct ga_nvml_kpend){.start = k.start, .ns = k.ns, .name_id = k.name_id};
        }
    }
    x->n_early = keep;
    /* and so do the busy intervals: they wait for its first samples with the others */
    keep = 0;
    for (size_t i = 0; i < x->n_early_busy; i++) {
        struct ga_nvml_bearly b = x->early_busy[i];
        if (b.device != device)
            x->early_busy[keep++] = b;
        else
            keep_pending(d, b.s, b.e);
    }
    x->n_early_busy = keep;
    uint64_t past;
    if (ga_map_remove(&x->early_busy_n, (uint64_t)device, 1, &past)) {
        d->busy_unsampled_ns += past;
        x->early_busy_past_ids--;
    }
    if (ga_map_remove(&x->early_busy_n, (uint64_t)device, 0, NULL)) x->early_busy_devices--;
    return d;
}

static void drop_early(struct ga_nvml *x)
{
    free(x->early);
    x->early = NULL;
    x->n_early = x->early_cap = 0;
    free(x->early_busy);
    x->early_busy = NULL;
    x->n_early_busy = x->early_busy_cap = 0;
    ga_map_free(&x->early_busy_n);
    x->early_busy_devices = x->early_busy_past_ids = 0;
}

/* Busy [s, e) over the intervals from the cursor on; what lies past the last one is returned. */
static uint64_t lay_busy(struct ga_nvml_device *d, uint64_t s, uint64_t e)
{
    while (d->cursor < d->n_iv && d->iv[d->cursor].end <= s)
        d->cursor++;
    for (size_t k = d->cursor; k < d->n_iv && s < e; k++) {
        struct ga_nvml_interval *v = &d->iv[k];
        uint64_t a = s > v->start ? s : v->start, b = e < v->end ? e : v->end;
        if (b > a) v->busy += b - a;
        if (e <= v->end) return e;
    }
    return d->n_iv && s < d->iv[d->n_iv - 1].end ? d->iv[d->n_iv - 1].end : s;
}

static void keep_pending(struct ga_nvml_device *d, uint64_t s, uint64_t e)
{
    if (s >= e) return;
    if (d->n_pending >= GA_NVML_PENDING_MAX) { /* samples stopped while the GPU went on */
        d->busy_dropped_ns += e - s;
        return;
    }
    d->pending = ga_xgrow(d->pending, &d->pending_cap, d->n_pending, sizeof(*d->pending));
    d->pending[d->n_pending++] = (struct ga_nvml_span){s, e};
}

/* A new interval may cover busy time that arrived before it. */
static void replay_pending(struct ga_nvml_device *d)
{
    size_t n = d->n_pending;
    d->n_pending = 0;
    for (size_t i = 0; i < n; i++) {
        struct ga_nvml_span p = d->pending[i];
        uint64_t from = d->n_iv && p.s < d->iv[0].start ? d->iv[0].start : p.s;
        if (from < p.e) keep_pending(d, lay_busy(d, from, p.e), p.e);
    }
}

/* The device's state at t from its closed intervals: 1 below the maximum SM clock, 0 at it, -1
 * not known (before the first sample, or no clock in it), -2 past the last closed interval (the
 * samples read so far do not tell). The intervals are in time order (samples come in order). */
static int slow_at(const struct ga_nvml_device *d, uint64_t t)
{
    size_t lo = 0, hi = d->n_iv;
    while (lo < hi) { /* the first interval that starts after t */
        size_t mid = lo + (hi - lo) / 2;
        if (d->iv[mid].start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo && t < d->iv[lo - 1].end) return d->iv[lo - 1].known ? d->iv[lo - 1].slow : -1;
    if (d->n_iv && t < d->iv[d->n_iv - 1].end) return -1; /* before the first sample */
    return -2;
}

/* The open interval's state (the last sample's), for a kernel still waiting at the end. */
static int slow_after_last(const struct ga_nvml_device *d, uint64_t t)
{
    if (!d->have_last || d->last.ts > t || !(d->last.valid & GT_NVML_HAS_SM_CLOCK) ||
        !d->max_sm_mhz)
        return -1;
    return d->last.sm_mhz < d->max_sm_mhz;
}

static void count_kernel(struct ga_nvml_device *d, uint32_t name_id, int slow, uint64_t ns)
{
    uint64_t *i = ga_map_find(&d->kname_idx, name_id, 0);
    if (!i) {
        if (d->n_knames == GA_NVML_KNAMES_MAX) {
            d->kernels_dropped++;
            return;
        }
        int added = 0;
        i = ga_map_upsert(&d->kname_idx, name_id, 0, d->n_knames, &added);
        d->knames = ga_xgrow(d->knames, &d->knames_cap, d->n_knames, sizeof(*d->knames));
        d->knames[d->n_knames++] = (struct ga_nvml_kname){.name_id = name_id};
    }
    struct ga_nvml_kname *e = &d->knames[*i];
    e->n[slow]++;
    e->ns[slow] += ns;
}

/* A new closed interval may hold the start of kernels that came before its closing sample. */
static void replay_kernels(struct ga_nvml_device *d)
{
    size_t keep = 0;
    for (size_t i = 0; i < d->n_kpend; i++) {
        struct ga_nvml_kpend k = d->kpend[i];
        int slow = slow_at(d, k.start);
        if (slow == -2)
            d->kpend[keep++] = k;
        else if (slow >= 0)
            count_kernel(d, k.name_id, slow, k.ns);
    }
    d->n_kpend = keep;
}

void ga_nvml_kernel(struct ga_nvml *x, const struct gt_rec_gpu_kernel *k)
{
    if (k->end < k->start) return;
    struct ga_nvml_device *d = find_device(x, (int32_t)k->device);
    if (!d) { /* its device's first NVML record may still come (ga_nvml.early) */
        if (ga_nvml_off(x)) return;
        if (x->n_early >= GA_NVML_EARLY_MAX) {
            x->early_dropped++;
            return;
        }
        x->early = ga_xgrow(x->early, &x->early_cap, x->n_early, sizeof(*x->early));
        x->early[x->n_early++] = (struct ga_nvml_kearly){.start = k->start,
                                                         .ns = k->end - k->start,
                                                         .name_id = k->name_id,
                                                         .device = (int32_t)k->device};
        return;
    }
    if (d->unmatched) { /* no NVML device has its UUID: never sampled */
        x->early_dropped++;
        return;
    }
    int slow = slow_at(d, k->start);
    if (slow >= 0) count_kernel(d, k->name_id, slow, k->end - k->start);
    if (slow != -2) return;
    if (d->n_kpend >= GA_NVML_PENDING_MAX) { /* samples stopped while the GPU went on */
        slow = slow_after_last(d, k->start);
        if (slow >= 0) count_kernel(d, k->name_id, slow, k->end - k->start);
        return;
    }
    d->kpend = ga_xgrow(d->kpend, &d->kpend_cap, d->n_kpend, sizeof(*d->kpend));
    d->kpend[d->n_kpend++] =
        (struct ga_nvml_kpend){.start = k->start, .ns = k->end - k->start, .name_id = k->name_id};
}

static void merge_point(struct ga_nvml_point *a, const struct ga_nvml_point *b)
{
    if (b->sm_mhz < a->sm_mhz) a->sm_mhz = b->sm_mhz;
    a->reasons |= b->reasons;
    if (a->mem_used == UINT64_MAX || (b->mem_used != UINT64_MAX && b->mem_used > a->mem_used))
        a->mem_used = b->mem_used;
}

/* The sample as a point of the bounded series (see GA_NVML_POINTS_MAX). */
static void add_point(struct ga_nvml_device *d, const struct gt_rec_nvml_sample *r)
{
    struct ga_nvml_point p = {r->ts, r->valid & GT_NVML_HAS_SM_CLOCK ? r->sm_mhz : UINT32_MAX, 0,
                              r->valid & GT_NVML_HAS_REASONS ? r->reasons : 0,
                              r->valid & GT_NVML_HAS_MEM_USED ? r->mem_used : UINT64_MAX};
    if (!d->points) {
        d->points = ga_xmalloc(GA_NVML_POINTS_MAX * sizeof(*d->points));
        d->per_point = 1;
    }
    if (d->n_points && d->in_last < d->per_point) { /* the newest point takes it */
        merge_point(&d->points[d->n_points - 1], &p);
        d->in_last++;
        return;
    }
    if (d->n_points == GA_NVML_POINTS_MAX) { /* halve: pairs merge, points stand for twice more */
        for (size_t i = 0; i < GA_NVML_POINTS_MAX / 2; i++) {
            struct ga_nvml_point m = d->points[2 * i];
            merge_point(&m, &d->points[2 * i + 1]);
            d->points[i] = m;
        }
        d->n_points = GA_NVML_POINTS_MAX / 2;
        d->per_point *= 2;
    }
    d->points[d->n_points++] = p;
    d->in_last = 1;
}

static void on_sample(struct ga_nvml *x, const struct gt_rec_nvml_sample *r)
{
    struct ga_nvml_device *d = device_of(x, r->device);
    if (!d) return;
    d->samples++;
    add_point(d, r);
    if (r->valid & GT_NVML_HAS_SM_CLOCK && r->sm_mhz < d->min_sm_mhz) d->min_sm_mhz = r->sm_mhz;
    if (r->valid & GT_NVML_HAS_TEMP && r->temp_c > d->max_temp_c) d->max_temp_c = r->temp_c;
    if (r->valid & GT_NVML_HAS_POWER && r->power_mw > d->max_power_mw)
        d->max_power_mw = r->power_mw;
    if (r->valid & GT_NVML_HAS_POWER_LIMIT) d->power_limit_mw = r->power_limit_mw;
    if (d->have_last && r->ts > d->last.ts) {
        const struct gt_rec_nvml_sample *l = &d->last;
        d->iv = ga_xgrow(d->iv, &d->iv_cap, d->n_iv, sizeof(*d->iv));
        int known = (l->valid & GT_NVML_HAS_SM_CLOCK) && d->max_sm_mhz;
        d->iv[d->n_iv++] =
            (struct ga_nvml_interval){.start = l->ts,
                                      .end = r->ts,
                                      .reasons = l->valid & GT_NVML_HAS_REASONS ? l->reasons : 0,
                                      .slow = (uint8_t)(known && l->sm_mhz < d->max_sm_mhz),
                                      .known = (uint8_t)known};
        replay_pending(d);
        replay_kernels(d);
    }
    if (!d->have_last || r->ts > d->last.ts) d->last = *r;
    d->have_last = 1;
}

static void on_status(struct ga_nvml *x, const struct ga_event *ev)
{
    const struct gt_rec_nvml *r = &ev->r->nvml;
    if (ev->sub == GT_NVML_ABSENT || ev->sub == GT_NVML_FAILED) {
        x->status = ev->sub == GT_NVML_ABSENT ? GA_NVML_ABSENT : GA_NVML_FAILED;
        drop_early(x); /* no device will come for them */
        size_t n = ev->str_len[0] < sizeof(x->why) - 1 ? ev->str_len[0] : sizeof(x->why) - 1;
        memcpy(x->why, ev->str[0], n);
        x->why[n] = 0;
        return;
    }
    struct ga_nvml_device *d = device_of(x, r->device);
    if (!d) return;
    x->status = GA_NVML_AVAILABLE;
    d->unmatched = ev->sub == GT_NVML_UNMATCHED;
    if (d->unmatched) { /* never sampled: what waited for its samples goes (kernels counted) */
        d->n_pending = 0;
        x->early_dropped += d->n_kpend;
        d->n_kpend = 0;
    }
    d->nvml_index = r->nvml_index;
    d->max_sm_mhz = r->max_sm_mhz;
    d->max_mem_mhz = r->max_mem_mhz;
    size_t n = ev->str_len[0] < sizeof(d->uuid) - 1 ? ev->str_len[0] : sizeof(d->uuid) - 1;
    memcpy(d->uuid, ev->str[0], n);
    d->uuid[n] = 0;
}

static void on_proc(struct ga_nvml *x, const struct ga_event *ev)
{
    const struct gt_rec_nvml_proc *r = &ev->r->nvml_proc;
    if (x->n_procs >= GA_NVML_PROCS_MAX) {
        x->procs_dropped++;
        return;
    }
    x->procs = ga_xgrow(x->procs, &x->procs_cap, x->n_procs, sizeof(*x->procs));
    struct ga_nvml_proc *p = &x->procs[x->n_procs++];
    size_t n = ev->str_len[0] < sizeof(p->name) - 1 ? ev->str_len[0] : sizeof(p->name) - 1;
    p->ts = r->ts;
    p->bytes = r->bytes;
    p->device = r->device;
    p->pid = r->pid;
    memcpy(p->name, ev->str[0], n);
    p->name[n] = 0;
}

const struct ga_nvml_proc *ga_nvml_procs_after(const struct ga_nvml *x, int32_t device, uint64_t ts,
                                               size_t *n)
{
    for (size_t i = 0; i < x->n_procs; i++) {
        const struct ga_nvml_proc *p = &x->procs[i];
        if (p->device != device || p->ts < ts || p->ts - ts > 10000000000ull) continue;
        size_t k = i;
        while (k < x->n_procs && x->procs[k].device == device && x->procs[k].ts == p->ts)
            k++;
        *n = k - i;
        return p;
    }
    *n = 0;
    return NULL;
}

void ga_nvml_event(struct ga_nvml *x, const struct ga_event *ev)
{
    if (ev->type == GT_REC_NVML_PROC)
        on_proc(x, ev);
    else if (ev->type == GT_REC_NVML)
        on_status(x, ev);
    else if (ev->type == GT_REC_NVML_SAMPLE)
        on_sample(x, &ev->r->nvml_sample);
}

void ga_nvml_busy(void *nvml, uint32_t device, uint64_t s, uint64_t e)
{
    struct ga_nvml *x = nvml;
    struct ga_nvml_device *d = find_device(x, (int32_t)device);
    if (!d) { /* its device's first NVML record may still come (ga_nvml.early_busy) */
        if (ga_nvml_off(x) || e <= s || device > INT32_MAX) return;
        int added = 0;
        uint64_t *n = ga_map_find(&x->early_busy_n, device, 0);
        if (!n && x->early_busy_devices < GA_NVML_EARLY_DEVICES) {
            n = ga_map_upsert(&x->early_busy_n, device, 0, 0, &added);
            x->early_busy_devices++;
        }
        if (!n || *n >= GA_NVML_EARLY_MAX) { /* its time alone: the device's busy_unsampled_ns */
            uint64_t *past = ga_map_find(&x->early_busy_n, device, 1);
            if (!past && x->early_busy_past_ids >= GA_NVML_EARLY_PAST_IDS) {
                x->early_busy_lost_ns += e - s; /* (a hostile trace's device ids) */
                return;
            }
            past = ga_map_upsert(&x->early_busy_n, device, 1, 0, &added);
            x->early_busy_past_ids += (uint32_t)added;
            *past += e - s;
            return;
        }
        ++*n;
        x->early_busy =
            ga_xgrow(x->early_busy, &x->early_busy_cap, x->n_early_busy, sizeof(*x->early_busy));
        x->early_busy[x->n_early_busy++] =
            (struct ga_nvml_bearly){.s = s, .e = e, .device = (int32_t)device};
        return;
    }
    if (d->unmatched) return; /* no NVML device has its UUID: never sampled */
    if (!d->have_last && d->n_pending >= GA_NVML_EARLY_MAX) { /* still no sample: bounded */
        d->busy_unsampled_ns += e - s;
        return;
    }
    /* (before the device's first sample: it waits in pending, cut at that sample when the
     * first interval closes) */
    if (d->n_iv && s < d->iv[0].start) s = d->iv[0].start < e ? d->iv[0].start : e;
    keep_pending(d, lay_busy(d, s, e), e);
}

static int by_ordinal(const void *a, const void *b)
{
    const struct ga_nvml_device *x = a, *y = b;
    return x->device < y->device ? -1 : x->device > y->device;
}

void ga_nvml_finish(struct ga_nvml *x)
{
    for (size_t i = 0; i < x->n_devices; i++) {
        struct ga_nvml_device *d = &x->devices[i];
        if (d->min_sm_mhz == UINT32_MAX) d->min_sm_mhz = 0;
        for (size_t k = 0; k < d->n_iv; k++) {
            const struct ga_nvml_interval *v = &d->iv[k];
            uint64_t len = v->end - v->start;
            d->covered_ns += len;
            d->busy_ns += v->busy;
            if (!v->slow) continue;
            d->slow_ns += len;
            d->slow_busy_ns += v->busy;
            for (unsigned b = 0; b < GA_NVML_REASONS; b++)
                if (v->reasons >> b & 1) {
                    d->reason_ns[b] += len;
                    d->reason_busy_ns[b] += v->busy;
                }
        }
        for (size_t k = 0; k < d->n_kpend; k++) {
            int slow = slow_after_last(d, d->kpend[k].start);
            if (slow >= 0) count_kernel(d, d->kpend[k].name_id, slow, d->kpend[k].ns);
        }
        if (!d->have_last) { /* never sampled: its kernels counted in no state, its busy time
                              * covered by no sample (none of it left out) */
            x->early_dropped += d->n_kpend;
            d->busy_unsampled_ns = d->busy_dropped_ns = 0;
        }
        free(d->kpend);
        d->kpend = NULL;
        d->n_kpend = 0;
        free(d->iv);
        free(d->pending);
        d->iv = NULL;
        d->pending = NULL;
        d->n_iv = d->n_pending = 0;
    }
    x->early_dropped += x->n_early; /* devices never sampled */
    drop_early(x); /* (busy time of a device never sampled is covered by no sample) */
    if (x->n_devices > 1) qsort(x->devices, x->n_devices, sizeof(*x->devices), by_ordinal);
}

/* The time a name's runs below the maximum clock took beyond its full-clock mean. */
double ga_nvml_kname_extra(const struct ga_nvml_kname *k)
{
    return (double)k->ns[1] - (double)k->ns[0] / (double)k->n[0] * (double)k->n[1];
}

size_t ga_nvml_slow_kernels(const struct ga_nvml_device *d, const struct ga_nvml_kname **out,
                            size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n_knames; i++) {
        const struct ga_nvml_kname *k = &d->knames[i];
        if (!k->n[0] || !k->n[1] || k->ns[1] * k->n[0] <= k->ns[0] * k->n[1]) continue;
        double e = ga_nvml_kname_extra(k);
        size_t j = n < max ? n++ : max; /* insertion into the top max, most extra first */
        for (; j > 0 && ga_nvml_kname_extra(out[j - 1]) < e; j--)
            if (j < max) out[j] = out[j - 1];
        if (j < max) out[j] = k;
    }
    return n;
}

void ga_nvml_free(struct ga_nvml *x)
{
    for (size_t i = 0; i < x->n_devices; i++) {
        free(x->devices[i].iv);
        free(x->devices[i].pending);
        free(x->devices[i].points);
        free(x->devices[i].knames);
        free(x->devices[i].kpend);
        ga_map_free(&x->devices[i].kname_idx);
    }
    free(x->devices);
    free(x->procs);
    free(x->early);
    free(x->early_busy);
    ga_map_free(&x->early_busy_n);
    memset(x, 0, sizeof(*x));
}
