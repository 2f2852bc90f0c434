"""Host stack samples of `idle syncload` (issue 20 part 2), from `gputrace-report --dump`: the
three 30 ms sleeps in load_batch (usleep) are sampled off CPU with usleep on their stack, and the
samples' weights cover the run. Usage: hostsample_check.py DUMP HZ"""
import sys

from sampledump import Dump

dump, hz = sys.argv[1], int(sys.argv[2])
d = Dump(dump)
names = d.names
# (ts, interval, cpu, stack, flags, tid), as the checks below index them
samples = [(s.ts, s.interval, s.cpu, s.stack, s.flags, s.tid) for s in d.samples]


bad = []
if hz == 0:
    if samples:
        bad.append("GPUTRACE_SAMPLE_HZ=0 yet %d samples" % len(samples))
else:
    if not samples:
        bad.append("no HOST_SAMPLE record")
    asleep = [s for s in samples if "usleep" in names(s[3])]
    off = sum(s[1] for s in asleep if "off_cpu" in s[4])
    on = [s for s in asleep if "on_cpu" in s[4]]
    # 3 sleeps of 30 ms: at least 2/3 of that sampled off CPU inside usleep
    if off < 60e6:
        bad.append("off-CPU weight in usleep %.1f ms, want >= 60 ms" % (off / 1e6))
    if len(on) > len(asleep) // 4:
        bad.append("%d of %d usleep samples on CPU" % (len(on), len(asleep)))
    # A sample off CPU in usleep spent at most half its interval on CPU, except the first one of
    # each sleep: its interval began before the sleep did (a late sampler on a loaded machine
    # makes that interval long: 5.3 ms with 3.4 ms on CPU in one CI run), and the time on CPU is
    # the run-up to the sleep. Samples of later instants in the same sleep cannot have run.
    sleeping = lambda s: "off_cpu" in s[4] and "usleep" in names(s[3])
    before = {}  # thread -> its previous sample
    for s in samples:
        prev, before[s[5]] = before.get(s[5]), s
        if not sleeping(s) or s[2] <= s[1] // 2:
            continue
        if prev and sleeping(prev):
            bad.append("off-CPU sample inside a sleep with cpu_ns %d over interval %d"
                       % (s[2], s[1]))
    ts = [s[0] for s in samples]
    if ts != sorted(ts):
        bad.append("samples out of order")
    print("samples %d, in usleep %d, off-CPU weight there %.1f ms" % (len(samples), len(asleep),
                                                                      off / 1e6))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
