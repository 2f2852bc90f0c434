/* The device state analysis (analyzer/analyses/nvml.c) on events fed by hand: intervals between
 * samples, slow ones (SM clock below the maximum) by reason, busy time laid over them, busy time
 * that arrives before the sample that closes its interval, the processes listed at an OOM, and
 * samples a hostile trace could hold (time going back, unknown devices). Oracle: the figures by
 * construction, in microseconds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "analyses/nvml.h"
#include "render/nvml.h"

#define US 1000ull

static void status_sub(struct ga_nvml *x, int dev, uint32_t max_sm, uint16_t sub)
{
    union ga_rec u;
    struct ga_event ev;
    memset(&u, 0, sizeof(u));
    memset(&ev, 0, sizeof(ev));
    u.nvml.device = dev;
    u.nvml.max_sm_mhz = max_sm;
    ev.type = GT_REC_NVML;
    ev.sub = sub;
    ev.r = &u;
    ev.str[0] = "GPU-x";
    ev.str_len[0] = 5;
    ga_nvml_event(x, &ev);
}

static void status(struct ga_nvml *x, int dev, uint32_t max_sm)
{
    status_sub(x, dev, max_sm, GT_NVML_DEVICE);
}

static void sample(struct ga_nvml *x, int dev, uint64_t ts, uint32_t sm, uint64_t reasons)
{
    union ga_rec u;
    struct ga_event ev;
    memset(&u, 0, sizeof(u));
    memset(&ev, 0, sizeof(ev));
    u.nvml_sample.ts = ts;
    u.nvml_sample.device = dev;
    u.nvml_sample.valid = (sm ? GT_NVML_HAS_SM_CLOCK : 0) | GT_NVML_HAS_REASONS; /* 0: no clock */
    u.nvml_sample.sm_mhz = sm;
    u.nvml_sample.reasons = reasons;
    ev.type = GT_REC_NVML_SAMPLE;
    ev.ts = ts;
    ev.r = &u;
    ga_nvml_event(x, &ev);
}

static void proc(struct ga_nvml *x, int dev, uint64_t ts, uint32_t pid, uint64_t bytes)
{
    union ga_rec u;
    struct ga_event ev;
    memset(&u, 0, sizeof(u));
    memset(&ev, 0, sizeof(ev));
    u.nvml_proc.ts = ts;
    u.nvml_proc.device = dev;
    u.nvml_proc.pid = pid;
    u.nvml_proc.bytes = bytes;
    ev.type = GT_REC_NVML_PROC;
    ev.ts = ts;
    ev.r = &u;
    ev.str[0] = "worker";
    ev.str_len[0] = 6;
    ga_nvml_event(x, &ev);
}

/* Samples at 0, 100, 200, 300, 400 us: slow [100, 200) for the power cap, [300, 400) for HW+SW
 * thermal slowdown. Busy [50, 150) arrives when only the samples at 0 and 100 are known (its
 * second half waits for the sample at 200), [250, 350) and [380, 450) at the end (past 400 us:
 * not covered). Busy covered: 100 + 100 + 20; while slow: 50 + 50 + 20. */
static void test_intervals(void)
{
    struct ga_nvml x;
    ga_nvml_init(&x);
    status(&x, 0, 2000);
    sample(&x, 0, 0, 2000, 0);
    sample(&x, 0, 100 * US, 1000, 0x4);
    ga_nvml_busy(&x, 0, 50 * US, 150 * US);
    sample(&x, 0, 200 * US, 2000, 0);
    sample(&x, 0, 300 * US, 1500, 0x60);
    sample(&x, 0, 250 * US, 10, 0x4); /* time going back: counted, no interval */
    sample(&x, 0, 400 * US, 2000, 0);
    ga_nvml_busy(&x, 0, 250 * US, 350 * US);
    ga_nvml_busy(&x, 0, 380 * US, 450 * US);
    ga_nvml_busy(&x, 7, 0, 450 * US); /* a device never sampled */
    sample(&x, -1, 10, 1, 1);         /* no such device */
    ga_nvml_finish(&x);
    const struct ga_nvml_device *d = x.n_devices == 1 ? &x.devices[0] : NULL;
    CHECK("one device", d != NULL);
    if (!d) return;
    CHECK_U64("samples", d->samples, 6);
    CHECK_U64("covered", d->covered_ns, 400 * US);
    CHECK_U64("slow", d->slow_ns, 200 * US);
    CHECK_U64("busy covered (the half that waited for its sample too)", d->busy_ns, 220 * US);
    CHECK_U64("busy while slow", d->slow_busy_ns, 120 * US);
    CHECK_U64("power cap: slow", d->reason_ns[2], 100 * US);
    CHECK_U64("power cap: busy", d->reason_busy_ns[2], 50 * US);
    CHECK_U64("SW thermal: busy", d->reason_busy_ns[5], 70 * US);
    CHECK_U64("HW thermal: slow", d->reason_ns[6], 100 * US);
    CHECK_U64("lowest SM clock (the sample that went back in time too)", d->min_sm_mhz, 10);
    CHECK_STR("reason name", ga_nvml_reason_name(6), "hw_thermal_slowdown");
    ga_nvml_free(&x);
}

