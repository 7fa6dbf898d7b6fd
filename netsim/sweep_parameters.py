"""A sweep's parameters: their values (a list, a labelled list or a range) and setting a value at a
dotted path of a topology (``links.L1.loss_rate``, ``flows.*.algorithm``). `SweepError` is the
one error of every sweep module: one line naming the file, the entry and the field.
"""
from __future__ import annotations

import json
import math

from topologies.validation import (
    MAX_RANGE_NUM,
    InputError,
    count_problem,
    id_problem,
    is_number,
    quote,
    show,
    suggestion,
)


class SweepError(InputError):
    """A sweep file is unreadable or invalid; one line naming the file, the entry and the field.

    An `InputError` (so a `ValueError`): input characters that could break the line are escaped.
    """



RANGE_FIELDS = ("from", "to", "num", "scale")
LABELLED_FIELDS = ("values", "labels")
LISTED = ("links", "flows", "workloads")
SETTABLE_TOP = ("duration_s", "units", "duplex", "packet_bytes", "routing", "transport",
                "algorithms")



def parse_values(where: str, spec) -> tuple:
    """A parameter's values and their labels (None: shown as they are): a list, a
    {"values", "labels"} object, or a range {"from", "to", "num", "scale"} (at most
    MAX_RANGE_NUM values). A value may be an object (a whole topology field, e.g. a link's
    "queue"); the topology's validation judges it at every point."""
    if isinstance(spec, list):
        if not spec:
            raise SweepError(f"{where}: expected at least one value")
        for value in spec:
            if isinstance(value, list):
                raise SweepError(f"{where}: expected numbers, strings, booleans, null or objects, "
                                 f"got {show(value)}")
        return list(spec), None
    if isinstance(spec, dict) and ("values" in spec or "labels" in spec):
        return _labelled_values(where, spec)
    if isinstance(spec, dict):
        return _range_values(where, spec), None
    raise SweepError(f"{where}: expected a list of values, a {{\"values\", \"labels\"}} object "
                     f"or a range object, got {show(spec)}")


def _labelled_values(where: str, spec: dict) -> tuple:
    for name in spec:
        if name not in LABELLED_FIELDS:
            raise SweepError(f"{where}: unknown field {quote(name)}"
                             f"{suggestion(name, LABELLED_FIELDS)}; known: "
                             f"{', '.join(LABELLED_FIELDS)}")
    if "values" not in spec or "labels" not in spec:
        raise SweepError(f'{where}: a labelled list needs "values" and "labels"')
    if not isinstance(spec["values"], list):
        raise SweepError(f'{where}: field "values": expected a list of values, '
                         f"got {show(spec['values'])}")
    values, _ = parse_values(f'{where}: field "values"', spec["values"])
    for i, value in enumerate(values):
        if value in values[:i]:
            raise SweepError(f'{where}: field "values": {show(value)} is given twice; each '
                             f"value has its own label")
    labels = spec["labels"]
    if not isinstance(labels, list) or len(labels) != len(values):
        raise SweepError(f'{where}: field "labels": expected a list of {len(values)} names, one '
                         f"per value, got {show(labels)}")
    for label in labels:           # names like ids: non-empty, short, no control characters
        problem = id_problem(label)
        if problem:
            raise SweepError(f'{where}: field "labels": {problem}')
    if len(set(labels)) != len(labels):
        twice = next(label for label in labels if labels.count(label) > 1)
        raise SweepError(f'{where}: field "labels": {quote(twice)} is given twice; labels name '
                         f"the values in results.csv and legends, so they must differ")
    return values, list(labels)


def value_cell(value, label: str | None = None):
    """How a parameter value appears in results.csv and figure legends: its label if it has
    one, an object or a list as compact JSON, true and false as JSON writes them (not Python's
    True and False), anything else as it is."""
    if label is not None:
        return label
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(", ", ": "))
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def _range_values(where: str, spec: dict) -> list:
    for name in spec:
        if name not in RANGE_FIELDS:
            raise SweepError(f"{where}: unknown field {quote(name)}"
                             f"{suggestion(name, RANGE_FIELDS + LABELLED_FIELDS)}; known: "
                             f"{', '.join(RANGE_FIELDS)} (a range) or "
                             f"{', '.join(LABELLED_FIELDS)} (a labelled list)")
    if any(key not in spec for key in ("from", "to", "num")):
        raise SweepError(f'{where}: a range needs numbers "from" and "to" and a count "num"')
    for key in ("from", "to"):
        if not is_number(spec[key]):
            raise SweepError(f'{where}: field "{key}": expected a finite number, '
                             f"got {show(spec[key])}")
    problem = count_problem(spec["num"], 1, MAX_RANGE_NUM, "a whole number")
    if problem:
        raise SweepError(f'{where}: field "num": {problem}')
    start, stop, num = float(spec["from"]), float(spec["to"]), spec["num"]
    scale = spec.get("scale", "linear")
    if scale not in ("linear", "log"):
        raise SweepError(f'{where}: field "scale": expected "linear" or "log", got {show(scale)}')
    if scale == "log" and (start <= 0 or stop <= 0):
        raise SweepError(f'{where}: a log range needs positive "from" and "to"')
    if num == 1:
        return [start]
    if scale == "linear":
        return [start + (stop - start) * k / (num - 1) for k in range(num)]
    ratio = math.log(stop / start)
    return [start * math.exp(ratio * k / (num - 1)) for k in range(num)]


def set_path(data: dict, path: str, value) -> None:
    """Set `value` at dotted `path` in a topology dict (lists of links/flows are addressed by id,
    `*` for all of them). Raises KeyError with a message when the path does not fit."""
    parts = path.split(".")
    head = parts[0]
    if head in LISTED:
        if len(parts) < 3:
            raise KeyError(f"{quote(path)}: expected {head}.<id or *>.<field>")
        if parts[2] == "id":     # metrics, plots and the other parameters name entries by id
            raise KeyError(f"{quote(path)}: cannot vary an id: the metrics, plots and "
                           f"parameters of a sweep name each {head[:-1]} by it")
        entries = data.get(head, [])
        ids = [entry.get("id") for entry in entries]
        if parts[1] == "*":
            targets = entries
        elif parts[1] in ids:
            targets = [entries[ids.index(parts[1])]]
        else:
            raise KeyError(f"{quote(path)}: no {head[:-1]} {quote(parts[1])}"
                           f"{suggestion(parts[1], ids)}")
        for entry in targets:
            _set_nested(entry, parts[2:], value)
        return
    if head == "seed":           # a run's seed is the sweep's `seeds`, never a parameter
        raise KeyError(f"{quote(path)}: the seed of each run comes from the sweep's \"seeds\" "
                       f"(a count, or a list such as [1, 2]): give the seeds there")
    if head not in SETTABLE_TOP:
        raise KeyError(f"{quote(path)}: cannot vary {quote(head)}"
                       f"{suggestion(head, LISTED + SETTABLE_TOP)}; "
                       f"vary links.<id>..., flows.<id>..., workloads.<id>... or one of "
                       f"{', '.join(SETTABLE_TOP)}")
    _set_nested(data, parts, value)


def _set_nested(obj: dict, keys: list, value) -> None:
    for key in keys[:-1]:
        if not isinstance(obj.get(key), dict):
            obj[key] = {}
        obj = obj[key]
    obj[keys[-1]] = value
