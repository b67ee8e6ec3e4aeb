"""A PNG reader for the test scripts (8-bit gray, RGB or RGBA, not
interlaced), with nothing but the standard library, so that the checks
do not read the project's files with the project's own code."""
import struct
import zlib


def png_read(path, channels=None):
    """(width, height, rows): rows[y] is bytes of width * channels values;
    channels=None keeps the file's, 1 keeps the first, 3 the first three."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(path + ": not a PNG")
    pos, idat, w, h, bpp = 8, b"", 0, 0, 1
    while pos < len(data):
        n, = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (0, 2, 6) or interlace:
                raise ValueError(path + ": not 8-bit gray, RGB or RGBA")
            bpp = {0: 1, 2: 3, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += body
    raw, stride = zlib.decompress(idat), w * bpp
    keep = bpp if channels is None else channels
    prev, rows, i = bytearray(stride), [], 0
    for _ in range(h):
        kind, row = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = row[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if kind == 1:
                row[x] = (row[x] + a) & 255
            elif kind == 2:
                row[x] = (row[x] + b) & 255
            elif kind == 3:
                row[x] = (row[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[x] = (row[x] + (a if pa <= pb and pa <= pc
                                    else b if pb <= pc else c)) & 255
        rows.append(bytes(v for x in range(w)
                          for v in row[x * bpp:x * bpp + keep]))
        prev = row
    return w, h, rows
