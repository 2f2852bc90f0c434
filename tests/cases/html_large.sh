# --html on a large trace (issue 19): gen_trace --timeline with 1 M kernels (3 M records, 160 MB):
# the page stays small (the timeline view keeps 20,000 activities, series and lists are bounded
# by the report), says what it left out, counts every kernel in the strip's source, and a
# headless Chromium draws it without errors, quickly (the time from navigation to drawn is
# printed; the bound is loose for a loaded 2-core machine: the 10 M-kernel page measured 0.3 to
# 0.8 s).
. "$SRC/tests/lib.sh"
[ -x "$O/bench/gen_trace" ] || skip "bench/gen_trace not built (make fixtures)"
CHROMIUM=$(command -v chromium || command -v chromium-browser) || skip "chromium not installed (make deps)"
"$O/bench/gen_trace" --timeline 1000000 big.trace > gen.txt || fail "gen_trace failed"
"$GT_REPORT" --html big.html big.trace || fail "--html failed"
size=$(wc -c < big.html)
[ "$size" -lt $((2 << 20)) ] || fail "page of $size bytes for 1 M kernels"
grep -q '"acts_total":1000000,' big.html || fail "the view did not see the 1 M kernels: $(grep -o '"acts_total":[0-9]*' big.html)"
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$PWD/chrome" \
    --dump-dom "file://$PWD/big.html" > big.dom 2> chrome.err || fail "chromium failed: $(tail -n 3 chrome.err)"
grep -q 'data-drawn="1"' big.dom || fail "not drawn"
! grep -q 'class="js-error"' big.dom || fail "$(grep -o 'class="js-error">[^<]*' big.dom)"
grep -q "Showing the first 20000 of 1000000 GPU activities" big.dom || fail "the page does not say what it left out"
expect_eq "kernels drawn" "$(grep -o 'class="kernel"' big.dom | wc -l)" 20000
ms=$(grep -o 'data-draw-ms="[0-9]*"' big.dom | grep -o '[0-9]*')
echo "page: $size bytes, drawn $ms ms after navigation"
[ "$ms" -lt 5000 ] || fail "drawing took $ms ms"
