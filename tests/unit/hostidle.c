/* GPU idle time by host activity, streamed (analyses/hostidle.c): a gap is joined with the host
 * samples inside it once every sample taken in it has come (the host records past its end, and
 * every thread's latest hooked call past it: a thread writes its samples at its next hooked call),
 * and samples no gap still to come or kept needs are let go. Checked against the same analysis
 * with every join left to the end and no sample let go (hostidle.host_max and .gaps NULL: what the
 * analysis did before it streamed) on synthetic traces whose samples are written late, as the
 * shim writes them: the same idle time per (stack, class), per class, sampled, and the same
 * samples inside every kept gap; and the streamed run let most samples go while reading. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/state.h"
#include "check.h"
#include "render.h"
#include "tracebuild.h"

#define T0       2000000000ull /* trace start (CLOCK_MONOTONIC) */
#define US       1000ull
#define MS       1000000ull
#define ROUNDS   40 /* (at most) */
#define ROUND_NS (150 * MS) /* 6 s in all, ~200 K kernels: 6 reorder windows of the GPU records */
#define TID_A    7 /* launches, sampled every 50 us, writes its samples at its launches */
#define TID_B    8 /* a call every 3 ms, sampled every 250 us */
#define TID_C    9 /* one call at the start, sampled every 2 ms, writes them all at its last call */
#define ECORR(i) ((1ull << 40) | (i))

#define RNG_SEED 0x9E3779B97F4A7C15ull
#include "rng.h"

struct kern {
    uint64_t start, end; /* absolute */
    uint32_t i;
};

struct pend { /* samples taken, not written yet */
    uint64_t ts[4096];
    uint32_t flags[4096];
    size_t n;
};

static void sample_rec(struct tb *t, uint64_t write_ts, uint64_t taken, uint32_t tid,
                       uint32_t stack, uint32_t flags)
{
    struct gt_rec_host_sample r = {.ts = write_ts,
                                   .sample_ts = taken,
                                   .interval_ns = 50 * US,
                                   .cpu_ns = flags & GT_SAMPLE_ON_CPU ? 50 * US : 0,
                                   .tid = tid,
                                   .stack = stack,
                                   .flags = flags};
    tb_rec(t, GT_REC_HOST_SAMPLE, 0, &r, sizeof(r), NULL, 0);
}

/* The thread's pending samples, written just before its call at `at` (absolute). */
static void write_pending(struct tb *t, struct pend *p, uint64_t at, uint32_t tid, uint32_t stack)
{
    for (size_t k = 0; k < p->n; k++)
        sample_rec(t, at, p->ts[k], tid, stack + (uint32_t)(k % 3), p->flags[k]);
    p->n = 0;
}

static void take(struct pend *p, uint64_t ts, uint32_t flags)
{
    if (p->n < sizeof(p->ts) / sizeof(p->ts[0])) p->ts[p->n] = ts, p->flags[p->n++] = flags;
}

static void span(struct tb *t, uint64_t enter, uint64_t exit_, uint32_t stack)
{
    struct gt_rec_span r = {.ts_enter = enter, .ts_exit = exit_, .stack = stack};
    tb_rec(t, GT_REC_SPAN, GT_API_cuStreamSynchronize, &r, sizeof(r), NULL, 0);
}

