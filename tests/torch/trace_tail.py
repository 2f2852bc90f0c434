"""Which of PyTorch's allocator events the bridge writes next (gputrace_torch._new_events), checked on
the events of the real caching allocator (tests/cases/torch_trace_tail.sh).

PyTorch lists its events (device_traces) anew in every snapshot, and converts their clock readings
to microseconds anew each time (c10's ApproximateClockToUnixTimeConverter measures the counter's
rate against CLOCK_REALTIME again): the same event can come back with another time_us. A CI run
saw one move by 1 us between two snapshots; the bridge, which looked for its last events with
their times, took the events it had already written for lost (a gap), and that batch was not
replayed (torch_replay_churn failed). Here the times are moved as rounding and NTP's slewing move
them and the bridge must still find where it stopped; a clock step, a ring buffer wrapped past its
last events, a cleared history and a repeat of its last events beyond the bound must read as gaps.

Usage: trace_tail.py SRC_DIR (on the simulated stack: tests/simrt/run-torch)."""
import sys
import time

import torch

sys.path.insert(0, sys.argv[1] + "/python")
import gputrace_torch as g  # noqa: E402

checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        print("trace_tail: FAIL:", what)
        sys.exit(1)


class S:  # the bridge's state, as far as _new_events reads it
    def __init__(self):
        self.trace_tail, self.trace_len = {}, {}


def wrote(s, events):
    """The bridge's bookkeeping after writing a snapshot with these events (as _trace_recs)."""
    g._trace_written(s, 0, events)


def moved(events, offset_us):
    """The events as a later snapshot may list them: every time offset_us later."""
    return [dict(e, time_us=e["time_us"] + offset_us) for e in events]


def keys(events):
    return [g._trace_key(e)[1:] for e in events]


torch.cuda.memory._record_memory_history(enabled="all", context="alloc", stacks="python",
                                         max_entries=100000)
live = []
for i in range(40):
    live.append(torch.empty((i % 7 + 1) * 100_000, dtype=torch.uint8, device="cuda"))
    if i % 3 == 2:
        del live[0]
first = torch.cuda.memory._snapshot()["device_traces"][0]
time.sleep(0.2)  # the next events come 200 ms later: the slewing bound is 200 us
for i in range(40):  # the same sizes again
    live.append(torch.empty((i % 7 + 1) * 100_000, dtype=torch.uint8, device="cuda"))
    if i % 3 == 2:
        del live[0]
second = torch.cuda.memory._snapshot()["device_traces"][0]
n1 = len(first)
check(n1 > 3 * g.TRACE_TAIL, "the first snapshot lists %d events" % n1)
check(keys(second[:n1]) == keys(first),
      "PyTorch appends to its event list (no wrap at %d events)" % len(second))
new_real = second[n1:]
check(len(new_real) > g.TRACE_TAIL, "%d events after the first snapshot" % len(new_real))
tail_us = first[-1]["time_us"]
since = second[-1]["time_us"] - tail_us
check(since >= 200_000, "%d us from the tail to the last event" % since)


def found(events, what, want=None):
    want = new_real if want is None else want
    new, gap = g._new_events(s, 0, events)
    check(not gap and keys(new) == keys(want),
          "%s: %d new events, gap %s (want %d, no gap)" % (what, len(new), gap, len(want)))


def lost(events, what):
    new, gap = g._new_events(s, 0, events)
    check(gap and new == events, "%s: %d new events, gap %s (want a gap)" % (what, len(new), gap))


def exact_rule(tail, events):  # the rule before: the tail found again with the same times
    n = len(tail)
    return any(tuple(g._trace_key(e) for e in events[i:i + n]) == tail
               for i in range(len(events) - n + 1))


s = S()
wrote(s, first)
# 1. as PyTorch listed them
found(second, "as listed")
# 2. moved by rounding (1 us, as in the CI run), which the rule before took for a gap
one_us = moved(second, 1)
for j in range(n1 - g.TRACE_TAIL, n1):  # (1 us from the times written, whatever PyTorch lists now)
    one_us[j]["time_us"] = first[j]["time_us"] + 1
check(not exact_rule(s.trace_tail[0], one_us), "the rule before finds a 1 us move")
found(one_us, "every time 1 us later")
# 3. moved by NTP slewing the clock meanwhile: at most 500 ppm of the time since, for an event as
#    old as the process (the converter's scale is the rate since the allocator began)
slew = since * 500 // 1_000_000
check(slew > g.TRACE_ROUND_US, "the slew (%d us) moves the tail past rounding" % slew)
found(moved(second, slew), "every time %d us later (500 ppm)" % slew)
found(moved(second, -slew), "every time %d us earlier (500 ppm)" % slew)
# 4. a clock step (settimeofday) moves them past any bound: a gap, no events lost
lost(moved(second, 1_000_000), "every time 1 s later")
# 5. the ring wrapped (the oldest events dropped from the front), times rounded 1 us off
for dropped in (5, n1 - g.TRACE_TAIL):
    found(moved(second[dropped:], 1), "wrapped by %d events" % dropped)
# 6. wrapped past the tail: those events are gone
lost(second[n1 + 1:], "wrapped past the tail")
# 7. the history cleared and begun again (a program calling _record_memory_history itself)
lost(new_real, "cleared")
# 8. the tail's window of blocks made again (a loop): later, the nearest match is the tail...
again = [dict(e, time_us=e["time_us"] + since + 20_000) for e in first[-g.TRACE_TAIL:]]
found(second[3:] + again, "wrapped, the tail's window again 20 ms after the last event",
      new_real + again)
s.trace_len[0] = 0  # (without the length hint)
found(moved(second, 1), "without the length hint")
s.trace_len[0] = n1 + 2
found(moved(second, 1), "with a wrong length hint")
wrote(s, first)
# ...and with the tail gone, a repeat just past the bound (rounding + TRACE_SLEW_PPM of the time
# since) is not taken
bound = g.TRACE_ROUND_US + since * g.TRACE_SLEW_PPM // 1_000_000
soon = [dict(e, time_us=e["time_us"] + bound + 50) for e in first[-g.TRACE_TAIL:]]
lost(soon + new_real, "the tail gone, its window again %d us later" % (bound + 50))

print("trace_tail: ok, %d checks (%d events, %d new, %d us apart)"
      % (checks, len(second), len(new_real), since))
