"""A small PNG reader (NumPy and zlib), so ``minitorch predict`` needs no imaging library.

A PNG file is an 8-byte signature and a list of chunks, each ``length,
type, data, crc``.  ``IHDR`` gives the size and the pixel format, ``PLTE``
a palette, the ``IDAT`` chunks together hold one zlib stream of the image
rows, each row prefixed by a *filter* byte.  A filter predicts every byte
from its left, upper and upper-left neighbours and stores only the
difference, which compresses better; decoding adds the prediction back:

=======  ===========  ===========================================
code     name         byte = stored + ...
=======  ===========  ===========================================
0        None         0
1        Sub          left
2        Up           up
3        Average      floor((left + up) / 2)
4        Paeth        whichever of left, up, upper-left is closest
                      to left + up - upper-left
=======  ===========  ===========================================

Supported: every colour type and bit depth the PNG standard allows (grey,
grey+alpha, RGB, RGBA and palette, 1 to 16 bits), not interlaced (Adam7):
interlaced files raise :class:`UnsupportedPNG`, damaged files ``ValueError``.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

__all__ = ["read_png", "MAX_PIXELS", "UnsupportedPNG"]

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}   # colour type -> samples per pixel
_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}  # allowed


# 8 million (a 12-megapixel phone photo is refused; predict then tries matplotlib): far
# above any picture of a digit, and the per-byte filters below stay under a minute.
MAX_PIXELS = 1 << 23


class UnsupportedPNG(ValueError):
    """A valid PNG this reader does not decode (interlaced, an unusual format)."""


def read_png(path: str) -> np.ndarray:
    """The image as float32 in [0, 1]: (H, W) grey, or (H, W, C) with C = 2, 3 or 4.

    Every way a file can be wrong (not a PNG, a damaged chunk, a header of
    the wrong length, no pixels, more pixels than :data:`MAX_PIXELS`, image
    data shorter or longer than the header says) raises ``ValueError`` with
    one line naming the file.  The image data is decompressed only up to the
    size the header implies, so a small file cannot expand to gigabytes.
    """
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(SIGNATURE):
        raise ValueError(f"{path}: not a PNG file")
    header, palette, idat, pos = None, None, [], len(SIGNATURE)
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if len(body) != length:
            raise ValueError(f"{path}: truncated PNG chunk {kind!r}")
        if kind == b"IHDR":
            if length != 13:
                raise ValueError(f"{path}: damaged PNG header (IHDR of {length} bytes, not 13)")
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            if length == 0 or length % 3:
                raise ValueError(f"{path}: damaged PNG palette ({length} bytes)")
            palette = np.frombuffer(body, np.uint8).reshape(-1, 3)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    if header is None or not idat:
        raise ValueError(f"{path}: PNG without header or image data")
    width, height, depth, colour, _, _, interlace = header
    if depth not in _DEPTHS.get(colour, ()) or interlace > 1:
        raise ValueError(f"{path}: damaged PNG header (colour type {colour}, bit depth {depth}, "
                         f"interlace method {interlace})")
    if interlace:
        raise UnsupportedPNG(f"{path}: unsupported PNG (interlaced)")
    if width == 0 or height == 0:
        raise ValueError(f"{path}: the PNG has no pixels ({width}x{height})")
    if width * height > MAX_PIXELS:
        raise ValueError(f"{path}: the PNG is {width}x{height}, more than the {MAX_PIXELS} "
                         "pixels read")
    channels = _CHANNELS[colour]
    bits = channels * depth
    stride = (width * bits + 7) // 8
    bpp = max(1, bits // 8)                  # filter distance: bytes per whole pixel
    expected = height * (stride + 1)
    try:
        inflater = zlib.decompressobj()
        raw = inflater.decompress(b"".join(idat), expected)
    except zlib.error as e:
        raise ValueError(f"{path}: corrupted PNG data ({e})") from None
    if len(raw) < expected:
        raise ValueError(f"{path}: truncated PNG image data")
    rows = _unfilter(raw, height, stride, bpp, path)
    samples = _unpack(rows, width * channels, depth)
    if colour == 3:
        if palette is None:
            raise ValueError(f"{path}: palette PNG without a palette")
        image = palette[np.minimum(samples, len(palette) - 1)].astype(np.float32) / 255
    else:
        image = samples.reshape(height, width, channels).astype(np.float32) / (2 ** depth - 1)
    return image[..., 0] if image.shape[-1] == 1 else image


def _unfilter(raw: bytes, height: int, stride: int, bpp: int,
              path: str = "") -> np.ndarray:
    """Undo the per-row filters: (height, stride) uint8."""
    out = np.zeros((height, stride), np.uint8)
    prev = np.zeros(stride, np.int32)
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = np.frombuffer(raw, np.uint8, stride, start + 1).astype(np.int32)
        if kind == 0:
            cur = line
        elif kind == 2:
            cur = (line + prev) & 0xFF
        elif kind == 1 and stride % bpp == 0:
            # Sub adds the byte one pixel to the left: a running sum along each channel.
            cur = (np.cumsum(line.reshape(-1, bpp), axis=0) & 0xFF).reshape(-1)
        elif kind in (1, 3, 4):
            # Each byte depends on the decoded byte bpp to its left: a loop over the row.
            cur = line.copy()
            for i in range(stride):
                left = cur[i - bpp] if i >= bpp else 0
                up = prev[i]
                if kind == 1:
                    pred = left
                elif kind == 3:
                    pred = (left + up) >> 1
                else:
                    upleft = prev[i - bpp] if i >= bpp else 0
                    p = left + up - upleft
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - upleft)
                    pred = left if pa <= pb and pa <= pc else (up if pb <= pc else upleft)
                cur[i] = (cur[i] + pred) & 0xFF
        else:
            raise ValueError(f"{path}: unknown PNG filter type {kind} in row {y}")
        out[y] = cur
        prev = cur
    return out


def _unpack(rows: np.ndarray, samples_per_row: int, depth: int) -> np.ndarray:
    """Split packed rows into samples: (height, samples_per_row) integers."""
    if depth == 8:
        return rows[:, :samples_per_row]
    if depth == 16:
        return rows.view(">u2")[:, :samples_per_row].astype(np.uint16)
    bits = np.unpackbits(rows, axis=1)[:, :samples_per_row * depth]
    weights = 1 << np.arange(depth - 1, -1, -1)
    return (bits.reshape(rows.shape[0], samples_per_row, depth) * weights).sum(2)