/* Two listings of device 0 and one of device 1; an OOM at t finds the first listing of its
 * device at or after t, within 10 s. */
static void test_procs(void)
{
    struct ga_nvml x;
    size_t n = 0;
    ga_nvml_init(&x);
    proc(&x, 0, 100, 11, 1 << 20);
    proc(&x, 0, 100, 12, 2 << 20);
    proc(&x, 1, 150, 13, 3 << 20);
    proc(&x, 0, 200, 14, 4 << 20);
    const struct ga_nvml_proc *p = ga_nvml_procs_after(&x, 0, 90, &n);
    CHECK("OOM at 90 on device 0: the listing at 100, 2 processes",
          p && n == 2 && p[0].pid == 11 && p[1].pid == 12 && !strcmp(p[0].name, "worker"));
    p = ga_nvml_procs_after(&x, 0, 150, &n);
    CHECK("OOM at 150 on device 0: the listing at 200", p && n == 1 && p[0].pid == 14);
    p = ga_nvml_procs_after(&x, 1, 100, &n);
    CHECK("device 1", p && n == 1 && p[0].pid == 13);
    p = ga_nvml_procs_after(&x, 0, 201, &n);
    CHECK("none after the last listing", !p && n == 0);
    proc(&x, 2, 20000000000ull, 15, 5 << 20);
    p = ga_nvml_procs_after(&x, 2, 5000000000ull, &n);
    CHECK("a listing 15 s after the OOM is not its", !p && n == 0);
    ga_nvml_free(&x);
}

/* Samples that stop while the GPU goes on: the busy intervals waiting for a sample are bounded
 * (GA_NVML_PENDING_MAX), the rest counted; a sample after them lays the ones kept. */
static void test_pending_bound(void)
{
    struct ga_nvml x;
    ga_nvml_init(&x);
    status(&x, 1, 2000);
    sample(&x, 1, 0, 1000, 0);
    for (uint64_t i = 0; i < GA_NVML_PENDING_MAX + 5ull; i++)
        ga_nvml_busy(&x, 1, 10 * i + 1, 10 * i + 4); /* 3 ns each */
    sample(&x, 1, 10 * (GA_NVML_PENDING_MAX + 5ull), 1000, 0);
    ga_nvml_finish(&x);
    const struct ga_nvml_device *d = x.n_devices == 1 ? &x.devices[0] : NULL;
    CHECK("pending: 2^20 kept and laid over the interval once it closed, 5 counted",
          d && d->busy_ns == 3ull * GA_NVML_PENDING_MAX && d->slow_busy_ns == d->busy_ns &&
              d->busy_dropped_ns == 15);
    ga_nvml_free(&x);
}

/* The series: one point per sample up to GA_NVML_POINTS_MAX; then pairs merge (earliest time,
 * lowest clock, union of reasons), the size stays fixed and nothing is lost from the figures. */
