# The launcher (issue 22): signals sent to it reach the program and its exit status is the
# program's; the output is checked before the program starts (a missing directory is one clear
# error, the program does not run untraced); a command that cannot run, or a wrong GPUTRACE_LIB,
# is one line; GPUTRACE_OUTPUT already set is honoured, -o replaces it and says so; -o DIR writes
# into DIR; an existing FILE is refused without -f and replaced with it.
. "$SRC/tests/lib.sh"
[ -z "$tsan_rt" ] || skip "under ThreadSanitizer: its runtime, which the library needs first in LD_PRELOAD, crashes the uninstrumented sh this case runs under the launcher"
export LD_LIBRARY_PATH="$SIMCUPTI_DIR:$SIM_DIR"
unset GPUTRACE_OUTPUT
# A sanitizer build of the library needs its runtime first in LD_PRELOAD: the launcher appends.
[ -z "$asan_rt" ] || export LD_PRELOAD="$asan_rt"
# Signals: the program writes its pid, then waits (sleep in the background, so a shell trap runs
# at once). SIG: the signal sent to the launcher; TRAP: the program's handler ('' = none).
# Prints the launcher's exit status (-N: killed by N) and whether the program is still alive.
sigrun() { "$PYTHON" - "$GT_LAUNCHER" "$@" <<'PY'
import os, signal, subprocess, sys, time
launcher, sig, trap = sys.argv[1], getattr(signal, sys.argv[2]), sys.argv[3]
if os.path.exists("pid"):
    os.unlink("pid")
script = (f"trap '{trap}' {sys.argv[2][3:]}; " if trap else "") + "echo $$ > pid; sleep 30 > /dev/null 2>&1 & wait"
p = subprocess.Popen([launcher, "-o", "sig.%p.trace", "--", "sh", "-c", script])
for _ in range(500):
    if os.path.exists("pid") and open("pid").read().strip():
        break
    time.sleep(0.01)
child = int(open("pid").read())
time.sleep(0.1)
os.kill(p.pid, sig)
try:
    rc = p.wait(timeout=10)
except subprocess.TimeoutExpired:
    p.kill()
    rc = "hang"
try:
    os.kill(child, 0)
    alive = "alive"
    os.kill(child, signal.SIGKILL)
except ProcessLookupError:
    alive = "gone"
print(rc, alive)
PY
}
for s in SIGTERM SIGHUP SIGINT SIGQUIT SIGUSR1; do
    n=$("$PYTHON" -c "import signal; print(int(signal.$s))")
    expect_eq "$s: the launcher's status and the program" "$(sigrun $s '')" "-$n gone"
done
expect_eq "SIGTERM handled by the program: its exit status" "$(sigrun SIGTERM 'exit 7')" "7 gone"
# A missing output directory: one line, status 2, the program never ran.
got=$(set +e; "$GT_LAUNCHER" -o "$PWD/missing/run.trace" -- sh -c 'touch ran' 2>&1; echo "rc=$?")
expect_eq "missing directory" "$got" "gputrace: cannot write the trace into $PWD/missing: No such file or directory
rc=2"
[ ! -e ran ] || fail "the program ran although its trace could not be written"
touch afile
got=$(set +e; "$GT_LAUNCHER" -o "$PWD/afile/run.trace" -- sh -c 'touch ran' 2>&1; echo "rc=$?")
expect_eq "a file as directory" "$got" "gputrace: cannot write the trace into $PWD/afile: not a directory
rc=2"
if [ "$(id -u)" != 0 ]; then
    mkdir ro && chmod 555 ro
    got=$(set +e; "$GT_LAUNCHER" -o "$PWD/ro/run.trace" -- sh -c 'touch ran' 2>&1; echo "rc=$?")
    expect_eq "unwritable directory" "$got" "gputrace: cannot write the trace into $PWD/ro: Permission denied
rc=2"
fi
[ ! -e ran ] || fail "the program ran although its trace could not be written"
# A command that cannot run: one line, the shell's statuses.
got=$(set +e; "$GT_LAUNCHER" -o x.trace -- /nonexistent 2>&1; echo "rc=$?")
expect_eq "missing command" "$got" "gputrace: cannot run /nonexistent: No such file or directory
rc=127"
printf 'not a program\n' > noexec
chmod 644 noexec
got=$(set +e; "$GT_LAUNCHER" -o x.trace -- ./noexec 2>&1; echo "rc=$?")
expect_eq "command not executable" "$got" "gputrace: cannot run ./noexec: Permission denied
rc=126"
# A wrong GPUTRACE_LIB is named.
got=$(set +e; GPUTRACE_LIB=/nonexistent.so "$GT_LAUNCHER" -- true 2>&1; echo "rc=$?")
expect_eq "GPUTRACE_LIB" "$got" "gputrace: GPUTRACE_LIB=/nonexistent.so: No such file or directory
rc=2"
got=$(set +e; GPUTRACE_LIB=/tmp "$GT_LAUNCHER" -- true 2>&1; echo "rc=$?")
expect_eq "GPUTRACE_LIB a directory" "$got" "gputrace: GPUTRACE_LIB=/tmp: not a regular file
rc=2"
# GPUTRACE_OUTPUT already set: honoured without -o; -o replaces it and says so.
GPUTRACE_OUTPUT=env.%p.trace "$GT_LAUNCHER" -- "$PROGS/exits" return > /dev/null 2> env.err || [ $? = 3 ] ||
    fail "env run: $(cat env.err)"
ls env.*.trace > /dev/null 2>&1 || fail "GPUTRACE_OUTPUT was not honoured: $(cat env.err)"
grep -q "trace written to $PWD/env\.[0-9]*\.trace" env.err || fail "env run: $(cat env.err)"
GPUTRACE_OUTPUT=env2.trace "$GT_LAUNCHER" -o opt.trace -- "$PROGS/exits" return > /dev/null 2> opt.err || [ $? = 3 ] ||
    fail "-o run: $(cat opt.err)"
[ -s opt.trace ] && [ ! -e env2.trace ] || fail "-o did not win over GPUTRACE_OUTPUT"
expect_eq "-o over GPUTRACE_OUTPUT: said" "$(head -n 1 opt.err)" "gputrace: -o opt.trace replaces GPUTRACE_OUTPUT=env2.trace"
# -o DIR: the default name inside it.
mkdir out
"$GT_LAUNCHER" -o out -- "$PROGS/exits" return > /dev/null 2> dir.err || [ $? = 3 ] || fail "-o DIR: $(cat dir.err)"
ls out/gputrace.*.trace > /dev/null 2>&1 || fail "-o DIR wrote nothing into DIR: $(cat dir.err)"
# An existing FILE: refused before the program runs, replaced with -f.
got=$(set +e; "$GT_LAUNCHER" -o opt.trace -- sh -c 'touch ran' 2>&1; echo "rc=$?")
expect_eq "existing output" "$got" "gputrace: $PWD/opt.trace exists; use -f to replace it
rc=2"
[ ! -e ran ] || fail "the program ran although its output exists"
"$GT_LAUNCHER" -f -o opt.trace -- "$PROGS/exits" exit > /dev/null 2>&1 && fail "exit status lost" || [ $? = 4 ] ||
    fail "-f run: status $?"
[ -s opt.trace ] || fail "-f did not replace the file"
exit 0
