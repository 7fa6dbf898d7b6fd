"""What the PNG drawings of the run figures share: the panel axes and their style, the time axis,
the side legend and its columns, the colours of the lines, the unit labels, and writing the PNG.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from plot_tool.layout import stacked_axes
from plot_tool.png.png_file import SOFTWARE, write_png
from plot_tool.series import TITLE_HEIGHT_IN, run_end_s

DPI = 100


# Style of every panel, set when the axes are created (cheaper than changing each axes after).
STYLE = {"axes.grid": True, "grid.alpha": 0.3}


Y_TICKS = 5         # at most this many intervals between y ticks (matplotlib's default: about 7)


class ViewLocator(MaxNLocator):
    """`MaxNLocator` returning only the ticks within the view interval.

    MaxNLocator also returns the tick beyond each end of the axis; matplotlib makes a Tick (two
    tick lines, a grid line, two labels) for each value it returns and draws only those in
    view, so about a quarter of the Ticks of the run figures were made and never drawn. The
    values kept are the same, and formatted the same (`plot_tool.layout` measures the labels of
    these values); the tolerance keeps any value matplotlib would draw (its test is relative,
    1e-10)."""

    def tick_values(self, vmin: float, vmax: float) -> Any:
        locs = np.asarray(super().tick_values(vmin, vmax))
        low, high = min(vmin, vmax), max(vmin, vmax)
        slack = 1e-6 * (high - low)
        return locs[(locs >= low - slack) & (locs <= high + slack)]


TIME_STEPS = [1, 2, 2.5, 5, 10]       # matplotlib's AutoLocator's


def panel_axes(fig: Figure, n: int, height_ratios: Sequence[float] | None = None
                  ) -> list[Any]:
    """`n` panels stacked in one column of `fig` on one time axis, with the `STYLE`; the y ticks
    at most `Y_TICKS` intervals, the time ticks as matplotlib's default (`ViewLocator`s)."""
    axes = stacked_axes(fig, n, height_ratios=height_ratios, style=STYLE)
    for ax in axes:
        ax.yaxis.set_major_locator(ViewLocator(nbins=Y_TICKS, steps=[1, 2, 2.5, 5, 10]))
    axes[-1].xaxis.set_major_locator(ViewLocator(nbins="auto", steps=TIME_STEPS))
    return list(axes)


def save_png(fig: Figure, path: Path) -> None:
    """Draw `fig` once and write it as an RGB PNG (`plot_tool.png.png_file`; the figures are
    opaque: the alpha channel of the canvas is all 255, so dropping it loses nothing)."""
    fig.canvas.draw()
    write_canvas_png(fig, path)


def write_canvas_png(fig: Figure, path: Path) -> None:
    """Write what the Agg canvas of `fig` holds (drawn already) as an RGB PNG."""
    canvas = cast(FigureCanvasAgg, fig.canvas)
    rgba = np.asarray(canvas.buffer_rgba())
    write_png(path, rgba[:, :, :3], dpi=fig.dpi,
              text={"Software": software_text()})


def software_text() -> str:
    """The "Software" text of every figure netsim writes (`png_file.written_by_netsim`)."""
    return f"{SOFTWARE} (matplotlib {matplotlib.__version__})"


def zero_based_ylim(ax: Any) -> None:
    """y from 0 to 5 % above the largest value drawn (0 to 1 when nothing positive is)."""
    top = ax.dataLim.y1 if ax.dataLim.height >= 0 else math.nan
    ax.set_ylim(0, top * 1.05 if math.isfinite(top) and top > 0 else 1.0)


def finish_time_axis(axes: Sequence[Any], summary: dict) -> None:
    """Label the time axis and make it span the run (0 to ``end_time_s``) in every panel."""
    axes[-1].set_xlabel("time (s)")
    end = run_end_s(summary)
    if end is not None:
        for ax in axes:
            ax.set_xlim(0, end)


SIDE_LEGEND: dict[str, Any] = dict(loc="upper left", borderaxespad=0.0, fontsize="small",
                    title_fontsize="small", frameon=False, alignment="left")


def add_legend(fig: Figure, ax: Any, title: str, extra: Sequence[Any] = ()) -> Any | None:
    """The figure's legend, right of the panels (placed by `finish_layout`): one entry per line
    of `ax`, then `extra`. None when `ax` has no labelled line."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    height_in = fig.get_size_inches()[1] - TITLE_HEIGHT_IN
    room = MAX_LEGEND_COLUMNS * _legend_columns_fit(height_in, title)
    if len(handles) + len(extra) > room:      # hundreds of chosen lines: list the first ones
        keep = max(1, room - len(extra) - 1)
        more = Line2D([], [], linestyle="none",
                      label=f"\u2026 and {len(handles) - keep} more lines (not listed)")
        handles, labels = [*handles[:keep], more], [*labels[:keep], more.get_label()]
    handles = list(handles) + list(extra)
    labels = list(labels) + [h.get_label() for h in extra]
    return fig.legend(handles, labels, ncol=legend_columns(len(handles), height_in, title),
                      title=title, **SIDE_LEGEND)


MAX_LEGEND_COLUMNS = 2      # a wider legend would leave the panels no room


def _legend_columns_fit(height_in: float, title: str = "") -> int:
    """Lines of legend text that fit in one column of `height_in` inches (see
    `legend_columns`)."""
    return max(1, int(height_in * 5) - (title.count("\n") + 1 if title else 0))


def legend_columns(rows: int, height_in: float, title: str = "") -> int:
    """Columns for a legend of `rows` lines of text under `title` to fit in `height_in` inches
    (about 5 lines of small text per inch)."""
    fit = max(1, int(height_in * 5) - (title.count("\n") + 1 if title else 0))
    return max(1, math.ceil(rows / fit))


def assign_colors(series: Sequence[Any], start: int = 0) -> None:
    """Distinct colours: tab10 up to 10 lines, otherwise tab20 (dark shades first), then, from
    the 21st line (a figure holds up to 40 link directions), the darkest and a middle shade of
    each hue of tab20b and tab20c: 40 colours before one repeats.

    `start` skips the first colours, already used by `start` other lines of the same figure.
    """
    from matplotlib import colormaps

    if start + len(series) <= 10:
        palette = list(cast(Any, colormaps["tab10"]).colors)
    else:
        tab20 = list(cast(Any, colormaps["tab20"]).colors)
        palette = tab20[0::2] + tab20[1::2]
        if start + len(series) > 20:
            b, c = (list(cast(Any, colormaps[name]).colors) for name in ("tab20b", "tab20c"))
            palette += b[0::4] + c[0::4] + b[2::4] + c[2::4]
    for i, s in enumerate(series, start):
        if s.color is None:
            r, g, b = palette[i % len(palette)][:3]
            s.color = f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def unit_labels(summary: dict) -> dict[str, str]:
    units = summary.get("units") or {}
    suffix = ", binary" if units.get("system") == "binary" else ""
    interval = summary.get("interval_s")
    end = summary.get("end_time_s")
    if isinstance(interval, (int, float)) and isinstance(end, (int, float)) and 0 < end < interval:
        interval = end               # a run shorter than one interval: its one sample's length
    interval_text = f"{interval:g} s" if isinstance(interval, (int, float)) else "sample"
    return {"Mbps": f"Mbps{suffix}", "KB": f"KB{suffix}", "interval": interval_text}
