# Helpers sourced by tests/cases/*.sh. Each case runs in its own empty working directory.
set -eu
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*"; exit 77; }
# expect_eq WHAT GOT WANT
expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }
# A sanitizer build of the shim (make SAN=...) needs its runtime loaded before anything else.
GT_PRELOAD="$GT_LIB"
asan_rt=$(ldd "$GT_LIB" 2>/dev/null | awk '/libasan/ {print $3}')
tsan_rt=$(ldd "$GT_LIB" 2>/dev/null | awk '/libtsan/ {print $3}')
if [ -n "$asan_rt" ]; then
    GT_PRELOAD="$asan_rt $GT_LIB"
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}"
elif [ -n "$tsan_rt" ]; then
    GT_PRELOAD="$tsan_rt $GT_LIB"
    export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:report_signal_unsafe=0:die_after_fork=0:suppressions=$SRC/tests/tsan.supp}"
fi
# The simulated CUPTI checks every buffer a client hands it as zeroed (the shim does, setting
# CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER), and aborts on a byte set (tests/simcupti).
export GTSIM_CUPTI_CHECK_ZEROED="${GTSIM_CUPTI_CHECK_ZEROED:-1}"
# Run a command against the simulated driver, traced by the shim, into trace file $1.
# The simulated CUPTI comes first too, so the shim finds it by the default search.
traced() { out=$1; shift; LD_LIBRARY_PATH="$SIMCUPTI_DIR:$SIM_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    GPUTRACE_OUTPUT="$out" LD_PRELOAD="$GT_PRELOAD" "$@"; }
# Run a command against the simulated driver without the shim.
untraced() { LD_LIBRARY_PATH="$SIMCUPTI_DIR:$SIM_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }
# jq-free JSON field access through python3: jget FILE 'expr on d'
jget() { "$PYTHON" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# html_dom PAGE.html: headless Chromium draws the page into PAGE.dom (its DOM after the script
# ran); fails unless the script finished drawing (data-drawn="1") without a JavaScript error.
# Needs CHROMIUM (the cases set it, or skip where it is not installed).
html_dom() {
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$PWD/chrome" \
        --virtual-time-budget=10000 --dump-dom "file://$PWD/$1" > "${1%.html}.dom" 2> chrome.err ||
        fail "chromium failed on $1: $(tail -n 3 chrome.err)"
    grep -q 'data-drawn="1"' "${1%.html}.dom" || fail "$1: the page's script did not finish drawing"
    ! grep -q 'class="js-error"' "${1%.html}.dom" || fail "$1: $(grep -o 'class="js-error">[^<]*' "${1%.html}.dom")"
}
