# Site lists on a hostile trace (issue 8): 30,000 distinct call sites, each with a 256-frame
# stack, an allocation, a launch and a synchronization (a 7 MB trace). Before the bounds this
# made 1.9 GB of JSON and 11.8 GB of RSS. Now (docs/REPORT_JSON.md, "Bounds"): at most 1,000
# sites per list with KEY_omitted counting the rest, at most 256 frames per stack, 16,384 frames
# per list (64 full stacks here), frames_truncated on each site. Checked exactly from the
# construction, plus JSON size < 64 MiB and the report's peak RSS < 320 MiB; and a small trace
# (100 sites x 64 frames) comes out whole: nothing omitted, nothing truncated.
. "$SRC/tests/lib.sh"
cat > gen.py <<'EOF'
# gen.py SITES DEPTH OUT: a valid trace whose stacks make SITES distinct call sites, each DEPTH
# frames deep (a shared chain of DEPTH-1 frames and one frame of its own), with an allocation,
# a launch and a synchronization at each site, all in one object that does not exist on disk.
import struct, sys, zlib
sites, depth, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
T0, TID, BASE = 10**12, 4242, 0x400000
def rec(rtype, sub, fixed, tail=b""):
    body = fixed + tail
    body += b"\0" * (-len(body) % 8)
    return struct.pack("<HHI", rtype, sub, 8 + len(body)) + body
def chunk(kind, tid, seq, payload):
    head = struct.pack("<IHHI", 0x4B435447, kind, 0, len(payload))
    tail = struct.pack("<II", tid, seq)
    crc = zlib.crc32(payload, zlib.crc32(tail, zlib.crc32(head)))
    return head + struct.pack("<I", crc) + tail + payload
own = rec(1, 0, struct.pack("<QIIQIIII", T0, 1, 0, 0, 1, 8, 1, 2), b"hostile\0" + b"h" + b"/x")
host = [rec(4, 0, struct.pack("<QII", T0, TID, 0))]
path = b"/nonexistent/libhostile.so"
host.append(rec(51, 0, struct.pack("<QQQQII", T0, BASE, BASE, 1 << 24, len(path), 0), path))
chain = struct.pack("<%dQ" % (depth - 1), *[BASE + 0x10 * (i + 1) for i in range(depth - 1)])
host.append(rec(50, 0, struct.pack("<QIIII", T0, 1, 0, 8 * (depth - 1), 0), chain))
ts = T0 + 1
for i in range(sites):
    leaf = depth + i
    host.append(rec(50, 0, struct.pack("<QIIII", ts, leaf, depth - 1, 8, 0),
                    struct.pack("<Q", BASE + 0x100000 + 0x10 * i)))
    host.append(rec(10, 1, struct.pack("<QQQQQQiIII", ts, 0x10000000 + 0x1000 * i, 4096, 0, 0, 0, 0, 0, leaf, 100)))
    host.append(rec(21, 40, struct.pack("<QQQQ3I3IIiII", ts + 1, 0xf00, 0, i + 1, 1, 1, 1, 1, 1, 1, 0, 0, 100, leaf)))
    host.append(rec(22, 60, struct.pack("<QQQQiI", ts + 2, ts + 3, 0, 0, 0, leaf)))
    ts += 4
payload = b"".join(host)
nrec = 1 + len(host) + 2
tail = rec(32, 0, struct.pack("<QQQII", ts, nrec - 1, 0, 0, 0)) + rec(31, 0, struct.pack("<Q", (1 << 64) - 1))
hdr = b"GPUTRACE" + struct.pack("<IHHIIIIQQII", 0x01020304, 1, 1, 56, 1, 1, 0, 0, T0, 1, 0)
with open(out, "wb") as f:
    f.write(hdr + chunk(1, 0, 0, own) + chunk(1, TID, 0, payload) + chunk(1, 0, 1, tail))
EOF
# report OUT ARGS...: run the report, print its peak RSS in KiB (getrusage of the child).
report() { out=$1; shift; "$PYTHON" -c '
import resource, subprocess, sys
with open(sys.argv[1], "wb") as f:
    rc = subprocess.run(sys.argv[2:], stdout=f, timeout=300).returncode
if rc: sys.exit("report failed: %d" % rc)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$out" "$GT_REPORT" "$@"; }

"$PYTHON" gen.py 30000 256 h.trace
rss=$(report h.json --json h.trace) || fail "report --json"
size=$(wc -c < h.json)
[ "$size" -lt $((64 << 20)) ] || fail "JSON of $size bytes"
summary=$(jget h.json "' '.join(str(x) for x in [d['memory']['alloc_count'],
    len(d['memory']['by_site']), d['memory']['by_site_omitted'],
    len(d['memory']['leaks']), d['memory']['leaks_omitted'],
    len(d['memory']['peak_breakdown']['by_site']), d['memory']['peak_breakdown']['by_site_omitted'],
    len(d['timeline']['launch_sites']), d['timeline']['launch_sites_omitted'],
    len(d['timeline']['sync_sites']), d['timeline']['sync_sites_omitted'],
    len(d['memory']['by_library']), d['memory']['by_library_omitted']])")
expect_eq "allocs, then listed/omitted: by_site leaks peak launch sync library" "$summary" \
    "30000 1000 29000 1000 29000 1000 29000 1000 29000 1000 29000 1 0"
for l in "d['memory']['by_site']" "d['memory']['leaks']" "d['memory']['peak_breakdown']['by_site']" \
    "d['timeline']['launch_sites']" "d['timeline']['sync_sites']"; do
    # 64 whole stacks (64 x 256 = 16,384 frames), then none: each site says what is missing
    expect_eq "$l: frames listed, truncated" "$(jget h.json "' '.join(str(x) for x in [
        sum(len(s['stack']) for s in $l), sum(s['frames_truncated'] for s in $l),
        [len(s['stack']) for s in $l][63:65], [s['frames_truncated'] for s in $l][63:65]])")" \
        "16384 239616 [256, 0] [0, 256]"
done
if [ -z "$asan_rt$tsan_rt" ]; then
    [ "$rss" -lt $((320 * 1024)) ] || fail "report peak RSS $rss KiB"
fi
echo "30,000 sites x 256 frames: $size bytes of JSON, report peak RSS $rss KiB"

rss=$(report h.txt --stacks h.trace) || fail "report --stacks"
size=$(wc -c < h.txt)
[ "$size" -lt $((1 << 20)) ] || fail "text report of $size bytes"
expect_eq "text: sites left out, per list" "$(grep -c '^  \.\.\. 29990 more (see --json)$' h.txt)" 3
echo "text --stacks: $size bytes, peak RSS $rss KiB"

"$PYTHON" gen.py 100 64 small.trace
report small.json --json small.trace > /dev/null || fail "report of the small trace"
expect_eq "small: listed, omitted, frames, truncated" "$(jget small.json "' '.join(str(x) for x in [
    len(d['memory']['by_site']), d['memory']['by_site_omitted'], d['timeline']['sync_sites_omitted'],
    sum(len(s['stack']) for s in d['memory']['by_site']),
    sum(s['frames_truncated'] for s in d['memory']['by_site'] + d['timeline']['launch_sites'])])")" \
    "100 0 0 6400 0"
