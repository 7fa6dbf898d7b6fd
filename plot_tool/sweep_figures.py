"""Figures of a parameter sweep: one PNG per plot spec of ``sweep.json``, drawn from
``results.csv`` (formats: docs/sweeps.md).

A sweep directory holds ``sweep.json`` (the validated sweep description, with its ``"plots"``) and
``results.csv`` (one row per run: ``run_id``, ``point``, ``seed``, one column per swept parameter
named by its dotted path, one column per metric, ``wall_time_s``, ``status``, ``error``).

    from plot_tool.sweep_figures import make_sweep_figures, aggregate
    make_sweep_figures("sweeps/loss")        # -> [Path("sweeps/loss/goodput.png"), ...]

For each plot the runs with status "ok" are grouped by (``lines`` value, ``x`` value); each group
becomes one marker at the mean over its seeds, with an error bar (sample standard deviation, or a
Student-t 95 % confidence interval of the mean, or none). Runs with status "error" are left out
and counted in a footnote. Theory overlays (``"theory"``) are drawn dashed: the Mathis et al.
(1997) Reno response function, the CUBIC average window of RFC 9438 Section 5 (with its
Reno-friendly floor), a capacity line, or a per-run predicted value taken from another column.

Like plot_tool.figures, this module reads files only (it imports nothing from the simulator
packages), draws with the object-oriented matplotlib API on an Agg canvas, and imports pyplot
only when ``show=True``.
"""
from __future__ import annotations

import csv
import difflib
import json
import math
import os
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

PathLike = Union[str, "os.PathLike[str]"]

SWEEP_FILE = "sweep.json"
RESULTS_FILE = "results.csv"
SUMMARY_FILE = "summary.json"

ERROR_BARS = ("std", "ci95", "none")
THEORY_MODELS = ("mathis", "cubic", "capacity", "fair_share", "column", "band")

DPI = 110
FIGSIZE_IN = (8.0, 5.0)
THEORY_POINTS = 200             # points of a Mathis / CUBIC curve
FOOTNOTE_HEIGHT = 0.05          # fraction of the figure kept free at the bottom for the footnote
SHORT_TITLE = 40                # titles up to this many characters fit above any axes
LEGEND_WIDTH = 32               # characters per line of a legend entry (longer ones wrap)

# Axis units from the last part of a dotted path (the first matching suffix wins). Rates and sizes
# are in the topology's units; "binary" is appended to them when the units are binary.
UNIT_SUFFIXES = (("_mbps", "Mbps"), ("_kb", "KB"), ("_mb", "MB"), ("_ms", "ms"), ("_s", "s"),
                 ("_pkts", "packets"), ("_bytes", "bytes"), ("_pct", "%"))
_TOPOLOGY_UNITS = ("Mbps", "KB", "MB")

# Student-t 0.975 quantiles (two-sided 95 %) for 1..30 degrees of freedom; beyond 30 the
# Cornish-Fisher expansion in `t_quantile_975` is used (error below 3e-8 there).
_T975 = (12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851,
         2.364624252, 2.306004135, 2.262157163, 2.228138852, 2.200985160, 2.178812830,
         2.160368656, 2.144786688, 2.131449546, 2.119905299, 2.109815578, 2.100922040,
         2.093024054, 2.085963447, 2.079613845, 2.073873068, 2.068657610, 2.063898562,
         2.059538553, 2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456)
_Z975 = 1.959963984540054       # standard normal 0.975 quantile


# ---------------------------------------------------------------------------------------------
# Theory: the response functions live in `theory.response` (pure numpy, no simulator import)

from theory.response import (aimd_average_window, cubic_average_window,  # noqa: E402,F401
                             cubic_goodput_mbps, cubic_reno_friendly_window, mathis_goodput_mbps,
                             reno_average_window)


# ---------------------------------------------------------------------------------------------
# Aggregation


def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t distribution with `df` >= 1 degrees of freedom, the
    factor of a two-sided 95 % confidence interval: a table up to 30, then the Cornish-Fisher
    expansion around the normal quantile."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z, v = _Z975, float(df)
    return (z + (z ** 3 + z) / (4 * v)
            + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * v ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * v ** 3)
            + (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z)
            / (92160 * v ** 4))


