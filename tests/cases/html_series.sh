# --html memory over time (issue 19): each column of the chart is drawn from the minimum to the
# maximum of live bytes within it, so a short spike and a short dip inside one column both show.
# tests/progs/spike.c holds 100 MiB for 0.4 s with a 400 MiB spike (tens of microseconds: the
# shim samples cuMemGetInfo at the new peak) and a 90 MiB dip (under a microsecond) between;
# headless Chromium draws the page and the band's edges read back from the drawn SVG path
# equal the report's min_bytes / max_bytes in every column; the spike's column reaches the
# exact peak, where the peak marker sits, and goes down to the dip.
. "$SRC/tests/lib.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser) || skip "chromium not installed (make deps)"
# the spike and the dip fall in one column unless they straddle a column's edge (a few microseconds
# of a 512-us column): then run again. No host samples: a sample's handler landing between the two
# would stretch them (under ThreadSanitizer one takes about a millisecond: 3 straddles of 3 there).
# The spike alone may straddle too (its allocation in one column, its free in the next): run again
for try in 1 2 3 4 5; do
    rm -f s.trace # else the tracer keeps the first try's and writes s.trace.PID
    GPUTRACE_SAMPLE_HZ=0 traced s.trace "$PROGS/spike" > /dev/null || fail "spike failed"
    "$GT_REPORT" --json s.trace > s.json || fail "--json failed"
    "$PYTHON" - s.json > cols.txt <<'PY' || fail "the report's series: $(cat cols.txt)"
import json, sys
d = json.load(open(sys.argv[1]))
MiB = 1 << 20
s = [x for x in d["memory"]["live_series"]["series"] if x["kind"] == "total"][0]
hi = [i for i, v in enumerate(s["max_bytes"]) if v == 500 * MiB]
lo = [i for i, v in enumerate(s["min_bytes"]) if v == 10 * MiB]
# the spike itself may straddle a column edge (its allocation in one column, its free in the
# next: two adjacent columns reach the peak); that is a straddle too, and the case runs again
if d["memory"]["peak_bytes"] != 500 * MiB or not lo or not (
        len(hi) == 1 or (len(hi) == 2 and hi[1] == hi[0] + 1)):
    sys.exit(f"peak {d['memory']['peak_bytes']}, spike columns {hi}, dip columns {lo}")
print("same" if len(hi) == 1 and hi[0] in lo else "straddle", hi[0])
PY
    [ "$(cut -d' ' -f1 cols.txt)" = same ] && break
    echo "try $try: the spike and the dip straddled a column edge (spike at column $(cut -d' ' -f2 cols.txt))"
done
[ "$(cut -d' ' -f1 cols.txt)" = same ] || fail "the spike and the dip straddled a column edge 5 times"
col=$(cut -d' ' -f2 cols.txt)
"$GT_REPORT" --dump s.trace | awk '/ALLOC .*size=419430400/ {a=$1} /FREE/ && a && !f {f=$1} END {print "spike lasted", f - a, "ns"}'

"$GT_REPORT" --html s.html s.trace || fail "--html failed"
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$PWD/chrome" \
    --virtual-time-budget=10000 --dump-dom "file://$PWD/s.html" > s.dom 2> chrome.err ||
    fail "chromium failed: $(tail -n 3 chrome.err)"
grep -q 'data-drawn="1"' s.dom || fail "not drawn"
! grep -q 'class="js-error"' s.dom || fail "$(grep -o 'class="js-error">[^<]*' s.dom)"
"$PYTHON" - s.dom s.json "$col" <<'PY' || fail "the drawn band differs from the report"
import json, re, sys
from html.parser import HTMLParser
dom, rep, col = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), int(sys.argv[3])
MiB = 1 << 20
class P(HTMLParser):
    svg, band, marker = None, None, None
    def handle_starttag(self, tag, a):
        a = dict(a)
        if tag == "svg" and a.get("class", "").split() == ["memchart"]:
            self.svg = a
        elif tag == "path" and a.get("class") == "series" and a.get("data-kind") == "total":
            self.band = a
        elif tag == "circle" and a.get("class") == "peak-marker":
            self.marker = a
p = P()
p.feed(dom)
if not (p.svg and p.band and p.marker):
    sys.exit(f"chart {bool(p.svg)}, band {bool(p.band)}, peak marker {bool(p.marker)}")
y0, y1, ymax = (float(p.svg[k]) for k in ("data-y0", "data-ymax-px", "data-ymax"))
val = lambda py: (y0 - py) / (y0 - y1) * ymax  # pixel row -> bytes
nums = [float(v) for v in re.findall(r"-?[0-9.]+(?:e-?[0-9]+)?", p.band["d"])]
pts = list(zip(nums[0::2], nums[1::2]))
s = [x for x in rep["memory"]["live_series"]["series"] if x["kind"] == "total"][0]
n = len(s["max_bytes"])
if len(pts) != 4 * n:
    sys.exit(f"band of {len(pts)} points for {n} columns")
top, bottom = pts[:2 * n], pts[2 * n:][::-1]
tol = ymax * 1e-9
for i in range(n):
    for edge, want, what in ((top, s["max_bytes"][i], "max"), (bottom, s["min_bytes"][i], "min")):
        (xa, ya), (xb, yb) = edge[2 * i], edge[2 * i + 1]
        if abs(val(ya) - want) > tol or abs(val(yb) - want) > tol or not xa < xb:
            sys.exit(f"column {i}: drawn {what} {val(ya):.0f}, report {want}")
(_, ya), _ = top[2 * col], top[2 * col + 1]
(_, yb), _ = bottom[2 * col], bottom[2 * col + 1]
print(f"column {col}: drawn {val(yb) / MiB:.1f} to {val(ya) / MiB:.1f} MiB")
if round(val(ya)) != 500 * MiB or round(val(yb)) != 10 * MiB:
    sys.exit(f"the spike's column is drawn {val(yb):.0f} to {val(ya):.0f}")
if abs(float(p.marker["cy"]) - ya) > 1e-6 or round(val(float(p.marker["cy"]))) != rep["memory"]["peak_bytes"]:
    sys.exit(f"peak marker at {p.marker['cy']}, the band's top {ya}")
flat = sum(1 for i in range(n) if s["min_bytes"][i] == s["max_bytes"][i] == 100 * MiB)
print(f"{n} columns drawn as the report says; {flat} flat at 100 MiB")
if flat < n // 2:
    sys.exit("the run is not flat at 100 MiB around the spike")
PY
