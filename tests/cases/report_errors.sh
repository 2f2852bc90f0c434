#!/bin/sh
# gputrace-report refuses inputs that are not traces with ONE line on stderr and exit status 2:
# empty file, random bytes, a foreign file, a newer format, the other byte order, a cut header,
# a missing file, a directory without traces.
. "$SRC/tests/lib.sh"
[ -x "$GT_REPORT" ] || fail "no $GT_REPORT (run make first)"

"$PYTHON" - <<'PY'
import random, struct
random.seed(7)
open("empty.trace", "wb").close()
open("random.trace", "wb").write(bytes(random.randrange(256) for _ in range(4096)))
open("foreign.trace", "w").write("#!/bin/sh\necho this is not a trace\n")
def header(version=1, min_version=1, endian="<", tag=0x01020304, size=56):
    return (b"GPUTRACE" + struct.pack(endian + "IHHIIIIQQII", tag, version, min_version, size,
                                      1, 1, 1, 0, 0, 1, 0))
open("newer.trace", "wb").write(header(version=4, min_version=4))
open("swapped.trace", "wb").write(header(endian=">"))
open("cut.trace", "wb").write(header()[:40])
PY

# expect_refused FILE 'expected message'
expect_refused() {
    rc=0
    "$GT_REPORT" "$1" >out.txt 2>err.txt || rc=$?
    expect_eq "$1: exit status" "$rc" 2
    expect_eq "$1: stderr lines" "$(wc -l <err.txt | tr -d ' ')" 1
    expect_eq "$1: stdout" "$(cat out.txt)" ""
    grep -q "^gputrace-report: $1: " err.txt || fail "$1: message lacks the file name: $(cat err.txt)"
    grep -qF "$2" err.txt || fail "$1: got '$(cat err.txt)', want '$2'"
    # the same for --json and --dump
    for mode in --json --dump; do
        rc=0
        "$GT_REPORT" $mode "$1" >/dev/null 2>err2.txt || rc=$?
        expect_eq "$1 $mode: exit status" "$rc" 2
        expect_eq "$1 $mode: stderr lines" "$(wc -l <err2.txt | tr -d ' ')" 1
    done
}

expect_refused empty.trace "empty file"
expect_refused random.trace "not a gputrace trace"
expect_refused foreign.trace "not a gputrace trace"
expect_refused newer.trace "written by a newer gputrace (format 4, this reader reads up to 3)"
expect_refused swapped.trace "byte order"
expect_refused cut.trace "truncated in the file header"
expect_refused missing.trace "No such file or directory"
mkdir dir.trace
expect_refused dir.trace "no gputrace traces in this directory"
echo "all refused with one line and exit status 2"
