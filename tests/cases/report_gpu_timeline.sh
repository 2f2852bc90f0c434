#!/bin/sh
# gputrace-report on GPU timeline records written here by an independent (Python) encoder of
# docs/TRACE_FORMAT.md: GPU chunks before the host chunks and out of time order, launch linking
# through external correlation (a graph too), names from GPU name and function records, copies,
# memsets, drops; text, --json and --dump; then the same run with CUPTI owned by a profiler.
. "$SRC/tests/lib.sh"
[ -x "$GT_REPORT" ] || fail "no $GT_REPORT (run make first)"

"$PYTHON" - <<'PY'
import struct, zlib
T0 = 10**9
def rec(rtype, sub, fixed, tail=b""):
    size = (8 + len(fixed) + len(tail) + 7) & ~7
    body = struct.pack("<HHI", rtype, sub, size) + fixed + tail
    return body + b"\0" * (size - len(body))
def chunk(kind, tid, seq, payload):
    head = struct.pack("<IHHI", 0x4b435447, kind, 0, len(payload))
    ids = struct.pack("<II", tid, seq)
    return head + struct.pack("<I", zlib.crc32(payload, zlib.crc32(ids, zlib.crc32(head)))) + ids + payload
def cupti(status, reason=b"", result=0):
    path = b"/opt/cuda/lib64/libcupti.so.13"
    return rec(40, status, struct.pack("<QqiiII", T0 + 10, 0, 130000, result, len(path), len(reason)), path + reason)
def func(ts, handle, name):
    return rec(20, 0, struct.pack("<QQII", T0 + ts, handle, 0, len(name)), name)
def launch(ts, api, fn, corr):
    return rec(21, api, struct.pack("<QQQQ3I3IIiII", T0 + ts, fn, 0x5, corr, 1, 1, 1, 32, 1, 1, 0, 0, 100, 0))
def kernel(s, e, corr, dev, stream, graph=0, name=0):
    return rec(41, 0, struct.pack("<QQIIIIIIQ", T0 + s, T0 + e, corr, dev, 1, stream, graph, name, 0))
def memcpy(kind, s, e, nbytes, dev, stream):
    return rec(42, kind, struct.pack("<QQQIIIIBBHI", T0 + s, T0 + e, nbytes, 0, dev, 1, stream, 0, 1, 0, dev))
def memset(s, e, nbytes, dev, stream):
    return rec(43, 0, struct.pack("<QQQIIIIII", T0 + s, T0 + e, nbytes, 0, dev, 1, stream, 0, 1))
def extcorr(ext, corr):
    return rec(44, 0, struct.pack("<QII", ext, corr, 5))
def gname(i, name):
    return rec(46, 0, struct.pack("<QII", 0, i, len(name)), name)
def dropped(n):
    return rec(47, 0, struct.pack("<QQ", T0 + 50000, n))
def watermark(ts):
    return rec(31, 0, struct.pack("<Q", T0 + ts))
A, B, C = (1 << 40) | 1, (1 << 40) | 2, (2 << 40) | 1
header = b"GPUTRACE" + struct.pack("<IHHIIIIQQII", 0x01020304, 1, 1, 56, 1, 99, 1, 0, T0, 1, 0)
end = rec(32, 0, struct.pack("<QQQII", T0 + 60000, 20, 0, 0, 0))
gpu = [chunk(2, 0, 0, kernel(9000, 10000, 503, 0, 7) + gname(1, b"_Z4axpyfPfS_") +
                      kernel(3000, 5000, 501, 0, 7, name=1) + memset(8000, 8500, 256, 0, 9) +
                      extcorr(C, 503) + dropped(2)),
       chunk(2, 0, 1, kernel(6000, 7000, 502, 0, 8, graph=3) + kernel(20000, 21000, 999, 1, 1) +
                      memcpy(1, 2000, 3000, 10000, 0, 7) + kernel(4000, 4500, 502, 0, 8, graph=3) +
                      extcorr(A, 501) + extcorr(B, 502))]
