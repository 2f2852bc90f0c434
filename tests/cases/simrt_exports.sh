# The simulated runtime exports exactly NVIDIA's libcudart.so.13 names, in its version node and
# under its soname; gen_stubs.c is current; a stub logs its name once and returns 801.
. "$SRC/tests/lib.sh"
rt="$O/simrt/libcudart.so.13"
[ -f "$rt" ] || fail "$rt missing"
real="$CUDA_HOME/lib64/libcudart.so.13"
[ -f "$real" ] || skip "no $real to compare with"
readelf -d "$rt" | grep -q 'Library soname: \[libcudart.so.13\]' || fail "soname"
nm -D --defined-only --with-symbol-versions "$real" | awk '{print $3}' | sort > real.txt
nm -D --defined-only --with-symbol-versions "$rt" | awk '{print $3}' | grep -v '^gtsim' | sort > ours.txt
diff real.txt ours.txt > diff.txt || { head -n 20 diff.txt; fail "exports differ from $real"; }
echo "$(wc -l < ours.txt) exports, as $real"
"$PYTHON" "$SRC/tests/simrt/gen_stubs.py" --cuda-home "$CUDA_HOME" --out-dir "$PWD" > /dev/null
cmp -s gen_stubs.c "$SRC/tests/simrt/gen_stubs.c" || fail "tests/simrt/gen_stubs.c is stale: run tests/simrt/gen_stubs.py"
# implemented: strong (T); the rest weak stubs (W)
nm -D --defined-only "$rt" | grep -q ' T cudaMalloc@' || fail "cudaMalloc is not implemented"
nm -D --defined-only "$rt" | grep -q ' W cudaGraphCreate@' || fail "cudaGraphCreate is not a stub"
echo "$(nm -D --defined-only "$rt" | grep -c ' T ') implemented, $(nm -D --defined-only "$rt" | grep -c ' W ') stubs"
# an instrumented build: its sanitizer runtime first, then the library (python itself is not)
san_pre=""; [ -z "$asan_rt$tsan_rt" ] || san_pre=$(echo $asan_rt $tsan_rt "$rt")
LD_PRELOAD="$san_pre" GTSIM_LOG="$PWD/sim.log" "$PYTHON" - "$rt" > out.txt 2> err.txt <<'PY' || { cat out.txt err.txt; fail "stub call"; }
import ctypes, sys
rt = ctypes.CDLL(sys.argv[1])
print(rt.cudaGraphCreate(None, 0), rt.cudaGraphCreate(None, 0))
PY
expect_eq "stub returns" "$(cat out.txt)" "801 801"
expect_eq "stub logged once" "$(cat err.txt)" "gtsim-rt: cudaGraphCreate is not implemented (cudaErrorNotSupported)"
expect_eq "GTSIM_LOG" "$(cat sim.log)" "rtstub cudaGraphCreate rc=801"
