/* bench_launch MODE EVENTS [THREADS] [WARMUP]: a tight loop of driver calls against the simulated
 * driver, timed from inside the process so start-up and exit (trace file creation, final flush)
 * are not counted. The same binary runs with no shim, with the shim disabled, with gputrace, so
 * the only difference between variants is what LD_PRELOAD and the environment add.
 *
 *   launch  EVENTS cuLaunchKernel calls in total, split evenly over THREADS threads, each thread
 *           on its own non-blocking stream (no thread waits behind another's work)
 *   alloc   EVENTS cuMemAlloc(4096) + cuMemFree pairs in total
 *   copy    EVENTS cuMemcpyDtoDAsync calls of 256 bytes in total, split like launches (the async
 *           copy hook: the same correlation push and record as a launch's)
 *   tp      (LTTng build only) EVENTS tracepoints with no driver call
 *
 * Built twice: plain, and with -DBENCH_LTTNG, where every launch is followed by an LTTng-UST
 * tracepoint carrying the launch record's integer fields (the peer tracer instrumenting the same
 * call by hand).
 *
 * Prints one line of key=value pairs:
 *   ns_per_op      wall time of the timed section / EVENTS (all threads together)
 *   thr_ns_per_op  mean over threads of (thread's wall time / thread's events)
 *   cpu_ns_per_op  mean over threads of (thread's CPU time / thread's events)
 *   ops_per_s      EVENTS / wall time
 *   flush_cpu_ns_per_op  CPU time of the tracer's flusher thread ("gputrace-flush", from
 *                  /proc/self/task/TID/schedstat) from the start line to 20 ms after the last
 *                  thread ended (its last hand-offs written), / EVENTS; 0 without a flusher */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#define BENCH_PROG "bench_launch"
#include "bench_util.h"

#ifdef BENCH_LTTNG
#include "lttng_tp.h"
#endif

enum mode { M_LAUNCH, M_ALLOC, M_TP, M_COPY };

struct worker {
    pthread_t th;
    CUstream stream;
    long n;
    uint64_t t0, t1, cpu_ns; /* CLOCK_MONOTONIC start and end, thread CPU time */
};

static CUcontext ctx;
static CUfunction fn;
static enum mode mode;
static pthread_barrier_t start_line;

static void launches(CUstream s, long n)
{
    for (long i = 0; i < n; i++) {
        CUresult r = cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
#ifdef BENCH_LTTNG
        lttng_ust_tracepoint(gtbench, launch, (uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)s,
                             (uint64_t)i, 1, 1, 32, 0, (int32_t)r);
#endif
        if (r != CUDA_SUCCESS) {
            fprintf(stderr, "bench_launch: cuLaunchKernel failed: %d\n", (int)r);
            exit(1);
        }
    }
}

static void allocs(long n)
{
    for (long i = 0; i < n; i++) {
        CUdeviceptr p;
        CHECK(cuMemAlloc(&p, 4096));
        CHECK(cuMemFree(p));
    }
}

static void copies(CUstream s, long n)
{
    CUdeviceptr buf;
    CHECK(cuMemAlloc(&buf, 512));
    for (long i = 0; i < n; i++)
        CHECK(cuMemcpyDtoDAsync(buf + 256, buf, 256, s));
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemFree(buf));
}

static void tracepoints(long n)
{
#ifdef BENCH_LTTNG
    for (long i = 0; i < n; i++)
        lttng_ust_tracepoint(gtbench, launch, 1, 2, (uint64_t)i, 1, 1, 32, 0, 0);
#else
    (void)n;
    fprintf(stderr, "bench_launch: mode tp needs the LTTng build\n");
    exit(2);
#endif
}

static void run_loop(struct worker *w, long n)
{
    switch (mode) {
    case M_LAUNCH:
        launches(w->stream, n);
        break;
    case M_ALLOC:
        allocs(n);
        break;
    case M_TP:
        tracepoints(n);
        break;
    case M_COPY:
        copies(w->stream, n);
        break;
    }
}

