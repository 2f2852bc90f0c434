# The simulated libcuda.so.1 exports every symbol of NVIDIA's stub libcuda.so, under SONAME
# libcuda.so.1, without symbol versions; the only extra exports are the gtsim_* test hooks.
. "$SRC/tests/lib.sh"
lib="$SIM_DIR/libcuda.so.1"
[ -f "$lib" ] || fail "$lib not built"
command -v nm > /dev/null 2>&1 && command -v readelf > /dev/null 2>&1 || skip "binutils (nm, readelf) not installed"
stub="$CUDA_HOME/lib64/stubs/libcuda.so"
[ -f "$stub" ] || stub="$CUDA_HOME/lib/stubs/libcuda.so"
[ -f "$stub" ] || skip "no NVIDIA stub libcuda.so under $CUDA_HOME to compare with"
nm -D --defined-only "$stub" | awk '{print $3}' | sort > want.txt
nm -D --defined-only "$lib" | awk '{print $3}' | sort > got.txt
comm -23 want.txt got.txt > missing.txt
[ ! -s missing.txt ] || { head missing.txt; fail "$(wc -l < missing.txt) stub exports missing"; }
comm -13 want.txt got.txt | grep -v '^gtsim_' > extra.txt || true
[ ! -s extra.txt ] || { head extra.txt; fail "unexpected exports"; }
readelf -d "$lib" | grep -q 'SONAME.*\[libcuda\.so\.1\]' || fail "SONAME is not libcuda.so.1"
! readelf -V "$lib" | grep -q '\.gnu\.version_d' || fail "the library defines symbol versions"
echo "$(wc -l < want.txt) exports present, SONAME libcuda.so.1, unversioned"
