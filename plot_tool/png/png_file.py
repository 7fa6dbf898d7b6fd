"""Writing an RGB image as a PNG file (ISO/IEC 15948, the W3C PNG specification), with zlib.

The figures are opaque (their alpha channel is all 255) and mostly white. Pillow's PNG encoder
chooses a filter for every row by trying all five, which on these images costs three to four
times the compression itself (about 35-48 ms per figure of test case 2 against 8-13 ms, measured
with CPU time) and offers no way to fix the filter; with filter type 0 ("None") on every row and
zlib level 3 the files are within 5 % of Pillow's size. The container is small: the signature,
then the chunks IHDR (size, 8-bit RGB, not interlaced), pHYs (resolution), tEXt (software), IDAT
(the zlib stream of the rows, each prefixed by its filter byte) and IEND, each with its length
and CRC-32. The rows are filled one colour channel at a time (strided copies of whole rows):
copying the pixels three bytes at a time out of the canvas's RGBA buffer took 5-6 ms per figure
of test case 2, as long as compressing them; by channel it takes 1 ms.
"""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

from plot_tool.figure_files import SIGNATURE, SOFTWARE, naming_errors

COMPRESS_LEVEL = 3        # zlib level: 6 makes files 10-20 % smaller and takes twice as long
INCH_M = 0.0254


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)) & 0xFFFFFFFF))


def png_bytes(rgb: np.ndarray, *, dpi: float | None = None,
              text: dict[str, str] | None = None) -> bytes:
    """The PNG file of `rgb` (an array of shape (height, width, 3) of uint8), with its
    resolution `dpi` (pixels per inch) and Latin-1 `text` entries (keyword -> text)."""
    rgb = np.asarray(rgb)
    if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
        raise ValueError(f"expected an array of shape (height, width, 3) of uint8, got "
                         f"{rgb.dtype} {rgb.shape}")
    height, width = rgb.shape[:2]
    rows = np.empty((height, 1 + 3 * width), dtype=np.uint8)
    rows[:, 0] = 0                                   # filter type None on every row
    for channel in range(3):      # one channel at a time: `rgb` is usually a view of RGBA rows
        rows[:, 1 + channel::3] = rgb[:, :, channel]
    parts = [SIGNATURE,
             _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))]
    if dpi:
        per_m = round(dpi / INCH_M)
        parts.append(_chunk(b"pHYs", struct.pack(">IIB", per_m, per_m, 1)))
    for keyword, value in (text or {}).items():
        parts.append(_chunk(b"tEXt", keyword.encode("latin-1") + b"\0" + value.encode("latin-1")))
    parts.append(_chunk(b"IDAT", zlib.compress(rows.data, COMPRESS_LEVEL)))
    parts.append(_chunk(b"IEND", b""))
    return b"".join(parts)


def write_png(path: Path, rgb: np.ndarray, *, dpi: float | None = None,
              text: dict[str, str] | None = None) -> None:
    """Write `rgb` to `path` as a PNG file (see `png_bytes`); an OSError names `path`."""
    with naming_errors(path):
        Path(path).write_bytes(png_bytes(rgb, dpi=dpi, text=text))


__all__ = ["COMPRESS_LEVEL", "SOFTWARE", "png_bytes", "write_png"]
