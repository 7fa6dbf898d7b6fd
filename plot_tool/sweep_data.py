"""The front end of the sweep figures: a sweep directory read once, and each plot spec's data
computed once (`plot_data` -> `SweepPlotData`: the aggregated series, labels, axis settings, the
footnote that explains the error bars, and the theory overlays), which both drawing backends
draw: the PNG figures (`plot_tool.sweep_figures`) and the interactive report
(`plot_tool.report_sweep`). Labels and errors are therefore the same in both.

Theory overlays (``"theory"``, dashed): the Mathis et al. (1997) Reno response function, the
CUBIC average window of RFC 9438 Section 5 (with its Reno-friendly floor), a capacity or fair-share
line, a per-run predicted value taken from another column, or a predicted range between two
columns. The response functions live in `theory.response` (pure numpy, no simulator import).
"""
from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Union

import numpy as np

from plot_tool.results import read_json_object
from plot_tool.schema import stopped_early
from plot_tool.sweep_names import axis_label, quantity_name
from plot_tool.sweep_stats import (
    RESULTS_FILE,
    SweepSeries,
    aggregate_counted,
    format_value,
    is_ok,
)
from theory.response import (
    cubic_average_window,
    cubic_goodput_mbps,
    cubic_reno_friendly_window,
    mathis_goodput_mbps,
)

PathLike = Union[str, "os.PathLike[str]"]

SWEEP_FILE = "sweep.json"
SUMMARY_FILE = "summary.json"
THEORY_MODELS = ("mathis", "cubic", "capacity", "fair_share", "column", "band")
THEORY_POINTS = 200             # points of a Mathis / CUBIC curve
ERROR_BAR_TEXT = {"std": "error bars: \u00b11 standard deviation of those runs",
                  "ci95": "error bars: 95 % confidence interval of their mean",
                  "none": "no error bars"}


# a numeric x axis labels every swept value up to this many; beyond, labels staggered on rows
# below the axis would stack (1 600 values: 150 rows and a 3 277-pixel figure), so the axis gets
# ordinary ticks instead and each swept value a short unlabelled mark
MAX_LABELLED_X = 20


@dataclass
class Overlay:
    """One theory overlay of a sweep plot, drawn dashed.

    `kind`: "level" (a horizontal line at ``y[0]``, across the plot), "curve" (a model's curve over
    ``x``, numeric), "values" (a predicted value per x of one line: a dashed line over numeric x,
    a dash per category over text x), "band" (a predicted range ``y`` .. ``high`` per x of one
    line). `line` is the key (`format_value`) of the sweep line whose colour it takes, None for
    black.
    """

    kind: str
    label: str
    x: np.ndarray
    y: np.ndarray
    high: np.ndarray | None = None
    line: str | None = None


@dataclass
class SweepPlotData:
    """Everything drawn for one plot spec, computed once."""

    x: str
    y: str
    lines: str | None
    error_bars: str
    series: list[SweepSeries]
    categories: list[str] | None       # the x values in order when they are text, else None
    title: str
    xlabel: str
    ylabel: str
    legend_title: str | None
    logx: bool
    logy: bool
    y_from_zero: bool
    x_ticks: list[float]               # every x value swept (numeric x)
    footnote: str
    overlays: list[Overlay] = field(default_factory=list)

    @property
    def label_every_x(self) -> bool:
        """Whether the numeric x axis has a labelled tick at every swept value (up to
        `MAX_LABELLED_X` of them), or else ordinary ticks with a short mark at each value."""
        return len(self.x_ticks) <= MAX_LABELLED_X

    def series_label(self, s: SweepSeries) -> str:
        return s.label if self.lines is not None else quantity_name(self.y)


# Reading a sweep directory


