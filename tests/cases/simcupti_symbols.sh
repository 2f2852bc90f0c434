# The simulated libcupti.so.13 exports what the real one does: every CUPTI function declared in
# the 13.0 headers, under the version node libcupti.so.13, and nothing of its own.
. "$SRC/tests/lib.sh"
home=${CUDA_HOME:-/usr/local/cuda}
sim="$SIMCUPTI_DIR/libcupti.so.13"
[ -e "$sim" ] || skip "simulated CUPTI not built ($sim)"
command -v objdump >/dev/null 2>&1 || skip "no objdump"
[ -f "$home/include/cupti_activity.h" ] || skip "CUPTI headers absent ($home/include)"
real=""
for d in "$home/lib64" "$home/lib" "$home/extras/CUPTI/lib64"; do
    [ -e "$d/libcupti.so.13" ] && { real="$d/libcupti.so.13"; break; }
done
objdump -T "$sim" >sim.txt || fail "objdump $sim"
[ -z "$real" ] || objdump -T "$real" >real.txt || fail "objdump $real"
"$PYTHON" - "$home/include" sim.txt ${real:+real.txt} <<'PY' || fail "exports differ"
import glob, re, sys
inc, sim = sys.argv[1], sys.argv[2]
real = sys.argv[3] if len(sys.argv) > 3 else None
declared = set()
for h in glob.glob(inc + '/cupti*.h'):
    text = re.sub(r'/\*.*?\*/', ' ', open(h, errors='replace').read(), flags=re.S)
    declared |= set(re.findall(r'\bCUptiResult\s+CUPTIAPI\s+(cupti\w+)\s*\(', text))
def exports(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 7 and f[1] == 'g' and '.text' in line:
            out[f[-1]] = f[-2]
    return out
s = exports(sim)
bad = False
for name in sorted(declared - set(s)):
    print('missing: %s' % name); bad = True
for name, ver in sorted(s.items()):
    if name not in declared:
        print('exported but not a CUPTI 13 function: %s' % name); bad = True
    elif ver != 'libcupti.so.13':
        print('%s has version %r, want libcupti.so.13' % (name, ver)); bad = True
if real:
    r = exports(real)
    for name in sorted(set(r) & declared - set(s)):
        print('real libcupti exports %s, we do not' % name); bad = True
    print('%d of the real library\'s %d exports (the rest are undeclared/private)' % (len(set(r) & set(s)), len(r)))
print('%d exports, all declared in the headers' % len(s))
sys.exit(1 if bad else 0)
PY
