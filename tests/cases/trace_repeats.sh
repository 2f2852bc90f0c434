#!/bin/sh
# A trace whose chunks were written twice (same thread, same sequence number) is reported with
# every figure counted once and a warning; two traces joined (cat a a > c) are recognized: the
# first is reported, and the report says a second trace starts there.
. "$SRC/tests/lib.sh"
traced t.trace "$PROGS/mem_scenarios" peak >out.txt 2>&1 || fail "program failed: $(cat out.txt)"
"$GT_REPORT" --json t.trace >t.json 2>e.txt || fail "report failed"
"$PYTHON" - <<'PY' || fail "cannot rewrite the trace"
import struct
b = open("t.trace", "rb").read()
pos = struct.unpack_from("<I", b, 16)[0]
out = [b[:pos]]
n = 0
while pos < len(b):
    size = 24 + struct.unpack_from("<I", b, pos + 8)[0]
    out += [b[pos:pos + size]] * 2  # every chunk twice, back to back
    pos += size
    n += 1
open("twice.trace", "wb").write(b"".join(out))
open("n_chunks", "w").write(str(n))
PY
n=$(cat n_chunks)
[ "$n" -ge 2 ] || fail "expected several chunks, got $n"
"$GT_REPORT" --json twice.trace >twice.json 2>e.txt || fail "report of twice.trace failed: $(cat e.txt)"
grep -q "twice.trace: skipped $n chunks written twice" e.txt || fail "no warning: $(cat e.txt)"
for f in "['memory']['alloc_count']" "['memory']['free_count']" "['memory']['peak_bytes']" \
    "['trace']['records']" "['trace']['chunks']"; do
    expect_eq "chunks twice: $f" "$(jget twice.json "d$f")" "$(jget t.json "d$f")"
done
expect_eq "duplicate_chunks" "$(jget twice.json "d['trace']['duplicate_chunks']")" "$n"
"$GT_REPORT" twice.trace 2>/dev/null | grep -q "$n repeated chunks skipped" || fail "text report does not say it"

cat t.trace t.trace >cat.trace
size=$(wc -c <t.trace | tr -d ' ')
"$GT_REPORT" --json cat.trace >cat.json 2>e.txt || fail "report of cat.trace failed: $(cat e.txt)"
expect_eq "cat: stderr lines" "$(wc -l <e.txt | tr -d ' ')" 1
grep -q "cat.trace: a second trace starts at byte $size (files joined, e.g. by cat)" e.txt ||
    fail "cat a a not recognized: $(cat e.txt)"
grep -q "bad chunk magic" e.txt && fail "still called bad chunk magic"
expect_eq "cat: concatenated" "$(jget cat.json "d['trace']['concatenated']")" True
expect_eq "cat: peak of the first" "$(jget cat.json "d['memory']['peak_bytes']")" \
    "$(jget t.json "d['memory']['peak_bytes']")"
echo "$n repeated chunks skipped; cat a a recognized at byte $size"
