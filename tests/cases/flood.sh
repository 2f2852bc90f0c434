# Bounded memory under a flood (issue 8): the program makes events faster than the disk takes
# them, and the traced process's memory must not grow with the backlog. The "disk" is a small
# library preloaded before the shim whose write(2)/writev(2) to the trace sleep bytes/rate
# (64 MB/s; unthrottled, the big run makes its events in well under a second of CPU time, several
# times faster than this disk takes their trace). The shim keeps a bounded number of 256 KiB
# buffers per thread and in all (runtime.c); when they are full a thread waits for the disk, so
# the program slows down, memory stays bounded and nothing is dropped (drops would be counted in
# lost_records; there must be none).
# Two runs, 8 threads x 25,000 and x 100,000 rounds of alloc, launch, free (sanitizer builds:
# x 5,000 and x 20,000, counts only). Asserted: every byte of each trace went through the slow
# writes; every event is in the report (exact counts, lost 0, clean end); peak RSS over the
# start-up baseline stays under 64 MiB and grows by less than 4 MiB from the small to the big run
# (4x the events). 64 MiB: the untraced program alone grows by ~10 MB with its 8 threads; the
# shim adds its buffers and a compressor.
# The GPU timeline is off: the simulated CUPTI's staging queue is not bounded the way a real
# CUPTI's buffers are, so it would measure the simulator.
# test: alone (a rate-limited disk and a bounded backlog: cases beside it would change the rates)
. "$SRC/tests/lib.sh"
CC=${CC:-cc}
command -v "$CC" > /dev/null 2>&1 || skip "no C compiler ($CC) to build the slow-disk library"
cat > throttle.c <<'EOF'
/* A disk that takes trace bytes at FLOOD_RATE bytes/s: write(2)/writev(2) to a file whose name
 * holds ".trace" sleep bytes/rate after the real call; each such call appends its byte count
 * to FLOOD_LOG (one line each). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);

static int is_trace(int fd)
{
    char link[64], path[4096];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    if (n <= 0) return 0;
    path[n] = 0;
    return strstr(path, ".trace") != NULL;
}

static void took(ssize_t n)
{
    static int log = -1;
    const char *rate = getenv("FLOOD_RATE"), *path = getenv("FLOOD_LOG");
    double r = rate ? atof(rate) : 0;
    char line[32];
    if (r > 0) {
        double s = (double)n / r;
        struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
        while (nanosleep(&ts, &ts) != 0) {}
    }
    if (log < 0 && path) log = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    int k = snprintf(line, sizeof(line), "%zd\n", n);
    if (log >= 0) real_write(log, line, (size_t)k);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    if (!real_write) real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    ssize_t r = real_write(fd, buf, n);
    if (r > 0 && is_trace(fd)) took(r);
    return r;
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    if (!real_writev)
        real_writev = (ssize_t (*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
    if (!real_write) real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    ssize_t r = real_writev(fd, iov, cnt);
    if (r > 0 && is_trace(fd)) took(r);
    return r;
}
EOF
"$CC" -shared -fPIC -O2 -o throttle.so throttle.c -ldl || fail "cannot build throttle.so"
pre=$(echo "$GT_PRELOAD" | sed "s|$GT_LIB|$PWD/throttle.so $GT_LIB|")
threads=8
small=25000 big=100000
if [ -n "$asan_rt$tsan_rt" ]; then small=5000 big=20000; fi # counts only: sanitizers are slow
growth_of() { sed -n 's/^rss_baseline_kb=\([0-9]*\) rss_peak_kb=\([0-9]*\)$/\2 - \1/p' "$1"; }
for iters in $small $big; do
    total=$((threads * iters + 1))
    want="flood: $total allocations, $total frees, $total launches"
    got=$(LD_LIBRARY_PATH="$SIMCUPTI_DIR:$SIM_DIR" GPUTRACE_OUTPUT="$PWD/f$iters.trace" \
        GPUTRACE_CUPTI=off GPUTRACE_FLUSH_MS=10 FLOOD_RATE=64e6 FLOOD_LOG="$PWD/w$iters.log" \
        LD_PRELOAD="$pre" "$PROGS/flood" $threads $iters 2> "f$iters.err") || fail "program failed"
    expect_eq "$iters: program output" "$got" "$want"
    size=$(wc -c < "f$iters.trace")
    expect_eq "$iters: bytes through the slow disk" "$(awk '{s += $1} END {print s}' "w$iters.log")" "$size"
    "$GT_REPORT" --json "f$iters.trace" > "f$iters.json" || fail "report failed"
    j() { jget "f$iters.json" "$1"; }
    expect_eq "$iters: alloc_count" "$(j "d['memory']['alloc_count']")" $total
    expect_eq "$iters: free_count" "$(j "d['memory']['free_count']")" $total
    expect_eq "$iters: launch_count" "$(j "d['timeline']['launch_count']")" $total
    expect_eq "$iters: lost_records" "$(j "d['trace']['lost_records']")" 0
    expect_eq "$iters: clean_end" "$(j "d['trace']['clean_end']")" True
    g=$(($(growth_of "f$iters.err")))
    if [ $iters = $small ]; then g_small=$g size_small=$size; else g_big=$g size_big=$size; fi
    echo "$threads x $iters rounds: $size bytes of trace, $total allocations/frees/launches, 0 lost, RSS +$g KiB"
done
if [ -n "$asan_rt$tsan_rt" ]; then
    echo "sanitizer build: RSS bounds not checked (shadow memory and quarantine)"
    exit 0
fi
[ "$g_big" -lt $((64 * 1024)) ] || fail "peak RSS grew by $g_big KiB (limit 64 MiB)"
[ $((g_big - g_small)) -lt $((4 * 1024)) ] ||
    fail "RSS grows with the backlog: +$g_small KiB for $size_small bytes, +$g_big KiB for $size_big"
echo "memory bounded: +$g_small KiB and +$g_big KiB for $size_small and $size_big bytes"
