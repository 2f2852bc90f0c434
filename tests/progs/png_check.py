"""Is a PNG screenshot a drawn page, not a blank one? Decodes it with zlib and struct only
(8-bit RGB or RGBA, not interlaced: what Chromium writes) and checks the variety of its pixels.

usage: png_check.py PNG MIN_COLORS MIN_INK
MIN_COLORS: distinct colors at least; MIN_INK: the share of pixels (0..1) that differ from the
most common one (the background) at least. Prints the figures measured."""
import collections
import struct
import sys
import zlib

path, min_colors, min_ink = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
data = open(path, "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit(f"{path}: not a PNG")
pos, idat, hdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        hdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype, _, _, interlace = hdr
if depth != 8 or ctype not in (2, 6) or interlace:
    sys.exit(f"{path}: unsupported PNG (depth {depth}, color type {ctype}, interlace {interlace})")
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
colors = collections.Counter()
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + b) & 255
        elif f == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    if y % 2 == 0:  # every other row is enough to judge variety, twice as fast
        for x in range(0, stride, bpp * 2):
            colors[bytes(line[x:x + 3])] += 1
total = sum(colors.values())
ink = 1 - colors.most_common(1)[0][1] / total
print(f"{path}: {w}x{h}, {len(colors)} colors, {ink:.3f} of the pixels not background")
if len(colors) < min_colors or ink < min_ink:
    sys.exit(f"{path}: looks blank (need {min_colors} colors and {min_ink} ink)")
