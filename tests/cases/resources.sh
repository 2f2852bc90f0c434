# The traced program never suffers from our I/O: a missing or read-only output directory, a file
# size limit (the disk filling up), a symlink or an existing file at the output path. The program
# runs on with its own output and status; tracing stops with one warning; what was written stays
# readable (issue 8, resources and security).
. "$SRC/tests/lib.sh"
want=$(set +e; untraced "$PROGS/threads" 2 20000; echo "rc=$?")

# Missing directory.
got=$(set +e; traced "$PWD/no/such/dir/t.trace" "$PROGS/threads" 2 20000 2> missing.err; echo "rc=$?")
expect_eq "missing dir: output" "$got" "$want"
expect_eq "missing dir: one warning" "$(grep -c gputrace missing.err)" 1

# Read-only directory (root ignores permissions, so use a read-only bind... or skip the check).
mkdir ro && chmod 555 ro
if [ "$(id -u)" != 0 ]; then
    got=$(set +e; traced "$PWD/ro/t.trace" "$PROGS/threads" 2 20000 2> ro.err; echo "rc=$?")
    expect_eq "read-only dir: output" "$got" "$want"
    expect_eq "read-only dir: one warning" "$(grep -c gputrace ro.err)" 1
fi

# File size limit: 1 MiB, well below what the run writes. Without care the kernel would kill the program with SIGXFSZ.
# Uncompressed chunks: compressed, this run would stay under the limit.
got=$(set +e; ulimit -f 2048; export GPUTRACE_COMPRESS=0; traced "$PWD/small.trace" "$PROGS/threads" 2 20000 2> fsize.err; echo "rc=$?")
expect_eq "file size limit: output" "$got" "$want"
expect_eq "file size limit: one warning" "$(grep -c gputrace fsize.err)" 1
grep -q "size limit" fsize.err || fail "warning does not say why: $(cat fsize.err)"
size=$(wc -c < small.trace)
[ "$size" -le 1048576 ] || fail "trace grew past the limit: $size"
"$GT_REPORT" --json small.trace > small.json 2> small.err || fail "cut trace unreadable: $(cat small.err)"
expect_eq "file size limit: not a clean end" "$(jget small.json "d['trace']['clean_end']")" False
expect_eq "file size limit: the records before the limit are there" \
    "$(jget small.json "d['memory']['alloc_count'] > 1000")" True
echo "file size limit: $size bytes kept, $(jget small.json "d['memory']['alloc_count']") allocations readable"

# A symlink at the output path is never followed; an existing file is never clobbered.
echo "precious" > target
ln -s target link.trace
got=$(set +e; traced "$PWD/link.trace" "$PROGS/threads" 1 100; echo "rc=$?")
expect_eq "symlink: target untouched" "$(cat target)" precious
[ -L link.trace ] || fail "symlink replaced"
ls link.trace.[0-9]* > /dev/null 2>&1 || fail "no trace written beside the symlink"
echo "keep me" > exists.trace
traced "$PWD/exists.trace" "$PROGS/threads" 1 100 > /dev/null 2>&1
expect_eq "existing file untouched" "$(cat exists.trace)" "keep me"
f=$(ls exists.trace.[0-9]*) || fail "no trace written beside the existing file"
expect_eq "mode 0600" "$(stat -c %a "$f")" 600
