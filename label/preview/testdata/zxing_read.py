"""Reads the barcodes of PNG files with zxing-cpp (Debian: python3-zxing-cpp) and prints them
as one JSON object: each file's name to its list of symbols, each with its format, text, bytes
(hex, so every byte survives), symbology identifier and content type.

Usage: python3 zxing_read.py FILE.png...

The PNG is decoded here with zlib and numpy (both in Debian's python3 and python3-numpy,
which python3-zxing-cpp depends on) so that no imaging library is needed: 8-bit grey, grey
with alpha, RGB or RGBA, not interlaced, as Go's image/png writes them.
"""

import json
import struct
import sys
import zlib

import numpy as np
import zxingcpp


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    if pb <= pc:
        return b
    return c


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat = 8, []
    width = height = depth = ctype = interlace = None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(ctype)
    if depth != 8 or channels is None or interlace != 0:
        raise ValueError("PNG of depth %s, colour type %s, interlace %s not read" % (depth, ctype, interlace))
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.uint8)
    for y in range(height):
        kind, line = rows[y, 0], rows[y, 1:]
        if kind == 0:
            cur = line.copy()
        elif kind == 1:  # Sub: a running sum per channel
            cur = np.cumsum(line.reshape(width, channels).astype(np.uint32), axis=0).astype(np.uint8).reshape(stride)
        elif kind == 2:  # Up
            cur = line + prev
        elif kind in (3, 4):  # Average, Paeth: each byte depends on the one decoded before it
            cur = bytearray(line.tobytes())
            up = prev.tobytes()
            for i in range(stride):
                a = cur[i - channels] if i >= channels else 0
                b = up[i]
                c = up[i - channels] if i >= channels else 0
                cur[i] = (cur[i] + ((a + b) // 2 if kind == 3 else paeth(a, b, c))) & 0xFF
            cur = np.frombuffer(bytes(cur), dtype=np.uint8)
        else:
            raise ValueError("PNG filter %d" % kind)
        out[y] = cur
        prev = cur
    px = out.reshape(height, width, channels).astype(np.float64)
    if channels <= 2:
        grey, alpha = px[:, :, 0], px[:, :, 1] if channels == 2 else None
    else:
        grey = 0.299 * px[:, :, 0] + 0.587 * px[:, :, 1] + 0.114 * px[:, :, 2]
        alpha = px[:, :, 3] if channels == 4 else None
    if alpha is not None:  # over white, as a label is printed
        grey = grey * alpha / 255 + 255 - alpha
    return np.ascontiguousarray(np.clip(grey + 0.5, 0, 255).astype(np.uint8))


def main():
    out = {}
    for path in sys.argv[1:]:
        # Without try_downscale=False, zxing-cpp 1.4 (Debian 12) aborts on an assertion when
        # it compares a linear symbol found at two scales; the previews are drawn at full
        # size, so nothing is lost.
        found = zxingcpp.read_barcodes(read_png(path), try_downscale=False)
        out[path] = [symbol(r) for r in found]
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


def symbol(r):
    return {
        "format": str(r.format).split(".")[-1],
        "text": r.text,
        "bytes": bytes(r.bytes).hex(),
        "symbologyIdentifier": r.symbology_identifier,
        "contentType": str(r.content_type).split(".")[-1],
        "valid": bool(r.valid),
    }


if __name__ == "__main__":
    main()