def read_sweep(sweep_dir: PathLike) -> tuple[dict, list[dict[str, str]]]:
    """(``sweep.json`` as a dict, ``results.csv`` rows as dicts of strings) of a sweep directory.
    FileNotFoundError naming the missing file; ValueError for malformed content."""
    directory = Path(sweep_dir)
    sweep_path, results_path = directory / SWEEP_FILE, directory / RESULTS_FILE
    for path in (sweep_path, results_path):
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file (not a sweep directory?)")
    try:
        sweep = json.loads(sweep_path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{sweep_path}: not valid JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(sweep, dict):
        raise ValueError(f"{sweep_path}: expected a JSON object at the top level")
    check_sweep(sweep, sweep_path)
    with open(results_path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        try:
            rows = list(reader)
        except csv.Error as exc:       # (a field past the csv module's limit, a NUL byte)
            raise ValueError(f"{results_path}, line {reader.line_num}: not a CSV row: "
                             f"{exc}") from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"{results_path}: not UTF-8 text: {exc}") from None
    return sweep, rows


# What the readers of a sweep directory take from its sweep.json (netsim/sweep_file.py checked
# the sweep file it copies; the copy is checked again, as summary.json is: a damaged one is one
# line, not a traceback): top-level field -> type, and each plot's field -> (type, required).
SWEEP_FIELDS: dict[str, type] = {"name": str, "description": str, "topology": str, "plots": list}
PLOT_FIELDS: dict[str, tuple[type, bool]] = {"x": (str, True), "y": (str, True), "lines": (str, False),
               "error_bars": (str, False), "title": (str, False), "xlabel": (str, False),
               "ylabel": (str, False), "file": (str, False), "logx": (bool, False),
               "logy": (bool, False), "y_from_zero": (bool, False), "theory": (dict, False)}
_TYPE_NAMES: dict[type, str] = {str: "a string", list: "a list", bool: "true or false", dict: "an object"}


def check_sweep(sweep: Mapping[str, Any], path: PathLike) -> None:
    """ValueError naming `path`, the field and what was expected, for the first field of
    `SWEEP_FIELDS` and of each plot's `PLOT_FIELDS` that `sweep` (sweep.json, parsed) holds with
    another type (null counts as absent where the field is optional), or lacks while required."""
    from topologies.validation import show

    def refuse(field: str, kind: type, value: Any, missing: bool = False) -> ValueError:
        got = "missing" if missing else f"got {show(value)}"
        return ValueError(f"{path}: {field}: expected {_TYPE_NAMES[kind]}, {got}")

    for name, kind in SWEEP_FIELDS.items():
        value = sweep.get(name)
        if value is not None and not isinstance(value, kind):
            raise refuse(name, kind, value)
    for i, plot in enumerate(sweep.get("plots") or []):
        if not isinstance(plot, dict):
            raise refuse(f"plots[{i}]", dict, plot)
        for name, (kind, required) in PLOT_FIELDS.items():
            value = plot.get(name)
            if value is None:
                if required:
                    raise refuse(f"plots[{i}].{name}", kind, value, missing=True)
            elif not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
                raise refuse(f"plots[{i}].{name}", kind, value)


def _units_source(path: Path) -> Any:
    """The JSON object in `path` as the results' readers read one (`read_json_object`: only a
    regular file of at most MAX_JSON_BYTES: a pipe would block, a device never end), else
    None."""
    try:
        return read_json_object(path)
    except (OSError, ValueError):
        return None


def sweep_units(sweep_dir: PathLike) -> dict:
    """The units of a sweep's metrics (``{"system", "bits_per_mbit", ...}`` as in summary.json).

    From the first stored run record (``runs/<digest>.json``: its summary's units), else the first
    ``summary.json`` found (the sweep directory, then one or two levels below it: the layouts of
    older sweeps), else {} (unknown: no run wrote a summary, so there is nothing to draw in
    units). The sweep directory only, never the topology file the sweep names: figures and the
    report read results. Only regular files of at most MAX_JSON_BYTES are read
    (`_units_source`).
    """
    directory = Path(sweep_dir)
    for path in sorted((directory / "runs").glob("*.json")):
        record = _units_source(path)
        summary = record.get("summary") if isinstance(record, dict) else None
        units = summary.get("units") if isinstance(summary, dict) else None
        if isinstance(units, dict) and units:
            return dict(units)
    candidates = [directory / SUMMARY_FILE]
    candidates += sorted(directory.glob(f"*/{SUMMARY_FILE}"))
    candidates += sorted(directory.glob(f"*/*/{SUMMARY_FILE}"))
    for path in candidates:
        summary = _units_source(path)
        units = summary.get("units") if isinstance(summary, dict) else None
        if isinstance(units, dict) and units:
            return dict(units)
    return {}


def check_file_name(directory: Path, name: Any) -> Path:
    """A plot's file: a plain .png name in the sweep directory (nothing that leaves it)."""
    if (not isinstance(name, str) or not name or name in (".", "..") or "/" in name
            or "\\" in name or any(ord(c) < 32 or ord(c) == 127 for c in name)
            or not name.lower().endswith(".png")):
        raise ValueError(f"{directory / SWEEP_FILE}: plot file {name!r}: expected a plain .png "
                         f"file name (no directories)")
    return directory / name


def plot_data(plot: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], *,
              units: Mapping[str, Any] | None = None) -> SweepPlotData:
    """The data of one plot spec (docs/sweeps.md, "Figures") from results.csv `rows`.

    One series per ``lines`` value (`aggregate`). The y axis starts at zero unless the spec says
    ``"y_from_zero": false`` (or the axis is logarithmic); every swept x value gets a labelled
    tick. The footnote says what the markers and the error bars are (over how many seeds), and
    how many runs were left out. Raises ValueError for a spec the rows cannot serve (an unknown
    column, a model curve over a text x).
    """
    x, y = str(plot["x"]), str(plot["y"])
    lines = plot.get("lines")
    lines = None if lines is None else str(lines)
    error_bars = str(plot.get("error_bars") or "std")
    logx, logy = bool(plot.get("logx")), bool(plot.get("logy"))
    ok = [row for row in rows if is_ok(row)]
    series, missing = aggregate_counted(ok, x, y, lines, error_bars)
    categories = _categories(series)
    series, hidden = _on_log_axes(series, logx and categories is None, logy)
    theory = plot.get("theory")
    xlabel = str(plot.get("xlabel") or axis_label(x, units))
    if not plot.get("xlabel") and theory and theory.get("model") in ("mathis", "cubic"):
        xlabel += " = loss probability p"
    title = str(plot.get("title") or _capitalized(f"{quantity_name(y)} vs {quantity_name(x)}"))
    x_ticks = sorted({float(v) for s in series for v in s.x}) if categories is None else []
    if not series:           # no value to draw: the axis still shows what was swept
        swept = [str(row.get(x)) for row in rows if row.get(x) not in (None, "")]
        try:
            x_ticks = sorted({float(v) for v in swept if not logx or float(v) > 0})
        except (TypeError, ValueError):
            categories = list(dict.fromkeys(str(v) for v in swept)) or None
    data = SweepPlotData(
        x=x, y=y, lines=lines, error_bars=error_bars, series=series, categories=categories,
        title=title, xlabel=xlabel, ylabel=str(plot.get("ylabel") or axis_label(y, units)),
        legend_title=quantity_name(lines) if lines is not None else None, logx=logx, logy=logy,
        y_from_zero=bool(plot.get("y_from_zero", True)) and not logy, x_ticks=x_ticks,
        footnote=footnote(len(rows) - len(ok), len(rows), missing, y, error_bars, series,
                          hidden=hidden, x=x, early=sum(map(stopped_early, ok))))
    if theory:
        data.overlays = overlays(theory, data, ok, units)
    return data


