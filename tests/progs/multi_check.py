#!/usr/bin/env python3
"""Checks the cross-process view of `gputrace-report --json` over several traces against figures
derived without the analyzer: each trace's file header (read here with struct), each rank's
simulated-GPU ground truth (its GTSIM_LOG "work" lines) and what the rank printed (its own
realtime/monotonic clock pair). Used by tests/cases/multi_*.sh.

  multi_check.py REPORT.json TRACE,SIMLOG,OUTPUT,PEAK_BYTES ...

Exact: every rank's header clock pair, start on the common timeline (origin = earliest
start_realtime), the GPU's first/last activity on that timeline, span, busy (union of the work
intervals), idle and idle share, and the peak of device memory. Physical: the rank's own clock pair,
mapped through the header, lands within CLOCK_TOL_NS of where the report puts it (see ANALYSES.md,
"Several processes": the two header reads are adjacent but not bracketed, so a preemption between
them on a loaded machine is the error that remains; NTP slewing adds at most 500 ppm of a run that
lasts under a second)."""
import json
import re
import struct
import sys

CLOCK_TOL_NS = 5_000_000
WORK = re.compile(r"^work kind=([123]) start=(\d+) end=(\d+) ")


def header(path):
    with open(path, "rb") as f:
        h = f.read(56)
    magic, _endian, _ver, _minv, _hsize, _flags, pid, _ppid, real, mono, _clk, _res = struct.unpack(
        "<8sIHHIIIIQQII", h)
    assert magic == b"GPUTRACE", path
    return pid, real, mono


def ground_truth(log):
    iv = []
    with open(log) as f:
        for line in f:
            m = WORK.match(line)
            if m:
                iv.append((int(m.group(2)), int(m.group(3))))
    iv.sort()
    busy, cur_a, cur_b = 0, None, None
    for a, b in iv:
        if cur_b is None or a > cur_b:
            if cur_b is not None:
                busy += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    if cur_b is not None:
        busy += cur_b - cur_a
    return iv[0][0], max(b for _, b in iv), busy


def program_clock(out):
    with open(out) as f:
        for line in f:
            if line.startswith("clock "):
                real, mono, bracket = map(int, line.split()[1:])
                return real, mono, bracket
    raise AssertionError(out + ": no clock line")


def expect(what, got, want):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what, got, want))


def main():
    report = json.load(open(sys.argv[1]))
    specs = [s.split(",") for s in sys.argv[2:]]
    cross = report["cross"]
    ranks = cross["ranks"]
    expect("processes", len(report["processes"]), len(specs))
    expect("ranks", len(ranks), len(specs))
    heads = [header(s[0]) for s in specs]
    origin = min(h[1] for h in heads)
    expect("origin", cross["origin_realtime_ns"], origin)
    for i, (trace, log, out, peak) in enumerate(specs):
        k, (pid, real, mono) = ranks[i], heads[i]
        name = "rank %d" % i
        expect(name + " path", k["path"], trace)
        expect(name + " pid", k["pid"], pid)
        expect(name + " start_realtime_ns", k["start_realtime_ns"], real)
        expect(name + " start_monotonic_ns", k["start_monotonic_ns"], mono)
        expect(name + " start_time_ns", k["start_time_ns"], real - origin)
        first, last, busy = ground_truth(log)
        g = k["gpu"]
        expect(name + " gpu first", g["first_time_ns"], first - mono + real - origin)
        expect(name + " gpu last", g["last_time_ns"], last - mono + real - origin)
        expect(name + " gpu span", g["span_ns"], last - first)
        expect(name + " gpu busy", g["busy_ns"], busy)
        expect(name + " gpu idle", g["idle_ns"], last - first - busy)
        expect(name + " idle share", g["idle_share"], round((last - first - busy) / (last - first), 6))
        expect(name + " peak", k["peak_bytes"], int(peak))
        p_real, p_mono, bracket = program_clock(out)
        at = k["start_time_ns"] + (p_mono - k["start_monotonic_ns"])
        err = at - (p_real - origin)
        if abs(err) > CLOCK_TOL_NS + bracket:
            raise AssertionError("%s: the rank's own clock pair is %d ns off the common timeline" %
                                 (name, err))
        print("%s: start %+.3f ms, busy %d ns, idle share %.6f, peak %d B, own clock off by %d ns" %
              (name, k["start_time_ns"] / 1e6, busy, g["idle_share"], k["peak_bytes"], err))


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print("FAIL:", e, file=sys.stderr)
        sys.exit(1)
