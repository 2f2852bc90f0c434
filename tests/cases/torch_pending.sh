# A block pending free in PyTorch's caching allocator, produced for real and drawn (issue 19): the
# real PyTorch on the simulated stack (tests/torch/pending.py) frees a tensor used on a side stream
# (record_stream) while the side stream's copy still runs (GTSIM_COPY_BYTES_PER_SEC slows copies:
# the simulated driver's cuEventQuery answers NOT_READY until the copy's time has passed).
# PyTorch's own snapshot says "active_pending_free"; the bridge's exit snapshot, the fullest, is
# drawn by headless Chromium with that block dark ("tpending"), at its size, beside the same
# allocated and free blocks as PyTorch's snapshot.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser) || skip "chromium not installed (make deps)"
GTSIM_COPY_BYTES_PER_SEC=5000000 torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/pending.py" pt.json \
    > out.txt 2>&1 || { cat out.txt; fail "pending.py"; }
"$GT_REPORT" --html t.html t.trace || fail "--html"
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$PWD/chrome" \
    --virtual-time-budget=10000 --dump-dom "file://$PWD/t.html" > t.dom 2> chrome.err ||
    fail "chromium: $(tail -n 3 chrome.err)"
grep -q 'data-drawn="1"' t.dom || fail "page not drawn"
! grep -q 'class="js-error"' t.dom || fail "$(grep -o 'class="js-error">[^<]*' t.dom)"
"$PYTHON" - t.dom pt.json <<'PY' || fail "the drawn map differs from PyTorch's snapshot"
import collections, json, re, sys
dom, pt = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
pend = [b for b in pt["blocks"] if b["state"] == "active_pending_free"]
if pt["side_done"] or [b["size"] for b in pend] != [8 << 20]:
    sys.exit(f"PyTorch's snapshot: pending {pend}, side stream done {pt['side_done']}")
maps = re.findall(r'<svg[^>]*class="addrmap torch-snap".*?</svg>', dom, re.S)
if len(maps) != 1:
    sys.exit(f"{len(maps)} fullest-snapshot maps drawn")
cls = {"tpending": "active_pending_free", "talloc": "active_allocated"}
drawn = collections.Counter((cls[c], int(n)) for c, n in re.findall(r'class="blk block (tpending|talloc)" data-bytes="(\d+)"', maps[0]))
drawn += collections.Counter(("inactive", int(n)) for n in re.findall(r'class="free block tfree" data-bytes="(\d+)"', maps[0]))
want = collections.Counter((b["state"], b["size"]) for b in pt["blocks"])
print("drawn", sorted(drawn.items()))
sys.exit(0 if drawn == want else f"drawn {sorted(drawn.items())}, PyTorch {sorted(want.items())}")
PY