def _on_log_axes(series: list, logx: bool, logy: bool) -> tuple:
    """(the series without what a logarithmic axis cannot show, (how many points had x <= 0, how
    many a mean y <= 0)), counted in the footnote, never dropped silently. A point at x <= 0 is
    removed (those are the lowest x values: nothing joins across them); a mean <= 0 on a log y
    axis becomes NaN, its error bar too, so that the line breaks there rather than joining its
    neighbours over it. No line runs towards a hidden point and no axis range reaches for it."""
    hidden_x = hidden_y = 0
    if not (logx or logy):
        return series, (0, 0)
    out = []
    for s in series:
        if logx:
            keep = np.asarray(s.x, dtype=float) > 0
            hidden_x += int((~keep).sum())
            s = replace(s, x=s.x[keep], mean=s.mean[keep], lower=s.lower[keep],
                        upper=s.upper[keep], n=s.n[keep])
        if logy:
            gone = ~(np.asarray(s.mean, dtype=float) > 0)
            hidden_y += int(gone.sum())
            s = replace(s, mean=np.where(gone, np.nan, s.mean),
                        lower=np.where(gone, np.nan, s.lower),
                        upper=np.where(gone, np.nan, s.upper))
        out.append(s)
    return out, (hidden_x, hidden_y)


