# Another CUPTI Activity API client in the traced process (tests/progs/cupti_client.py, which
# binds cuptiActivityRegisterCallbacks through the dynamic linker, as Kineto does). CUPTI keeps
# one pair of buffer callbacks per process: the client gets the kernels it gets untraced, either
# way. Late (after the first cuInit, like torch.profiler): gputrace flushes its own records first,
# keeps the 2 kernels launched before, says "taken". Early (before the first cuInit): gputrace
# steps aside ("owned") instead of taking the client's records.
. "$SRC/tests/lib.sh"
command -v "$PYTHON" > /dev/null || skip "no $PYTHON"
[ -e "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built ($SIMCUPTI_DIR/libcupti.so.13)"
[ -z "$tsan_rt" ] || skip "ThreadSanitizer build: python with the TSan runtime preloaded dies of SIGSEGV in this script, untraced too (cause not investigated); the case runs in the plain and ASan builds"
# a sanitizer build's fixtures need its runtime first in the process, traced or not
san_rt=$asan_rt
for mode in early late; do
    expect_eq "$mode, untraced" \
        "$(LD_PRELOAD="$san_rt" untraced "$PYTHON" "$SRC/tests/progs/cupti_client.py" $mode)" "kernels=5"
    rm -f t.trace*
    expect_eq "$mode, traced: the client's kernels" \
        "$(traced "$PWD/t.trace" "$PYTHON" "$SRC/tests/progs/cupti_client.py" $mode)" "kernels=5"
    "$GT_REPORT" --json t.trace > r.json || fail "$mode: report"
    "$GT_REPORT" --dump t.trace > dump.txt || fail "$mode: dump"
    case $mode in
    early) want_status=owned want_kernels=0 ;;
    late) want_status=taken want_kernels=2 ;;
    esac
    expect_eq "$mode: gputrace's CUPTI status" "$(jget r.json 'd["trace"]["cupti"]["status"]')" $want_status
    expect_eq "$mode: gputrace's kernels" "$(grep -c ' GPU_KERNEL ' dump.txt)" $want_kernels
done
