# --html on a large trace (issue 19): gen_trace --timeline with 1 M kernels (3 M records, 160 MB).
# The page stays within its budget (under 4 MiB) yet its timeline covers the whole run, checked
# against the trace's own records (--dump) and the JSON report:
# - each stream's busy time per column equals the kernels' time in that column, to the ns, and
#   adds up to the report's busy_ns of the stream;
# - every exact-detail window holds exactly the kernels that start in it before its cut;
# - the longest activities are the 1,000 longest kernels, the gaps the longest of all gaps;
# and a headless Chromium draws it without errors (busy bars at the whole view; the time from
# navigation to drawn is printed; the bound is loose for a loaded 2-core machine), and, zoomed by
# the page's address (#t=START,END) into a window kept whole, draws exactly the kernels the trace
# has there.
. "$SRC/tests/lib.sh"
[ -x "$O/bench/gen_trace" ] || skip "bench/gen_trace not built (make fixtures)"
CHROMIUM=$(command -v chromium || command -v chromium-browser) || skip "chromium not installed (make deps)"
"$O/bench/gen_trace" --timeline 1000000 big.trace > gen.txt || fail "gen_trace failed"
"$GT_REPORT" --html big.html big.trace || fail "--html failed"
"$GT_REPORT" --json --all-gaps big.trace > big.json || fail "--json failed"
"$GT_REPORT" --dump big.trace | awk '$3 == "GPU_KERNEL" { split($5, d, "="); split($7, v, "="); split($9, s, "=");
    print $1, d[2], v[2], s[2] }' > kernels.txt || fail "--dump failed"
size=$(wc -c < big.html)
[ "$size" -lt $((4 << 20)) ] || fail "page of $size bytes for 1 M kernels"
"$PYTHON" - big.html big.json kernels.txt > view.txt <<'PY' || fail "the page's timeline view: $(tail -n 1 view.txt)"
import base64, collections, json, re, sys
page, rep = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
ev = json.loads(re.search(r'<script type="application/json" id="gt-events">(.*?)</script>', page, re.S).group(1))[0]
def varints(b):
    out, x, sh = [], 0, 0
    for c in base64.b64decode(b):
        x |= (c & 127) << sh
        sh += 7
        if not c & 128:
            out.append(x); x, sh = 0, 0
    return out
K = [tuple(map(int, l.split())) for l in open(sys.argv[3])]  # start, dur, device, stream
def fail(m):
    print(m); sys.exit(1)
if ev["acts_total"] != len(K) or len(K) != 1000000:
    fail(f"view saw {ev['acts_total']} activities, the trace has {len(K)} kernels")
cw, cols = ev["col_ns"], ev["cols"]
lanes = {(d, s): i for i, (d, s, _) in enumerate(ev["lanes"])}
want = [[0] * cols for _ in lanes]
for st, du, d, s in K:
    col = want[lanes[(d, s)]]
    t, e = st, st + du
    while t < e:
        c = t // cw
        n = min(e, (c + 1) * cw) - t
        col[c] += n
        t += n
busy = {(x["device"], s["stream"]): s["busy_ns"] for x in rep["timeline"]["devices"] for s in x["streams"]}
for (d, s, b), w in zip(ev["lanes"], want):
    got = varints(b)
    if got != w:
        i = next(i for i in range(cols) if got[i] != w[i])
        fail(f"stream {s}: column {i} busy {got[i]} ns, the kernels {w[i]} ns")
    if sum(got) != busy[(d, s)]:
        fail(f"stream {s}: columns add up to {sum(got)}, the report's busy {busy[(d, s)]}")
# the windows: exactly the kernels starting in [window start, cut)
det, slots, sn = varints(ev["detail"]), ev["slots"], cw * ev["slot_cols"]
by_slot = collections.defaultdict(list)
for st, du, d, s in K:
    by_slot[st // sn].append((st, du, lanes[(d, s)]))
k = kept = whole = 0
best = None
for j in range(len(slots) // 2):
    n, cut = slots[2 * j], slots[2 * j + 1]
    end = j * sn + (sn if cut < 0 else cut)
    got, prev = [], j * sn
    for _ in range(n):
        lane, nk, dst, du = det[4 * k:4 * k + 4]
        prev += dst
        got.append((prev, du, lane))
        k += 1
    w = sorted(x for x in by_slot[j] if x[0] < end)
    if sorted(got) != w:
        fail(f"window {j}: {len(got)} kept, the trace has {len(w)} kernels before its cut")
    kept += n
    whole += cut < 0 and n > 0
    if cut < 0 and 8 <= n and (best is None or n > best[2]):
        best = (j * sn, j * sn + sn, n)
if k * 4 != len(det):
    fail("detail longer than its windows")
# the longest, the gaps
if sorted(a[3] for a in ev["longest"]) != sorted(x[1] for x in K)[-1000:]:
    fail("the longest activities are not the 1,000 longest kernels")
allg = sorted(g["duration_ns"] for x in rep["timeline"]["devices"] for g in x["gaps"])
if ev["gaps_total"] != len(allg) or sorted(g[2] for g in ev["gaps"]) != allg[-len(ev["gaps"]):]:
    fail(f"gaps: {ev['gaps_total']} seen, the report has {len(allg)}; the kept are not the longest")
print(f"{kept} kernels in {len(slots) // 2} windows ({whole} whole); zoom into {best[0]},{best[1]}")
print(best[0], best[1])
PY
cat view.txt | head -n 1
view=$(tail -n 1 view.txt | tr ' ' ,)
browse() { # URL: the DOM after the page's scripts ran
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$PWD/chrome" \
        --dump-dom "$1" 2> chrome.err || fail "chromium failed: $(tail -n 3 chrome.err)"
}
browse "file://$PWD/big.html" > big.dom
grep -q 'data-drawn="1"' big.dom || fail "not drawn"
! grep -q 'class="js-error"' big.dom || fail "$(grep -o 'class="js-error">[^<]*' big.dom)"
grep -q "1000000 GPU activities over the whole run" big.dom || fail "the page does not say what it shows"
[ "$(grep -o 'class="busy"' big.dom | wc -l)" -gt 100 ] || fail "no busy bars at the whole view"
ms=$(grep -o 'data-draw-ms="[0-9]*"' big.dom | grep -o '[0-9]*')
echo "page: $size bytes, drawn $ms ms after navigation"
[ "$ms" -lt 8000 ] || fail "drawing took $ms ms"
# zoomed into a window kept whole: every kernel starting there drawn, at its start
browse "file://$PWD/big.html#t=$view" > zoom.dom
! grep -q 'class="js-error"' zoom.dom || fail "$(grep -o 'class="js-error">[^<]*' zoom.dom)"
grep -q "data-view=\"$view\"" zoom.dom || fail "the page did not take the view $view from its address"
v0=${view%,*} v1=${view#*,}
got=$(grep -o 'class="kernel" data-t="[0-9]*' zoom.dom | cut -d'"' -f4 | awk -v a="$v0" '$1 >= a' | sort -n | tr '\n' ' ')
want=$(awk -v a="$v0" -v b="$v1" '$1 >= a && $1 <= b {print $1}' kernels.txt | sort -n | tr '\n' ' ')
[ -n "$want" ] && [ "$got" = "$want" ] || fail "zoomed into $view: drawn kernels starting at [$got], the trace has [$want]"
echo "zoomed into $view: $(echo "$want" | wc -w) kernels drawn as the trace has them"
