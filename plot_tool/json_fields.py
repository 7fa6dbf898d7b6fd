"""Type checks of the JSON the readers read: summary.json and check.json (`plot_tool.results`)
and a sweep's stored run records (`netsim.sweep_store`). Standard library only, so that a sweep
under PyPy, which has no numpy, checks its records as CPython does."""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Union

from plot_tool.schema import JsonField

PathLike = Union[str, "os.PathLike[str]"]

# The largest magnitude of a number or integer of summary.json and check.json (a 20-digit
# integer is the largest an input may hold): a reader may multiply it (bytes x 8, ms x 1000)
# and still get a finite float.
MAX_MAGNITUDE = 1e20


# summary.json and check.json of the largest runs are tens of MB (40 000 link directions at
# 10 000 routers), and a sweep's run record holds one summary: a file past this is no file
# netsim wrote, and is not read whole
MAX_JSON_BYTES = 1 << 30


def check_fields(data: dict, fields: Sequence[JsonField], path: PathLike,
                 required: Sequence[str] = ()) -> None:
    """ValueError naming the file `path`, the field and what was expected for the first of
    `fields` (`plot_tool.schema.JsonField`) that `data` (a parsed JSON object) holds with another
    type, or lacks while it is required (by the field or by its name in `required`)."""
    needed = set(required)
    for spec in fields:
        level: list[tuple[dict, Any]] = [(data, None)]      # (object, its linked JSON path)
        for key in spec.path[:-1]:      # (the fields before have checked these are objects)
            level = [(value, (where, name)) for obj, where in level
                     for name, value in (obj.items() if key == "*" else
                                         [(key, obj[key])] if key in obj else [])
                     if isinstance(value, dict)]
        last = spec.path[-1]
        for obj, where in level:
            items = obj.items() if last == "*" else [(last, obj[last])] if last in obj else []
            if not items and last != "*" and (spec.required or spec.name in needed):
                raise ValueError(f"{path}: {_path_text((where, last))}: missing, "
                                 f"expected {_expected(spec.type)}")
            for name, value in items:
                problem = _type_problem(value, spec.type, (where, name))
                if problem is not None:
                    raise ValueError(f"{path}: {problem}")


def _path_text(where: Any) -> str:
    from topologies.validation import path_text
    return path_text(where)


_ARTICLES = {"object": "an object", "integer": "an integer", "time": "a time in seconds",
             "positive time": "a positive time in seconds",
             "list of [start, end]": "a list of [start, end] times",
             "list of [time, rate]": "a list of [time, rate] pairs",
             "pair of strings": "a list of two strings"}


def _expected(kind: str) -> str:
    """The words of a JsonField type for a message: "a number or null"."""
    base, null, _ = kind.partition(" or null")
    return _ARTICLES.get(base, f"a {base}") + (" or null" if null else "")


def _type_problem(value: Any, kind: str, where: Any) -> str | None:
    """None when `value` has the JsonField type `kind`, else "<field>: expected ..., got ..."
    (the field, or the item of a list, that is wrong)."""
    from topologies.validation import show
    base, null, _ = kind.partition(" or null")
    if value is None and null:
        return None
    problem: str | None = None
    if base in ("number", "positive number", "integer", "time", "positive time"):
        problem = _number_problem(value, base)
    elif base == "pair of strings":
        if not isinstance(value, list) or len(value) != 2:
            problem = "expected a list of two strings"
        else:
            return next((f"{_path_text((where, i))}: expected a string, got {show(item)}"
                         for i, item in enumerate(value) if not isinstance(item, str)), None)
    elif base in _PAIRS:
        if not isinstance(value, list):
            problem = f"expected {_expected(base)}"
        else:
            kinds = _PAIRS[base]
            for i, pair in enumerate(value):
                if not isinstance(pair, list) or len(pair) != 2:
                    return (f"{_path_text((where, i))}: expected {base.removeprefix('list of ')}, "
                            f"got {show(pair)}")
                for j, (item, item_kind) in enumerate(zip(pair, kinds)):
                    wrong = _type_problem(item, item_kind, ((where, i), j))
                    if wrong is not None:
                        return wrong
    elif not isinstance(value, _TYPES[base]):
        problem = f"expected {_expected(base)}"
    if problem is None:
        return None
    return f"{_path_text(where)}: {problem}{' or null' if null else ''}, got {show(value)}"


_TYPES: dict[str, type] = {"object": dict, "string": str, "boolean": bool}


# lists of pairs: the JsonField type of each item of a pair
_PAIRS = {"list of [start, end]": ("time", "time"),
          "list of [time, rate]": ("time", "positive number")}


def _number_problem(value: Any, kind: str) -> str | None:
    """None when `value` is a JSON number of the JsonField type `kind` (an int for "integer";
    from 0 for "time", a time value of an input for "positive time", topologies/bounds.py; > 0
    for "positive number"; at most MAX_MAGNITUDE in magnitude), else "expected ..."."""
    integer = kind == "integer"
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        return f"expected {_expected(kind)}"
    if kind == "positive time":                  # (an interval: the run's input, checked so)
        from topologies.bounds import time_problem
        return time_problem(value, zero=False)
    if kind == "time" and not 0 <= value <= MAX_MAGNITUDE:   # (NaN too)
        return f"expected {_expected(kind)} from 0 to {MAX_MAGNITUDE:g}"
    if not abs(value) <= MAX_MAGNITUDE:           # (NaN and infinities too)
        return f"expected {_expected(kind)} (of magnitude at most {MAX_MAGNITUDE:g})"
    if kind.startswith("positive") and not value > 0:
        return f"expected {_expected(kind)}"
    return None
