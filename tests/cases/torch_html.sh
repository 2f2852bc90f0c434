# --html draws PyTorch's allocator (issue 19 follow-up) from the real PyTorch on the simulated stack
# (tests/torch/viz.py, GPUTRACE_TORCH=history: a fragmentation OOM in a snapshot of 115 segments):
# in headless Chromium, the address map at the allocator OOM has a row per drawn segment (the 64
# largest; the other 51 summed in a note), its allocated bytes plus the summed live bytes equal the
# report's allocated_bytes, which is PyTorch's memory_allocated(); its free blocks are PyTorch's
# inactive blocks, the largest hole outlined is the report's and PyTorch's largest free block, the
# request bar is the request; blocks name the Python lines that allocated them; the memory chart
# draws PyTorch's reserved and allocated series (every point of the report's series; reserved
# reaches max_memory_reserved) and an OOM marker per failure, the allocator's with its figures.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser) || skip "chromium not installed (make deps)"
GPUTRACE_TORCH=history torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/viz.py" pt.json > out.txt 2>&1 ||
    { cat out.txt; fail "viz.py"; }
"$GT_REPORT" --json t.trace > r.json || fail "--json"
"$GT_REPORT" --html t.html t.trace || fail "--html"
html_dom t.html
"$PYTHON" - t.dom r.json pt.json "$SRC/tests/torch/viz.py" <<'PY' || fail "the drawn allocator does not match the report and PyTorch"
import html, json, re, sys
dom, rep, pt = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
bad = []
def eq(what, got, want):
    print(f"{what}: {got} (want {want})")
    if got != want: bad.append(what)
oom = [o for o in rep["memory"]["ooms"] if o.get("level") == "allocator"]
eq("allocator OOMs", len(oom), 1)
o = oom[0]
eq("verdict", o["verdict"], "fragmentation")
maps = re.findall(r'<svg[^>]*class="addrmap torch-oom".*?</svg>', dom, re.S)
eq("OOM maps drawn", len(maps), 1)
# the fullest snapshot is the OOM's here (the peak passed between snapshots): drawn once
eq("fullest-snapshot maps (the OOM's)", len(re.findall(r'class="addrmap torch-snap"', dom)), 0)
m = maps[0]
rows = len(re.findall(r'class="free segment tseg"', m))
other = re.findall(r'class="note tother" data-segments="(\d+)"[^>]*>([^<]*)', dom)
other_segs = int(other[0][0]) if other else 0
eq("rows drawn (the cap)", rows, 64)
eq("rows + aggregated segments = PyTorch's segments", rows + other_segs, pt["segments"])
alloc = [int(b) for b in re.findall(r'class="blk block talloc" data-bytes="(\d+)"', m)]
# the note says its bytes rounded: the exact figures are the page's data, checked against the note
page = open(sys.argv[1].replace(".dom", ".html")).read()
ev = json.loads(re.search(r'<script type="application/json" id="gt-events">(.*?)</script>', page, re.S).group(1))
tm = [x for x in ev[0]["torch_maps"] if x["oom"] is not None][0]
eq("the note = the page's data", other_segs, tm["other"]["segments"])
eq("drawn allocated + aggregated live = report allocated_bytes", sum(alloc) + tm["other"]["live_bytes"], o["allocated_bytes"])
eq("report allocated_bytes = PyTorch memory_allocated", o["allocated_bytes"], pt["memory_allocated"])
eq("free blocks drawn = PyTorch's inactive blocks", len(re.findall(r'class="free block tfree"', m)), pt["free_blocks"])
holes = [int(b) for b in re.findall(r'class="hole" data-bytes="(\d+)"', m)]
eq("largest hole = report", holes, [o["largest_free_block_bytes"]])
eq("report largest free = PyTorch's", o["largest_free_block_bytes"], pt["largest_free_large"])
eq("request bar", re.findall(r'class="request" data-bytes="(\d+)"', m), [str(o["requested_bytes"])])
eq("report request = PyTorch's", o["requested_bytes"], pt["requested"])
titles = re.findall(r'class="blk block talloc"[^>]*><title>([^<]*)', m)
src = open(sys.argv[4]).read().splitlines()
for k in ("A", "B"):
    line = "viz.py:%d (&lt;module&gt;)" % next(i + 1 for i, l in enumerate(src) if l.endswith("# site " + k))
    eq("blocks from " + line, sum(line in t for t in titles), 20)
