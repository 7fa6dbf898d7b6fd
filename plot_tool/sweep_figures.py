"""Figures of a parameter sweep: one PNG per plot spec of ``sweep.json``, drawn from
``results.csv`` (formats: docs/sweeps.md). This is the matplotlib backend: the data of each plot
(series, labels, ticks, footnote, theory overlays) comes from the front end `plot_tool.sweep_data`,
which the interactive report draws too.

A sweep directory holds ``sweep.json`` (the validated sweep description, with its ``"plots"``) and
``results.csv`` (one row per run: ``run_id``, ``point``, ``seed``, one column per swept parameter
named by its dotted path, one column per metric, ``wall_time_s``, ``status``, ``error``).

    from plot_tool.sweep_figures import make_sweep_figures, aggregate
    make_sweep_figures("sweeps/loss")        # -> [Path("sweeps/loss/goodput.png"), ...]

For each plot the runs with status "ok" are grouped by (``lines`` value, ``x`` value); each group
becomes one marker at the mean over its seeds, with an error bar (sample standard deviation, or a
Student-t 95 % confidence interval of the mean, or none), which the footnote explains. The y axis
starts at zero (unless the plot says ``"y_from_zero": false``) and every swept x value has a
labelled tick. Runs with status "error" are left out and counted in the footnote. Theory overlays
(``"theory"``) are drawn dashed.

Like the run figures, this module reads files only (it imports nothing from the simulator
packages), draws with the object-oriented matplotlib API on an Agg canvas, and imports pyplot
only when ``show=True``.
"""
from __future__ import annotations

import math
import os
import secrets
import textwrap
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from plot_tool.figure_files import refuse_foreign_figures
from plot_tool.layout import LITERAL_TEXT
from plot_tool.missing_glyphs import glyphs_reported
from plot_tool.png.common import software_text
from plot_tool.sweep_data import (
    SWEEP_FILE,
    THEORY_MODELS,
    THEORY_POINTS,
    Overlay,
    PathLike,
    SweepPlotData,
    check_file_name,
    plot_data,
    read_sweep,
    series_offsets,
    sweep_units,
    x_positions,
)
from plot_tool.sweep_names import UNIT_SUFFIXES, axis_label, quantity_name
from plot_tool.sweep_stats import ERROR_BARS, SweepSeries, aggregate, format_value, t_quantile_975
from theory.response import (
    aimd_average_window,
    cubic_average_window,
    cubic_goodput_mbps,
    cubic_reno_friendly_window,
    mathis_goodput_mbps,
    reno_average_window,
)

DPI = 110
FIGSIZE_IN = (8.0, 5.0)
FOOTNOTE_CHARS = 115            # characters per line of the footnote ("small" text, 8 in wide)
FOOTNOTE_LINE = 0.03            # fraction of the figure's height one footnote line takes
SHORT_TEXT = {"width": 40,      # titles and x labels up to this many characters fit any axes
              "height": 24}     # y labels (the axes are less high than wide)
MAX_LABEL_LINES = 4             # a longer title or axis label is set smaller...
MIN_LABEL_PT = 6.0              # ...down to this size
GROW_ROUNDS = 4                 # times a figure whose texts cannot fit it is made taller
LAYOUT_GAVE_UP = "constrained_layout not applied"   # matplotlib's warning: the axes got no room
FIT_ROUNDS = 8                  # rounds of fitting the title and labels to the axes
CATEGORY_LINE_CHARS = 90        # characters of tick labels the axes hold side by side
CATEGORY_GAP_PX = 8.0           # pixels between the labels of two x categories
CATEGORY_MIN_CHARS = 4          # a category's label is wrapped no narrower than this
LEGEND_WIDTH = 32               # characters per line of a legend entry (longer ones wrap)
LOG_FLOOR_MARGIN = 1.5          # a log y axis starts this factor below the lowest value drawn


