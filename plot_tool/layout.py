"""Fixed figure geometry for stacked panels, computed once from measured text (no layout engine).

matplotlib's constrained (or tight) layout finds the margins by drawing the figure, measuring
every artist, and drawing it again to save it: for the per-run figures that doubled the cost of a
figure. `finish_layout` instead computes the margins directly, from the few texts that decide
them, measured with the renderer that will draw the figure (so the measurements are cached for
the drawing):

* top: the figure title (``Figure.suptitle``), in a band of its own above the panels and the
  legends, so that a title never overlaps a legend (a title wider than the figure is wrapped);
* left: the widest y tick label of any panel (from the tick values the axis will draw, at the
  final panel height) and the tallest y label; every y label is then placed at the same distance
  from its panel (labels aligned, and matplotlib does not have to measure the tick labels again
  at each draw);
* bottom: one line of x tick labels and the x label of the bottom panel;
* right: the widest legend, at most `MAX_LEGEND_FRACTION` of the figure (longer entries, e.g.
  ids of up to 255 characters, are shortened by an ellipsis in their middle). A figure legend
  is anchored by its upper left corner just right of the panels at the height of the top
  panel; an axes legend (``Axes.legend`` with ``loc="upper left"`` and
  ``bbox_to_anchor=(1, 1)``) sits right of its own panel.

Only what is measured moves; everything else has fixed sizes in points, so the geometry does not
depend on the data beyond the tick labels and the legend entries.

`stacked_axes` creates the panels. For a figure that is only saved (an Agg canvas, or none yet)
the panels do not share their x axis: the upper ones have no x ticks at all (their tick labels
would be hidden anyway) and get their vertical grid lines, at the bottom panel's tick positions,
as one LineCollection each from `finish_layout`, which also gives every panel the bottom panel's
x limits. matplotlib then makes and draws one set of x ticks per figure instead of one per panel.
A figure on an interactive canvas (``show=True``) keeps shared x axes, so that zooming one panel
zooms them all.
"""
from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any, cast

import matplotlib as mpl
import numpy as np
from matplotlib.backend_bases import FigureCanvasBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.legend import Legend

MARGIN_PT = 6.0          # empty border around everything
TITLE_GAP_PT = 8.0       # between the title band and the top panel
PANEL_GAP_PT = 10.0      # vertical space between stacked panels (inner x tick labels are hidden)
LEGEND_GAP_PT = 10.0     # between the panels and a legend on their right
LABEL_PAD_PT = 4.0       # between tick labels and an axis label
MAX_LEGEND_FRACTION = 0.6   # of the figure's width; longer legend entries are shortened
MIN_LEGEND_CHARS = 12       # an entry is never shortened below this


def renderer_of(fig: Figure) -> Any:
    """The renderer that will draw `fig` (an Agg canvas is attached when the figure has none,
    e.g. a bare ``Figure()``), so that text measured now is cached for the drawing."""
    if not hasattr(fig.canvas, "get_renderer"):
        FigureCanvasAgg(fig)
    return cast(FigureCanvasAgg, fig.canvas).get_renderer()


def is_static(fig: Figure) -> bool:
    """Whether `fig` is only drawn to be saved (no interactive canvas): a plain or Agg canvas,
    or one whose class says ``saved_only = True`` (`plot_tool.png.agg_text.Canvas`)."""
    canvas_type = type(fig.canvas)
    return (canvas_type in (FigureCanvasBase, FigureCanvasAgg)
            or getattr(canvas_type, "saved_only", False) is True)


def stacked_axes(fig: Figure, n: int, *, height_ratios: Sequence[float] | None = None,
                 style: Mapping[str, Any] | None = None) -> np.ndarray:
    """`n` panels stacked in one column of `fig` (the first on top), created with the rcParams
    `style`; see the module docstring for their x axes."""
    static = is_static(fig)
    with mpl.rc_context(cast(Any, dict(style or {}))):
        axes = fig.subplots(n, 1, sharex=not static, squeeze=False,
                            height_ratios=height_ratios)[:, 0]
    if static:
        for ax in axes[:-1]:
            ax.set_xticks([])
    return axes


# netsim writes no formula of its own: what its figures say in words is drawn as it reads
LITERAL_TEXT: dict[str, Any] = {"text.parse_math": False}