static void test_series_bound(void)
{
    struct ga_nvml x;
    ga_nvml_init(&x);
    status(&x, 0, 2000);
    for (uint64_t i = 0; i < 10; i++)
        sample(&x, 0, i * US, 1000 + (uint32_t)i, i == 3 ? 0x4 : 0);
    ga_nvml_finish(&x);
    const struct ga_nvml_device *d = x.n_devices == 1 ? &x.devices[0] : NULL;
    CHECK("series: one point per sample while there is room",
          d && d->n_points == 10 && d->per_point == 1 && d->points[3].ts == 3 * US &&
              d->points[3].sm_mhz == 1003 && d->points[3].reasons == 0x4 &&
              d->points[4].reasons == 0 && d->points[0].mem_used == UINT64_MAX);
    ga_nvml_free(&x);
    ga_nvml_init(&x);
    status(&x, 0, 2000);
    uint64_t n = 3 * GA_NVML_POINTS_MAX + 1; /* 1024 points of 4 samples, the last of 1 */
    for (uint64_t i = 0; i < n; i++)
        sample(&x, 0, i * US, 1500 - (uint32_t)(i % 7), i == 5 ? 0x20 : 0);
    ga_nvml_finish(&x);
    d = x.n_devices == 1 ? &x.devices[0] : NULL;
    CHECK("series: bounded, 4 samples a point after two halvings",
          d && d->samples == n && d->per_point == 4 && d->n_points == (n + 3) / 4 &&
              d->n_points <= GA_NVML_POINTS_MAX);
    CHECK("series: a merged point has its earliest time, lowest clock and every reason",
          d && d->points[1].ts == 4 * US && d->points[1].sm_mhz == 1500 - 6 &&
              d->points[1].reasons == 0x20 && d->points[2].reasons == 0 &&
              d->points[d->n_points - 1].ts == (n - 1) * US);
    ga_nvml_free(&x);
}

static void kernel(struct ga_nvml *x, int dev, uint64_t s, uint64_t e, uint32_t name)
{
    struct gt_rec_gpu_kernel k;
    memset(&k, 0, sizeof(k));
    k.device = (uint32_t)dev, k.start = s, k.end = e, k.name_id = name;
    ga_nvml_kernel(x, &k);
}

/* Kernels by name at the maximum clock and below it: the state of the sample in effect at the
 * kernel's start (a closed interval, or the latest sample for a kernel after it); none before the
 * first sample; an unknown device is not made up. */
static void test_kernels(void)
{
    struct ga_nvml x;
    ga_nvml_init(&x);
    status(&x, 0, 2000);
    kernel(&x, 0, 5 * US, 6 * US, 7); /* before any sample: not counted */
    sample(&x, 0, 10 * US, 2000, 0);
    kernel(&x, 0, 12 * US, 112 * US, 7); /* full clock, 100 us (the interval is still open) */
    sample(&x, 0, 200 * US, 1200, 0x4);
    kernel(&x, 0, 150 * US, 250 * US, 7); /* full: its start is in [10, 200) */
    kernel(&x, 0, 210 * US, 360 * US, 7); /* slow, 150 us */
    kernel(&x, 0, 220 * US, 230 * US, 8); /* slow, another name */
    sample(&x, 0, 400 * US, 2000, 0);
    kernel(&x, 0, 390 * US, 540 * US, 7); /* slow: [200, 400) */
    kernel(&x, 3, 390 * US, 540 * US, 7); /* no such device */
    const struct ga_nvml_device *d = x.n_devices == 1 ? &x.devices[0] : NULL;
    const struct ga_nvml_kname *k7 = d && d->n_knames == 2 ? &d->knames[0] : NULL;
    CHECK("kernels: name 7 twice at full clock (200 us), twice below (300 us); name 8 once below",
          k7 && k7->name_id == 7 && k7->n[0] == 2 && k7->ns[0] == 200 * US && k7->n[1] == 2 &&
              k7->ns[1] == 300 * US && d->knames[1].name_id == 8 && d->knames[1].n[1] == 1 &&
              d->knames[1].n[0] == 0);
    kernel(&x, 0, 410 * US, 420 * US, 9); /* full, 10 us (the latest sample's state, at the end) */
    kernel(&x, 0, 250 * US, 750 * US, 9); /* slow, 500 us */
    ga_nvml_finish(&x);
    const struct ga_nvml_kname *v[3];
    size_t n = d ? ga_nvml_slow_kernels(d, v, 3) : 0;
    CHECK("slower below the maximum: 9 (490 us lost) before 7 (100 us); 8 never ran at full clock",
          n == 2 && v[0]->name_id == 9 && ga_nvml_kname_extra(v[0]) == 490.0 * US &&
              v[1]->name_id == 7 && ga_nvml_kname_extra(v[1]) == 100.0 * US);
    CHECK("at most max", d && ga_nvml_slow_kernels(d, v, 1) == 1 && v[0]->name_id == 9);
    ga_nvml_free(&x);

    /* an interval begun by a sample without an SM clock: its kernels are neither slow nor at
     * full clock (their clock is not known) */
    ga_nvml_init(&x);
    status(&x, 0, 2000);
    sample(&x, 0, 10 * US, 2000, 0);
    sample(&x, 0, 100 * US, 0, 0); /* NVML did not answer for the clock */
    sample(&x, 0, 200 * US, 1000, 0);
    kernel(&x, 0, 20 * US, 30 * US, 7);   /* full */
    kernel(&x, 0, 110 * US, 190 * US, 7); /* unknown */
    ga_nvml_finish(&x);
    d = x.n_devices == 1 ? &x.devices[0] : NULL;
    CHECK("kernels in an interval without an SM clock: counted neither slow nor full",
          d && d->n_knames == 1 && d->knames[0].n[0] == 1 && d->knames[0].n[1] == 0 &&
              d->slow_ns == 0 && d->covered_ns == 190 * US);
    ga_nvml_free(&x);
}