def _save_replacing(fig: Figure, path: Path) -> None:
    """Write `fig` to a new file beside `path`, then rename it to `path`: a figure half written
    is never left under its name, and a link at `path` is replaced, never written through. The
    new file is ``.<name>.partial-<pid>-<random>`` (what a killed process leaves is removed by
    the next sweep: netsim.output_paths.remove_stale_partials), created with the mode the
    umask gives (0644), as every other file of a results directory."""
    for _ in range(100):
        part = path.with_name(f".{path.name}.partial-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            handle = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"{path}: no free name for its temporary file")
    try:
        with os.fdopen(handle, "wb") as fh:
            fig.savefig(fh, dpi=DPI, format="png", metadata={"Software": software_text()})
        os.replace(part, path)
    except BaseException:
        Path(part).unlink(missing_ok=True)
        raise


def make_sweep_figures(sweep_dir: PathLike, *, show: bool = False) -> list[Path]:
    """Write one PNG per plot spec of ``sweep_dir/sweep.json`` into `sweep_dir`, from
    ``results.csv``; return their paths in the order of the specs.

    A plot spec: ``file`` (a plain .png file name), ``x`` (a parameter path), ``y`` (a metric
    path), and optionally ``lines`` (a parameter path: one line per value), ``logx``, ``logy``,
    ``y_from_zero`` (default true), ``title``, ``xlabel``, ``ylabel`` (defaults from the paths and
    their units, `axis_label`), ``error_bars`` ("std" default, "ci95", "none") and ``theory``
    (see `draw_sweep_plot`). With `show`, the figures are also shown with pyplot after saving.
    """
    directory = Path(sweep_dir)
    sweep, rows = read_sweep(directory)
    plots = sweep.get("plots") or []
    if not isinstance(plots, list):
        raise ValueError(f"{directory / SWEEP_FILE}: field \"plots\": expected a list")
    paths = [check_file_name(directory, plot.get("file")) for plot in plots]
    units = sweep_units(directory)
    written: list[Path] = []
    refuse_foreign_figures(paths)     # (before drawing any: nothing is written if one is not ours)
    with glyphs_reported():           # a character the font has not, said once
        for plot, path in zip(plots, paths):
            fig = Figure(figsize=FIGSIZE_IN, layout="constrained")
            FigureCanvasAgg(fig)
            draw_sweep_plot(fig, plot, rows, units=units)
            _save_replacing(fig, path)
            written.append(path)
    if show and plots:
        import matplotlib.pyplot as plt  # only here: pyplot may need a display

        for plot in plots:
            draw_sweep_plot(plt.figure(figsize=FIGSIZE_IN, layout="constrained"), plot, rows,
                            units=units)
        plt.show()
    return written


def draw_sweep_plot(fig: Figure, plot: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], *,
                    units: Mapping[str, Any] | None = None) -> Any:
    """`_draw_sweep_plot`, every text drawn as it reads (plot_tool.layout.LITERAL_TEXT): the
    title, the axis labels, the line and category labels are the sweep file's or its values'
    words, never formulas; the axes' numbers need none (log scales are labelled in plain
    numbers). The tick labels are made in the layout's drawings, within."""
    import matplotlib as mpl

    with mpl.rc_context(cast(Any, LITERAL_TEXT)):
        return _draw_sweep_plot(fig, plot, rows, units=units)


