"""The plan of a sweep: every run with the digest of its resolved configuration, in run order."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from netsim.sweep_points import Sweep, point_spec


@dataclass(frozen=True)
class PlannedRun:
    """One run of a sweep: its id, its point's index, its seed, the parameter values it sets
    (path, value) and the config_digest that names its record."""

    run_id: str
    point: int
    seed: int
    params: tuple            # ((path, value), ...)
    digest: str              # config_digest of the run


def plan(sweep: Sweep) -> list:
    """Every run of the sweep with its configuration digest, in run order."""
    from topologies.spec import config_digest
    out = []
    plugin_code = "".join(hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in sweep.plugins)
    loaded: Any = (-1, None)    # (point, its spec): runs go point by point, so one spec at a
    for run_id, index, seed, point in sweep.runs():      # time, never every point's
        if loaded[0] != index:
            loaded = (index, point_spec(sweep, point))
        spec = loaded[1]
        digest = config_digest(spec, duration_s=spec.duration_s, seed=seed,
                               interval_s=sweep.interval_s)
        if sweep.plugins:             # an edited plugin file re-runs the runs
            digest = hashlib.sha256((digest + plugin_code).encode()).hexdigest()
        out.append(PlannedRun(run_id, index, seed, tuple(point), digest))
    return out
