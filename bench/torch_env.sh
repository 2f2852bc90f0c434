# Sourced by bench/torch_bridge.sh and bench/torch_overhead.sh (set -eu, $0 the caller): the
# repository root, the build directory O (made absolute), the virtualenv's Python, a scratch
# directory W removed at exit, and RUN, the simulated stack's runner. The caller sets NAME (its
# messages' prefix) before sourcing.
ROOT=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-build}
case "$O" in /*) ;; *) O="$ROOT/$O" ;; esac
PY="${GT_VENV:-$ROOT/.venv}/bin/python"
W=$(mktemp -d "${TMPDIR:-/tmp}/gputrace-$NAME.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
[ -x "$PY" ] || { echo "$NAME.sh: no $PY (make torch-env, or GT_VENV=...)" >&2; exit 2; }
RUN="$ROOT/tests/simrt/run-torch -b $O"
