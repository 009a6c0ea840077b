"""A small PNG reader (stdlib zlib + numpy) for screenshot checks: 8-bit RGB/RGBA only."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import numpy.typing as npt

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _paeth_row(line: bytearray, prev: bytes, bpp: int) -> None:
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
        line[i] = (line[i] + pred) & 0xFF


def _avg_row(line: bytearray, prev: bytes, bpp: int) -> None:
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        line[i] = (line[i] + ((a + prev[i]) >> 1)) & 0xFF


def read_png(path: Path) -> npt.NDArray[np.uint8]:
    """Pixels as an (height, width, channels) uint8 array."""
    data = path.read_bytes()
    if not data.startswith(SIGNATURE):
        raise ValueError(f"{path}: not a PNG file")
    pos, idat = 8, bytearray()
    width = height = color = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or color not in (2, 6) or interlace:
                raise ValueError(f"{path}: only 8-bit RGB/RGBA, non-interlaced PNGs are read")
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    bpp = 3 if color == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(bytes(idat))
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.uint8)
    for y in range(height):
        start = y * (stride + 1)
        kind_byte = raw[start]
        row = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=start + 1)
        if kind_byte == 0:
            cur = row.copy()
        elif kind_byte == 1:
            # Sub: a running sum per channel, modulo 256.
            cur = (
                (np.cumsum(row.reshape(width, bpp), axis=0, dtype=np.int64) % 256)
                .astype(np.uint8)
                .reshape(stride)
            )
        elif kind_byte == 2:
            cur = row + prev
        elif kind_byte in (3, 4):
            line = bytearray(row.tobytes())
            (_avg_row if kind_byte == 3 else _paeth_row)(line, prev.tobytes(), bpp)
            cur = np.frombuffer(bytes(line), dtype=np.uint8)
        else:
            raise ValueError(f"{path}: bad filter type {kind_byte} in row {y}")
        out[y] = cur
        prev = cur
    return out.reshape(height, width, bpp)


def write_png(path: Path, pixels: npt.NDArray[np.uint8]) -> None:
    """Write (h, w, 3|4) uint8 pixels (unfiltered rows); for looking at crops."""
    h, w, ch = pixels.shape
    raw = b"".join(b"\x00" + pixels[y].tobytes() for y in range(h))

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2 if ch == 3 else 6, 0, 0, 0)
    path.write_bytes(
        SIGNATURE + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    )
