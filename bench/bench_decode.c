/* bench_decode TRACE: the analyzer's decode pass alone: gputrace-report's streaming reader
 * (chunk framing, CRC-32 of every chunk, record checks, watermark re-ordering of host records)
 * handing every record to a sink that only counts. Prints "bytes=B records=R ns=T cpu_ns=C":
 * wall time, and the process's CPU time (what an idle core would take: the shared machine's load
 * stretches wall time). */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "input/reader.h"

static void count(void *ctx, const struct ga_event *ev)
{
    uint64_t *n = ctx;
    *n += ev->size;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_decode TRACE\n");
        return 2;
    }
    struct ga_read_stats st;
    uint64_t seen = 0;
    struct timespec a, b, ca, cb;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (ga_read_trace(argv[1], count, &seen, &st) != 0) {
        fprintf(stderr, "bench_decode: %s: %s\n", argv[1], st.error);
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
    uint64_t ns = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)(b.tv_nsec - a.tv_nsec);
    uint64_t cpu =
        (uint64_t)(cb.tv_sec - ca.tv_sec) * 1000000000u + (uint64_t)(cb.tv_nsec - ca.tv_nsec);
    printf("bytes=%llu records=%llu record_bytes=%llu ns=%llu cpu_ns=%llu\n",
           (unsigned long long)st.valid_bytes, (unsigned long long)st.records,
           (unsigned long long)seen, (unsigned long long)ns, (unsigned long long)cpu);
    return st.truncated ? 1 : 0;
}