def _draw_sweep_plot(fig: Figure, plot: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], *,
                     units: Mapping[str, Any] | None = None) -> Any:
    """Draw one plot spec into `fig` from results.csv `rows`; return the axes.

    One series per ``lines`` value: markers at the means, error bars as `aggregate` computes
    them, joined by lines when x is numeric; when x is text (an algorithm name) each category
    gets its markers side by side, never joined. The title is the figure's (above the axes and
    the legend, wrapped), the legend is outside the axes on the right, and every line drawn has
    its legend entry; the footnote says what the markers and error bars are. ``theory`` overlays,
    dashed (the runner fills in the settings from the topology, docs/sweeps.md):

    * ``{"model": "mathis", "mss_bytes", "rtt_ms", "units_bits_per_mbit"}``: black,
      `mathis_goodput_mbps` over the x range (x is the loss probability p, a fraction);
    * ``{"model": "cubic", "mss_bytes", "rtt_ms", "C", "beta", "units_bits_per_mbit"}``: black,
      `cubic_goodput_mbps` likewise;
    * ``{"model": "capacity" or "fair_share", "mbps", "label"}``: a black horizontal line,
      labelled with ``label`` (default "capacity <mbps> Mbps");
    * ``{"model": "column", "y": <metric path>}``: the mean of that column per x, per line, in
      the line's colour, one legend entry per line;
    * ``{"model": "band", "low": <metric path>, "high": <metric path>}``: a predicted range (a
      Vegas interval) per line, in the line's colour: a light band between dashed edges (a
      translucent bar per category), one legend entry per line.

    ``units_bits_per_mbit`` defaults to the sweep's units (`units`), else 1e6. Runs whose status
    is not "ok" are left out and counted in the footnote, as are "ok" runs without a ``y`` value.
    """
    data = plot_data(plot, rows, units=units)
    ax = fig.add_subplot()
    colors = _colors(len(data.series))
    offsets = (series_offsets(len(data.series)) if data.categories is not None
               else [0.0] * len(data.series))
    style = {format_value(s.line): (c, o) for s, c, o in zip(data.series, colors, offsets)}
    handles = [_draw_series(ax, data, s, color, offset)
               for s, color, offset in zip(data.series, colors, offsets)]
    extra: list[Any] = []
    for overlay in data.overlays:
        extra += _draw_overlay(ax, overlay, data, style)
    if not data.series:
        ax.text(0.5, 0.5, "no successful run with a value", transform=ax.transAxes,
                ha="center", va="center", color="dimgray")
    _set_axes(ax, data)
    if data.logy:
        _set_log_floor(ax, data, extra)
    handles += extra
    if handles and (data.lines is not None or extra):
        fig.legend(handles, [_legend_text(h.get_label()) for h in handles],
                   loc="outside right upper", fontsize="small", title=data.legend_title,
                   title_fontsize="small", frameon=False)
    if data.footnote:             # its lines, and room for them below the axes and x label
        footnote = textwrap.fill(data.footnote, FOOTNOTE_CHARS)
        bottom = 0.012 + FOOTNOTE_LINE * (footnote.count("\n") + 1)
        engine = cast(ConstrainedLayoutEngine, fig.get_layout_engine())
        engine.set(rect=(0, bottom, 1, 1 - bottom))
        fig.text(0.01, 0.012, footnote, ha="left", va="bottom", fontsize="small",
                 color="dimgray")
    with warnings.catch_warnings():       # a layout on the way may not fit yet: _grow_to_fit
        warnings.filterwarnings("ignore", message=LAYOUT_GAVE_UP)
        if data.categories is None and data.label_every_x:
            _stagger_labels(fig, ax, data.x_ticks)
        _fit_labels(fig, ax, data)
    _grow_to_fit(fig)
    return ax


def _draw_series(ax: Any, data: SweepPlotData, s: SweepSeries, color: str, offset: float) -> Any:
    """One line of the plot: its markers and error bars (joined by a line over numeric x)."""
    xs = x_positions(s.x, data.categories) + offset
    lower = np.minimum(s.lower, s.mean * (1 - 1e-9)) if data.logy else s.lower
    yerr = None if data.error_bars == "none" else [lower, s.upper]
    label = data.series_label(s)
    if data.categories is not None:            # categories: markers only, never joined
        drawn = ax.errorbar(xs, s.mean, yerr=yerr, color=color, marker="o", markersize=6,
                            linestyle="none", capsize=3, label=label)
    else:
        drawn = ax.errorbar(xs, s.mean, yerr=yerr, color=color, marker="o", markersize=4.5,
                            linewidth=1.4, capsize=3, label=label)
    drawn.lines[0].set_clip_on(False)   # a mean on the axis (0 from zero) keeps its whole marker
    return drawn


