# The report on hostile object files (issue 8): a program is traced, then the object file the
# trace points to (a copy of the program, with -g debug info) is replaced by corrupted versions:
# cut to 0 bytes, to its ELF header, to half; all random; random section headers; e_shoff past
# the end; e_shnum 65535; every .debug_* section claiming 2^62 bytes; random bytes over each of
# .debug_info, .debug_abbrev, .debug_line, .debug_str, .debug_aranges, .debug_rnglists,
# .debug_loclists, .symtab, .strtab (build-id note kept, so libdw does read them); bit flips in
# the debug sections and anywhere past the header (10 seeds each). Every report must finish
# (30 s timeout), exit 0 and keep the exact figures (200 allocations, 20 launches over the call
# sites); a file libdw cannot read falls back to module+offset names ("symbolized_by": "offset").
. "$SRC/tests/lib.sh"
cat > mut.py <<'EOF'
# mut.py VARIANT SEED IN OUT: a corrupted copy of the ELF file IN.
import random, struct, sys
variant, seed, src, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
b = bytearray(open(src, "rb").read())
rnd = random.Random(seed)
def noise(off, n):
    b[off:off + n] = bytes(rnd.getrandbits(8) for _ in range(n))
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
def sections():
    out = {}
    so, = struct.unpack_from("<Q", b, shoff + shstrndx * shentsize + 0x18)
    for i in range(shnum):
        h = shoff + i * shentsize
        name, = struct.unpack_from("<I", b, h)
        off, size = struct.unpack_from("<QQ", b, h + 0x18)
        end = b.index(b"\0", so + name)
        out[b[so + name:end].decode()] = (h, off, size)
    return out
sec = sections()
debug = [n for n in sec if n.startswith(".debug_")]
if variant == "empty": b = bytearray()
elif variant == "header": b = b[:64]
elif variant == "half": b = b[:len(b) // 2]
elif variant == "random": noise(0, len(b))
elif variant == "shdrs": noise(shoff, shnum * shentsize)
elif variant == "shoff": struct.pack_into("<Q", b, 0x28, 0x7fffffffffff0000)
elif variant == "shnum": struct.pack_into("<H", b, 0x3C, 0xffff)
elif variant == "sizes":  # every debug section claims 2^62 bytes
    for n in debug: struct.pack_into("<Q", b, sec[n][0] + 0x20, 1 << 62)
elif variant.startswith(".debug_") or variant in (".symtab", ".strtab"):
    if variant not in sec: sys.exit("no section " + variant)
    noise(sec[variant][1], sec[variant][2])
elif variant == "flips":  # 1 byte in 50 of the debug sections
    for n in debug:
        _, off, size = sec[n]
        for i in range(size // 50): b[off + rnd.randrange(size)] ^= 1 << rnd.randrange(8)
elif variant == "anyflips":  # 1 byte in 200 anywhere past the ELF header, build-id note kept
    _, noff, nsize = sec[".note.gnu.build-id"]
    for i in range(len(b) // 200):
        k = rnd.randrange(64, len(b))
        if not noff <= k < noff + nsize: b[k] ^= 1 << rnd.randrange(8)
else: sys.exit("unknown variant " + variant)
open(dst, "wb").write(b)
EOF
cp "$PROGS/threads" app
cp app app.orig
traced t.trace ./app 2 100 > /dev/null || fail "traced program failed"
check() { # VARIANT SEED -> prints the call-site summary
    "$PYTHON" mut.py "$1" "$2" app.orig app || fail "$1: cannot make the variant"
    set +e
    timeout 30 "$GT_REPORT" --json t.trace > v.json 2> v.err
    rc=$?
    set -e
    [ $rc -eq 0 ] || fail "$1 (seed $2): report exit $rc: $(head -c 300 v.err)"
    jget v.json "'%d %d %s' % (sum(s['count'] for s in d['memory']['by_site']),
        sum(s['count'] for s in d['timeline']['launch_sites']),
        ','.join(sorted(set(s['symbolized_by'] for s in d['memory']['by_site'] + d['timeline']['launch_sites']))))"
}
# the intact copy: DWARF names
cp app.orig app
expect_eq "intact" "$(timeout 30 "$GT_REPORT" --json t.trace | "$PYTHON" -c 'import json,sys; d=json.load(sys.stdin); print(sorted(set(s["function"] + ":" + s["symbolized_by"] for s in d["memory"]["by_site"])))')" \
    "['worker:dwarf']"
for v in empty header half random shdrs shoff shnum; do
    expect_eq "$v" "$(check $v 1)" "200 20 offset"
done
for v in sizes .debug_info .debug_abbrev .debug_line .debug_str .debug_aranges .debug_rnglists \
    .debug_loclists .symtab .strtab; do
    s=$(check $v 1)
    expect_eq "$v: figures" "${s% *}" "200 20"
    echo "$v: symbolized by ${s##* }"
done
for v in flips anyflips; do
    for seed in 1 2 3 4 5 6 7 8 9 10; do
        s=$(check $v $seed)
        expect_eq "$v seed $seed: figures" "${s% *}" "200 20"
    done
done
echo "37 corrupted object files: every report finished with exact figures"