/* with_c: thread C too (its samples all come at the end, so every gap waits for them). */
static void build(struct tb *t, int with_c, unsigned rounds)
{
    static struct kern k[1 << 18];
    static struct pend pa, pb, pc;
    size_t nk = 0, gpu_from = 0;
    uint64_t next_launch = T0 + 20 * US, gpu_free = 0, next_sa = T0, next_sb = T0, next_sc = T0;
    uint64_t next_b = T0 + 3 * MS;
    pa.n = pb.n = pc.n = 0;
    rng_state = RNG_SEED; /* (every trace the same) */
    tb_begin(t, GT_CHUNK_HOST, 0);
    tb_cupti(t, 0, GT_CUPTI_ON, 0, 0, "/sim/libcupti.so.13", "");
    tb_end(t);
    if (with_c) {
        tb_begin(t, GT_CHUNK_HOST, TID_C);
        span(t, T0 + 1 * MS, T0 + 1 * MS + 500, 900);
        tb_end(t);
    }
    for (unsigned r = 0; r < rounds; r++) {
        uint64_t end = T0 + (r + 1) * ROUND_NS;
        tb_begin(t, GT_CHUNK_HOST, TID_A);
        while (next_launch < end && nk < sizeof(k) / sizeof(k[0])) {
            uint64_t L = next_launch;
            for (; next_sa < L; next_sa += 50 * US) /* A's samples since its last launch */
                take(&pa, next_sa + rng(7 * US),
                     (rng(3) ? GT_SAMPLE_ON_CPU : 0) | (rng(5) == 0 ? GT_SAMPLE_IN_HOOK : 0));
            write_pending(t, &pa, L, TID_A, 100);
            tb_launch_corr(t, L - T0, GT_API_cuLaunchKernel, 0xf0, 0x51, ECORR(nk + 1));
            uint64_t s = L + 3 * US > gpu_free ? L + 3 * US : gpu_free;
            k[nk] = (struct kern){s, s + 2 * US + rng(20 * US), (uint32_t)nk};
            gpu_free = k[nk].end;
            nk++;
            /* the next launch: right away (no gap), or after host work of 10 us to 0.3 ms */
            next_launch = L + (rng(4) == 0 ? 2 * US : 10 * US + rng(rng(8) ? 20 * US : 300 * US));
        }
        tb_end(t);
        tb_begin(t, GT_CHUNK_HOST, TID_B);
        for (; next_b < end; next_b += 3 * MS) {
            for (; next_sb < next_b; next_sb += 250 * US)
                take(&pb, next_sb + rng(20 * US), rng(2) ? GT_SAMPLE_ON_CPU : 0);
            write_pending(t, &pb, next_b, TID_B, 200);
            span(t, next_b, next_b + 2 * US, 300);
        }
        tb_end(t);
        if (with_c)
            for (; next_sc < end; next_sc += 2 * MS)
                take(&pc, next_sc + 3 * US, 0);
        if (with_c && r == rounds - 1) { /* C's last call: everything it took */
            tb_begin(t, GT_CHUNK_HOST, TID_C);
            write_pending(t, &pc, end - 10 * US, TID_C, 400);
            span(t, end - 10 * US, end - 9 * US, 901);
            tb_end(t);
        }
        tb_begin(t, GT_CHUNK_HOST, 0);
        tb_watermark(t, end - T0);
        tb_end(t);
        /* CUPTI delivers a round late: the kernels that started before the previous round's end */
        tb_begin(t, GT_CHUNK_GPU, 0);
        uint64_t upto = end - ROUND_NS;
        for (; gpu_from < nk && k[gpu_from].start < upto; gpu_from++) {
            tb_gpu_extcorr(t, ECORR(k[gpu_from].i + 1), 500 + k[gpu_from].i); /* (at the call) */
            tb_gpu_kernel(t, k[gpu_from].start, k[gpu_from].end, 500 + k[gpu_from].i, 0, 1, 0, 0);
        }
        tb_end(t);
    }
    tb_begin(t, GT_CHUNK_GPU, 0);
    for (; gpu_from < nk; gpu_from++) {
        tb_gpu_extcorr(t, ECORR(k[gpu_from].i + 1), 500 + k[gpu_from].i);
        tb_gpu_kernel(t, k[gpu_from].start, k[gpu_from].end, 500 + k[gpu_from].i, 0, 1, 0, 0);
    }
    tb_end(t);
}

/* streamed: as the report runs it; else every join at the end, no sample let go. */
static void run(struct ga_report *r, int with_c, unsigned rounds, int streamed)
{
    struct tb t;
    char path[256];
    tb_init(&t, 1, T0);
    build(&t, with_c, rounds);
    snprintf(path, sizeof(path), "/tmp/gt-unit-hostidle-%d.trace", (int)getpid());
    tb_write(&t, path, (size_t)-1);
    ga_report_init(r, path);
    if (!streamed)
        r->hostidle.host_max = NULL, r->hostidle.gaps = NULL, r->hostidle.wait_limit = SIZE_MAX;
    if (ga_report_run(r) != 0) printf("     read error: %s\n", r->read.error);
    unlink(path);
    tb_free_all(&t);
}