def footnote(failed: int, total: int, missing: int, y: str, error_bars: str,
             series: Sequence[SweepSeries] = (), *, hidden: tuple = (0, 0),
             x: str = "", early: int = 0) -> str:
    """What a marker and an error bar are (the mean of how many runs), the runs left out, the
    runs included that stopped early at a bound (`early`), and the points a logarithmic axis
    cannot show (`hidden`: with x <= 0, with a mean y <= 0)."""
    counts = sorted({int(n) for s in series for n in s.n})
    parts = []
    if counts:
        runs = (f"{counts[0]} run{'s' if counts[0] != 1 else ''}" if len(counts) == 1
                else f"{counts[0]}\u2013{counts[-1]} runs")
        parts.append(f"markers: mean of {runs} per point (seeds and parameters not on the axes)")
        parts.append("no error bars" if error_bars == "none" else
                     ERROR_BAR_TEXT[error_bars] + (" (none for a single run)"
                                                   if counts[0] < 2 else ""))
    elif error_bars != "std":
        parts.append(ERROR_BAR_TEXT[error_bars])
    if failed:
        parts.append(f"{failed} run{'s' if failed != 1 else ''} failed (of {total}), left out")
    if missing:
        parts.append(f"{missing} run{'s' if missing != 1 else ''} without {quantity_name(y)}, "
                     f"left out")
    if early:
        parts.append(f"{early} run{'s' if early != 1 else ''} stopped early at a bound (limit or "
                     f"stall) and counted as far as {'they' if early != 1 else 'it'} went "
                     f"(results.csv's error column says where)")
    hidden_x, hidden_y = hidden
    if hidden_x:
        parts.append(f"{hidden_x} point{'s' if hidden_x != 1 else ''} with {quantity_name(x)} "
                     f"\u2264 0 not drawn (logarithmic x axis)")
    if hidden_y:
        parts.append(f"{hidden_y} point{'s' if hidden_y != 1 else ''} with a mean "
                     f"{quantity_name(y)} \u2264 0 not drawn (logarithmic y axis)")
    return "; ".join(parts)


def overlays(theory: Mapping[str, Any], data: SweepPlotData,
             ok_rows: Sequence[Mapping[str, Any]],
             units: Mapping[str, Any] | None) -> list[Overlay]:
    """The theory overlays of a plot (see the module docstring); ValueError for an unknown model
    or a model curve over a text x."""
    model = theory.get("model")
    if model not in THEORY_MODELS:
        raise ValueError(f"theory: model must be one of {', '.join(THEORY_MODELS)}, "
                         f"got {model!r}")
    if model in ("capacity", "fair_share"):
        mbps = _number(theory, "mbps")
        binary = " (binary)" if (units or {}).get("system") == "binary" else ""
        label = theory.get("label") or (f"capacity {mbps:g} Mbps" if model == "capacity"
                                        else f"fair share {mbps:g} Mbps")
        xs = (np.array(data.categories, dtype=str) if data.categories is not None
              else np.array(data.x_ticks[:1] + data.x_ticks[-1:], dtype=float))
        return [Overlay("level", f"{label}{binary}", xs, np.full(max(len(xs), 1), mbps))]
    if model == "column":
        return _column_overlays(_text(theory, "y"), data, ok_rows)
    if model == "band":
        return _band_overlays(_text(theory, "low"), _text(theory, "high"), data, ok_rows)
    return [_model_curve(model, theory, data, units)] if data.series else []


def _column_overlays(column: str, data: SweepPlotData,
                     ok_rows: Sequence[Mapping[str, Any]]) -> list[Overlay]:
    """The mean of another column per x, per line, in the line's colour."""
    predicted, _ = aggregate_counted(list(ok_rows), data.x, column, data.lines, "none")
    name = quantity_name(column)
    out = []
    for s in predicted:
        keep = np.ones(len(s.x), dtype=bool)
        if data.categories is not None:
            keep = np.array([str(v) in data.categories for v in s.x], dtype=bool)
        elif data.logx:                    # as the measured points (`_on_log_axes`)
            keep = np.asarray(s.x, dtype=float) > 0
        label = f"{s.label}: {name}" if data.lines is not None else name
        out.append(Overlay("values", label, s.x[keep], s.mean[keep], line=format_value(s.line)))
    return out


def _band_overlays(low_column: str, high_column: str, data: SweepPlotData,
                   ok_rows: Sequence[Mapping[str, Any]]) -> list[Overlay]:
    """A predicted range per line, at the x values where both ends have a value."""
    lows, _ = aggregate_counted(list(ok_rows), data.x, low_column, data.lines, "none")
    highs, _ = aggregate_counted(list(ok_rows), data.x, high_column, data.lines, "none")
    high_of = {format_value(s.line): s for s in highs}
    name = quantity_name(low_column).removesuffix(", predicted low").removesuffix(" low")
    out = []
    for low in lows:
        high = high_of.get(format_value(low.line))
        if high is None:
            continue
        high_x = high.x.tolist()
        common = [v for v in low.x.tolist() if v in high_x
                  and not (data.logx and data.categories is None and float(v) <= 0)]
        if not common:
            continue
        lo = np.array([low.mean[low.x.tolist().index(v)] for v in common])
        hi = np.array([high.mean[high_x.index(v)] for v in common])
        label = (f"{low.label}: {name}, predicted range" if data.lines is not None
                 else f"{name}, predicted range")
        out.append(Overlay("band", label, np.array(common, dtype=low.x.dtype), lo, high=hi,
                           line=format_value(low.line)))
    return out