def host(status_rec):
    return [chunk(1, 11, 0, status_rec + func(20, 0xf1, b"_Z4axpyfPfS_") + func(21, 0xf2, b"relu_kernel") +
                           launch(1000, 40, 0xf1, A) + launch(2000, 46, 0x9, B)),
            chunk(1, 12, 0, launch(1500, 41, 0xf2, C)),
            chunk(1, 0, 0, watermark(30000)),
            chunk(1, 0, 1, end)]
open("gpu.trace", "wb").write(header + b"".join(gpu + host(cupti(0))))
owned = cupti(3, b": another profiler holds CUPTI (Kineto)", 39)
open("owned.trace", "wb").write(header + b"".join(host(owned)))
PY

"$GT_REPORT" gpu.trace >text.txt 2>err.txt || fail "text report failed: $(cat err.txt)"
# 2 records dropped: the caveat on stderr, under the section header and next to each figure
# it bounds (5 kernels, 1 copy, 1 memset delivered)
caveat="CUPTI dropped 2 of 9 GPU activity records: GPU busy time, utilization, kernel, copy and memset figures count only the records delivered (lower bounds); idle time and idle gaps may hold work that was not recorded (upper bounds)"
expect_eq "text: the caveat on stderr" "$(cat err.txt)" "gputrace-report: gpu.trace: $caveat"
grep -qF "  INCOMPLETE $caveat" text.txt || fail "text: caveat under the header: $(cat text.txt)"
for figure in "device 0   span" "device 1   span" "name (by GPU time)" "copies    HtoD" "memsets   1 x" \
    "device 0   idle"; do
    grep "$figure" text.txt | grep -qF "[incomplete: CUPTI dropped records]" ||
        fail "text: no caveat next to '$figure': $(grep "$figure" text.txt)"
done
grep -q "^gpu timeline  available$" text.txt || fail "text: section header: $(cat text.txt)"
grep -q "device 0   span 8.0 us, busy 5.5 us, idle 2.5 us, utilization 68.8%" text.txt ||
    fail "text: device 0: $(cat text.txt)"
grep -q "device 1   span 1.0 us, busy 1.0 us, idle 0 ns, utilization 100.0%" text.txt ||
    fail "text: device 1"
grep -q "axpy(float, float\*, float\*)" text.txt || fail "text: demangled name"
grep -q "HtoD 1 x, 9.77 KiB in 1.0 us (10.00 GB/s)" text.txt || fail "text: copies"
grep -q "4 of 5 kernels linked to their launch (2 through cuGraphLaunch), 1 unlinked" text.txt ||
    fail "text: linking"
grep -q "DROPPED   2 GPU activity records" text.txt || fail "text: drops"
[ "$(wc -l <text.txt)" -le 50 ] || fail "text: more than a screen ($(wc -l <text.txt) lines)"

"$GT_REPORT" --json gpu.trace >r.json || fail "--json failed"
expect_eq "json: status" "$(jget r.json 'd["trace"]["gpu_timeline"]')" available
expect_eq "json: cupti" "$(jget r.json '(d["trace"]["cupti"]["status"], d["trace"]["cupti"]["version"], d["trace"]["cupti"]["path"])')" \
    "('on', 130000, '/opt/cuda/lib64/libcupti.so.13')"
expect_eq "json: dropped" "$(jget r.json 'd["trace"]["cupti_dropped"]')" 2
# several processes: the caveat on the rank's row too
cp gpu.trace gpu2.trace
"$GT_REPORT" gpu.trace gpu2.trace >multi.txt 2>/dev/null || fail "report of two traces failed"
expect_eq "multi: rows with the caveat" "$(grep -c 'gpu2\{0,1\}\.trace  \[incomplete GPU figures: CUPTI dropped records\]$' multi.txt)" 2
"$GT_REPORT" --json gpu.trace gpu2.trace >multi.json 2>/dev/null || fail "--json of two traces failed"
expect_eq "multi: cupti_dropped per rank" "$(jget multi.json '[k["gpu"]["cupti_dropped"] for k in d["cross"]["ranks"]]')" "[2, 2]"
expect_eq "json: caveat in notes" "$(jget r.json '[(n["level"], n["time_ns"], n["text"]) for n in d["notes"]]')" \
    "[('warning', None, '$caveat')]"
