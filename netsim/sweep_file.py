"""Sweep files: reading and validating the JSON that describes a parameter sweep (docs/sweeps.md).

A sweep file names a base topology, the parameters to vary as dotted paths into the topology
(``links.L1.loss_rate``, ``links.*.delay_ms``, ``flows.*.algorithm``, ``flows.F1.params.alpha``),
how to combine their values (``cross`` or ``zip``), how many seeds per point, the metrics to
collect and the plots to draw. `load_sweep` validates all of it before anything runs and returns
a `Sweep`; `netsim.sweep` runs it. The parts
have their own modules: parameter values (`netsim.sweep_parameters`), metrics
(`netsim.sweep_metrics`), theory curves (`netsim.sweep_theory`).
"""
from __future__ import annotations

import copy
import json
import os
import stat
from pathlib import Path

from netsim.sweep_metrics import check_metrics
from netsim.sweep_parameters import SweepError, parse_values, set_path, value_cell
from netsim.sweep_points import Sweep
from netsim.sweep_theory import check_theory, resolve_theory
from topologies.bounds import time_problem
from topologies.validation import (
    MAX_SEEDS,
    MAX_SWEEP_RUNS,
    count_problem,
    file_name_problem,
    is_number,
    one_line,
    quote,
    read_json,
    show,
    suggestion,
)

__all__ = ["Sweep", "SweepError", "load_sweep", "set_path", "value_cell"]


SWEEP_FIELDS = ("name", "description", "topology", "parameters", "combine", "seeds", "metrics",
                "plots", "duration_s", "interval_s", "plugins")
PLOT_FIELDS = ("file", "x", "y", "lines", "logx", "logy", "y_from_zero", "title", "xlabel",
               "ylabel", "error_bars", "theory")
