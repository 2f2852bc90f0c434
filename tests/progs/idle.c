/* idle MODE: GPU idle gaps of known causes on the simulated driver (tests/cases/idle_*.sh).
 *   host   4 kernels of 1 ms on one stream, the host sleeping 4 ms after each launch but the last:
 *          3 gaps, host busy (>= 3 ms each: the next launch comes >= 4 ms after the previous one,
 *          whose kernel ends 1 ms after its start)
 *   sync   4 kernels of 20 ms, each followed by cuStreamSynchronize: 3 sync bubbles (>= the
 *          simulated launch latency, 2 us, each; 20 ms so that the thread is surely inside the
 *          synchronize when the kernel ends, even when an overloaded machine delays it; the
 *          case runs it with GTSIM_SYNC_WAKE_NS=10000000: the synchronize phase is >= 10 ms)
 *   alloc  4 kernels of 200 us with a cuMemAlloc between them; run with
 *          GTSIM_ALLOC_LATENCY_NS=10000000: 3 gaps caused by allocation (>= 9.8 ms each: the
 *          allocation starts after the launch and takes 10 ms, the kernel 200 us)
 *   event  (GTSIM_DEVICES=2) device 1 runs a 40 ms kernel and records an event; device 0 runs a
 *          20 ms kernel, then its stream waits for the event and a 100 us kernel follows, queued
 *          before device 0 went idle: one dependency gap on device 0 (< 20 ms), none on device 1
 *   syncload  4 kernels of 1 ms, each followed by cuStreamSynchronize and 30 ms in load_batch
 *          (sleeping, as on a queue or a file): 3 gaps whose sync returned a few microseconds into
 *          them, host busy for all but those microseconds and the launch latency
 *   cpuload   as syncload, but 30 ms of computation on the CPU in compute_features
 *   queue  as syncload, but the batch comes from a loader thread through a one-slot queue
 *          (queue_get waits on a condition variable; the loader takes 30 ms per batch)
 *   copyload  as syncload, but each step starts with cuMemcpyHtoDAsync (the batch copied in)
 *          before its kernel: 3 gaps ended by the copy, host busy for the 30 ms of load_batch,
 *          at the copy's call in copy_then_load
 *   setload   as copyload with cuMemsetD8Async instead of the copy
 *   tiny   a warm-up kernel and a synchronize, then 200 kernels of 100 ns launched back to back:
 *          gaps as long as the host takes between launches, launch latency when under 10 us
 * Every mode first allocates and frees once: the tracer's first host stack (unwinder set-up)
 * costs far more than later ones, and must not fall inside a gap the mode constructs. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "check.h"

static const char module_text[] = "kernel k_work 1000000\n"
                                  "kernel k_short 200000\n"
                                  "kernel k_first 20000000\n"
                                  "kernel k_long 40000000\n"
                                  "kernel k_after 100000\n"
                                  "kernel k_tiny 100\n"
                                  "kernel k_sync 20000000\n";

struct dev {
    CUcontext ctx;
    CUmodule mod;
    CUstream s;
};

static void open_dev(struct dev *d, int ordinal)
{
    CUdevice dev;
    CHECK(cuDeviceGet(&dev, ordinal));
    CHECK(cuDevicePrimaryCtxRetain(&d->ctx, dev));
    CHECK(cuCtxSetCurrent(d->ctx));
    CHECK(cuStreamCreate(&d->s, CU_STREAM_NON_BLOCKING));
    CHECK(cuModuleLoadData(&d->mod, module_text));
}

static CUfunction fn(const struct dev *d, const char *name)
{
    CUfunction f;
    CHECK(cuModuleGetFunction(&f, d->mod, name));
    return f;
}

static void launch(CUfunction f, CUstream s)
{
    CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
}

static void host_busy(const struct dev *d)
{
    CUfunction k = fn(d, "k_work");
    for (int i = 0; i < 3; i++) {
        launch(k, d->s);
        usleep(4000); /* host computation: the GPU runs dry */
    }
    launch(k, d->s);
    CHECK(cuStreamSynchronize(d->s));
}

static void sync_bubble(const struct dev *d)
{
    CUfunction k = fn(d, "k_sync");
    for (int i = 0; i < 4; i++) {
        launch(k, d->s);
        CHECK(cuStreamSynchronize(d->s)); /* waits for the GPU to drain, then launches again */
    }
}

/* The next batch: the host's time, not the synchronize's. noinline: the name stays in stacks. */
static __attribute__((noinline)) void load_batch(void)
{
    usleep(30000);
    __asm__ volatile("" ::: "memory"); /* no tail call: load_batch's frame stays on the stack */
}

static void sync_then_load(const struct dev *d)
{
    CUfunction k = fn(d, "k_work");
    for (int i = 0; i < 4; i++) {
        launch(k, d->s);
        CHECK(cuStreamSynchronize(d->s));
        if (i < 3) load_batch();
    }
}

/* Each step's first GPU work is an async copy (or memset): it, not the kernel, ends the gap. */
static void copy_then_load(const struct dev *d, int set)
{
    static char batch[1 << 16];
    CUfunction k = fn(d, "k_work");
    CUdeviceptr buf;
    CHECK(cuMemAlloc(&buf, sizeof(batch)));
    for (int i = 0; i < 4; i++) {
        if (set)
            CHECK(cuMemsetD8Async(buf, 0, sizeof(batch), d->s));
        else
            CHECK(cuMemcpyHtoDAsync(buf, batch, sizeof(batch), d->s));
        launch(k, d->s);
        CHECK(cuStreamSynchronize(d->s));
        if (i < 3) load_batch();
    }
    CHECK(cuMemFree(buf));
}