/* CPU ns the flusher thread has run so far (schedstat's first field), 0 if there is none. */
static uint64_t flusher_cpu_ns(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    uint64_t ns = 0;
    while (d && (e = readdir(d)) != NULL) {
        char path[300], buf[64] = "";
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        int hit = fgets(buf, sizeof(buf), f) && strncmp(buf, "gputrace-flush", 14) == 0;
        fclose(f);
        if (!hit) continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", e->d_name);
        if ((f = fopen(path, "r")) != NULL) {
            unsigned long long v = 0;
            if (fscanf(f, "%llu", &v) == 1) ns = v;
            fclose(f);
        }
    }
    if (d) closedir(d);
    return ns;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    CHECK(cuCtxSetCurrent(ctx));
    pthread_barrier_wait(&start_line);
    uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    w->t0 = clock_ns(CLOCK_MONOTONIC);
    run_loop(w, w->n);
    w->t1 = clock_ns(CLOCK_MONOTONIC);
    w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
    return NULL;
}

static enum mode parse_mode(const char *s)
{
    if (strcmp(s, "launch") == 0) return M_LAUNCH;
    if (strcmp(s, "alloc") == 0) return M_ALLOC;
    if (strcmp(s, "tp") == 0) return M_TP;
    if (strcmp(s, "copy") == 0) return M_COPY;
    fprintf(stderr, "bench_launch: unknown mode %s (launch|alloc|copy|tp)\n", s);
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_launch launch|alloc|copy|tp EVENTS [THREADS] [WARMUP]\n");
        return 2;
    }
    mode = parse_mode(argv[1]);
    long events = atol(argv[2]);
    int nth = argc > 3 ? atoi(argv[3]) : 1;
    long warmup = argc > 4 ? atol(argv[4]) : 100000;
    if (events < 1 || nth < 1 || nth > 64 || warmup < 0) return 2;
    CUdevice dev;
    CUmodule mod;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    /* No duration in the module: kernels last GTSIM_KERNEL_NS, which the runner sets small. */
    CHECK(cuModuleLoadData(&mod, "kernel bench_kernel\n"));
    CHECK(cuModuleGetFunction(&fn, mod, "bench_kernel"));

    struct worker w[64];
    memset(w, 0, sizeof(w));
    for (int i = 0; i < nth; i++) {
        CHECK(cuStreamCreate(&w[i].stream, CU_STREAM_NON_BLOCKING));
        w[i].n = events / nth + (i < events % nth);
    }
    /* Warm-up on the main thread: page in the code paths, fill the simulated driver's activity
     * ring once (without a CUPTI client nobody drains it: it stays full and later work is only
     * counted as dropped, at the same cost in every variant). */
    run_loop(&w[0], warmup);
    CHECK(cuCtxSynchronize());
    /* Then 250 ms idle (every variant): the tracer's clock reads clock_gettime until its flusher
     * has measured the counter's rate over 50 ms (first anchor round after that, 100 ms rounds),
     * and the timed loop is to pay the counter reads it has from then on. */
    struct timespec calib = {0, 250 * 1000 * 1000};
    nanosleep(&calib, NULL);

    pthread_barrier_init(&start_line, NULL, (unsigned)nth + 1);
    for (int i = 0; i < nth; i++)
        pthread_create(&w[i].th, NULL, worker_main, &w[i]);
    uint64_t f0 = flusher_cpu_ns();
    pthread_barrier_wait(&start_line);
    for (int i = 0; i < nth; i++)
        pthread_join(w[i].th, NULL);
    CHECK(cuCtxSynchronize());
    struct timespec settle = {0, 20 * 1000 * 1000};
    nanosleep(&settle, NULL);
    uint64_t f1 = flusher_cpu_ns();

    /* Wall time: first thread's start to last thread's end. */
    uint64_t first = UINT64_MAX, last = 0;
    double thr = 0, cpu = 0;
    for (int i = 0; i < nth; i++) {
        if (w[i].t0 < first) first = w[i].t0;
        if (w[i].t1 > last) last = w[i].t1;
        thr += (double)(w[i].t1 - w[i].t0) / (double)w[i].n;
        cpu += (double)w[i].cpu_ns / (double)w[i].n;
    }
    uint64_t wall = last - first;
    printf("mode=%s threads=%d events=%ld wall_ns=%llu ns_per_op=%.1f thr_ns_per_op=%.1f "
           "cpu_ns_per_op=%.1f ops_per_s=%.0f flush_cpu_ns_per_op=%.1f\n",
           argv[1], nth, events, (unsigned long long)wall, (double)wall / (double)events, thr / nth,
           cpu / nth, (double)events * 1e9 / (double)wall,
           (double)(f1 > f0 ? f1 - f0 : 0) / (double)events);
    return 0;
}
