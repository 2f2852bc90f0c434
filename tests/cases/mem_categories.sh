# Device memory at the process peak by category (docs/ANALYSES.md, "At the process peak"): a
# known GPU library's allocations are `workspace`, PyTorch's allocator's segments
# `pytorch_reserved` (no snapshot to split them), a temporary live at the peak (freed right after
# it was made) `temporary`, anything else `other`; exact bytes and counts
# (tests/progs/workspace.c with tests/libs/wsalloc.c copied under libraries' file names).
. "$SRC/tests/lib.sh"
MiB=1048576
for l in libnccl.so.2 libcublasLt.so.13 libfoo.so libc10_cuda.so; do
    cp "$PROGS/libwsalloc.so" "./$l" || fail "copy $l"
done
# own 5 MiB; nccl 2 x 4 MiB, cublasLt 3 x 1 MiB (workspace); foo 1 x 2 MiB (other);
# c10_cuda 2 x 8 MiB (PyTorch's segments); 3 MiB temporary at the peak (a 1 MiB one before it)
traced t.trace "$PROGS/workspace" "$PWD/libnccl.so.2" 2 4 "$PWD/libcublasLt.so.13" 3 1 \
    "$PWD/libfoo.so" 1 2 "$PWD/libc10_cuda.so" 2 8 >out.txt 2>&1 || fail "program failed: $(cat out.txt)"
"$GT_REPORT" --json t.trace >t.json || fail "report failed"
pb="d['memory']['peak_breakdown']"
expect_eq "peak" "$(jget t.json "$pb['peak_bytes']")" $((37 * MiB))
expect_eq "temporaries" "$(jget t.json "d['memory']['temporary_allocations']")" "{'count': 2, 'bytes': $((4 * MiB))}"
expect_eq "by category" \
    "$(jget t.json "[(c['category'], c['source'], c['bytes'], c['count']) for c in $pb['by_category']]")" \
    "[('pytorch_reserved', 'library', $((16 * MiB)), 2), ('workspace', 'library', $((11 * MiB)), 5), ('other', 'library', $((7 * MiB)), 2), ('temporary', 'library', $((3 * MiB)), 1)]"
expect_eq "no snapshot" "$(jget t.json "$pb['by_category_snapshot']")" None
expect_eq "adds up" "$(jget t.json "sum(c['bytes'] for c in $pb['by_category'])")" $((37 * MiB))
"$GT_REPORT" t.trace >t.txt || fail "text report failed"
grep -q "^  by what   pytorch_reserved 16.0 MiB, workspace 11.0 MiB, other 7.00 MiB, temporary 3.00 MiB$" t.txt ||
    fail "text: $(grep -A1 'by what' t.txt)"
# Without stacks no library is known: all of it is other.
GPUTRACE_STACKS=none traced n.trace "$PROGS/workspace" "$PWD/libnccl.so.2" 2 4 >out.txt 2>&1 ||
    fail "program failed (no stacks): $(cat out.txt)"
"$GT_REPORT" --json n.trace >n.json || fail "report failed (no stacks)"
expect_eq "no stacks" \
    "$(jget n.json "[(c['category'], c['bytes'], c['count']) for c in $pb['by_category']]")" \
    "[('other', $((13 * MiB)), 3), ('temporary', $((3 * MiB)), 1)]"
echo "workspace, pytorch_reserved, temporary and other at the peak exact"