def _set_log_floor(ax: Any, data: SweepPlotData, overlays: Sequence[Any]) -> None:
    """On a logarithmic y axis, its edges from the values drawn: the markers, the bars' ends
    that stay above zero and the theory overlays, with a margin. A bar that would
    reach zero or below (`_draw_series` ends it just above zero) runs to that edge instead of
    stretching the axis down to its end (a ±1 std bar of 9.7 ± 12.3: 1e-8)."""
    floor, ceiling = math.inf, 0.0
    for s in data.series:
        mean, lower = np.asarray(s.mean, dtype=float), np.asarray(s.lower, dtype=float)
        upper = np.asarray(s.upper, dtype=float) if data.error_bars != "none" else 0.0 * mean
        ends = np.concatenate([mean, (mean - lower)[lower < mean], mean + upper])
        ends = ends[np.isfinite(ends) & (ends > 0)]
        if len(ends):
            floor, ceiling = min(floor, float(ends.min())), max(ceiling, float(ends.max()))
    for handle in overlays:
        ydata = getattr(handle, "get_ydata", None)
        if ydata is not None:
            values = np.asarray(ydata(), dtype=float)
            values = values[np.isfinite(values) & (values > 0)]
            if len(values):
                floor, ceiling = min(floor, float(values.min())), max(ceiling, float(values.max()))
    if math.isfinite(floor):             # (and the top as far above the highest, not farther)
        ax.set_ylim(floor / LOG_FLOOR_MARGIN, ceiling * LOG_FLOOR_MARGIN)