@dataclass
class SweepSeries:
    """One line of a sweep figure: the runs sharing one ``lines`` value, averaged per x value.

    ``x`` is sorted (floats) when every x value is a number, else the x values (strings) in order
    of first appearance in results.csv. ``lower`` and ``upper`` are the lengths of the error bar
    below and above ``mean`` (0 for ``error_bars="none"`` and for a point with a single run);
    ``n`` the number of runs averaged at each x.
    """

    line: Any                     # the lines value (a float or a string), None without lines
    x: np.ndarray
    mean: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    n: np.ndarray

    @property
    def label(self) -> str:
        return _format_value(self.line)


def aggregate(rows: Iterable[Mapping[str, Any]], x: str, y: str, lines: Optional[str] = None,
              error_bars: str = "std") -> list[SweepSeries]:
    """Group `rows` (results.csv rows as dicts; values strings or numbers) with status "ok" by
    (`lines` value, `x` value) and average column `y` over each group.

    Error bars: "std" the sample standard deviation (n - 1 in the denominator); "ci95" the
    half-width of the Student-t 95 % confidence interval of the mean, t(0.975, n - 1) s / sqrt(n);
    "none" zero. A group of one run has a zero error bar. Rows with another status, and rows whose
    `y` is empty or NaN, are left out. Lines are ordered by value when every value is a number,
    else in order of first appearance. Raises ValueError for an unknown `error_bars` or a
    non-numeric `y` value or a column the rows lack.
    """
    return _aggregate(list(rows), x, y, lines, error_bars)[0]


def _aggregate(rows: list[Mapping[str, Any]], x: str, y: str, lines: Optional[str],
               error_bars: str) -> tuple[list[SweepSeries], int]:
    """`aggregate`, and how many "ok" rows were left out for lack of a `y` value."""
    if error_bars not in ERROR_BARS:
        raise ValueError(f"error_bars: expected one of {', '.join(ERROR_BARS)}, got {error_bars!r}")
    ok = [row for row in rows if _is_ok(row)]
    for column in (x, y) + ((lines,) if lines is not None else ()):
        if ok and column not in ok[0]:
            raise ValueError(_missing_column(column, list(ok[0])))
    triples: list[tuple[Any, Any, float]] = []
    missing = 0
    for row in ok:
        value = _number(row[y], column=y, row=row)
        if value is None:
            missing += 1
            continue
        triples.append((_value(row[lines]) if lines is not None else None, _value(row[x]), value))
    line_values = ([None] * len(triples) if lines is None
                   else _normalized([t[0] for t in triples]))
    x_values = _normalized([t[1] for t in triples])
    groups: dict[Any, dict[Any, list[float]]] = {}
    for lv, xv, (_, _, value) in zip(line_values, x_values, triples):
        groups.setdefault(lv, {}).setdefault(xv, []).append(value)
    x_order = _ordered(x_values)
    numeric_x = all(isinstance(v, float) for v in x_order)
    series: list[SweepSeries] = []
    for lv in _ordered(line_values):
        by_x = groups[lv]
        xs = [v for v in x_order if v in by_x]
        stats = [_statistics(by_x[v], error_bars) for v in xs]
        err = np.array([s[1] for s in stats], dtype=float)
        series.append(SweepSeries(
            line=lv,
            x=np.array(xs, dtype=float if numeric_x else str),
            mean=np.array([s[0] for s in stats], dtype=float),
            lower=err, upper=err.copy(),
            n=np.array([len(by_x[v]) for v in xs], dtype=int)))
    return series, missing


def _statistics(values: Sequence[float], error_bars: str) -> tuple[float, float]:
    """(mean, error bar half-length) of one group."""
    data = np.asarray(values, dtype=float)
    n = len(data)
    mean = float(np.mean(data))
    if error_bars == "none" or n < 2:
        return mean, 0.0
    std = float(np.std(data, ddof=1))
    if error_bars == "std":
        return mean, std
    return mean, t_quantile_975(n - 1) * std / math.sqrt(n)