def literal_texts(fig: Figure) -> None:
    """Draw the words of `fig` as they read: its title and other figure texts, every legend's
    entries and title, and each panel's title, axis labels and texts. Ids, names and a sweep's
    titles and labels are the user's text, and matplotlib takes what lies between two "$" for a
    formula (mathtext): a link "L$x^$" stopped the figures with a parser error, and a flow
    "$a$" would be drawn in italics. The tick labels are left as they are: they are numbers,
    which matplotlib's log-scale formatters write as formulas on purpose (fct.png). Figures
    whose ticks are the user's words (a sweep's categories) are drawn under LITERAL_TEXT."""
    texts = list(fig.texts)
    title = getattr(fig, "_suptitle", None)
    if title is not None:
        texts.append(title)
    legends = list(fig.legends)
    for ax in fig.axes:
        texts += [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        legend = ax.get_legend()
        if legend is not None:
            legends.append(legend)
    for legend in legends:
        texts += [*legend.get_texts(), legend.get_title()]
    for text in texts:
        text.set_parse_math(False)


def finish_layout(fig: Figure, axes: Sequence[Any], *, figure_legends: Sequence[Legend] = (),
                  axes_legends: Sequence[Legend] = ()) -> None:
    """Set the margins of `fig` (whose panels `axes` are stacked in one column, the last at the
    bottom) and place the figure legends; see the module docstring. Its words are drawn as they
    read (`literal_texts`)."""
    literal_texts(fig)
    renderer = renderer_of(fig)
    width_px, height_px = fig.bbox.width, fig.bbox.height
    pt = fig.dpi / 72.0

    # top: the title band
    top_px = MARGIN_PT * pt
    title = getattr(fig, "_suptitle", None)
    if title is not None and title.get_text():
        title.set_y(1.0 - MARGIN_PT * pt / height_px)
        title.set_verticalalignment("top")
        _fit_width(title, renderer, width_px - 2 * MARGIN_PT * pt)
        top_px += title.get_window_extent(renderer).height + TITLE_GAP_PT * pt
    else:
        top_px += TITLE_GAP_PT * pt

    # bottom: x tick labels (one line) and the x label of the bottom panel
    bottom_ax = axes[-1]
    xtick_px = _tick_extent_pt("x") * pt + _line_height_px(renderer, "xtick.labelsize")
    xlabel_px = 0.0
    if bottom_ax.get_xlabel():
        xlabel_px = LABEL_PAD_PT * pt + bottom_ax.xaxis.label.get_window_extent(renderer).height
    bottom_px = MARGIN_PT * pt + xtick_px + xlabel_px

    # right: the widest legend (entries shortened to leave the panels most of the width)
    for legend in list(figure_legends) + list(axes_legends):
        _fit_legend(legend, renderer, MAX_LEGEND_FRACTION * width_px)
    legend_px = max([leg.get_window_extent(renderer).width for leg in
                     list(figure_legends) + list(axes_legends)] or [0.0])
    right_px = MARGIN_PT * pt + (legend_px + LEGEND_GAP_PT * pt if legend_px else 0.0)

    panels_px = height_px - top_px - bottom_px
    gaps_px = PANEL_GAP_PT * pt * (len(axes) - 1)
    mean_panel_px = max(1.0, (panels_px - gaps_px) / max(1, len(axes)))
    top, bottom = 1.0 - top_px / height_px, bottom_px / height_px
    # the y tick values depend on the panel heights, fixed now: measure them at those heights
    fig.subplots_adjust(top=top, bottom=bottom, hspace=PANEL_GAP_PT * pt / mean_panel_px,
                        left=0.1, right=1.0 - right_px / width_px)

    # left: the widest y tick label and the tallest (rotated: widest) y label
    ytick_px = max(_ytick_labels_width_px(ax, renderer) for ax in axes)
    ylabel_px = max([ax.yaxis.label.get_window_extent(renderer).width
                     for ax in axes if ax.get_ylabel()] or [0.0])
    to_label_px = _tick_extent_pt("y") * pt + ytick_px + LABEL_PAD_PT * pt
    left_px = MARGIN_PT * pt + ylabel_px + to_label_px
    left, right = left_px / width_px, 1.0 - right_px / width_px
    fig.subplots_adjust(left=left, right=right)
    axes_width_px = (right - left) * width_px
    for ax in axes:
        ax.yaxis.set_label_coords(-to_label_px / axes_width_px, 0.5)
    for ax in axes:      # fixed x label positions too (the upper panels have none to place)
        axes_height_px = ax.get_position().height * height_px
        ax.xaxis.set_label_coords(0.5, -(xtick_px + LABEL_PAD_PT * pt) / axes_height_px)

    if is_static(fig) and len(axes) > 1:
        _copy_time_axis(axes)

    legend_x = right + LEGEND_GAP_PT * pt / width_px
    for legend in figure_legends:
        legend.set_bbox_to_anchor((legend_x, top), transform=fig.transFigure)
    for legend in axes_legends:
        panel_top = legend.axes.get_position().y1
        legend.set_bbox_to_anchor((legend_x, panel_top), transform=fig.transFigure)


def _fit_legend(legend: Any, renderer: Any, width_px: float) -> None:
    """Shorten the longest entries of `legend` (a middle ellipsis: an id keeps its start and
    its end) until the legend is at most `width_px` wide. Ids may have 255 characters; one of 160
    made the legend wider than the figure."""
    for _ in range(8):
        extent = legend.get_window_extent(renderer).width
        if extent <= width_px:
            return
        texts = legend.get_texts()
        longest = max((len(t.get_text()) for t in texts), default=0)
        if longest <= MIN_LEGEND_CHARS:
            return
        keep = max(MIN_LEGEND_CHARS, int(longest * width_px / extent) - 2)
        for text in texts:
            text.set_text(shortened(text.get_text(), keep))


def shortened(text: str, chars: int) -> str:
    """`text` cut to at most `chars` characters by an ellipsis in its middle (unchanged if it
    fits): both ends of an id tell it apart from its neighbours."""
    if len(text) <= chars:
        return text
    head = (chars - 1 + 1) // 2
    tail = chars - 1 - head
    return text[:head] + "\u2026" + (text[-tail:] if tail > 0 else "")


def _fit_width(text: Any, renderer: Any, width_px: float) -> None:
    """Wrap `text` (a Text artist) onto as many lines as it takes to be at most `width_px` wide
    (long words, e.g. topology names with underscores, are cut)."""
    extent = text.get_window_extent(renderer).width
    if extent <= width_px:
        return
    content = text.get_text()
    chars = max(8, int(len(content) * width_px / extent) - 1)
    text.set_text("\n".join(textwrap.wrap(content, chars, break_long_words=True,
                                           break_on_hyphens=False)) or content)


def _copy_time_axis(axes: Sequence[Any]) -> None:
    """Give the upper panels (made by `stacked_axes` without x ticks) the bottom panel's x limits
    and, if it has a grid, its vertical grid lines, at its tick positions."""
    bottom = axes[-1]
    if bottom.get_autoscalex_on():
        lows = [ax.dataLim.x0 for ax in axes if np.isfinite(ax.dataLim.x0)]
        highs = [ax.dataLim.x1 for ax in axes if np.isfinite(ax.dataLim.x1)]
        if lows and highs:
            bottom.set_xlim(min(lows), max(highs))
        else:                    # (nothing drawn: a run stopped at t = 0; no negative times)
            bottom.set_xlim(left=0.0)
    low, high = sorted(bottom.get_xlim())
    locs = [v for v in bottom.xaxis.get_majorticklocs() if low <= v <= high]
    grid = bottom.xaxis.get_gridlines()
    shown = bool(len(grid)) and grid[0].get_visible()
    for ax in axes[:-1]:
        ax.set_xlim(bottom.get_xlim())
        if shown and locs:
            g = grid[0]
            ax.vlines(locs, 0, 1, transform=ax.get_xaxis_transform(), colors=g.get_color(),
                      linewidths=g.get_linewidth(), linestyles=g.get_linestyle(),
                      alpha=g.get_alpha(), zorder=g.get_zorder(),
                      snap=True)      # on whole pixels, as grid lines are (else fainter)


def _tick_extent_pt(axis: str) -> float:
    """Length of a major tick plus the pad between it and its label, in points."""
    rc: Any = mpl.rcParams
    return float(rc[f"{axis}tick.major.size"]) + float(rc[f"{axis}tick.major.pad"])


def _line_height_px(renderer: Any, size_key: str) -> float:
    """Height of one line of tick labels as matplotlib lays it out: the ascent of the digits
    and the descent of the font (measured on "lp", as `matplotlib.text.Text` does)."""
    prop = FontProperties(size=cast(Any, mpl.rcParams)[size_key])
    _, height, descent = renderer.get_text_width_height_descent("0123456789", prop, ismath=False)
    _, lp_height, lp_descent = renderer.get_text_width_height_descent("lp", prop, ismath=False)
    return max(height - descent, lp_height - lp_descent) + max(descent, lp_descent)


def _ytick_labels_width_px(ax: Any, renderer: Any) -> float:
    """Width of the widest y tick label `ax` will draw, at its current size and limits: major
    and minor ones (a log axis spanning less than a decade labels its minor ticks, "6x10^-1",
    wider than its major "10^0": measured by the major ones alone they ran off the figure)."""
    low, high = sorted(ax.get_ylim())
    slack = 1e-9 * abs(high - low)
    texts: list = []
    for locs, formatter in ((ax.yaxis.get_majorticklocs(), ax.yaxis.get_major_formatter()),
                            (ax.yaxis.get_minorticklocs(), ax.yaxis.get_minor_formatter())):
        locs = [v for v in locs if low - slack <= v <= high + slack]
        if locs:
            texts += formatter.format_ticks(locs)
    return max([text_width_px(renderer, t, mpl.rcParams["ytick.labelsize"]) for t in texts if t]
               or [0.0])


_WIDTHS: dict[tuple[str, Any, float, str], float] = {}


def text_width_px(renderer: Any, text: str, size: Any) -> float:
    """Width in pixels of `text` at font `size` with `renderer`, remembered across figures (tick
    labels repeat: measuring a string costs as much as drawing it)."""
    key = (text, size, renderer.dpi, str(mpl.rcParams["font.family"]))
    width = _WIDTHS.get(key)
    if width is None:
        prop = FontProperties(size=size)
        width = renderer.get_text_width_height_descent(text, prop,
                                                       ismath=text.count("$") >= 2)[0]
        if len(_WIDTHS) < 10000:
            _WIDTHS[key] = width
    return width


__all__ = ["LITERAL_TEXT", "finish_layout", "is_static", "literal_texts", "renderer_of",
           "stacked_axes", "text_width_px"]
