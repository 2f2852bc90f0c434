#!/bin/sh
# gputrace-report refuses inputs that are not traces with ONE line on stderr and exit status 2:
# empty file, random bytes, a foreign file, a newer format, the other byte order, a cut header,
# a missing file, a directory without traces, a damaged header (checksum, fields out of range).
. "$SRC/tests/lib.sh"
[ -x "$GT_REPORT" ] || fail "no $GT_REPORT (run make first)"

"$PYTHON" - <<'PY'
import random, struct, zlib
random.seed(7)
open("empty.trace", "wb").close()
open("random.trace", "wb").write(bytes(random.randrange(256) for _ in range(4096)))
open("foreign.trace", "w").write("#!/bin/sh\necho this is not a trace\n")
def header(version=1, min_version=1, endian="<", tag=0x01020304, size=56, pid=1, clock=1,
           mono=0):
    h = (b"GPUTRACE" + struct.pack(endian + "IHHIIIIQQI", tag, version, min_version, size,
                                   1, pid, 1, 0, mono, clock))
    crc = zlib.crc32(h) if version >= 4 else 0  # format 4 seals the header (TRACE_FORMAT.md)
    return h + struct.pack(endian + "I", crc)
open("newer.trace", "wb").write(header(version=6, min_version=6))
# a sealed header with one bit of its start time flipped, and older headers (no checksum)
# holding values no writer produces
flipped = bytearray(header(version=4, mono=10**12))
flipped[41] ^= 0x10
open("flipped.trace", "wb").write(flipped)
open("clock.trace", "wb").write(header(version=3, clock=5))
open("pid.trace", "wb").write(header(version=3, pid=0))
open("versions.trace", "wb").write(header(version=2, min_version=3))
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
expect_refused newer.trace "written by a newer gputrace (format 6, this reader reads up to 5)"
expect_refused flipped.trace "corrupt file header (checksum mismatch)"
expect_refused clock.trace "corrupt file header (clock id"
expect_refused pid.trace "corrupt file header (process id"
expect_refused versions.trace "corrupt file header (version fields)"
expect_refused swapped.trace "byte order"
expect_refused cut.trace "truncated in the file header"
expect_refused missing.trace "No such file or directory"
mkdir dir.trace
expect_refused dir.trace "no gputrace traces in this directory"
echo "all refused with one line and exit status 2"
