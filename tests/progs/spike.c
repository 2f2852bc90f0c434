/* A 1-us spike and a 1-us dip of live device memory inside a long, flat run (tests/cases/
 * html_series.sh): 100 MiB live (a 90 MiB and a 10 MiB allocation) for 0.2 s; then a 400 MiB
 * allocation freed at once (the spike: 500 MiB for about a microsecond, the peak), the 90 MiB
 * freed and allocated again at once (the dip: 10 MiB); 0.2 s flat again, then everything freed.
 * The same calls run once at the start with a 1 MiB spike, so that the traced spike and dip
 * take only the calls' own time (a few microseconds under the shim), not the first unwinding.
 * At the HTML chart's resolution (about 0.5 ms per column) both fall inside one column. */
#include <time.h>

#include <cuda.h>

#include "check.h"

#define MiB (1ull << 20)

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static CUdeviceptr big, small;

/* The spike (an allocation of `bytes` freed at once) and the dip (the 90 MiB freed and
 * allocated again at once). */
static void spike_and_dip(size_t bytes)
{
    CUdeviceptr spike;
    CHECK(cuMemAlloc(&spike, bytes));
    CHECK(cuMemFree(spike));
    CHECK(cuMemFree(big));
    CHECK(cuMemAlloc(&big, 90 * MiB));
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    open_primary(&dev, &ctx);
    CHECK(cuMemAlloc(&big, 90 * MiB));
    CHECK(cuMemAlloc(&small, 10 * MiB));
    spike_and_dip(1 * MiB); /* the tracer meets these call stacks here, not in the spike */
    sleep_ms(200);
    spike_and_dip(400 * MiB);
    sleep_ms(200);
    CHECK(cuMemFree(big));
    CHECK(cuMemFree(small));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    return 0;
}