def _normalized(values: list[Any]) -> list[Any]:
    """Values of one column: floats when every one is a number, else all as text (so that a
    column mixing numbers, text and empty cells groups consistently)."""
    if all(isinstance(v, float) for v in values):
        return list(values)
    return [_format_value(v) for v in values]


def _ordered(values: list[Any]) -> list[Any]:
    """Distinct values: sorted when all are numbers, else in order of first appearance."""
    distinct = list(dict.fromkeys(values))
    if all(isinstance(v, float) for v in distinct):
        return sorted(distinct)
    return distinct


def _value(cell: Any) -> Any:
    """A parameter cell: a float when it reads as a number, else its text (None when empty)."""
    if cell is None:
        return None
    if isinstance(cell, bool):
        return str(cell)
    if isinstance(cell, (int, float, np.integer, np.floating)):
        return float(cell)
    text = str(cell).strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        return text


def _number(cell: Any, *, column: str, row: Mapping[str, Any]) -> Optional[float]:
    """A metric cell as a float; None when empty or NaN. ValueError when not a number."""
    value = _value(cell)
    if value is None:
        return None
    if not isinstance(value, float):
        raise ValueError(f"{RESULTS_FILE}: run {row.get('run_id', '?')}: column {column!r}: "
                         f"expected a number, got {value!r}")
    return None if math.isnan(value) else value


def _is_ok(row: Mapping[str, Any]) -> bool:
    return str(row.get("status", "ok")).strip() == "ok"


