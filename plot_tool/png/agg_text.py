"""Text on the figures' Agg canvases: each string measured and shaped once per `make_figures`
call, its glyphs drawn as matplotlib draws them.

matplotlib's Agg renderer remembers text extents per renderer, that is per figure, and shapes
(lays out) a string again every time it draws it. The run figures repeat their strings: tick
labels ("0", "20", "2.5" ...), axis labels, titles, legend entries (test case 2's four figures
measure 150 strings, 69 different, and draw 130, 66 different). With FreeType's hinting, shaping
or measuring a short string costs 0.1-0.25 ms (the renderer sets the font size first, and
FreeType then runs the font's hinting program for that size again), so about a fifth of drawing
a figure was spent on text.

`TextMemo` keeps, for the figures drawn while it is active (``with TextMemo():``, as
`plot_tool.figures` does around the figures of one call), each string's extent and its glyph
layout, keyed by the string and the font properties (a copy: matplotlib's FontProperties are
mutable), the resolution and the hinting flags. `Canvas` is the Agg canvas of the saved
figures; its renderer (`MemoRenderer`, an Agg renderer) looks the memo up. When it draws a
string, it renders the same glyphs at the same positions with the same FreeType calls as
matplotlib's ``RendererAgg.draw_text``, except that the glyph transform is computed once per
string rather than once per glyph and the font size is set once per font of the string rather
than before each glyph (setting it again to the same value changes nothing but makes FreeType
run the hinting program again): every pixel is the same (``tests/test_agg_text.py`` compares
the figures of test cases 0 to 2 drawn both ways). Math text, rotated text, text with font
features or a language, and a matplotlib whose Agg renderer lacks the private methods this
relies on (``_prepare_font`` and FT2Font's ``_layout``, ``_set_transform``, ``_render_glyph``)
are drawn by matplotlib's own code, and so is all text under a matplotlib release other than
those `CHECKED_RELEASES` names (the private API may keep its names and change its meaning).
Without an active memo, `MemoRenderer` is matplotlib's
renderer.

Only the rcParams of the moment decide which font a FontProperties resolves to; they do not
change while one `make_figures` call draws its figures, and the memo does not outlive it.
"""
from __future__ import annotations

from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg, get_hinting_flag
from matplotlib.ft2font import FT2Font, RenderMode

# What drawing a string our way needs of matplotlib's private Agg text API, and the releases it
# was checked against (pixel for pixel, tests/test_agg_text.py): any other release, whose private
# API may have the same names with other meanings, draws with matplotlib's own code.
CHECKED_RELEASES = ("3.11",)
FAST_TEXT = (".".join(matplotlib.__version__.split(".")[:2]) in CHECKED_RELEASES and
             hasattr(RendererAgg, "_prepare_font") and
             all(hasattr(FT2Font, name) for name in ("_layout", "_set_transform",
                                                      "_render_glyph")))

# matplotlib's glyph transform for unrotated, unslanted, unstretched text (its expression, with
# angle 0, slant 0 and extend 1)
_UPRIGHT = (0x10000 * np.array([[1.0, -0.0], [0.0, 1.0]]) @ [[1, 0], [0, 1]]).round().astype(int)

_active: list[TextMemo] = []


class TextMemo:
    """Text extents and glyph layouts remembered while active (see the module docstring)."""

    def __init__(self) -> None:
        self.extents: dict[tuple, tuple[float, float, float]] = {}
        self.layouts: dict[tuple, Any] = {}

    def __enter__(self) -> TextMemo:
        _active.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _active.remove(self)


def active_memo() -> TextMemo | None:
    """The innermost active `TextMemo`, or None."""
    return _active[-1] if _active else None


class MemoRenderer(RendererAgg):
    """matplotlib's Agg renderer, with the text of the active `TextMemo` measured and shaped
    once (see the module docstring)."""

    def get_text_width_height_descent(self, s: str, prop: Any, ismath: Any) -> Any:
        memo = active_memo()
        if memo is None or ismath:
            return super().get_text_width_height_descent(s, prop, ismath)
        key = (s, prop.copy(), self.dpi, get_hinting_flag())
        extent = memo.extents.get(key)
        if extent is None:
            extent = memo.extents[key] = super().get_text_width_height_descent(s, prop, ismath)
        return extent

    def draw_text(self, gc: Any, x: float, y: float, s: str, prop: Any, angle: float,
                  ismath: Any = False, mtext: Any = None) -> None:
        memo = active_memo()
        if (memo is None or ismath or angle or not FAST_TEXT or (mtext is not None and (
                mtext.get_fontfeatures() is not None or mtext.get_language() is not None))):
            return super().draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
        flags = get_hinting_flag()
        key = (s, prop.copy(), self.dpi, flags)
        items = memo.layouts.get(key)
        if items is None:
            font = self._prepare_font(prop)
            items = memo.layouts[key] = font._layout(s, flags=flags)
        self._draw_glyphs(gc, x, y, items, prop.get_size_in_points(), flags)

    def _draw_glyphs(self, gc: Any, x: float, y: float, items: Any, size: float,
                     flags: Any) -> None:
        """``RendererAgg._draw_text_glyphs_and_boxes`` for unrotated text without boxes: the
        same FreeType calls with the same arguments, the transform made once, the size set
        once per font."""
        antialiased = gc.get_antialiased()
        mode = RenderMode.NORMAL if antialiased else RenderMode.MONO
        height = self.height
        sized: set[int] = set()
        for item in items:
            font = item.ft_object
            if id(font) not in sized:
                font.set_size(size, self.dpi)
                sized.add(id(font))
            font._set_transform(_UPRIGHT, [round(0x40 * (x + item.x)),
                                         round(0x40 * (height - y + item.y))])
            bitmap = font._render_glyph(item.glyph_index, flags, mode)
            buffer = bitmap.buffer
            if not antialiased:
                buffer *= 0xff
            self._renderer.draw_text_image(buffer, bitmap.left,
                                           int(height) - bitmap.top + buffer.shape[0], 0, gc)


class Canvas(FigureCanvasAgg):
    """The Agg canvas of a saved figure, drawing with a `MemoRenderer` (`saved_only`: not
    interactive, for `plot_tool.layout.is_static`)."""

    saved_only = True

    def get_renderer(self) -> Any:
        renderer = super().get_renderer()
        if type(renderer) is RendererAgg:
            renderer.__class__ = MemoRenderer      # the same object, with the memo's methods
        return renderer


__all__ = ["CHECKED_RELEASES", "FAST_TEXT", "Canvas", "MemoRenderer", "TextMemo", "active_memo"]
