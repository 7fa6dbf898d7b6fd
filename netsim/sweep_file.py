"""Sweep files: reading and validating the JSON that describes a parameter sweep (docs/sweeps.md).

A sweep file names a base topology, the parameters to vary as dotted paths into the topology
(``links.L1.loss_rate``, ``links.*.delay_ms``, ``flows.*.algorithm``, ``flows.F1.params.alpha``),
how to combine their values (``cross`` or ``zip``), how many seeds per point, the metrics to
collect and the plots to draw. `load_sweep` validates all of it before anything runs and returns
a `Sweep`; `netsim.sweep` runs it.
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import os
import stat
from pathlib import Path

from topologies.bounds import time_problem
from topologies.validation import (MAX_RANGE_NUM, MAX_SEEDS, MAX_SWEEP_RUNS, InputError,
                                   count_problem, file_name_problem, id_problem, is_number,
                                   one_line, quote, read_json, show, suggestion)

SWEEP_FIELDS = ("name", "description", "topology", "parameters", "combine", "seeds", "metrics",
                "plots", "duration_s", "interval_s", "plugins")
PLOT_FIELDS = ("file", "x", "y", "lines", "logx", "logy", "title", "xlabel", "ylabel",
               "error_bars", "theory")
# Theory models and their fields (docs/sweeps.md, "Theory curves"). Packet size, RTT, units and
# rates come from the topology; the optional overrides are checked against it.
THEORY_MODELS = {
    "mathis": ("model", "flow", "rtt_ms", "mss_bytes", "units_bits_per_mbit"),
    "cubic": ("model", "flow", "rtt_ms", "mss_bytes", "units_bits_per_mbit", "C", "beta"),
    "capacity": ("model", "link", "flow", "mbps", "label"),
    "fair_share": ("model", "link", "flow", "mbps", "label"),
    "column": ("model", "y"),
    "band": ("model", "low", "high"),
}
DERIVED_METRICS = ("jain_index", "total_goodput_mbps", "mean_queue_delay_ms", "mean_rtt_ms",
                   "power")
LISTED = ("links", "flows", "workloads")
SETTABLE_TOP = ("duration_s", "seed", "units", "duplex", "packet_bytes", "routing", "transport",
                "algorithms")
SUMMARY_TOP = ("end_time_s", "events", "packet_hops", "stop_reason")
FLOW_METRICS = ("finish_s", "goodput_mbps", "avg_rtt_ms", "avg_window_pkts", "packets_sent",
                "retransmissions", "timeouts", "delivered_bytes")
DIRECTION_METRICS = ("avg_buffer_kb", "avg_buffer_pkts", "avg_backlog_kb", "drops",
                     "failure_drops", "impairment_drops", "packets_transmitted", "avg_rate_mbps",
                     "utilization", "marks", "aqm_drops", "avg_sojourn_ms", "p99_sojourn_ms")


class SweepError(InputError):
    """A sweep file is unreadable or invalid; one line naming the file, the entry and the field.

    An `InputError` (so a `ValueError`): input characters that could break the line are escaped.
    """


PLAIN_DATA_KIND = "sweep files"   # in "jsonpickle tag ... is not allowed; <kind> are plain JSON data"
RANGE_FIELDS = ("from", "to", "num", "scale")
LABELLED_FIELDS = ("values", "labels")

# The "did you mean" suffix (' (did you mean "X"?)' or ''), from the shared toolkit.
_closest = suggestion


# -- loading and validation --------------------------------------------------------------------
def _values(where: str, spec) -> tuple:
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
    values, _ = _values(f'{where}: field "values"', spec["values"])
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
    one, an object as compact JSON, anything else as it is."""
    if label is not None:
        return label
    if isinstance(value, dict):
        return json.dumps(value, separators=(", ", ": "))
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
    if head not in SETTABLE_TOP:
        raise KeyError(f"{quote(path)}: cannot vary {quote(head)}"
                       f"{suggestion(head, LISTED + SETTABLE_TOP)}; "
                       f"vary links.<id>..., flows.<id>... or one of {', '.join(SETTABLE_TOP)}")
    _set_nested(data, parts, value)


def _set_nested(obj: dict, keys: list, value) -> None:
    for key in keys[:-1]:
        if not isinstance(obj.get(key), dict):
            obj[key] = {}
        obj = obj[key]
    obj[keys[-1]] = value


