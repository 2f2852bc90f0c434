# `make install` puts the bridge's module where the installed library finds it
# (PREFIX/share/gputrace/python/, next to PREFIX/lib): the installed shim, alone, judges the
# fragmentation OOM of the real PyTorch on the allocator level.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
# A sub-make of our own: the outer make's flags and jobserver do not apply here.
MAKEFLAGS= MFLAGS= MAKELEVEL= make -s -C "$SRC" O="$O" install PREFIX="$PWD/inst" > make.txt 2>&1 ||
    { cat make.txt; fail "make install"; }
[ -f inst/share/gputrace/python/gputrace_torch.py ] || fail "the module is not installed"
# (an ASan build: its runtime first, or the shell that runs run-torch aborts)
GPUTRACE_OUTPUT="$PWD/t.trace" LD_PRELOAD="${asan_rt:+$asan_rt:}$PWD/inst/lib/libgputrace.so" torch_run "$TORCH_PY" \
    "$SRC/tests/torch/bridge.py" frag pt.json > out.txt 2>&1 || { cat out.txt; fail "bridge.py frag"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
expect_eq "allocator-level OOM verdicts" \
    "$(jget r.json "[(o['level'], o['verdict']) for o in d['memory']['ooms']]")" "[('allocator', 'fragmentation')]"