def _format_value(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _missing_column(column: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(column, list(known), n=1, cutoff=0.5)
    hint = f' (did you mean "{close[0]}"?)' if close else ""
    return f'{RESULTS_FILE} has no column "{column}"{hint}; columns: {", ".join(known)}'


# ---------------------------------------------------------------------------------------------
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
    with open(results_path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return sweep, rows


def sweep_units(sweep_dir: PathLike, sweep: Optional[dict] = None) -> dict:
    """The units of a sweep's metrics (``{"system", "bits_per_mbit", ...}`` as in summary.json).

    From the first ``summary.json`` found (the sweep directory, then one or two levels below it),
    else from the ``units`` field of the topology file ``sweep.json`` names, else {} (unknown).
    """
    directory = Path(sweep_dir)
    candidates = [directory / SUMMARY_FILE]
    candidates += sorted(directory.glob(f"*/{SUMMARY_FILE}"))
    candidates += sorted(directory.glob(f"*/*/{SUMMARY_FILE}"))
    for path in candidates:
        try:
            units = json.loads(path.read_text()).get("units")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(units, dict) and units:
            return dict(units)
    topology = (sweep or {}).get("topology")
    if isinstance(topology, str):
        for path in (Path(topology), directory / topology):
            try:
                system = json.loads(path.read_text()).get("units", "si")
            except (OSError, ValueError, AttributeError):
                continue
            if system == "binary":
                return {"system": "binary", "bits_per_mbit": 1048576, "bytes_per_kb": 1024,
                        "bytes_per_mb": 1048576}
            return {"system": "si", "bits_per_mbit": 1000000, "bytes_per_kb": 1000,
                    "bytes_per_mb": 1000000}
    return {}


# Readable names of the parts of a dotted path (docs/sweeps.md, "Figures").
_METRIC_NAMES = {"jain_index": "Jain's fairness index", "total_goodput_mbps": "total goodput",
                 "mean_queue_delay_ms": "mean queueing delay", "mean_rtt_ms": "mean RTT",
                 "power": "power (total goodput / mean RTT)", "end_time_s": "end time",
                 "events": "events", "packet_hops": "packet hops",
                 "check.max_error_pct": "largest error vs the model"}
_WORDS = {"rtt": "RTT", "rto": "RTO", "avg": "average", "pkts": "packets", "cwnd": "cwnd",
          "ssthresh": "ssthresh", "mss": "MSS", "finish": "completion time",
          "data": "data size"}
_ALGORITHM_NAMES = {"fast": "FAST", "bbr": "BBR", "cubic": "CUBIC", "vegas": "Vegas",
                    "reno": "Reno", "tahoe": "Tahoe", "newreno": "NewReno"}
_SUFFIXES = tuple(suffix for suffix, _ in UNIT_SUFFIXES)


def _unit(path: str, units: Optional[Mapping[str, Any]]) -> Optional[str]:
    """The unit of a path's last part (or of the one before it: check.*.backlog_kb.predicted)."""
    for part in reversed(path.split(".")[-2:]):
        for suffix, unit in UNIT_SUFFIXES:
            if part.endswith(suffix):
                if unit in _TOPOLOGY_UNITS and (units or {}).get("system") == "binary":
                    unit += ", binary"
                return unit
    return None


def _words(name: str) -> str:
    """A path part in words, without its unit suffix: avg_rtt_ms -> average RTT."""
    for suffix in _SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[:-len(suffix)]
            break
    return " ".join(_WORDS.get(word, word) for word in name.split("_") if word)


def quantity_name(path: str) -> str:
    """What a parameter or metric path measures, in words and without unit:
    ``flows.F1.goodput_mbps`` -> "F1 goodput", ``links.L1.loss_rate`` -> "L1 loss rate",
    ``links.L1.impairments.H1->H2.loss_rate`` -> "L1 H1->H2 loss rate",
    ``flows.*.algorithm`` -> "algorithm", ``check.2.L1.backlog_kb.predicted`` -> "L1 backlog,
    predicted", ``jain_index`` -> "Jain's fairness index". Never the raw dotted path (but for
    a single word)."""
    if path in _METRIC_NAMES:
        return _METRIC_NAMES[path]
    parts = path.split(".")
    head = parts[0]
    if head in ("flows", "links") and len(parts) >= 3:
        owner = "" if parts[1] == "*" else parts[1]
        rest = parts[2:]
        if rest[0] in ("impairments", "directions") and len(rest) >= 3:
            owner = f"{owner} {rest[1]}"
            rest = rest[2:]
        elif rest[0] == "params" and len(rest) >= 2:
            rest = rest[1:]
        text = " ".join(_words(part) for part in rest)
        if parts[1] == "*" and head == "links":
            text = f"link {text}"
        return f"{owner} {text}".strip()
    if head == "check" and len(parts) == 5:
        return f"{parts[2]} {_words(parts[3])}, {parts[4].replace('_', ' ')}"
    if head == "algorithms" and len(parts) >= 3:
        return f"{_ALGORITHM_NAMES.get(parts[1], parts[1])} {' '.join(_words(p) for p in parts[2:])}"
    if head in ("transport", "packet_bytes", "routing") and len(parts) >= 2:
        return " ".join(_words(part) for part in parts[1:])
    return " ".join(_words(part) for part in parts)


def axis_label(path: str, units: Optional[Mapping[str, Any]] = None) -> str:
    """The default axis label of a path: `quantity_name` and the unit of the path's suffix
    (UNIT_SUFFIXES: _mbps -> Mbps, _ms -> ms, _kb -> KB, _s -> s, ...; "binary" added to rates
    and sizes when the units are binary): ``flows.F1.goodput_mbps`` -> "F1 goodput (Mbps)"."""
    unit = _unit(path, units)
    name = quantity_name(path)
    return f"{name} ({unit})" if unit else name


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


# ---------------------------------------------------------------------------------------------
# Drawing


def _check_file_name(directory: Path, name: Any) -> Path:
    """A plot's file: a plain .png name in the sweep directory (nothing that leaves it)."""
    if (not isinstance(name, str) or not name or name in (".", "..") or "/" in name
            or "\\" in name or any(ord(c) < 32 or ord(c) == 127 for c in name)
            or not name.lower().endswith(".png")):
        raise ValueError(f"{directory / SWEEP_FILE}: plot file {name!r}: expected a plain .png "
                         f"file name (no directories)")
    return directory / name


def make_sweep_figures(sweep_dir: PathLike, *, show: bool = False) -> list[Path]:
    """Write one PNG per plot spec of ``sweep_dir/sweep.json`` into `sweep_dir`, from
    ``results.csv``; return their paths in the order of the specs.

    A plot spec: ``file`` (a plain .png file name), ``x`` (a parameter path), ``y`` (a metric
    path), and optionally ``lines`` (a parameter path: one line per value), ``logx``, ``logy``,
    ``title``, ``xlabel``, ``ylabel`` (defaults from the paths and their units, `axis_label`),
    ``error_bars`` ("std" default, "ci95", "none") and ``theory`` (see `draw_sweep_plot`). With
    `show`, the figures are also shown with pyplot after saving.
    """
    directory = Path(sweep_dir)
    sweep, rows = read_sweep(directory)
    plots = sweep.get("plots") or []
    if not isinstance(plots, list):
        raise ValueError(f"{directory / SWEEP_FILE}: field \"plots\": expected a list")
    paths = [_check_file_name(directory, plot.get("file")) for plot in plots]
    units = sweep_units(directory, sweep)
    written: list[Path] = []
    for plot, path in zip(plots, paths):
        fig = Figure(figsize=FIGSIZE_IN, layout="constrained")
        FigureCanvasAgg(fig)
        draw_sweep_plot(fig, plot, rows, units=units)
        fig.savefig(path, dpi=DPI)
        written.append(path)
    if show and plots:
        import matplotlib.pyplot as plt  # only here: pyplot may need a display

        for plot in plots:
            draw_sweep_plot(plt.figure(figsize=FIGSIZE_IN, layout="constrained"), plot, rows,
                            units=units)
        plt.show()
    return written


def draw_sweep_plot(fig: Figure, plot: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], *,
                    units: Optional[Mapping[str, Any]] = None) -> Any:
    """Draw one plot spec into `fig` from results.csv `rows`; return the axes.

    One series per ``lines`` value: markers at the means, error bars as `aggregate` computes
    them, joined by lines when x is numeric; when x is text (an algorithm name) each category
    gets its markers side by side, never joined. The title is the figure's (above the axes and
    the legend, wrapped), the legend is outside the axes on the right, and every line drawn has
    its legend entry. ``theory`` overlays, dashed (the runner fills in the settings from the
    topology, docs/sweeps.md):

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
    is not "ok" are left out and counted in a footnote, as are "ok" runs without a ``y`` value.
    """
    x, y = str(plot["x"]), str(plot["y"])
    lines = plot.get("lines")
    error_bars = plot.get("error_bars") or "std"
    theory = plot.get("theory")
    logx, logy = bool(plot.get("logx")), bool(plot.get("logy"))
    ax = fig.add_subplot()

    ok = [row for row in rows if _is_ok(row)]
    failed = len(rows) - len(ok)
    series, missing = _aggregate(ok, x, y, lines, error_bars)
    categories = _categories(series)
    colors = _colors(len(series))
    offsets = _offsets(len(series)) if categories is not None else [0.0] * len(series)
    handles: list[Any] = []
    for s, color, offset in zip(series, colors, offsets):
        xs = _positions(s.x, categories) + offset
        lower = np.minimum(s.lower, s.mean * (1 - 1e-9)) if logy else s.lower
        yerr = None if error_bars == "none" else [lower, s.upper]
        label = s.label if lines is not None else quantity_name(y)
        if categories is not None:            # categories: markers only, never joined
            handles.append(ax.errorbar(xs, s.mean, yerr=yerr, color=color, marker="o",
                                       markersize=6, linestyle="none", capsize=3, label=label))
        else:
            handles.append(ax.errorbar(xs, s.mean, yerr=yerr, color=color, marker="o",
                                       markersize=4.5, linewidth=1.4, capsize=3, label=label))
    extra: list[Any] = []
    if theory:
        extra = _draw_theory(ax, theory, series, categories, colors, offsets, ok, x, lines,
                             units, logx=logx)
    if not series:
        ax.text(0.5, 0.5, "no successful run with a value", transform=ax.transAxes,
                ha="center", va="center", color="dimgray")

    if categories is not None:
        ax.set_xticks(range(len(categories)), categories)
        ax.set_xlim(-0.5, len(categories) - 0.5)
    elif logx:
        ax.set_xscale("log")
        _plain_log_labels(ax.xaxis, minor_labels=False)
    if logy:
        ax.set_yscale("log")
        _plain_log_labels(ax.yaxis)
    xlabel = plot.get("xlabel") or axis_label(x, units)
    if not plot.get("xlabel") and theory and theory.get("model") in ("mathis", "cubic"):
        xlabel += " = loss probability p"
    ylabel = plot.get("ylabel") or axis_label(y, units)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    title = plot.get("title") or _capitalized(f"{quantity_name(y)} vs {quantity_name(x)}")
    ax.set_title(str(title))
    ax.grid(True, which="major", alpha=0.3)
    if logx or logy:
        ax.grid(True, which="minor", alpha=0.1)

    handles += extra
    if handles and (lines is not None or extra):
        fig.legend(handles, [_legend_text(h.get_label()) for h in handles],
                   loc="outside right upper",
                   fontsize="small", title=quantity_name(lines) if lines is not None else None,
                   title_fontsize="small", frameon=False)

    note = _footnote(failed, len(rows), missing, y, error_bars)
    if note:
        fig.get_layout_engine().set(rect=(0, FOOTNOTE_HEIGHT, 1, 1 - FOOTNOTE_HEIGHT))
        fig.text(0.01, 0.012, note, ha="left", va="bottom", fontsize="small", color="dimgray")
    _fit_title(fig, ax, str(title))
    return ax


def _fit_title(fig: Figure, ax: Any, title: str) -> None:
    """Wrap the axes title to the width of the axes, so that it never reaches into the legend
    beside them (a short title fits without measuring)."""
    if len(title) <= SHORT_TITLE:
        return
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    room = ax.get_window_extent(renderer).width
    for _ in range(4):
        needed = ax.title.get_window_extent(renderer).width
        if needed <= room:
            return
        longest = max(len(line) for line in ax.title.get_text().splitlines())
        chars = max(10, int(longest * room / needed) - 1)
        ax.set_title(textwrap.fill(title, chars))


def _legend_text(label: str) -> str:
    """A legend entry, its details in parentheses on lines of their own when it is long."""
    if len(label) <= LEGEND_WIDTH:
        return label
    head, paren, rest = label.partition(" (")
    if paren:
        return head + "\n" + textwrap.fill("(" + rest, LEGEND_WIDTH)
    return textwrap.fill(label, LEGEND_WIDTH)


def _offsets(count: int) -> list[float]:
    """Horizontal offsets of `count` series within one category, so that their markers and
    error bars stand side by side."""
    if count <= 1:
        return [0.0] * count
    step = min(0.15, 0.6 / (count - 1))
    return [(i - (count - 1) / 2) * step for i in range(count)]


def _plain_log_labels(axis: Any, minor_labels: bool = True) -> None:
    """Label a log axis with plain numbers (0.001, 6) rather than powers of ten; intermediate
    ticks are labelled when the axis spans few decades (vertical axes only: on a horizontal axis
    their labels run into each other)."""
    from matplotlib.ticker import FuncFormatter, LogFormatter, LogLocator, NullFormatter

    if not minor_labels:                      # label 1, 2 and 5 of each decade instead
        axis.set_major_locator(LogLocator(base=10.0, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axis.set_minor_formatter(NullFormatter())
        return
    axis.set_major_formatter(LogFormatter())
    axis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5))
                             if minor_labels else NullFormatter())


def _footnote(failed: int, total: int, missing: int, y: str, error_bars: str) -> str:
    parts = []
    if failed:
        parts.append(f"{failed} run{'s' if failed != 1 else ''} failed (of {total}), left out")
    if missing:
        parts.append(f"{missing} run{'s' if missing != 1 else ''} without {quantity_name(y)}, "
                     f"left out")
    if parts:
        parts.append({"std": "error bars: ±1 standard deviation",
                      "ci95": "error bars: 95 % confidence interval of the mean",
                      "none": "no error bars"}[error_bars])
    return "; ".join(parts)


def _draw_theory(ax: Any, theory: Mapping[str, Any], series: Sequence[SweepSeries],
                 categories: Optional[list[str]], colors: Sequence[str],
                 offsets: Sequence[float], ok_rows: Sequence[Mapping[str, Any]], x: str,
                 lines: Optional[str], units: Optional[Mapping[str, Any]], *,
                 logx: bool) -> list[Any]:
    """Draw a theory overlay; return its legend handles (one per line drawn)."""
    model = theory.get("model")
    if model not in THEORY_MODELS:
        raise ValueError(f"theory: model must be one of {', '.join(THEORY_MODELS)}, "
                         f"got {model!r}")
    if model in ("capacity", "fair_share"):
        mbps = float(theory["mbps"])
        binary = " (binary)" if (units or {}).get("system") == "binary" else ""
        label = theory.get("label") or (f"capacity {mbps:g} Mbps" if model == "capacity"
                                        else f"fair share {mbps:g} Mbps")
        return [ax.axhline(mbps, color="black", linestyle="--", linewidth=1.2,
                           label=f"{label}{binary}")]
    if model == "column":
        column = str(theory["y"])
        predicted, _ = _aggregate(list(ok_rows), x, column, lines, "none")
        style = {_key(s.line): (c, o) for s, c, o in zip(series, colors, offsets)}
        name = quantity_name(column)
        handles = []
        for s in predicted:
            color, offset = style.get(_key(s.line), ("black", 0.0))
            keep = np.ones(len(s.x), dtype=bool)
            if categories is not None:
                keep = np.array([str(v) in categories for v in s.x], dtype=bool)
            label = f"{s.label}: {name}" if lines is not None else name
            if categories is not None:        # a dash per category, not a line across them
                handles += ax.plot(_positions(s.x[keep], categories) + offset, s.mean[keep],
                                   color=color, linestyle="none", marker="_", markersize=16,
                                   markeredgewidth=2, label=label)
            else:
                handles += ax.plot(_positions(s.x[keep], categories), s.mean[keep],
                                   color=color, linestyle="--", linewidth=1.2, label=label)
        return handles
    if model == "band":
        return _draw_band(ax, theory, series, categories, colors, offsets, ok_rows, x, lines)
    # mathis / cubic: a curve of the loss probability x
    if categories is not None:
        raise ValueError(f'theory "{model}": the x parameter {x!r} must be numeric '
                         f"(the loss probability p)")
    xs = np.concatenate([s.x for s in series]) if series else np.zeros(0)
    xs = xs[np.isfinite(xs) & (xs > 0)]
    if not len(xs):
        return []
    lo, hi = float(xs.min()), float(xs.max())
    if logx:
        p = np.geomspace(lo, hi, THEORY_POINTS)
    else:
        p = np.linspace(lo, hi, THEORY_POINTS)
    rtt_s = float(theory["rtt_ms"]) / 1e3
    mss = float(theory["mss_bytes"])
    bits = float(theory.get("units_bits_per_mbit")
                 or (units or {}).get("bits_per_mbit") or 1e6)
    rtt = f"RTT {rtt_s * 1e3:.3g} ms"
    base = theory.get("base_rtt_ms")
    if base is not None:
        rtt = (f"base RTT {rtt_s * 1e3:.3g} ms" if math.isclose(float(base), rtt_s * 1e3)
               else f"RTT {rtt_s * 1e3:.3g} ms (base {float(base):.3g} ms)")
    if model == "mathis":
        values = mathis_goodput_mbps(p, mss, rtt_s, bits)
        label = f"Mathis et al. (MSS {mss:g} B, {rtt})"
    else:
        C = float(theory.get("C", 0.4))
        beta = float(theory.get("beta", 0.7))
        values = cubic_goodput_mbps(p, mss, rtt_s, C, beta, bits)
        label = f"CUBIC, RFC 9438 (C {C:g}, β {beta:g}, MSS {mss:g} B, {rtt})"
    return ax.plot(p, values, color="black", linestyle="--", linewidth=1.2,
                   marker="x" if lo == hi else None, label=label)


def _draw_band(ax: Any, theory: Mapping[str, Any], series: Sequence[SweepSeries],
               categories: Optional[list[str]], colors: Sequence[str], offsets: Sequence[float],
               ok_rows: Sequence[Mapping[str, Any]], x: str, lines: Optional[str]) -> list[Any]:
    """A predicted range per line. Bands of several lines overlap, and translucent fills mixed
    together make colours that match no legend entry, so each band is a very light fill between
    edges drawn dashed in its line's colour: where bands overlap, the edges still tell them
    apart. Each band has its legend entry (fill and edge)."""
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Patch

    low_col, high_col = str(theory["low"]), str(theory["high"])
    lows, _ = _aggregate(list(ok_rows), x, low_col, lines, "none")
    highs, _ = _aggregate(list(ok_rows), x, high_col, lines, "none")
    high_of = {_key(s.line): s for s in highs}
    style = {_key(s.line): (c, o) for s, c, o in zip(series, colors, offsets)}
    name = quantity_name(low_col).removesuffix(", predicted low").removesuffix(" low")
    handles = []
    for low in lows:
        high = high_of.get(_key(low.line))
        if high is None:
            continue
        color, offset = style.get(_key(low.line), ("black", 0.0))
        common = [v for v in low.x if v in set(high.x.tolist())]
        if not common:
            continue
        lo = np.array([low.mean[list(low.x).index(v)] for v in common])
        hi = np.array([high.mean[list(high.x).index(v)] for v in common])
        xs = _positions(np.array(common, dtype=low.x.dtype), categories)
        label = f"{low.label}: {name}, predicted range" if lines is not None \
            else f"{name}, predicted range"
        if categories is not None:
            bars = ax.bar(xs + offset, hi - lo, bottom=lo, width=0.1,
                          color=to_rgba(color, 0.25), edgecolor=color, linestyle="--",
                          linewidth=1.0, label="_nolegend_")
            for bar in bars:                  # no axis pinned to a bar's bottom
                bar.sticky_edges.y[:] = []
            for edge in (lo, hi):             # an empty range stays visible as a dash
                ax.plot(xs + offset, edge, color=color, linestyle="none", marker="_",
                        markersize=10, markeredgewidth=1.5, label="_nolegend_")
        else:
            ax.fill_between(xs, lo, hi, color=to_rgba(color, 0.08), linewidth=0,
                            label="_nolegend_")
            ax.plot(xs, lo, color=color, linestyle="--", linewidth=1.0, label="_nolegend_")
            ax.plot(xs, hi, color=color, linestyle="--", linewidth=1.0, label="_nolegend_")
        fill = to_rgba(color, 0.25 if categories is not None else 0.08)
        handles.append(Patch(facecolor=fill, edgecolor=color, linestyle="--", linewidth=1.0,
                             label=label))
    return handles


def _key(value: Any) -> str:
    return _format_value(value)


def _categories(series: Sequence[SweepSeries]) -> Optional[list[str]]:
    """The x categories (in order) when x is not numeric, else None."""
    if not series or all(s.x.dtype.kind == "f" for s in series):
        return None
    return list(dict.fromkeys(str(v) for s in series for v in s.x))


def _positions(x: np.ndarray, categories: Optional[list[str]]) -> np.ndarray:
    if categories is None:
        return np.asarray(x, dtype=float)
    index = {c: i for i, c in enumerate(categories)}
    return np.array([index[str(v)] for v in x], dtype=float)


def _colors(count: int) -> list[str]:
    """tab10 up to 10 lines, else tab20 (dark shades first), as plot_tool.figures does."""
    from matplotlib import colormaps

    if count <= 10:
        palette = list(colormaps["tab10"].colors)
    else:
        tab20 = list(colormaps["tab20"].colors)
        palette = tab20[0::2] + tab20[1::2]
    out = []
    for i in range(count):
        r, g, b = palette[i % len(palette)][:3]
        out.append(f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}")
    return out


__all__ = ["SweepSeries", "aggregate", "aimd_average_window", "axis_label", "cubic_average_window",
           "quantity_name",
           "cubic_goodput_mbps", "cubic_reno_friendly_window", "draw_sweep_plot",
           "make_sweep_figures", "mathis_goodput_mbps", "read_sweep", "reno_average_window",
           "sweep_units", "t_quantile_975"]