/* exact: no gap may be joined early (C's samples come before GA_HI_WAIT_MAX gaps wait). */
static void compare(const char *what, int with_c, unsigned rounds, int exact)
{
    struct ga_report s, e;
    char line[160];
    run(&s, with_c, rounds, 1);
    run(&e, with_c, rounds, 0);
    const struct ga_hostidle *hs = &s.hostidle, *he = &e.hostidle;
    snprintf(line, sizeof(line), "%s: samples seen (%lu)", what, (unsigned long)he->samples_seen);
    CHECK(line, he->samples_seen > 5000 && hs->samples_seen == he->samples_seen);
    if (exact) {
        CHECK_U64("nothing joined before all its samples came", hs->gaps_early, 0);
    } else { /* C holds every gap after its call: past GA_HI_WAIT_MAX the oldest go early */
        snprintf(line, sizeof(line), "%s: gaps joined early (%lu), none in the reference", what,
                 (unsigned long)hs->gaps_early);
        CHECK(line, hs->gaps_early > 0 && he->gaps_early == 0);
        CHECK_U64("gaps waiting at most", hs->wait_peak, GA_HI_WAIT_MAX);
    }
    /* the report says how many (the JSON always, the text where any) */
    char *json = render(&s, 1), *text = render(&s, 0), want[96];
    snprintf(want, sizeof(want), "\"idle_by_host_gaps_early\": %lu,", (unsigned long)hs->gaps_early);
    CHECK("JSON: timeline.idle_by_host_gaps_early", json && strstr(json, want));
    snprintf(want, sizeof(want), "  (%lu gap%s joined with the host samples before a thread",
             (unsigned long)hs->gaps_early, hs->gaps_early == 1 ? "" : "s");
    CHECK(exact ? "text: no line on gaps joined early" : "text: the gaps joined early",
          text && !strstr(text, "joined with the host samples before") == !hs->gaps_early &&
              (!hs->gaps_early || strstr(text, want)));
    free(json);
    free(text);
    CHECK_U64("devices", hs->n_dev, he->n_dev);
    const struct ga_gaps_device *gd = ga_gaps_device_of(&s.gaps, 0);
    CHECK("gaps found", gd && gd->n_gaps > 1000);
    for (size_t k = 0; k < hs->n_dev && k < he->n_dev; k++) {
        const struct ga_hi_device *a = &hs->dev[k], *b = &he->dev[k];
        CHECK_U64("idle time", a->idle_ns, b->idle_ns);
        uint64_t sum = 0;
        for (unsigned c = 0; c < GA_HI_CLASSES; c++)
            sum += a->class_ns[c];
        CHECK_U64("the classes' idle time adds up to the idle time", sum, a->idle_ns);
        if (!exact) continue; /* (a gap joined early may miss samples of C's) */
        CHECK_U64("idle time shared among samples", a->sampled_ns, b->sampled_ns);
        CHECK("some idle time shared among samples, some not", b->sampled_ns > 0 &&
                                                                b->sampled_ns < b->idle_ns);
        int same = 1;
        for (unsigned c = 0; c < GA_HI_CLASSES; c++)
            same &= a->class_ns[c] == b->class_ns[c];
        CHECK("idle time per class", same);
        CHECK_U64("(stack, class) pieces", a->n_pieces, b->n_pieces);
        same = a->n_pieces == b->n_pieces;
        for (size_t i = 0; same && i < a->n_pieces; i++) {
            const struct ga_hi_piece *x = &a->pieces[i], *y = &b->pieces[i];
            same = x->stack == y->stack && x->cls == y->cls && x->idle_ns == y->idle_ns &&
                   x->on_cpu_ns == y->on_cpu_ns && x->off_cpu_ns == y->off_cpu_ns &&
                   x->samples == y->samples;
            if (!same)
                printf("     piece %zu: stack %u class %u idle %lu samples %lu, at once stack %u class %u idle %lu samples %lu\n",
                       i, a->pieces[i].stack, a->pieces[i].cls, (unsigned long)a->pieces[i].idle_ns,
                       (unsigned long)a->pieces[i].samples, b->pieces[i].stack, b->pieces[i].cls,
                       (unsigned long)b->pieces[i].idle_ns, (unsigned long)b->pieces[i].samples);
        }
        CHECK("each piece's idle, on-CPU and off-CPU time and samples", same);
    }
    /* the kept gaps' samples (listed by the report) */
    size_t in = 0;
    int same = gd != NULL;
    for (size_t g = 0; gd && g < gd->n_kept; g++) {
        size_t f1, e1, f2, e2;
        ga_hostidle_range(hs, gd->gaps[g].start, gd->gaps[g].dur, &f1, &e1);
        ga_hostidle_range(he, gd->gaps[g].start, gd->gaps[g].dur, &f2, &e2);
        in += e2 - f2;
        same &= e1 - f1 == e2 - f2;
        for (size_t i = 0; same && i < e1 - f1; i++) {
            const struct ga_hi_sample *x = &hs->s[f1 + i], *y = &he->s[f2 + i];
            same = x->ts == y->ts && x->interval_ns == y->interval_ns && x->cpu_ns == y->cpu_ns &&
                   x->tid == y->tid && x->stack == y->stack && x->flags == y->flags;
        }
    }
    CHECK("the samples inside each kept gap", same && in > 0);
    snprintf(line, sizeof(line), "%s: samples kept at the end, streamed %zu, at once %zu", what,
             hs->n, he->n);
    CHECK(line, hs->n * 4 < he->n && he->n == he->samples_seen);
    snprintf(line, sizeof(line), "%s: samples kept at once, streamed %zu, at once %zu", what,
             hs->kept_max, he->kept_max);
    if (!with_c) /* streamed: the samples were let go while reading */
        CHECK(line, hs->kept_max * 2 < hs->samples_seen && he->kept_max == he->samples_seen);
    else if (exact) /* every gap waited for C's samples: few could go before the end */
        CHECK(line, hs->kept_max * 10 > hs->samples_seen * 9);
    ga_report_free(&s);
    ga_report_free(&e);
}

int main(void)
{
    compare("threads writing as they go", 0, ROUNDS, 1);
    compare("a thread that writes its samples at the end", 1, 8, 1);
    compare("the same, more gaps than wait", 1, ROUNDS, 0);
    return check_done();
}
