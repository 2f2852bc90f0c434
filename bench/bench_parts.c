/* bench_parts: the unit costs that gputrace's hot path is made of, on this machine, to explain
 * the launch figures: one clock_gettime(CLOCK_MONOTONIC) (the shim's clock before its counter
 * clock is anchored, or with GPUTRACE_CLOCK=monotonic), one read of the CPU's counter (rdtsc on
 * x86-64: the shim's clock otherwise, read twice per launch), one sequentially consistent atomic
 * store (gt_enter's in-flight mark), and zlib's crc32 (every chunk is checksummed, by the flusher
 * thread unless it falls behind). Prints key=value pairs. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zlib.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static _Atomic uint64_t mark;

int main(void)
{
    enum { CLOCKS = 5000000, STORES = 20000000, CRC_BYTES = 256u << 10, CRC_ROUNDS = 2000 };
    struct timespec ts;
    uint64_t t0 = now_ns();
    for (int i = 0; i < CLOCKS; i++)
        clock_gettime(CLOCK_MONOTONIC, &ts);
    double clock_ns = (double)(now_ns() - t0) / CLOCKS;

    double tsc_ns = 0;
#if defined(__x86_64__)
    uint64_t acc = 0;
    t0 = now_ns();
    for (int i = 0; i < CLOCKS; i++)
        acc += __rdtsc();
    tsc_ns = (double)(now_ns() - t0) / CLOCKS;
    if (acc == 1) puts(""); /* keeps the reads */
#endif

    t0 = now_ns();
    for (int i = 0; i < STORES; i++)
        atomic_store_explicit(&mark, (uint64_t)i, memory_order_seq_cst);
    double store_ns = (double)(now_ns() - t0) / STORES;

    unsigned char *buf = malloc(CRC_BYTES);
    if (!buf) return 1;
    for (unsigned i = 0; i < CRC_BYTES; i++)
        buf[i] = (unsigned char)(i * 131u);
    uLong crc = 0;
    t0 = now_ns();
    for (int i = 0; i < CRC_ROUNDS; i++)
        crc = crc32(crc, buf, CRC_BYTES);
    double crc_gbps = (double)CRC_BYTES * CRC_ROUNDS / (double)(now_ns() - t0);
    printf("clock_ns=%.1f tsc_ns=%.1f seqcst_store_ns=%.1f crc32_gbps=%.2f crc32_ns_per_80b=%.1f "
           "crc=%lu\n",
           clock_ns, tsc_ns, store_ns, crc_gbps, 80.0 / crc_gbps, (unsigned long)crc);
    free(buf);
    return 0;
}