eq("segments of the request's pool in the drawn map", len(re.findall(r'large-pool segment', m)) > 0, True)
for a in rep["memory"]["allocators"]:
    ser = a["fragmentation"]["series"]
    got = re.findall(r'class="torch-series" data-points="(\d+)" data-max="(\d+)"', dom)
    eq("PyTorch series drawn", len(got), 2)
    eq("points per series", sorted({int(p) for p, _ in got}), [len(ser)])
    eq("reserved reaches the report's peak reserved", max(int(x) for _, x in got), a["peak_reserved_bytes"])
    eq("peak reserved = PyTorch max_memory_reserved", a["peak_reserved_bytes"], pt["max_memory_reserved"])
markers = re.findall(r'class="oom"[^>]*><title>([^<]*)', dom)
eq("OOM markers", len(markers), len(rep["memory"]["ooms"]))
eq("allocator OOM marker with PyTorch's figures", sum("PyTorch's allocator" in t and "allocated" in t for t in markers), 1)
sys.exit(1 if bad else 0)
PY

# the fullest snapshot (bridge.py peak keeps its tensors to the exit snapshot, which is at the
# peak): its map is drawn, its allocated blocks add up to the report's snapshot_allocated_bytes,
# which is PyTorch's max_memory_allocated; one row per PyTorch segment; blocks name lines A and B
GPUTRACE_TORCH=history torch_run -t "$PWD/p.trace" "$TORCH_PY" "$SRC/tests/torch/bridge.py" peak ppt.json > pout.txt 2>&1 ||
    { cat pout.txt; fail "bridge.py peak"; }
"$GT_REPORT" --json p.trace > p.json || fail "--json (peak)"
"$GT_REPORT" --html p.html p.trace || fail "--html (peak)"
html_dom p.html
"$PYTHON" - p.dom p.json ppt.json "$SRC/tests/torch/bridge.py" <<'PY' || fail "the fullest snapshot's map does not match"
import json, re, sys
dom, rep, pt = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
lines = open(sys.argv[4]).read().splitlines()
bad = []
def eq(what, got, want):
    print(f"{what}: {got} (want {want})")
    if got != want: bad.append(what)
maps = re.findall(r'<svg[^>]*class="addrmap torch-snap".*?</svg>', dom, re.S)
eq("fullest-snapshot maps", len(maps), 1)
eq("no OOM map", len(re.findall(r'class="addrmap torch-oom"', dom)), 0)
m = maps[0]
a = rep["memory"]["allocators"][0]
alloc = sum(int(b) for b in re.findall(r'class="blk block talloc" data-bytes="(\d+)"', m))
eq("drawn allocated = report snapshot_allocated_bytes", alloc, a["peak_breakdown"]["snapshot_allocated_bytes"])
eq("= PyTorch max_memory_allocated", alloc, pt["max_memory_allocated"])
eq("rows = PyTorch's segments", len(re.findall(r'class="free segment tseg"', m)), pt["segment.all.current"])
titles = re.findall(r'class="blk block talloc"[^>]*><title>([^<]*)', m)
for k, n in (("A", 3), ("B", 2)):
    line = next(i + 1 for i, l in enumerate(lines) if l.endswith("# line " + k))
    eq("blocks of line " + k, sum(f"bridge.py:{line} (" in t for t in titles), n)
sys.exit(1 if bad else 0)
PY

# both traces in one page (a section per process): each process draws its own maps and series
"$GT_REPORT" --html two.html t.trace p.trace || fail "--html of two traces"
html_dom two.html
expect_eq "OOM maps (two processes)" "$(grep -o 'class="addrmap torch-oom"' two.dom | wc -l)" 1
expect_eq "fullest-snapshot maps (two processes)" "$(grep -o 'class="addrmap torch-snap"' two.dom | wc -l)" 1
expect_eq "PyTorch series (two processes)" "$(grep -o 'class="torch-series"' two.dom | wc -l)" 4

# more allocator OOMs than the page draws (18, 16 drawn): the page says how many it left out
torch_run -t "$PWD/m.trace" "$TORCH_PY" "$SRC/tests/torch/viz.py" mpt.json many > mout.txt 2>&1 ||
    { cat mout.txt; fail "viz.py many"; }
"$GT_REPORT" --json m.trace > m.json || fail "--json (many)"
"$GT_REPORT" --html m.html m.trace || fail "--html (many)"
html_dom m.html
n=$(jget m.json "sum(o.get('level') == 'allocator' for o in d['memory']['ooms'])")
expect_eq "allocator OOMs in the report = PyTorch's num_ooms" "$n" "$(jget mpt.json "d['ooms']")"
expect_eq "OOM maps drawn" "$(grep -o 'class="addrmap torch-oom"' m.dom | wc -l)" 16
grep -q "$((n - 16)) later allocator OOMs are not drawn" m.dom || fail "no note of the $((n - 16)) OOMs not drawn"
