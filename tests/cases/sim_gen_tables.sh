# tests/sim/gen_exports.[ch] are generated from the CUDA toolkit by tests/sim/gen_tables.py:
# regenerate into a temporary directory and require the committed files to be identical.
. "$SRC/tests/lib.sh"
[ -f "$CUDA_HOME/include/cudaTypedefs.h" ] || skip "no CUDA headers under $CUDA_HOME/include"
[ -f "$CUDA_HOME/lib64/stubs/libcuda.so" ] || [ -f "$CUDA_HOME/lib/stubs/libcuda.so" ] ||
    skip "no stub libcuda.so under $CUDA_HOME"
command -v "$PYTHON" > /dev/null 2>&1 || skip "no $PYTHON to run the generator"
"$PYTHON" "$SRC/tests/sim/gen_tables.py" --cuda-home "$CUDA_HOME" --out-dir gen || fail "generator failed"
for f in gen_exports.h gen_exports.c; do
    diff -u "$SRC/tests/sim/$f" "gen/$f" > "$f.diff" || { head -n 40 "$f.diff"; fail "tests/sim/$f is stale: rerun tests/sim/gen_tables.py"; }
done