/* Kernels read before the sample in effect at their start (the stream is not in time order
 * across record kinds): a kernel at 15 us read before the first sample (10 us), and one at
 * 250 us read while the latest sample (200 us) is slow, before the sample at 240 us that put the
 * clock back to its maximum. Both wait for the sample that closes their interval. */
static void test_kernels_early(void)
{
    struct ga_nvml x;
    ga_nvml_init(&x);
    status(&x, 0, 2000);
    kernel(&x, 0, 15 * US, 25 * US, 7); /* full (sample at 10), 10 us */
    sample(&x, 0, 10 * US, 2000, 0);
    sample(&x, 0, 200 * US, 1000, 0x4);
    kernel(&x, 0, 250 * US, 280 * US, 7); /* full (sample at 240), 30 us */
    kernel(&x, 0, 210 * US, 230 * US, 7); /* slow (sample at 200), 20 us */
    sample(&x, 0, 240 * US, 2000, 0);
    kernel(&x, 0, 5 * US, 9 * US, 7); /* before the first sample: not counted */
    sample(&x, 0, 300 * US, 2000, 0);
    ga_nvml_finish(&x);
    const struct ga_nvml_device *d = x.n_devices == 1 ? &x.devices[0] : NULL;
    const struct ga_nvml_kname *k = d && d->n_knames == 1 ? &d->knames[0] : NULL;
    CHECK("early kernels: twice at full clock (40 us), once below (20 us)",
          k && k->n[0] == 2 && k->ns[0] == 40 * US && k->n[1] == 1 && k->ns[1] == 20 * US &&
              d->kernels_dropped == 0);
    ga_nvml_free(&x);
}

/* Kernels read before any NVML record of their device (the reader delivers a late flusher's
 * first samples after kernels that ran after them: nvml_slow_kernel under load) wait for it. */
static void test_kernels_before_device(void)
{
    struct ga_nvml x;
    ga_nvml_init(&x);
    kernel(&x, 0, 5 * US, 9 * US, 7);     /* before the first sample: not counted */
    kernel(&x, 0, 15 * US, 25 * US, 7);   /* full (sample at 10), 10 us */
    kernel(&x, 0, 210 * US, 230 * US, 7); /* slow (sample at 200), 20 us */
    kernel(&x, 1, 15 * US, 25 * US, 7);   /* a device NVML never samples: not counted */
    status(&x, 0, 2000);
    sample(&x, 0, 10 * US, 2000, 0);
    sample(&x, 0, 200 * US, 1000, 0x4);
    kernel(&x, 0, 250 * US, 280 * US, 7); /* full (sample at 240), 30 us */
    sample(&x, 0, 240 * US, 2000, 0);
    sample(&x, 0, 300 * US, 2000, 0);
    ga_nvml_finish(&x);
    const struct ga_nvml_device *d = x.n_devices == 1 ? &x.devices[0] : NULL;
    const struct ga_nvml_kname *k = d && d->n_knames == 1 ? &d->knames[0] : NULL;
    CHECK("kernels before their device's first record: twice at full clock (40 us), once below "
          "(20 us); the unsampled device's kernel dropped",
          k && k->n[0] == 2 && k->ns[0] == 40 * US && k->n[1] == 1 && k->ns[1] == 20 * US &&
              x.early_dropped == 1 && x.n_early == 0);
    ga_nvml_free(&x);
    /* NVML absent: nothing is kept */
    ga_nvml_init(&x);
    kernel(&x, 0, 15 * US, 25 * US, 7);
    status_sub(&x, -1, 0, GT_NVML_ABSENT);
    CHECK("NVML absent: the kernels waiting for a device are let go", x.n_early == 0 && !x.early);
    kernel(&x, 0, 35 * US, 45 * US, 7);
    CHECK("NVML absent: later kernels are not kept", x.n_early == 0);
    ga_nvml_finish(&x);
    ga_nvml_free(&x);
}