PLAIN_DATA_KIND = "sweep files"   # in "jsonpickle tag ... is not allowed; <kind> are plain JSON data"



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
    a shipped preset (a bare name only: `topologies.shipped`). Raises SweepError when there is
    none, or only a directory or device."""
    if not isinstance(name, str) or not name:
        raise SweepError(f'{where}: field "topology": expected a topology file or preset name, '
                         f"got {show(name)}")
    from topologies.shipped import shipped_file, shipped_names
    candidates = [base_dir / name, Path(name)]
    preset = shipped_file(name)
    if preset is not None:
        candidates.append(preset)
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
    presets = shipped_names()
    raise SweepError(f'{where}: field "topology": no file or preset {show(name)}'
                     f"{suggestion(name, presets)}; presets: {', '.join(presets)}")


def _load_plugins(label: str, raw: dict, base_dir: Path, given) -> tuple:
    """Load the --plugin files `given` (code comes only from the command line or an installed
    entry point) and check the file's ``"plugins"``: a list of the plugin files the sweep needs,
    relative to the sweep file, which is never imported. Returns (the absolute paths of the
    loaded files, which the sweep hands to its workers; the listed files no --plugin gave, as
    paths)."""
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
            missing.append(candidate)
    return tuple(dict.fromkeys(paths)), missing


# a listed plugin file larger than this is not read for the names it declares (`_declared_names`)
MAX_PLUGIN_SOURCE_BYTES = 2**20


def _declared_names(path: Path) -> set | None:
    """The algorithm names a plugin file's classes declare (``name = "..."`` in a class body),
    its text parsed and never run; None when it is no regular file of at most
    `MAX_PLUGIN_SOURCE_BYTES`, or no Python that parses (a pipe is never opened)."""
    import ast
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_PLUGIN_SOURCE_BYTES:
            return None
        tree = ast.parse(path.read_bytes())
    except (OSError, ValueError, SyntaxError, RecursionError, MemoryError):
        return None
    names = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if isinstance(item, ast.Assign):
                targets = item.targets
            elif isinstance(item, ast.AnnAssign):
                targets = [item.target]
            else:
                continue
            value = item.value
            if (any(isinstance(t, ast.Name) and t.id == "name" for t in targets)
                    and isinstance(value, ast.Constant) and isinstance(value.value, str)):
                names.add(value.value)
    return names


def _plugin_hint(label: str, exc: Exception, missing: list) -> SweepError | None:
    """The error for a topology that names an algorithm no loaded plugin provides while the
    sweep file lists plugin files the command line did not give: which --plugin to add."""
    text = str(exc)
    if not missing or "unknown algorithm" not in text:
        return None
    unknown = text[text.index("unknown algorithm"):].split(" (did you mean")[0].split(";")[0]
    from flows import ALGORITHMS
    # a file whose every declared algorithm is registered already (an installed entry point
    # provides it) is not needed: naming it would make the next command a name conflict
    needed = [path for path in missing
              if not (names := _declared_names(path)) or not names <= set(ALGORITHMS)]
    options = " ".join(f"--plugin {one_line(str(path))}" for path in needed or missing)
    return SweepError(f'{label}: field "plugins": {unknown}; the sweep file names the plugin '
                      f"files it needs, but a sweep file never loads code: add {options} to "
                      f"the command line")


def load_sweep(path, plugins=()) -> Sweep:
    """Read and validate a sweep file; raises SweepError.

    Order: the file (`topologies.validation.read_json`: size, UTF-8, JSON, plain data, limits),
    the top-level fields, the name, the settings (seeds, durations, combine, metrics' type), the
    base topology, the parameters, the number of runs, the metrics and the plots (all before any
    point is built), then every point, then the plots' theory settings from the points.
    """
    from netsim.run import run_problem
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
        values, labels = parse_values(f"{label}: parameters: {quote(param)}", spec)
        sweep.values[param] = values
        if labels is not None:
            sweep.labels[param] = labels
        if param == "units" and len({json.dumps(v, sort_keys=True) for v in values}) > 1:
            raise SweepError(f'{label}: parameters: "units": one value only (a fixed override): '
                             f'the metrics, axis labels and theory curves of a sweep are in one '
                             f'unit system; vary the rates and sizes instead, or make a sweep '
                             f'per unit system')
    if sweep.combine == "zip" and len({len(v) for v in sweep.values.values()} - {1}) > 1:
        sizes = ", ".join(f"{p}: {len(v)}" for p, v in sweep.values.items())
        raise SweepError(f'{label}: field "combine": "zip" needs equally many values, or one '
                         f'(a fixed override, the same in every point) ({sizes})')
    _check_run_count(label, sweep)
    check_metrics(label, sweep)          # (from the base topology: before any point is built)
    _check_plots(label, sweep)
    for point in sweep.points():
        data = copy.deepcopy(base)
        for param, value in point:
            try:
                set_path(data, param, value)
            except KeyError as exc:
                raise SweepError(f"{label}: parameters: {exc.args[0]}") from None
        if sweep.duration_s is not None:
            data["duration_s"] = sweep.duration_s
        shown = ", ".join(f"{p} = {show(sweep.cell(p, v))}" for p, v in point)
        try:
            spec = load_topology(data)
        except TopologyError as exc:
            hint = _plugin_hint(label, exc, missing_plugins)
            if hint is not None:
                raise hint from None
            message = str(exc).split(": ", 1)[1] if ": " in str(exc) else str(exc)
            raise SweepError(f"{label}: parameters ({shown}): {message}") from None
        # what would stop its runs before they start: its length, interval and trace rows
        problem = run_problem(spec, spec.duration_s, sweep.interval_s, "sweep")
        if problem is not None:
            message = problem.split(": ", 1)[1] if problem.startswith("<dict>: ") else problem
            raise SweepError(f"{label}: parameters ({shown}): {message}")
    _resolve_plots(label, sweep)
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
        points = max(lengths)         # (one-value parameters hold in every point)
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


def _check_plots(label: str, sweep: Sweep) -> None:
    """Validate the plots against the parameters, the metrics and the base topology (before any
    point is built: a plot naming an unswept x is refused at once, however many points)."""
    params = [p for p, _ in sweep.parameters]
    if not isinstance(sweep.raw.get("plots", []), list):
        raise SweepError(f'{label}: field "plots": expected a list of plot objects')
    files: dict = {}
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
        if not isinstance(plot["x"], str):
            raise SweepError(f'{where}: field "x": expected a swept parameter, got '
                             f"{show(plot['x'])}; parameters: {', '.join(params)}")
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
        for key in ("logx", "logy", "y_from_zero"):
            if not isinstance(plot.get(key, False), bool):
                raise SweepError(f'{where}: field "{key}": expected true or false')
        if plot.get("error_bars", "std") not in ("std", "ci95", "none"):
            raise SweepError(f'{where}: field "error_bars": expected "std", "ci95" or "none"')
        theory = plot.get("theory")
        if theory is not None:
            check_theory(where, theory, sweep)
            model = theory["model"]
            if model in ("mathis", "cubic") and plot["x"].rsplit(".", 1)[-1] != "loss_rate":
                raise SweepError(f'{where}: field "x": the {model} curve is goodput against the '
                                 f"loss probability p, so x must be a swept loss_rate (e.g. "
                                 f'links.L1.loss_rate), got "{plot["x"]}"')


def _resolve_plots(label: str, sweep: Sweep) -> None:
    """Resolve the plots' theory settings from every point's topology (kept in
    `sweep.resolved_plots`, which the runner saves in the results' sweep.json); raises
    SweepError when the points do not share what a curve needs."""
    resolved = []
    for i, plot in enumerate(sweep.plots):
        if plot.get("theory") is not None:
            where = f"{label}: plots[{i}]"
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