/* 30 ms of computation on the CPU (thread CPU time), as a Python loop between launches. */
static __attribute__((noinline)) void compute_features(void)
{
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    volatile uint64_t x = 1;
    do {
        for (int i = 0; i < 10000; i++)
            x = x * 6364136223846793005u + 1442695040888963407u;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 30000000L);
}

static void cpu_then_launch(const struct dev *d)
{
    CUfunction k = fn(d, "k_work");
    for (int i = 0; i < 4; i++) {
        launch(k, d->s);
        CHECK(cuStreamSynchronize(d->s));
        if (i < 3) compute_features();
    }
}

/* A data-loading worker thread hands batches over a one-slot queue; each takes it 30 ms. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready, stop;
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

static void *loader_main(void *arg)
{
    (void)arg;
    for (;;) {
        usleep(30000); /* reading and decoding the next batch */
        pthread_mutex_lock(&q.mu);
        while (q.ready && !q.stop)
            pthread_cond_wait(&q.cv, &q.mu);
        if (q.stop) {
            pthread_mutex_unlock(&q.mu);
            return NULL;
        }
        q.ready = 1;
        pthread_cond_broadcast(&q.cv);
        pthread_mutex_unlock(&q.mu);
    }
}

static __attribute__((noinline)) void queue_get(void)
{
    pthread_mutex_lock(&q.mu);
    while (!q.ready)
        pthread_cond_wait(&q.cv, &q.mu);
    q.ready = 0;
    pthread_cond_broadcast(&q.cv);
    pthread_mutex_unlock(&q.mu);
    __asm__ volatile("" ::: "memory");
}

static void queue_loop(const struct dev *d)
{
    pthread_t w;
    CUfunction k = fn(d, "k_work");
    if (pthread_create(&w, NULL, loader_main, NULL) != 0) exit(3);
    for (int i = 0; i < 4; i++) {
        launch(k, d->s);
        CHECK(cuStreamSynchronize(d->s));
        if (i < 3) queue_get();
    }
    pthread_mutex_lock(&q.mu);
    q.stop = 1;
    pthread_cond_broadcast(&q.cv);
    pthread_mutex_unlock(&q.mu);
    pthread_join(w, NULL);
}

static void alloc_stall(const struct dev *d)
{
    CUfunction k = fn(d, "k_short");
    CUdeviceptr p[3];
    for (int i = 0; i < 3; i++) {
        launch(k, d->s);
        CHECK(cuMemAlloc(&p[i], 1 << 20)); /* slow: GTSIM_ALLOC_LATENCY_NS */
    }
    launch(k, d->s);
    CHECK(cuStreamSynchronize(d->s));
    for (int i = 0; i < 3; i++)
        CHECK(cuMemFree(p[i]));
}

static void event_wait(struct dev *d0)
{
    struct dev d1;
    CUevent e;
    open_dev(&d1, 1);
    CHECK(cuEventCreate(&e, 0));
    launch(fn(&d1, "k_long"), d1.s);
    CHECK(cuEventRecord(e, d1.s));
    CHECK(cuCtxSetCurrent(d0->ctx));
    launch(fn(d0, "k_first"), d0->s);
    CHECK(cuStreamWaitEvent(d0->s, e, 0)); /* device 0's stream waits for device 1's kernel */
    launch(fn(d0, "k_after"), d0->s);
    CHECK(cuStreamSynchronize(d0->s));
    CHECK(cuCtxSetCurrent(d1.ctx));
    CHECK(cuStreamSynchronize(d1.s));
}

static void tiny(const struct dev *d)
{
    CUfunction k = fn(d, "k_tiny");
    launch(k, d->s);
    CHECK(cuStreamSynchronize(d->s));
    for (int i = 0; i < 200; i++)
        launch(k, d->s);
    CHECK(cuStreamSynchronize(d->s));
}

int main(int argc, char **argv)
{
    struct dev d;
    const char *mode = argc > 1 ? argv[1] : "";
    CHECK(cuInit(0));
    open_dev(&d, 0);
    CUdeviceptr warm;
    CHECK(cuMemAlloc(&warm, 4096));
    CHECK(cuMemFree(warm));
    if (strcmp(mode, "host") == 0)
        host_busy(&d);
    else if (strcmp(mode, "sync") == 0)
        sync_bubble(&d);
    else if (strcmp(mode, "syncload") == 0)
        sync_then_load(&d);
    else if (strcmp(mode, "alloc") == 0)
        alloc_stall(&d);
    else if (strcmp(mode, "cpuload") == 0)
        cpu_then_launch(&d);
    else if (strcmp(mode, "queue") == 0)
        queue_loop(&d);
    else if (strcmp(mode, "event") == 0)
        event_wait(&d);
    else if (strcmp(mode, "copyload") == 0 || strcmp(mode, "setload") == 0)
        copy_then_load(&d, mode[0] == 's');
    else if (strcmp(mode, "tiny") == 0)
        tiny(&d);
    else {
        fprintf(stderr, "usage: idle host|sync|syncload|cpuload|copyload|setload|queue|alloc|event|tiny\n");
        return 2;
    }
    printf("idle %s ok\n", mode);
    return 0;
}