def _set_axes(ax: Any, data: SweepPlotData) -> None:
    """Scales, ticks (every swept x value labelled), limits (y from zero), labels, title, grid."""
    if data.categories is not None:
        width = max(CATEGORY_MIN_CHARS, CATEGORY_LINE_CHARS // len(data.categories))
        ax.set_xticks(range(len(data.categories)),      # a first guess `_fit_categories` refines
                      [textwrap.fill(c, width) if len(c) > width else c for c in data.categories])
        ax.set_xlim(-0.5, len(data.categories) - 0.5)
    else:
        if data.logx:
            ax.set_xscale("log")
        if not data.series and data.x_ticks:      # nothing drawn: the swept values' span
            low, high = data.x_ticks[0], data.x_ticks[-1]
            pad = (high - low) * 0.05 if high > low else max(abs(low) * 0.1, 1.0)
            if data.logx and low > 0:
                ax.set_xlim(low / 1.5, high * 1.5)
            else:
                ax.set_xlim(low - pad, high + pad)
        if data.label_every_x:
            _label_every_value(ax, data.x_ticks)
        else:
            _mark_every_value(ax, data)
    if data.logy:
        ax.set_yscale("log")
        _plain_log_labels(ax.yaxis)
    elif data.y_from_zero:
        top = ax.dataLim.y1 if ax.dataLim.height >= 0 else float("nan")
        ax.set_ylim(0, top * 1.05 if np.isfinite(top) and top > 0 else 1.0)
    ax.set_xlabel(data.xlabel)
    ax.set_ylabel(data.ylabel)
    ax.set_title(data.title)
    ax.grid(True, which="major", alpha=0.3)
    if data.logx or data.logy:
        ax.grid(True, which="minor", alpha=0.1)


def _label_every_value(ax: Any, values: Sequence[float]) -> None:
    """Ticks at exactly the swept x values, each labelled with its plain value, and no other
    labels (`_stagger_labels` moves labels that would overlap onto rows of their own)."""
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullFormatter, NullLocator

    if not values:
        return
    ax.xaxis.set_major_locator(FixedLocator(list(values)))
    ax.xaxis.set_major_formatter(FixedFormatter(tick_texts(values)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())


def tick_texts(values: Sequence[float]) -> list[str]:
    """The swept values as tick labels: 3 significant digits, or as many more (up to 6, `:g`'s)
    as tell neighbours apart (a log-spaced 0.00632456 is "0.00632")."""
    for digits in range(3, 6):       # (rounded, then written as `:g` does: 1019.43 is "1020",
        texts = [f"{float(f'{value:.{digits}g}'):g}" for value in values]   # not "1.02e+03")
        if len(set(texts)) == len(set(values)):
            return texts
    return [f"{value:g}" for value in values]


def _mark_every_value(ax: Any, data: SweepPlotData) -> None:
    """Many swept values (more than `MAX_LABELLED_X`): matplotlib's own ticks, labelled with
    plain numbers, and an unlabelled minor tick at every swept value."""
    from matplotlib.ticker import FixedLocator, NullFormatter

    if data.logx:
        _plain_log_labels(ax.xaxis)
    ax.xaxis.set_minor_locator(FixedLocator(list(data.x_ticks)))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _stagger_labels(fig: Figure, ax: Any, values: Sequence[float]) -> None:
    """Swept x values close together (0.001 and 0.002 on a linear axis up to 0.04) would have
    overlapping labels: each label goes on the first row, from the axis down, where it clears the
    labels already there (a label on row k starts with k line breaks)."""
    from matplotlib.ticker import FixedFormatter

    if len(values) < 2:
        return
    fig.draw_without_rendering()
    renderer = cast(FigureCanvasAgg, fig.canvas).get_renderer()
    texts = tick_texts(values)
    gap = 4.0                                   # pixels between labels on one row
    row_ends: list[float] = []
    rows = []
    for value, text in zip(values, texts):
        label = ax.xaxis.get_major_ticks()[0].label1
        label.set_text(text)
        width = label.get_window_extent(renderer).width
        centre = ax.transData.transform((value, 0.0))[0]
        left = centre - width / 2
        row = next((k for k, end in enumerate(row_ends) if end + gap <= left), len(row_ends))
        if row == len(row_ends):
            row_ends.append(centre + width / 2)
        else:
            row_ends[row] = centre + width / 2
        rows.append(row)
    if max(rows) > 0:
        ax.xaxis.set_major_formatter(FixedFormatter(["\n" * row + text
                                                     for row, text in zip(rows, texts)]))


def _draw_overlay(ax: Any, overlay: Overlay, data: SweepPlotData,
                  style: Mapping[str, tuple[str, float]]) -> list[Any]:
    """Draw one theory overlay, dashed; its legend handles."""
    color, offset = style.get(overlay.line or "", ("black", 0.0))
    if overlay.line is None:
        color = "black"
    if overlay.kind == "level":
        return [ax.axhline(float(overlay.y[0]), color=color, linestyle="--", linewidth=1.2,
                           label=overlay.label)]
    if overlay.kind == "curve":
        return list(ax.plot(overlay.x, overlay.y, color=color, linestyle="--", linewidth=1.2,
                            marker="x" if len(overlay.x) == 1 else None, label=overlay.label))
    if overlay.kind == "values":
        xs = x_positions(overlay.x, data.categories)
        if data.categories is not None:        # a dash per category, not a line across them
            return list(ax.plot(xs + offset, overlay.y, color=color, linestyle="none",
                                marker="_", markersize=16, markeredgewidth=2,
                                label=overlay.label))
        return list(ax.plot(xs, overlay.y, color=color, linestyle="--", linewidth=1.2,
                            label=overlay.label))
    return [_draw_band(ax, overlay, data.categories, color, offset)]


def _draw_band(ax: Any, overlay: Overlay, categories: list[str] | None, color: str,
               offset: float) -> Any:
    """A predicted range of one line. Bands of several lines overlap, and translucent fills mixed
    together make colours that match no legend entry, so each band is a very light fill between
    edges drawn dashed in its line's colour: where bands overlap, the edges still tell them
    apart. Returns its legend handle (fill and edge)."""
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Patch

    assert overlay.high is not None
    lo, hi = overlay.y, overlay.high
    xs = x_positions(overlay.x, categories)
    if categories is not None:
        bars = ax.bar(xs + offset, hi - lo, bottom=lo, width=0.1, color=to_rgba(color, 0.25),
                      edgecolor=color, linestyle="--", linewidth=1.0, label="_nolegend_")
        for bar in bars:                  # no axis pinned to a bar's bottom
            bar.sticky_edges.y[:] = []
        for edge in (lo, hi):             # an empty range stays visible as a dash
            ax.plot(xs + offset, edge, color=color, linestyle="none", marker="_",
                    markersize=10, markeredgewidth=1.5, label="_nolegend_")
    else:
        ax.fill_between(xs, lo, hi, color=to_rgba(color, 0.08), linewidth=0, label="_nolegend_")
        ax.plot(xs, lo, color=color, linestyle="--", linewidth=1.0, label="_nolegend_")
        ax.plot(xs, hi, color=color, linestyle="--", linewidth=1.0, label="_nolegend_")
    fill = to_rgba(color, 0.25 if categories is not None else 0.08)
    return Patch(facecolor=fill, edgecolor=color, linestyle="--", linewidth=1.0,
                 label=overlay.label)


def _fit_labels(fig: Figure, ax: Any, data: SweepPlotData) -> None:
    """Wrap the title and the x label to the width of the axes, and the y label to their height,
    so that a long one (up to the 200 characters a label may have) is neither cut at the figure's
    edges nor run into the legend or the footnote. Each wrap reshapes the axes (a wrapped y label
    narrows them, a wrapped title or x label shortens them), so the fitting is repeated until
    nothing changes; it only ever wraps narrower or shrinks a text, so it ends."""
    fits = ((ax.title, data.title, "width"), (ax.xaxis.label, data.xlabel, "width"),
            (ax.yaxis.label, data.ylabel, "height"))
    for _ in range(FIT_ROUNDS):
        changed = [_fit_to_axes(fig, ax, artist, text, along) for artist, text, along in fits]
        if data.categories is not None:
            changed.append(_fit_categories(fig, ax, data.categories))
        if not any(changed):
            return


def _fit_to_axes(fig: Figure, ax: Any, artist: Any, text: str, along: str) -> bool:
    """Wrap one text of the axes to their `along` ("width" or "height": the y label is drawn
    upright) as they are now, in a smaller font when it would take more than MAX_LABEL_LINES
    lines; whether it changed. A short text fits without measuring."""
    if len(text) <= SHORT_TEXT[along]:
        return False
    fig.draw_without_rendering()
    renderer = cast(FigureCanvasAgg, fig.canvas).get_renderer()
    room = getattr(ax.get_window_extent(renderer), along)
    before = (artist.get_text(), artist.get_fontsize())
    for _ in range(12):
        needed = getattr(artist.get_window_extent(renderer), along)
        if needed <= room:
            break
        longest = max(len(line) for line in artist.get_text().splitlines())
        wrapped = textwrap.fill(text, max(10, int(longest * room / needed) - 1))
        if wrapped.count("\n") >= MAX_LABEL_LINES and artist.get_fontsize() > MIN_LABEL_PT:
            artist.set_fontsize(max(MIN_LABEL_PT, artist.get_fontsize() * 0.85))
            continue
        artist.set_text(wrapped)
    return (artist.get_text(), artist.get_fontsize()) != before


def _fit_categories(fig: Figure, ax: Any, categories: list[str]) -> bool:
    """Wrap the x categories' labels (a value's label may have 255 characters, an object shown
    as JSON more) to the width each category has on the axes, all in a smaller font when one
    would take more than MAX_LABEL_LINES lines, so that they neither run into each other nor
    leave the figure; whether they changed. Like `_fit_to_axes`, it only narrows or shrinks."""
    fig.draw_without_rendering()
    renderer = cast(FigureCanvasAgg, fig.canvas).get_renderer()
    room = ax.get_window_extent(renderer).width / len(categories) - CATEGORY_GAP_PX
    labels = ax.get_xticklabels()
    before = ([label.get_text() for label in labels], labels[0].get_fontsize())
    texts, size = before
    for _ in range(12):
        widths = [label.get_window_extent(renderer).width for label in labels]
        if max(widths) <= room:
            break
        wrapped = [text if width <= room else textwrap.fill(
                       category, max(CATEGORY_MIN_CHARS, int(_longest(text) * room / width) - 1))
                   for category, text, width in zip(categories, texts, widths)]
        if max(text.count("\n") for text in wrapped) >= MAX_LABEL_LINES and size > MIN_LABEL_PT:
            size = max(MIN_LABEL_PT, size * 0.85)
            ax.tick_params(axis="x", labelsize=size)
        elif wrapped == texts:                # as narrow as a label gets
            break
        else:
            texts = wrapped
        ax.set_xticks(range(len(categories)), texts)
        labels = ax.get_xticklabels()
        for label in labels:                  # measured before the next draw sets them
            label.set_fontsize(size)
    return (texts, size) != before


def _grow_to_fit(fig: Figure) -> None:
    """Make the figure taller while its texts, wrapped and shrunk as far as they go, still do
    not fit it (a dozen categories of 255 characters, a legend of many long line names): a
    taller figure rather than a text cut at its edge or drawn over another."""
    for _ in range(GROW_ROUNDS):
        with warnings.catch_warnings(record=True) as caught:
            warnings.filterwarnings("always", message=LAYOUT_GAVE_UP)
            fig.draw_without_rendering()
        # (only the layout's warning: a glyph the font lacks says nothing of the room)
        gave_up = any(LAYOUT_GAVE_UP in str(item.message) for item in caught)
        renderer = cast(FigureCanvasAgg, fig.canvas).get_renderer()
        content = fig.get_tightbbox(renderer)             # in inches, as the figure's size
        height = fig.get_figheight()
        overflow = max(0.0, -content.y0) + max(0.0, content.y1 - height)
        for legend in fig.legends:                        # down to the footnote: above it
            box = legend.get_window_extent(renderer)
            for note in fig.texts:
                below = note.get_window_extent(renderer)
                if box.overlaps(below):
                    overflow += (below.y1 - box.y0) / fig.dpi
        if overflow <= 0.01 and not gave_up:
            return
        # what sticks out, and a margin; half again when the layout gave up (no size known)
        fig.set_figheight(height + (max(overflow, 0.5 * height) if gave_up else overflow + 0.1))


def _longest(text: str) -> int:
    return max(len(line) for line in text.splitlines()) if text else 1


def _legend_text(label: str) -> str:
    """A legend entry, its details in parentheses on lines of their own when it is long."""
    if len(label) <= LEGEND_WIDTH:
        return label
    head, paren, rest = label.partition(" (")
    if paren:
        return head + "\n" + textwrap.fill("(" + rest, LEGEND_WIDTH)
    return textwrap.fill(label, LEGEND_WIDTH)


def _plain_log_labels(axis: Any) -> None:
    """Label a log y axis with plain numbers (0.001, 0.6, 6) rather than powers of ten;
    intermediate ticks are labelled when the axis spans few decades (matplotlib's LogFormatter
    chooses which; it wrote a tick below 1 as "6e-01")."""
    from matplotlib.ticker import LogFormatter

    class PlainLogFormatter(LogFormatter):
        def __call__(self, x, pos=None):
            return f"{x:g}" if super().__call__(x, pos) else ""

    axis.set_major_formatter(PlainLogFormatter())
    axis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))


def _colors(count: int) -> list[str]:
    """tab10 up to 10 lines, else tab20 (dark shades first), as the run figures do."""
    from matplotlib import colormaps

    if count <= 10:
        palette = list(cast(Any, colormaps["tab10"]).colors)
    else:
        tab20 = list(cast(Any, colormaps["tab20"]).colors)
        palette = tab20[0::2] + tab20[1::2]
    out = []
    for i in range(count):
        r, g, b = palette[i % len(palette)][:3]
        out.append(f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}")
    return out


__all__ = ["ERROR_BARS", "THEORY_MODELS", "THEORY_POINTS", "UNIT_SUFFIXES", "SweepSeries",
           "aggregate", "aimd_average_window", "axis_label", "cubic_average_window",
           "cubic_goodput_mbps", "cubic_reno_friendly_window", "draw_sweep_plot",
           "make_sweep_figures", "mathis_goodput_mbps", "quantity_name", "read_sweep",
           "reno_average_window", "sweep_units", "t_quantile_975"]