def _model_curve(model: str, theory: Mapping[str, Any], data: SweepPlotData,
                 units: Mapping[str, Any] | None) -> Overlay:
    """The Mathis or CUBIC goodput over the swept loss probabilities."""
    if data.categories is not None:
        raise ValueError(f'theory "{model}": the x parameter {data.x!r} must be numeric '
                         f"(the loss probability p)")
    xs = np.array(data.x_ticks, dtype=float)
    xs = xs[np.isfinite(xs) & (xs > 0)]
    if not len(xs):
        raise ValueError(f'theory "{model}": no positive loss probability among the x values')
    lo, hi = float(xs.min()), float(xs.max())
    p = np.geomspace(lo, hi, THEORY_POINTS) if data.logx else np.linspace(lo, hi, THEORY_POINTS)
    if lo == hi:
        p = np.array([lo])
    rtt_s = _number(theory, "rtt_ms") / 1e3
    mss = _number(theory, "mss_bytes")
    bits = float(theory.get("units_bits_per_mbit") or (units or {}).get("bits_per_mbit") or 1e6)
    rtt = f"RTT {rtt_s * 1e3:.3g} ms"
    base = theory.get("base_rtt_ms")
    if base is not None:
        rtt = (f"base RTT {rtt_s * 1e3:.3g} ms" if math.isclose(float(base), rtt_s * 1e3)
               else f"RTT {rtt_s * 1e3:.3g} ms (base {float(base):.3g} ms)")
    if model == "mathis":
        values = mathis_goodput_mbps(p, mss, rtt_s, bits)
        label = f"Mathis et al. (MSS {mss:g} B, {rtt})"
    else:
        c, beta = _number(theory, "C"), _number(theory, "beta")
        values = cubic_goodput_mbps(p, mss, rtt_s, c, beta, bits)
        label = (f"CUBIC, RFC 9438 (C {c:g}, \u03b2 {beta:g}, MSS {mss:g} B, {rtt})"
                 + _cubic_region_note(p, rtt_s, c, beta))
    return Overlay("curve", label, p, np.asarray(values, dtype=float))


def _cubic_region_note(p: np.ndarray, rtt_s: float, c: float, beta: float) -> str:
    """Where the RFC 9438 curve is in CUBIC's Reno-friendly region (RFC 9438 §5.1: the
    Reno-friendly average window, Reno's, is the larger), which makes it Reno's rate there, the
    Mathis line: said, since the two curves then coincide (acceptance test Z7)."""
    friendly = (np.asarray(cubic_reno_friendly_window(p, beta), dtype=float)
                >= np.asarray(cubic_average_window(p, rtt_s, c, beta), dtype=float))
    if friendly.all():
        return "; Reno-friendly region at every p shown: Reno's rate"
    if friendly.any():
        edge = p[friendly]
        return (f"; Reno-friendly region (Reno's rate) for p from {edge.min():.3g} to "
                f"{edge.max():.3g}")
    return ""


def _number(theory: Mapping[str, Any], key: str) -> float:
    """A number of a theory overlay (the runner resolves them from the topology)."""
    if key not in theory:
        raise ValueError(f'theory "{theory.get("model")}": missing field "{key}"')
    try:
        return float(theory[key])
    except (TypeError, ValueError):
        raise ValueError(f'theory "{theory.get("model")}": field "{key}": expected a number, '
                         f"got {theory[key]!r}") from None


def _text(theory: Mapping[str, Any], key: str) -> str:
    if key not in theory:
        raise ValueError(f'theory "{theory.get("model")}": missing field "{key}"')
    return str(theory[key])


def _categories(series: Sequence[SweepSeries]) -> list[str] | None:
    """The x categories (in order) when x is not numeric, else None."""
    if not series or all(s.x.dtype.kind == "f" for s in series):
        return None
    return list(dict.fromkeys(str(v) for s in series for v in s.x))


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def series_offsets(count: int) -> list[float]:
    """Horizontal offsets of `count` series within one category (a text x), so that their
    markers and error bars stand side by side: the same in the figure and the report."""
    if count <= 1:
        return [0.0] * count
    step = min(0.15, 0.6 / (count - 1))
    return [(i - (count - 1) / 2) * step for i in range(count)]


def x_positions(x: np.ndarray, categories: list[str] | None) -> np.ndarray:
    """Where x values go on the axis: the numbers themselves, or a category's index (0, 1, ...)."""
    if categories is None:
        return np.asarray(x, dtype=float)
    index = {c: i for i, c in enumerate(categories)}
    return np.array([index[str(v)] for v in x], dtype=float)
