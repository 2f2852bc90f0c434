# --html (issue 19) in a real browser: Debian's headless Chromium runs the page's script; the DOM
# it dumps must hold the drawn SVG (memory series, the peak, address-map segments and blocks, the
# icicle, timeline kernels, idle gaps and the utilization strip; a fragmentation OOM's free holes
# and the request to scale; one row per rank) and no JavaScript error (the page writes errors
# into #gt-errors: checked to work on a page whose data is broken); screenshots are not blank
# (tests/progs/png_check.py decodes them: pixel variety), and a blank page is caught as blank.
. "$SRC/tests/lib.sh"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
CHROMIUM=$(command -v chromium || command -v chromium-browser) || skip "chromium not installed (make deps)"
browse() { # PAGE what...: chromium's DOM or screenshot of PAGE after its scripts ran
    page=$1; shift
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$PWD/chrome" \
        --hide-scrollbars --virtual-time-budget=10000 "$@" "file://$PWD/$page" 2> chrome.err
}
dom() { browse "$1" --dump-dom > "$1.dom" || fail "chromium failed on $1: $(tail -n 3 chrome.err)"; }
count() { grep -o "$2" "$1.dom" | wc -l; }
drawn() { # PAGE: drawn, without errors
    dom "$1"
    grep -q 'data-drawn="1"' "$1.dom" || fail "$1: the script did not finish drawing"
    ! grep -q 'class="js-error"' "$1.dom" || fail "$1: $(grep -o 'class="js-error">[^<]*' "$1.dom")"
}
atleast() { # PAGE PATTERN N WHAT
    n=$(count "$1" "$2")
    [ "$n" -ge "$3" ] || fail "$1: $4: $n, want at least $3"
}

# the script parses as JavaScript (node --check, where Node.js is installed)
if command -v node > /dev/null 2>&1; then
    node --check "$SRC/analyzer/render/html/report.js" 2> node.err || fail "report.js: $(head -n 5 node.err)"
fi

# the demo workload: peak, an OOM, a leak, kernels and syncs
GTSIM_MEM_BYTES=$((2 << 30)) traced demo.trace "$PROGS/demo" > /dev/null 2>&1 || true
[ -s demo.trace ] || fail "demo run wrote no trace"
"$GT_REPORT" --html demo.html demo.trace || fail "--html failed"
"$GT_REPORT" --json demo.trace > demo.json || fail "--json failed"
# nothing fetched: no URL but the SVG namespace's name
urls=$(grep -o 'https\?://[^" ]*' demo.html | grep -v '^http://www.w3.org/2000/svg$' || true)
[ -z "$urls" ] || fail "the page refers to the network: $urls"
drawn demo.html
# the icicle's stacks (the page's data) add up to the peak exactly
"$PYTHON" - demo.html demo.json <<'PY' || fail "the peak's stacks in the page do not add up to the peak"
import json, re, sys
page = open(sys.argv[1]).read()
ev = json.loads(re.search(r'<script type="application/json" id="gt-events">(.*?)</script>', page, re.S).group(1))
peak = json.load(open(sys.argv[2]))["memory"]["peak_bytes"]
got = sum(b for b, frames in ev[0]["peak_stacks"])
sys.exit(0 if got == peak and peak > 0 else f"stacks {got}, peak {peak}")
PY
atleast demo.html 'class="series"' 1 "memory series"
# without PyTorch's categories (memory.category_series null) the chart is the plain series
expect_eq "category_series" "$(jget demo.json "d['memory']['category_series']")" None
expect_eq "category layers" "$(count demo.html 'class="cat-layer"')" 0
expect_eq "series floors (left out under a stack)" "$(count demo.html 'class="series-floor"')" \
    "$(count demo.html 'class="series"')"
atleast demo.html 'class="peak-marker"' 1 "peak marker"
ooms=$(jget demo.json "len(d['memory']['ooms'])")
expect_eq "OOM markers" "$(count demo.html 'class="oom"')" "$ooms"
atleast demo.html 'class="blk block allocated"' 1 "address-map blocks at the peak"
expect_eq "address-map rows" "$(count demo.html 'class="free segment at-peak"')" \
    "$(jget demo.json "len(d['memory']['peak_breakdown']['largest_allocations'])")"
atleast demo.html 'class="frame"' 3 "icicle frames"
kernels=$(jget demo.json "d['timeline']['kernel_count']")
expect_eq "timeline kernels" "$(count demo.html 'class="kernel"')" "$kernels"
atleast demo.html 'class="gap"' 1 "idle gaps on the timeline"
atleast demo.html 'class="heat"' 2 "utilization strip windows"
atleast demo.html 'class="hostcall"' 1 "host calls"
# every OOM gets its map with the request to scale (driver OOMs: the device's memory)
expect_eq "OOM maps" "$(count demo.html 'class="request"')" \
    "$(jget demo.json "len(d['memory']['ooms']) + len(d['memory']['fragmentation']['pool_ooms'])")"
grep -q "Out-of-memory failures" demo.html.dom || fail "no OOM table"
browse demo.html --window-size=1280,2600 --screenshot="$PWD/demo.png" > /dev/null ||
    fail "screenshot failed: $(tail -n 3 chrome.err)"
"$PYTHON" "$SRC/tests/progs/png_check.py" demo.png 200 0.2 || fail "demo screenshot looks blank"

# a fragmentation OOM in an annotated pool: free holes and the request drawn to scale
MiB=1048576
if nm -D --defined-only "$GT_LIB" | grep -q " T gputrace_annotate_block_fail\$"; then
    GTSIM_MEM_BYTES=36m traced frag.trace "$PROGS/pools_frag" > /dev/null 2>&1 || fail "pools_frag failed"
    "$GT_REPORT" --html frag.html frag.trace || fail "--html (frag) failed"
    "$GT_REPORT" --json frag.trace > frag.json || fail "--json (frag) failed"
    drawn frag.html
    expect_eq "pool OOMs" "$(jget frag.json "len(d['memory']['fragmentation']['pool_ooms'])")" 1
    atleast frag.html 'class="free block"' 3 "free holes"
    expect_eq "request bars" "$(count frag.html 'class="request"')" \
        "$(jget frag.json "len(d['memory']['ooms']) + 1")"
    expect_eq "largest hole marked" "$(count frag.html 'class="hole"')" 1
    grep -q "verdict fragmentation" frag.html.dom || fail "frag: no fragmentation verdict on the map"
fi

# several ranks: one row each, the straggler marked, one section per rank
for r in 0 1; do
    traced "r$r.trace" "$PROGS/multi_rank" gpu $r 2 1 2 . > /dev/null &
done
wait
"$GT_REPORT" --html ranks.html r0.trace r1.trace || fail "--html of two ranks failed"
drawn ranks.html
expect_eq "rank sections" "$(count ranks.html '<details')" 2
grep -q ">Ranks<" ranks.html.dom || fail "no ranks table"

# the error hook works: broken data gives an error in the DOM, not a silent blank page
sed 's/"schema_version": 1,/"schema_version": 1,,/' demo.html > broken.html
dom broken.html
grep -q 'class="js-error"' broken.html.dom || fail "a broken page shows no JavaScript error"
# the blank check works: an empty page is caught
echo '<!DOCTYPE html><html><body></body></html>' > blank.html
browse blank.html --window-size=800,600 --screenshot="$PWD/blank.png" > /dev/null || fail "blank screenshot failed"
if "$PYTHON" "$SRC/tests/progs/png_check.py" blank.png 200 0.2 > /dev/null 2>&1; then
    fail "png_check passed a blank page"
fi