/* Busy intervals read before their device's first NVML record, and after it but before its first
 * sample (a late flusher: nvml_slow_kernel under load), wait for the samples like later ones:
 * samples at 10, 100 (slow), 200 us. Busy [0, 30) before any record (20 us of it covered), [60,
 * 120) also before it (40 full + 20 slow), [150, 170) after the record, before any sample (slow);
 * device 3 never gets a record (dropped at the end, covered by no sample). Busy covered: 100 us;
 * while slow: 40. With NVML absent nothing waits; past GA_NVML_EARLY_MAX the time is counted. */
static void test_busy_before_device(void)
{
    struct ga_nvml x;
    ga_nvml_init(&x);
    ga_nvml_busy(&x, 0, 0, 30 * US);
    ga_nvml_busy(&x, 0, 60 * US, 120 * US);
    ga_nvml_busy(&x, 3, 0, 500 * US);
    status(&x, 0, 2000);
    ga_nvml_busy(&x, 0, 150 * US, 170 * US);
    sample(&x, 0, 10 * US, 2000, 0);
    sample(&x, 0, 100 * US, 1000, 0x4);
    sample(&x, 0, 200 * US, 2000, 0);
    ga_nvml_finish(&x);
    const struct ga_nvml_device *d = x.n_devices == 1 ? &x.devices[0] : NULL;
    CHECK("busy before the device's record: 100 us covered, 40 us while slow, none dropped",
          d && d->busy_ns == 100 * US && d->slow_busy_ns == 40 * US &&
              d->reason_busy_ns[2] == 40 * US && d->busy_dropped_ns == 0 &&
              d->busy_unsampled_ns == 0 && x.n_early_busy == 0 && !x.early_busy);
    ga_nvml_free(&x);

    ga_nvml_init(&x);
    ga_nvml_busy(&x, 0, 0, 30 * US);
    status_sub(&x, -1, 0, GT_NVML_ABSENT);
    CHECK("NVML absent: the busy intervals waiting for a device are let go",
          x.n_early_busy == 0 && !x.early_busy);
    ga_nvml_busy(&x, 0, 40 * US, 50 * US);
    CHECK("NVML absent: later busy intervals are not kept", x.n_early_busy == 0);
    ga_nvml_finish(&x);
    ga_nvml_free(&x);

    /* a device no NVML device has the UUID of is never sampled: its busy time and kernels wait
     * for nothing (neither what came before its record nor after); its kernels are counted as
     * unsampled, its busy time not as left out */
    ga_nvml_init(&x);
    ga_nvml_busy(&x, 2, 0, 30 * US);
    kernel(&x, 2, 5 * US, 9 * US, 7);
    status_sub(&x, 2, 2000, GT_NVML_UNMATCHED);
    ga_nvml_busy(&x, 2, 40 * US, 50 * US);
    kernel(&x, 2, 45 * US, 49 * US, 7);
    CHECK("unmatched device: nothing waits", x.n_devices == 1 && x.devices[0].n_pending == 0 &&
                                                 x.devices[0].n_kpend == 0 && x.n_early_busy == 0);
    ga_nvml_finish(&x);
    CHECK("unmatched device: no busy time, none said left out, its 2 kernels unsampled",
          x.devices[0].busy_ns == 0 && x.devices[0].busy_dropped_ns == 0 &&
              x.devices[0].busy_unsampled_ns == 0 && x.early_dropped == 2);
    ga_nvml_free(&x);

    /* a device with a record that is never sampled: at most GA_NVML_EARLY_MAX busy intervals
     * wait for its first sample; at the end none of its time is said left out, its kernels are
     * unsampled */
    ga_nvml_init(&x);
    status(&x, 4, 2000);
    for (uint64_t i = 0; i < GA_NVML_EARLY_MAX + 3ull; i++)
        ga_nvml_busy(&x, 4, 10 * i + 1, 10 * i + 4);
    kernel(&x, 4, 5 * US, 9 * US, 7);
    CHECK("sampled never: bounded wait",
          x.devices[0].n_pending == GA_NVML_EARLY_MAX && x.devices[0].busy_unsampled_ns == 9);
    ga_nvml_finish(&x);
    CHECK("sampled never: none said left out, the kernel unsampled",
          x.devices[0].busy_ns == 0 && x.devices[0].busy_unsampled_ns == 0 &&
              x.devices[0].busy_dropped_ns == 0 && x.early_dropped == 1);
    ga_nvml_free(&x);

    /* one device's flood of early busy intervals takes nothing from another's wait; past
     * GA_NVML_EARLY_DEVICES device ids no interval waits, only the id's time (its device's
     * busy_unsampled_ns when its record comes) */
    ga_nvml_init(&x);
    for (uint64_t i = 0; i < GA_NVML_EARLY_MAX + 3ull; i++)
        ga_nvml_busy(&x, 5, 10 * i + 1, 10 * i + 4);
    for (uint32_t dev = 100; dev < 100 + GA_NVML_EARLY_DEVICES - 2; dev++)
        ga_nvml_busy(&x, dev, 0, 10);
    ga_nvml_busy(&x, 0, 20 * US, 30 * US); /* the 64th device id */
    size_t waiting = x.n_early_busy;
    ga_nvml_busy(&x, 99, 0, 10); /* the 65th */
    ga_nvml_busy(&x, 99, 20, 27);
    CHECK("early busy: past 64 device ids no interval waits, the 65th id's time is kept",
          x.n_early_busy == waiting && x.early_busy_devices == GA_NVML_EARLY_DEVICES &&
              x.early_busy_past_ids == 2 && x.early_busy_lost_ns == 0);
    status(&x, 0, 2000);
    sample(&x, 0, 10 * US, 2000, 0);
    sample(&x, 0, 40 * US, 2000, 0);
    status(&x, 99, 2000);
    sample(&x, 99, 0, 2000, 0);
    sample(&x, 99, 40 * US, 2000, 0);
    CHECK("early busy: the 65th id's record takes its time", x.early_busy_past_ids == 1);
    ga_nvml_finish(&x);
    d = x.n_devices == 2 && x.devices[0].device == 0 ? &x.devices[0] : NULL;
    CHECK("early flood on device 5 and on many ids: device 0's 10 us still laid over",
          d && d->busy_ns == 10 * US && d->busy_unsampled_ns == 0 && x.n_early_busy == 0 &&
              x.early_busy_n.count == 0);
    CHECK("early busy past 64 device ids: the 65th device's 17 ns are its busy_unsampled_ns",
          x.n_devices == 2 && x.devices[1].device == 99 && x.devices[1].busy_unsampled_ns == 17 &&
              x.devices[1].busy_ns == 0);
    ga_nvml_free(&x);

    /* a hostile trace's thousands of device ids: the time of ids past GA_NVML_EARLY_PAST_IDS is
     * lost (counted), the map stays bounded */
    ga_nvml_init(&x);
    for (uint32_t dev = 0; dev < GA_NVML_EARLY_DEVICES + GA_NVML_EARLY_PAST_IDS + 5; dev++)
        ga_nvml_busy(&x, dev, 0, 2);
    CHECK("early busy: at most 64 + 4096 device ids kept, the rest's time counted lost",
          x.early_busy_n.count == GA_NVML_EARLY_DEVICES + GA_NVML_EARLY_PAST_IDS &&
              x.early_busy_lost_ns == 10);
    ga_nvml_finish(&x);
    ga_nvml_free(&x);

    ga_nvml_init(&x);
    for (uint64_t i = 0; i < GA_NVML_EARLY_MAX + 3ull; i++)
        ga_nvml_busy(&x, 0, 10 * i + 1, 10 * i + 4); /* 3 ns each */
    status(&x, 0, 2000);
    sample(&x, 0, 0, 1000, 0);
    sample(&x, 0, 10 * (GA_NVML_EARLY_MAX + 3ull), 2000, 0);
    ga_nvml_finish(&x);
    d = x.n_devices == 1 ? &x.devices[0] : NULL;
    CHECK("busy before the device's record: 65,536 wait and are laid over, 3 counted (9 ns)",
          d && d->busy_ns == 3ull * GA_NVML_EARLY_MAX && d->slow_busy_ns == d->busy_ns &&
              d->busy_unsampled_ns == 9);
    ga_nvml_free(&x);
}

