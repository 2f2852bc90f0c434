# Helpers sourced by tests/cases/*.sh. Each case runs in its own empty working directory.
set -eu
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*"; exit 77; }
# expect_eq WHAT GOT WANT
expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }
# Run a command against the simulated driver, traced by the shim, into trace file $1.
traced() { out=$1; shift; LD_LIBRARY_PATH="$SIM_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    GPUTRACE_OUTPUT="$out" LD_PRELOAD="$GT_LIB" "$@"; }
# Run a command against the simulated driver without the shim.
untraced() { LD_LIBRARY_PATH="$SIM_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }
# jq-free JSON field access through python3: jget FILE 'expr on d'
jget() { "$PYTHON" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
