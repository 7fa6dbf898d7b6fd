"""A validated sweep (`Sweep`): its parameters' values, points (every combination), seeds and runs,
and the topology of one point (`point_data`, `point_spec`). Built by `netsim.sweep_file`.
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
from pathlib import Path

from netsim.sweep_parameters import set_path, value_cell


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
        self.interval_s = raw.get("interval_s") or 0.1     # (null: the default)
        self.plugins: tuple = ()      # absolute paths of the --plugin files (never "plugins")
        self.path: Path | None = None             # the sweep file (set by load_sweep)
        self.resolved_plots: list | None = None   # plots with theory resolved (load_sweep)

    def points(self) -> list:
        """Every parameter combination, as a list of (path, value) pairs."""
        paths = [path for path, _ in self.parameters]
        columns = [self.values[path] for path in paths]
        if self.combine == "zip":     # a one-value parameter is a fixed override: in every point
            n = max(map(len, columns))
            columns = [column * n if len(column) == 1 else column for column in columns]
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


def point_data(sweep: Sweep, point) -> dict:
    """The topology dict of one point: the base with the point's parameters and the sweep's
    duration set."""
    data = copy.deepcopy(sweep.base)
    for param, value in point:
        set_path(data, param, value)
    if sweep.duration_s is not None:
        data["duration_s"] = sweep.duration_s
    return data


def point_spec(sweep: Sweep, point):
    from topologies.loader import load_topology
    return load_topology(point_data(sweep, point))