/* The text section: shares of busy time only where there was busy time (a device sampled while
 * no kernel ran has none: "0.0% of busy time" would read as a measured figure); busy time left
 * out (after the samples stopped, or past the wait for a device's first record) said. */
static void test_text(void)
{
    static const char *const names[GA_VNVML_REASONS] = {
        "gpu_idle", "a", "sw_power_cap", "b", "c", "d", "e", "f", "g"};
    struct ga_vnvml_device d[2];
    memset(d, 0, sizeof(d));
    d[0].device = 0, d[0].matched = 1, d[0].max_sm_mhz = 1980, d[0].samples = 5;
    d[0].covered_ns = 400 * US, d[0].slow_ns = 100 * US;
    d[0].reason_ns[2] = 100 * US;
    d[1] = d[0];
    d[1].device = 1, d[1].busy_ns = 200 * US, d[1].slow_busy_ns = 50 * US;
    d[1].reason_busy_ns[2] = 50 * US, d[1].busy_not_laid_ns = 3 * US;
    d[1].busy_unsampled_ns = 7 * US;
    struct ga_vnvml v;
    memset(&v, 0, sizeof(v));
    v.status = GA_VNVML_AVAILABLE, v.why = "", v.devices = d, v.n_devices = 2;
    v.busy_known = 1;
    for (unsigned b = 0; b < GA_VNVML_REASONS; b++)
        v.reason_names[b] = names[b];
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    ga_text_nvml(&v, o);
    fclose(o);
    CHECK("text: no busy time, no share of it",
          strstr(buf, "for 25.0% of the time, no GPU work in it\n") &&
              strstr(buf, "reported by NVML: sw_power_cap 25.0% of the time\n"));
    CHECK("text: busy time, its shares",
          strstr(buf, "for 25.0% of the time, 25.0% of busy time\n") &&
              strstr(buf, "sw_power_cap 25.0% of busy time (25.0% of the time)\n"));
    CHECK("text: busy time not laid over said: after the samples stopped, before the first",
          strstr(buf, "0.003 ms of busy time after the samples stopped") &&
              strstr(buf, "up to 0.007 ms of busy time could not wait for the first sample"));
    free(buf);
    /* no GPU timeline (CUPTI off): busy time is not known, neither "no GPU work" nor a share */
    v.busy_known = 0;
    buf = NULL;
    o = open_memstream(&buf, &len);
    ga_text_nvml(&v, o);
    fclose(o);
    CHECK("text: without a GPU timeline busy time is said unknown",
          strstr(buf, "for 25.0% of the time (busy time unknown: no GPU timeline)\n") &&
              !strstr(buf, "no GPU work") && !strstr(buf, "of busy time (") &&
              strstr(buf, "reported by NVML: sw_power_cap 25.0% of the time\n"));
    free(buf);
    /* the only busy time could not wait for the first sample: it may lie in the sampled time,
     * so neither "no GPU work" nor a share */
    v.busy_known = 1;
    d[0].busy_unsampled_ns = 9 * US;
    buf = NULL;
    o = open_memstream(&buf, &len);
    ga_text_nvml(&v, o);
    fclose(o);
    CHECK("text: busy time only left out: said unknown in the sampled time",
          strstr(buf, "for 25.0% of the time, busy time in it unknown\n") &&
              strstr(buf, "up to 0.009 ms of busy time could not wait") &&
              !strstr(buf, "no GPU work"));
    free(buf);
}

int main(void)
{
    test_text();
    test_busy_before_device();
    test_kernels();
    test_kernels_early();
    test_kernels_before_device();
    test_series_bound();
    test_intervals();
    test_pending_bound();
    test_procs();
    return check_done();
}
