"""Aggregation of a sweep's runs for its figures (front end): the runs with status "ok" grouped
by (``lines`` value, ``x`` value), each group's mean over its seeds and its error bar (the sample
standard deviation, or the half-width of a Student-t 95 % confidence interval of the mean, or
none). Pure numpy: both drawing backends (PNG, report) use it.
"""
from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

RESULTS_FILE = "results.csv"
ERROR_BARS = ("std", "ci95", "none")

# Student-t 0.975 quantiles (two-sided 95 %) for 1..30 degrees of freedom; beyond 30 the
# Cornish-Fisher expansion in `t_quantile_975` is used (error below 3e-8 there).
_T975 = (12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851,
         2.364624252, 2.306004135, 2.262157163, 2.228138852, 2.200985160, 2.178812830,
         2.160368656, 2.144786688, 2.131449546, 2.119905299, 2.109815578, 2.100922040,
         2.093024054, 2.085963447, 2.079613845, 2.073873068, 2.068657610, 2.063898562,
         2.059538553, 2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456)
_Z975 = 1.959963984540054       # standard normal 0.975 quantile




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
        return format_value(self.line)


def aggregate(rows: Iterable[Mapping[str, Any]], x: str, y: str, lines: str | None = None,
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
    return aggregate_counted(list(rows), x, y, lines, error_bars)[0]


def aggregate_counted(rows: list[Mapping[str, Any]], x: str, y: str, lines: str | None,
               error_bars: str) -> tuple[list[SweepSeries], int]:
    """`aggregate`, and how many "ok" rows were left out for lack of a `y` value."""
    if error_bars not in ERROR_BARS:
        raise ValueError(f"error_bars: expected one of {', '.join(ERROR_BARS)}, got {error_bars!r}")
    ok = [row for row in rows if is_ok(row)]
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
    return [format_value(v) for v in values]


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


def _number(cell: Any, *, column: str, row: Mapping[str, Any]) -> float | None:
    """A metric cell as a float; None when empty or NaN. ValueError when not a number."""
    value = _value(cell)
    if value is None:
        return None
    if not isinstance(value, float):
        raise ValueError(f"{RESULTS_FILE}: run {row.get('run_id', '?')}: column {column!r}: "
                         f"expected a number, got {value!r}")
    return None if math.isnan(value) else value


def is_ok(row: Mapping[str, Any]) -> bool:
    return str(row.get("status", "ok")).strip() == "ok"


def format_value(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _missing_column(column: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(column, list(known), n=1, cutoff=0.5)
    hint = f' (did you mean "{close[0]}"?)' if close else ""
    return f'{RESULTS_FILE} has no column "{column}"{hint}; columns: {", ".join(known)}'