expect_eq "json: devices" "$(jget r.json '[(x["device"], x["span_ns"], x["busy_ns"], x["idle_ns"], x["utilization"], x["first_ns"], x["last_ns"], x["kernel_count"]) for x in d["timeline"]["devices"]]')" \
    "[(0, 8000, 5500, 2500, 0.6875, 2000, 10000, 4), (1, 1000, 1000, 0, 1.0, 20000, 21000, 1)]"
expect_eq "json: streams" "$(jget r.json '[(s["stream"], s["kernel_count"], s["busy_ns"]) for s in d["timeline"]["devices"][0]["streams"]]')" \
    "[(7, 2, 4000), (8, 2, 1500), (9, 0, 500)]"
expect_eq "json: top kernels" "$(jget r.json '[(k["name"], k["count"], k["total_ns"], k["mean_ns"], k["max_ns"]) for k in d["timeline"]["top_kernels"]]')" \
    "[('<unknown>', 3, 2500, 833, 1000), ('_Z4axpyfPfS_', 1, 2000, 2000, 2000), ('relu_kernel', 1, 1000, 1000, 1000)]"
expect_eq "json: copies" "$(jget r.json 'd["timeline"]["copies"]')" \
    "[{'count': 1, 'bytes': 10000, 'total_ns': 1000, 'kind': 'HtoD', 'bandwidth_gbps': 10.0}]"
expect_eq "json: memsets" "$(jget r.json 'd["timeline"]["memsets"]')" "{'count': 1, 'bytes': 256, 'total_ns': 500}"
expect_eq "json: linking" "$(jget r.json 'd["timeline"]["linking"]')" \
    "{'kernels': 5, 'linked': 4, 'graph_kernels': 2, 'unlinked': 1, 'launch_latency_ns': {'count': 2, 'min': 2000, 'median': 2000, 'max': 7500}, 'by_thread': [{'tid': 11, 'kernels': 3}, {'tid': 12, 'kernels': 1}]}"
expect_eq "json: kernel_count" "$(jget r.json 'd["timeline"]["kernel_count"]')" 5
expect_eq "json: records" "$(jget r.json '(d["trace"]["gpu_records"], d["trace"]["records"])')" "(12, 20)"
expect_eq "json: duration is host time" "$(jget r.json 'd["process"]["duration_ns"]')" 60000

"$GT_REPORT" --dump gpu.trace >dump.txt || fail "--dump failed"
# GPU chunks first in the file and out of order: the dump is in time order all the same
awk '$1 != "-" && $1 != "inf" { if ($1 + 0 < last) { bad = 1 } last = $1 + 0 } END { exit bad }' dump.txt ||
    fail "dump: not in time order: $(cat dump.txt)"
grep -q "^9000 tid=0 GPU_KERNEL - dur_ns=1000 corr=503 device=0 context=1 stream=7 graph=0" dump.txt ||
    fail "dump: kernel line: $(cat dump.txt)"
grep -q '^- tid=0 GPU_NAME - id=1 name="_Z4axpyfPfS_"$' dump.txt || fail "dump: name line"
grep -q "^- tid=0 GPU_EXTCORR - ext=0x10000000001 corr=501 kind=5$" dump.txt || fail "dump: extcorr line"

"$GT_REPORT" owned.trace >owned.txt || fail "owned: text failed"
grep -q "^gpu       timeline unavailable: CUPTI is owned by another profiler (Kineto)$" owned.txt ||
    fail "owned: notice: $(cat owned.txt)"
grep -q "^gpu timeline" owned.txt && fail "owned: a timeline section without GPU records"
grep -q "^           1  axpy(float, float\*, float\*)$" owned.txt || fail "owned: kernels by launch count"
"$GT_REPORT" --json owned.trace >o.json || fail "owned: --json failed"
expect_eq "owned: json status" "$(jget o.json 'd["trace"]["gpu_timeline"]')" \
    "unavailable: CUPTI is owned by another profiler (Kineto)"
expect_eq "owned: top_kernels_by" "$(jget o.json 'd["timeline"]["top_kernels_by"]')" launch_count
expect_eq "owned: devices" "$(jget o.json 'd["timeline"]["devices"]')" "[]"
exit 0