def _file_kind(path: Path) -> str | None:
    """"file", "directory", "other" (a device, a pipe...) or None when nothing is there."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):   # missing, name too long, NUL in the name...
        return None
    if stat.S_ISREG(mode):
        return "file"
    return "directory" if stat.S_ISDIR(mode) else "other"


def _resolve_topology(where: str, name, base_dir: Path) -> Path:
    """The topology file `name` names: relative to the sweep file, to the working directory, or
    a shipped preset. Raises SweepError when there is none, or only a directory or device."""
    if not isinstance(name, str) or not name:
        raise SweepError(f'{where}: field "topology": expected a topology file or preset name, '
                         f"got {show(name)}")
    import topologies
    shipped = Path(topologies.__file__).resolve().parent      # the shipped topology files
    candidates = [base_dir / name, Path(name), shipped / name, shipped / f"{name}.json"]
    not_files = []
    for candidate in candidates:
        kind = _file_kind(candidate)
        if kind == "file":
            return candidate
        if kind is not None:
            not_files.append((candidate, kind))
    if not_files:
        candidate, kind = not_files[0]
        what = "a directory" if kind == "directory" else "not a regular file"
        raise SweepError(f'{where}: field "topology": {quote(str(candidate))} is {what}, not a '
                         f"topology file")
    presets = sorted(p.stem for p in shipped.glob("*.json"))
    raise SweepError(f'{where}: field "topology": no file or preset {show(name)}'
                     f"{suggestion(name, presets)}; presets: {', '.join(presets)}")


class Sweep:
    """A validated sweep: base topology, runs to do, metrics and plots."""

    def __init__(self, source: str, raw: dict, base: dict, topology_path: Path):
        self.source = source
        self.raw = raw
        self.name = raw.get("name") or Path(source).stem
        self.base = base
        self.topology_path = topology_path
        self.parameters = list(raw["parameters"].items())
        self.values: dict = {}
        self.labels: dict = {}        # path: a label per value, for the labelled parameters
        self.combine = raw.get("combine", "cross")
        seeds = raw.get("seeds", 1)
        self.seeds = list(range(1, seeds + 1)) if isinstance(seeds, int) else list(seeds)
        self.metrics = list(raw.get("metrics", ["total_goodput_mbps"]))
        self.plots = list(raw.get("plots", []))
        self.duration_s = raw.get("duration_s")
        self.interval_s = raw.get("interval_s", 0.1)
        self.plugins: tuple = ()      # absolute paths of the --plugin files (never "plugins")

    def points(self) -> list:
        """Every parameter combination, as a list of (path, value) pairs."""
        paths = [path for path, _ in self.parameters]
        columns = [self.values[path] for path in paths]
        combos = zip(*columns) if self.combine == "zip" else itertools.product(*columns)
        return [list(zip(paths, combo)) for combo in combos]

    def cell(self, path: str, value):
        """`value` of parameter `path` as results.csv and legends show it (see `value_cell`)."""
        labels = self.labels.get(path)
        label = labels[self.values[path].index(value)] if labels is not None else None
        return value_cell(value, label)

    def runs(self) -> list:
        """(run_id, point index, seed, parameters) of every run, in order."""
        out = []
        for index, point in enumerate(self.points()):
            digest = hashlib.sha1(json.dumps(point).encode()).hexdigest()[:8]
            for seed in self.seeds:
                out.append((f"p{index:04d}-s{seed}-{digest}", index, seed, point))
        return out


def _load_plugins(label: str, raw: dict, base_dir: Path, given) -> tuple:
    """Load the --plugin files `given` (code comes only from the command line or an installed
    entry point) and check the file's ``"plugins"``: a list of the plugin files the sweep needs,
    relative to the sweep file, which is never imported. Returns (the absolute paths of the
    loaded files, which the sweep hands to its workers; the listed files no --plugin gave, as
    the command line should name them)."""
    from netsim.plugins import PluginError, load_entry_points, load_plugins, plugin_paths
    listed = raw.get("plugins", [])
    if not isinstance(listed, list) or not all(isinstance(p, str) and p for p in listed):
        raise SweepError(f'{label}: field "plugins": expected a list of Python file paths '
                         f'(relative to the sweep file), got {show(listed)}')
    paths = plugin_paths(given)
    try:
        load_entry_points()
        load_plugins(paths)
    except PluginError as exc:
        raise SweepError(str(exc)) from None
    missing = []
    for name in listed:
        candidate = base_dir / name
        try:
            loaded = str(candidate.resolve()) in paths
        except (OSError, ValueError):           # a NUL in the name, a loop of links
            loaded = False
        if not loaded:
            missing.append(one_line(str(candidate)))
    return tuple(dict.fromkeys(paths)), missing


def _plugin_hint(label: str, exc: Exception, missing: list) -> SweepError | None:
    """The error for a topology that names an algorithm no loaded plugin provides while the
    sweep file lists plugin files the command line did not give: which --plugin to add."""
    text = str(exc)
    if not missing or "unknown algorithm" not in text:
        return None
    unknown = text[text.index("unknown algorithm"):].split(" (did you mean")[0].split(";")[0]
    options = " ".join(f"--plugin {path}" for path in missing)
    return SweepError(f'{label}: field "plugins": {unknown}; the sweep file names the plugin '
                      f"files it needs, but a sweep file never loads code: add {options} to "
                      f"the command line")


def load_sweep(path, plugins=()) -> Sweep:
    """Read and validate a sweep file; raises SweepError.

    Order: the file (`topologies.validation.read_json`: size, UTF-8, JSON, plain data, limits),
    the top-level fields, the name, the settings (seeds, durations, combine, metrics' type), the
    base topology, the parameters and the number of runs (before any point is built), then every
    point, the metrics and the plots.
    """
    from topologies.loader import TopologyError, load_topology
    path = Path(path)
    label, raw = read_json(path, error=SweepError, kind=PLAIN_DATA_KIND)
    if not isinstance(raw, dict):
        raise SweepError(f"{label}: expected a JSON object at the top level, got {show(raw)}")
    for key in raw:
        if key not in SWEEP_FIELDS:
            raise SweepError(f"{label}: unknown field {quote(key)}{suggestion(key, SWEEP_FIELDS)}; "
                             f"known: {', '.join(SWEEP_FIELDS)}")
    for key in ("topology", "parameters"):
        if key not in raw:
            raise SweepError(f'{label}: missing field "{key}"')
    _check_name(label, raw, path)
    _check_settings(label, raw)
    plugin_files, missing_plugins = _load_plugins(label, raw, path.parent, plugins)
    topology_path = _resolve_topology(label, raw["topology"], path.parent)
    try:
        topology_label, base = read_json(topology_path, error=TopologyError, kind="topology files")
        load_topology(base, label=topology_label)
    except TopologyError as exc:
        raise (_plugin_hint(label, exc, missing_plugins)
               or SweepError(f'{label}: field "topology": {exc}')) from None
    if not isinstance(raw["parameters"], dict) or not raw["parameters"]:
        raise SweepError(f'{label}: field "parameters": expected an object of path: values')
    sweep = Sweep(label, raw, base, topology_path)
    sweep.path = path
    sweep.plugins = plugin_files
    for param, spec in sweep.parameters:
        values, labels = _values(f"{label}: parameters: {quote(param)}", spec)
        sweep.values[param] = values
        if labels is not None:
            sweep.labels[param] = labels
    if sweep.combine == "zip" and len({len(v) for v in sweep.values.values()}) > 1:
        sizes = ", ".join(f"{p}: {len(v)}" for p, v in sweep.values.items())
        raise SweepError(f'{label}: field "combine": "zip" needs equally many values ({sizes})')
    _check_run_count(label, sweep)
    for point in sweep.points():
        data = copy.deepcopy(base)
        for param, value in point:
            try:
                set_path(data, param, value)
            except KeyError as exc:
                raise SweepError(f"{label}: parameters: {exc.args[0]}") from None
        if sweep.duration_s is not None:
            data["duration_s"] = sweep.duration_s
        try:
            load_topology(data)
        except TopologyError as exc:
            hint = _plugin_hint(label, exc, missing_plugins)
            if hint is not None:
                raise hint from None
            shown = ", ".join(f"{p} = {show(sweep.cell(p, v))}" for p, v in point)
            message = str(exc).split(": ", 1)[1] if ": " in str(exc) else str(exc)
            raise SweepError(f"{label}: parameters ({shown}): {message}") from None
    _check_metrics(label, sweep)
    _check_plots(label, sweep)
    return sweep


def _check_name(label: str, raw: dict, path: Path) -> None:
    """The sweep's name names its results directory: a plain file name, given or the file's."""
    if "name" in raw:
        problem = file_name_problem(raw["name"])
        if problem:
            raise SweepError(f'{label}: field "name": {problem}')
        return
    problem = file_name_problem(path.stem)
    if problem:
        raise SweepError(f'{label}: field "name": {problem} (the file name without extension; '
                         f'give a "name")')


def _check_settings(label: str, raw: dict) -> None:
    """Seeds (count or list, at most MAX_SEEDS), description, durations, combine, metrics' type:
    everything checked before anything is allocated from it."""
    seeds = raw.get("seeds", 1)
    if isinstance(seeds, list):
        if not 1 <= len(seeds) <= MAX_SEEDS:
            raise SweepError(f'{label}: field "seeds": expected a list of 1 to {MAX_SEEDS} seeds, '
                             f"got {len(seeds)}")
        seen = set()
        for index, seed in enumerate(seeds):
            if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
                raise SweepError(f'{label}: field "seeds[{index}]": expected an integer >= 0, '
                                 f"got {show(seed)}")
            if seed in seen:
                raise SweepError(f'{label}: field "seeds[{index}]": seed {seed} is already listed')
            seen.add(seed)
    else:
        problem = count_problem(seeds, 1, MAX_SEEDS, "a count of seeds")
        if problem:
            raise SweepError(f'{label}: field "seeds": {problem} (or a list of seeds)')
    if not isinstance(raw.get("description", ""), str):
        raise SweepError(f'{label}: field "description": expected a string, '
                         f"got {show(raw['description'])}")
    for key in ("duration_s", "interval_s"):
        value = raw.get(key)
        if value is not None and not (is_number(value) and value > 0):
            raise SweepError(f'{label}: field "{key}": expected a positive number, got {show(value)}')
        problem = None if value is None else time_problem(value, zero=False)
        if problem:                               # topologies/bounds.py
            raise SweepError(f'{label}: field "{key}": {problem}, got {show(value)}')
    combine = raw.get("combine", "cross")
    if combine not in ("cross", "zip"):
        raise SweepError(f'{label}: field "combine": expected "cross" or "zip", got {show(combine)}'
                         f"{suggestion(combine, ('cross', 'zip'))}")
    if not isinstance(raw.get("metrics", []), list):
        raise SweepError(f'{label}: field "metrics": expected a list of metric names, '
                         f"got {show(raw['metrics'])}")
    if not isinstance(raw.get("plots", []), list):
        raise SweepError(f'{label}: field "plots": expected a list of plot objects, '
                         f"got {show(raw['plots'])}")


def _check_run_count(label: str, sweep: Sweep) -> None:
    """Refuse more than MAX_SWEEP_RUNS runs (points x seeds) before any point is built."""
    lengths = [len(values) for values in sweep.values.values()]
    if sweep.combine == "zip":
        points = lengths[0]
    else:
        points = 1
        for length in lengths:
            points *= length
            if points > MAX_SWEEP_RUNS:
                break
    runs = points * len(sweep.seeds)
    if runs > MAX_SWEEP_RUNS:
        counted = (f"{points} points x {len(sweep.seeds)} seeds = {runs} runs"
                   if points <= MAX_SWEEP_RUNS else f"more than {MAX_SWEEP_RUNS} points")
        raise SweepError(f'{label}: field "parameters": {counted}; at most {MAX_SWEEP_RUNS} runs '
                         f"are allowed in one sweep")


def _check_metrics(label: str, sweep: Sweep) -> None:
    base = sweep.base
    flows = [f.get("id") for f in base.get("flows", [])]
    links = {l.get("id"): l for l in base.get("links", [])}
    workloads = [w.get("id") for w in base.get("workloads", []) if isinstance(w, dict)]
    if not isinstance(sweep.raw.get("metrics", []), list) or not sweep.metrics:
        raise SweepError(f'{label}: field "metrics": expected a list of metric names')
    for metric in sweep.metrics:
        if not isinstance(metric, str):
            raise SweepError(f'{label}: field "metrics": expected metric names, got {show(metric)}')
        problem = (_workload_metric_problem(metric, workloads)
                    if metric.startswith("workloads.") else _metric_problem(metric, flows, links))
        if problem:
            raise SweepError(f'{label}: field "metrics": {problem}')


WORKLOAD_METRICS = ("flows_started", "flows_completed", "flows_unfinished", "offered_mbps")
WORKLOAD_BUCKETS = ("all", "under_100kb", "100kb_to_10mb", "over_10mb")   # netsim/workloads.py
BUCKET_METRICS = ("count", "mean_fct_s", "p50_fct_s", "p99_fct_s", "mean_slowdown",
                  "p50_slowdown", "p99_slowdown")


def _workload_metric_problem(metric: str, workloads: list):
    """None if `metric` is workloads.<id>.<field> or workloads.<id>.<bucket>.<statistic> of a
    workload of the topology (summary.json "workloads"), else what is wrong."""
    parts = metric.split(".")
    shown = quote(metric)
    if len(parts) not in (3, 4):
        return (f"{shown}: expected workloads.<id>.<field> or "
                f"workloads.<id>.<bucket>.<statistic>")
    if parts[1] not in workloads:
        return f"{shown}: no workload {quote(parts[1])}{suggestion(parts[1], workloads)}"
    if len(parts) == 3:
        if parts[2] not in WORKLOAD_METRICS:
            return (f"{shown}: unknown workload metric {quote(parts[2])}"
                    f"{suggestion(parts[2], WORKLOAD_METRICS)}")
        return None
    if parts[2] not in WORKLOAD_BUCKETS:
        return (f"{shown}: unknown size bucket {quote(parts[2])}"
                f"{suggestion(parts[2], WORKLOAD_BUCKETS)}; known: {', '.join(WORKLOAD_BUCKETS)}")
    if parts[3] not in BUCKET_METRICS:
        return (f"{shown}: unknown statistic {quote(parts[3])}"
                f"{suggestion(parts[3], BUCKET_METRICS)}; known: {', '.join(BUCKET_METRICS)}")
    return None


def _metric_problem(metric: str, flows: list, links: dict):
    parts = metric.split(".")
    shown = quote(metric)
    if metric in DERIVED_METRICS or metric in SUMMARY_TOP:
        return None
    if parts[0] == "check":
        return None if len(parts) in (2, 5) else (
            f"{shown}: expected check.max_error_pct or check.<interval>.<id>.<quantity>."
            f"<predicted|simulated|error_pct>")
    if parts[0] == "flows" and len(parts) == 3:
        if parts[1] not in flows:
            return f"{shown}: no flow {quote(parts[1])}{suggestion(parts[1], flows)}"
        if parts[2] not in FLOW_METRICS:
            return (f"{shown}: unknown flow metric {quote(parts[2])}"
                    f"{suggestion(parts[2], FLOW_METRICS)}")
        return None
    if parts[0] == "links" and len(parts) == 5 and parts[2] == "directions":
        if parts[1] not in links:
            return f"{shown}: no link {quote(parts[1])}{suggestion(parts[1], list(links))}"
        ends = links[parts[1]].get("ends", ["?", "?"])
        labels = [f"{ends[0]}->{ends[1]}", f"{ends[1]}->{ends[0]}"]
        if parts[3] not in labels:
            return (f"{shown}: link {parts[1]} has no direction {quote(parts[3])}; "
                    f"known: {', '.join(labels)}")
        if parts[4] not in DIRECTION_METRICS:
            return (f"{shown}: unknown link metric {quote(parts[4])}"
                    f"{suggestion(parts[4], DIRECTION_METRICS)}")
        return None
    known = DERIVED_METRICS + SUMMARY_TOP
    return (f"unknown metric {shown}{suggestion(metric, known)}; metrics are {', '.join(known)}, "
            f"flows.<id>.<field>, links.<id>.directions.<A->B>.<field> or check.<...>")


def _check_plots(label: str, sweep: Sweep) -> None:
    """Validate the plots and resolve their theory settings from the topology (kept in
    `sweep.resolved_plots`, which the runner saves in the results' sweep.json)."""
    from netsim.sweep import resolve_theory
    params = [p for p, _ in sweep.parameters]
    if not isinstance(sweep.raw.get("plots", []), list):
        raise SweepError(f'{label}: field "plots": expected a list of plot objects')
    resolved = []
    files = {}
    for i, plot in enumerate(sweep.plots):
        where = f"{label}: plots[{i}]"
        if not isinstance(plot, dict):
            raise SweepError(f"{where}: expected an object")
        for key in plot:
            if key not in PLOT_FIELDS:
                raise SweepError(f'{where}: unknown field "{key}"{suggestion(key, PLOT_FIELDS)}')
        for key in ("file", "x", "y"):
            if key not in plot:
                raise SweepError(f'{where}: missing field "{key}"')
        _check_plot_file(where, plot["file"])
        if plot["file"] in files:
            raise SweepError(f'{where}: field "file": "{plot["file"]}" is also the file of '
                             f"plots[{files[plot['file']]}]")
        files[plot["file"]] = i
        for key in ("x", "lines"):
            if plot.get(key) is not None and plot[key] not in params:
                raise SweepError(f'{where}: field "{key}": "{plot[key]}" is not a swept parameter'
                                 f"{suggestion(plot[key], params)}; parameters: {', '.join(params)}")
        if plot["y"] not in sweep.metrics:
            raise SweepError(f'{where}: field "y": "{plot["y"]}" is not a collected metric'
                             f"{suggestion(plot['y'], sweep.metrics)}")
        for key in ("title", "xlabel", "ylabel"):
            text = plot.get(key)
            if text is not None and (not isinstance(text, str) or not text.strip()
                                     or len(text) > 200 or any(ord(c) < 32 for c in text)):
                raise SweepError(f'{where}: field "{key}": expected a line of text (at most 200 '
                                 f"characters, no control characters), got {text!r}")
        for key in ("logx", "logy"):
            if not isinstance(plot.get(key, False), bool):
                raise SweepError(f'{where}: field "{key}": expected true or false')
        if plot.get("error_bars", "std") not in ("std", "ci95", "none"):
            raise SweepError(f'{where}: field "error_bars": expected "std", "ci95" or "none"')
        theory = plot.get("theory")
        if theory is not None:
            _check_theory(where, theory, sweep)
            plot = dict(plot, theory=resolve_theory(where, plot, sweep))
        resolved.append(plot)
    sweep.resolved_plots = resolved


def _check_plot_file(where: str, name) -> None:
    """A plot's file is a plain PNG file name in the sweep directory."""
    problem = file_name_problem(name)
    if problem:
        raise SweepError(f'{where}: field "file": {problem}')
    if not name.lower().endswith(".png"):
        raise SweepError(f'{where}: field "file": expected a .png file name, got {show(name)}')


def _check_theory(where: str, theory, sweep: Sweep) -> None:
    if not isinstance(theory, dict) or not isinstance(theory.get("model"), str) \
            or theory["model"] not in THEORY_MODELS:
        raise SweepError(f'{where}: field "theory": expected an object with "model" one of '
                         f"{', '.join(THEORY_MODELS)}")
    model = theory["model"]
    for key in theory:
        if key not in THEORY_MODELS[model]:
            raise SweepError(f'{where}: field "theory.{key}": not a field of the {model} model'
                             f"{suggestion(key, THEORY_MODELS[model])}; its fields: "
                             f"{', '.join(THEORY_MODELS[model])}")
    if model == "column" and theory.get("y") not in sweep.metrics:
        raise SweepError(f'{where}: field "theory.y": expected a collected metric')
    for key in ("low", "high") if model == "band" else ():
        if theory.get(key) not in sweep.metrics:
            raise SweepError(f'{where}: field "theory.{key}": expected a collected metric'
                             f"{suggestion(theory.get(key), sweep.metrics)}")
    for key in ("rtt_ms", "mss_bytes", "units_bits_per_mbit", "C", "beta", "mbps"):
        value = theory.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value) or value <= 0):
            raise SweepError(f'{where}: field "theory.{key}": expected a positive number, '
                             f"got {value!r}")
    if model == "cubic" and not 0 < theory.get("beta", 0.7) < 1:
        raise SweepError(f'{where}: field "theory.beta": expected a number between 0 and 1')
    for key in ("flow", "link", "label"):
        value = theory.get(key)
        if value is not None and (not isinstance(value, str) or not value
                                  or any(ord(c) < 32 for c in value)):
            raise SweepError(f'{where}: field "theory.{key}": expected a name, got {value!r}')
