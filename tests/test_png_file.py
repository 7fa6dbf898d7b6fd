"""plot_tool.png.png_file: the PNG files written without Pillow decode (with Pillow) to exactly
the pixels given, with the resolution and text given, and every chunk's CRC is right."""
from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from plot_tool.png.png_file import SIGNATURE, png_bytes, write_png


def chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(type, data) of every chunk, checking each CRC."""
    assert data[:8] == SIGNATURE
    out, at = [], 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length:at + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, kind
        out.append((kind, body))
        at += 12 + length
    return out


def test_pixels_resolution_and_text_round_trip(tmp_path):
    rng = np.random.default_rng(1)
    rgb = rng.integers(0, 256, size=(37, 53, 3), dtype=np.uint8)
    rgb[:10] = 255                                         # a white band, as in the figures
    path = tmp_path / "x.png"
    write_png(path, rgb, dpi=100, text={"Software": "netsim plot_tool"})
    with Image.open(path) as image:
        assert image.mode == "RGB" and image.size == (53, 37)
        assert np.array_equal(np.asarray(image), rgb)
        assert image.info["Software"] == "netsim plot_tool"
        assert [round(v) for v in image.info["dpi"]] == [100, 100]
    kinds = [kind for kind, _ in chunks(path.read_bytes())]
    assert kinds == [b"IHDR", b"pHYs", b"tEXt", b"IDAT", b"IEND"]


def test_a_strided_view_of_a_canvas_buffer_is_written_as_its_pixels():
    rgba = np.zeros((4, 6, 4), dtype=np.uint8)
    rgba[..., 0] = np.arange(6)
    rgba[..., 1] = np.arange(4)[:, None]
    rgba[..., 3] = 255
    data = png_bytes(rgba[:, :, :3])                      # not contiguous
    assert [kind for kind, _ in chunks(data)] == [b"IHDR", b"IDAT", b"IEND"]
    with Image.open(io.BytesIO(data)) as image:
        assert np.array_equal(np.asarray(image), rgba[:, :, :3])


@pytest.mark.parametrize("bad", [np.zeros((3, 3, 4), np.uint8), np.zeros((3, 3), np.uint8),
                                 np.zeros((3, 3, 3), np.float64)])
def test_anything_but_8_bit_rgb_is_refused(bad):
    with pytest.raises(ValueError, match="expected an array of shape"):
        png_bytes(bad)
