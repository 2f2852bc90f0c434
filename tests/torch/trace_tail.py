"""Which of PyTorch's allocator events the bridge writes next (gputrace_torch._new_events), checked on
the events of the real caching allocator (tests/cases/torch_trace_tail.sh).

PyTorch lists its events (device_traces) anew in every snapshot, and converts their clock readings
to microseconds anew each time (c10's ApproximateClockToUnixTimeConverter measures its scale again,
against CLOCK_REALTIME): the same event can come back with another time_us. A CI run saw it move
by 1 us between two snapshots, and the bridge took the events it had already written for lost
(a gap), so that batch was not replayed. The times are moved here the way that conversion moves
them (in proportion to the event's age), by more than that one microsecond, and the bridge must
still find where it stopped; a ring buffer that wrapped, a history cleared and events too far off
must still read as a gap or be found by the nearest match.

Usage: trace_tail.py SRC_DIR (on the simulated stack: tests/simrt/run-torch)."""
import sys

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
    s.trace_tail[0] = tuple(g._trace_key(e) for e in events[-g.TRACE_TAIL:])
    s.trace_len[0] = len(events)


def moved(events, scale_ppm, offset_us=0):
    """The events as a later snapshot lists them: converted again with a scale off by scale_ppm
    (an event's time moves in proportion to its age since the first) and shifted by offset_us."""
    t0 = events[0]["time_us"]
    return [dict(e, time_us=e["time_us"] + offset_us +
                 round((e["time_us"] - t0) * scale_ppm / 1e6)) for e in events]


torch.cuda.memory._record_memory_history(enabled="all", context="alloc", stacks="python",
                                         max_entries=100000)
live = []
for i in range(40):
    live.append(torch.empty((i % 7 + 1) * 100_000, dtype=torch.uint8, device="cuda"))
    if i % 3 == 2:
        del live[0]
first = torch.cuda.memory._snapshot()["device_traces"][0]
for i in range(40):  # the same pattern again: windows of events that repeat but for their times
    live.append(torch.empty((i % 7 + 1) * 100_000, dtype=torch.uint8, device="cuda"))
    if i % 3 == 2:
        del live[0]
second = torch.cuda.memory._snapshot()["device_traces"][0]
n1 = len(first)
check(n1 > 3 * g.TRACE_TAIL, "the first snapshot lists %d events" % n1)
check([g._trace_key(e) for e in second[:n1]] == [g._trace_key(e) for e in first],
      "PyTorch appends to its event list (no wrap at %d events)" % len(second))
new_real = second[n1:]
check(len(new_real) > g.TRACE_TAIL, "%d events after the first snapshot" % len(new_real))

# 1. as PyTorch listed them: the events after the first snapshot's, no gap
s = S()
wrote(s, first)
new, gap = g._new_events(s, 0, second)
check(not gap and new == new_real, "unmoved times: %d new events, gap %s" % (len(new), gap))

# 2. times moved by the conversion (1 us as seen in CI, and 200 us, 50 ms): the same events
span = second[-1]["time_us"] - second[0]["time_us"]
for us in (1, 200, 50_000):
    later = moved(second, us * 1e6 / max(span, 1))
    new, gap = g._new_events(s, 0, later)
    check(not gap and [e["addr"] for e in new] == [e["addr"] for e in new_real] and
          len(new) == len(new_real), "times moved by up to %d us: %d new events, gap %s (want %d)"
          % (us, len(new), gap, len(new_real)))
# a clock step (NTP) moves them all alike, by a second
new, gap = g._new_events(s, 0, moved(second, 0, 1_000_000))
check(not gap and len(new) == len(new_real), "all times moved by 1 s: gap %s" % gap)
# the rule before (the tail found again with the same times) takes a 1 us move for a gap


def exact_rule(tail, events):
    n = len(tail)
    return not any(tuple(g._trace_key(e) for e in events[i:i + n]) == tail
                   for i in range(len(events) - n + 1))


one_us = moved(second, 0, 1)
check(exact_rule(s.trace_tail[0], one_us), "the exact-time rule finds a 1 us move")
new, gap = g._new_events(s, 0, one_us)
check(not gap and len(new) == len(new_real), "all times moved by 1 us: gap %s" % gap)

# 3. the ring wrapped: the oldest events dropped from the front, the tail found further left
for dropped in (5, n1 - g.TRACE_TAIL):
    later = moved(second[dropped:], 3.0)
    new, gap = g._new_events(s, 0, later)
    check(not gap and len(new) == len(new_real),
          "wrapped by %d events: %d new events, gap %s" % (dropped, len(new), gap))

# 4. wrapped past the tail: those events are gone, a gap (every event listed is written)
later = second[n1 + 1:]
new, gap = g._new_events(s, 0, later)
check(gap and new == later, "wrapped past the tail: gap %s" % gap)

# 5. the history cleared and begun again (a program calling _record_memory_history itself)
new, gap = g._new_events(s, 0, new_real)
check(gap and new == new_real, "cleared history: gap %s" % gap)

# 6. times beyond TRACE_SHIFT_US: not taken for the same events
new, gap = g._new_events(s, 0, moved(second, 0, g.TRACE_SHIFT_US + 1))
check(gap, "times moved by more than TRACE_SHIFT_US: gap %s" % gap)

# 7. a wrapped list where the tail's window of (action, address, size) comes again later (a loop
#    making and freeing the same blocks): the match nearest in time, not the last one
again = [dict(e, time_us=e["time_us"] + 20_000 + (second[-1]["time_us"] - first[-1]["time_us"]))
         for e in first[-g.TRACE_TAIL:]]
later = moved(second[3:] + again, 2.0)
new, gap = g._new_events(s, 0, later)
check(not gap and len(new) == len(new_real) + len(again),
      "wrapped, the tail's window again 20 ms after the last event: %d new events (want %d)"
      % (len(new), len(new_real) + len(again)))
# and the hint (the last list's length) does not decide where it does not match
s.trace_len[0] = 0
new, gap = g._new_events(s, 0, moved(second, 2.0))
check(not gap and len(new) == len(new_real), "without the length hint: %d new events" % len(new))
s.trace_len[0] = n1 + 2
new, gap = g._new_events(s, 0, moved(second, 2.0))
check(not gap and len(new) == len(new_real), "with a wrong length hint: %d new events" % len(new))

print("trace_tail: ok, %d checks (%d events, %d new)" % (checks, len(second), len(new_real)))
