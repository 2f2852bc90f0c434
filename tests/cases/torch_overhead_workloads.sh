# bench/torch_overhead.py (issue 23's benchmark workloads) on the real PyTorch: under gputrace's
# defaults the launch-bound loop's launches are counted exactly per Python call site (N timed +
# N/10 warm-up at the x.add(1) line, one fill kernel for torch.ones), as the stacks must keep
# them; the other workloads and tracers run and print their figure.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
B="$SRC/bench/torch_overhead.py"
torch_run -t "$PWD/t.trace" "$TORCH_PY" "$B" launch 400 > out.txt 2>&1 || { cat out.txt; fail "launch 400"; }
grep -q '^ns_per_unit=[0-9]' out.txt && grep -q '^cpu_ns_per_unit=[0-9]' out.txt || fail "launch: no figures"
"$GT_REPORT" t.trace > r.txt || fail "report"
add=$(grep -n 'x.add(1)' "$B" | cut -d: -f1)
ones=$(grep -n 'torch.ones(1024' "$B" | cut -d: -f1)
sed -n '/^launches by call site/,/^$/p' r.txt
sed -n '/^launches by call site/,/^$/p' r.txt | grep -Eq "^ +440 +0  make_launch.<locals>.body \(torch_overhead.py:$add\)" ||
    fail "launches at the x.add(1) line: want 440"
sed -n '/^launches by call site/,/^$/p' r.txt | grep -Eq "^ +1 +0  make_launch \(torch_overhead.py:$ones\)" ||
    fail "launches at the torch.ones line: want 1"
grep -q '^launches  441 ' r.txt || fail "441 launches in all"
for w in alloc step; do
    rm -f t.trace*
    torch_run -t "$PWD/t.trace" "$TORCH_PY" "$B" $w 40 > out.txt 2>&1 || { cat out.txt; fail "$w 40"; }
    grep -q '^ns_per_unit=[0-9]' out.txt || fail "$w: no figure"
done
for t in profiler history; do # torch.profiler also says how many GPU events it got
    torch_run "$TORCH_PY" "$B" step 20 $t > out.txt 2>&1 || { cat out.txt; fail "step 20 $t"; }
    grep -q '^ns_per_unit=[0-9]' out.txt || fail "$t: no figure"
done
