"""Shared fixtures: paths of the shipped topologies."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOPOLOGIES = sorted((ROOT / "topologies").glob("*.json"))


@pytest.fixture
def root() -> Path:
    return ROOT

# Property tests are deterministic: the same examples on every machine and every run (no local
# example database), so a red or green result never depends on where the suite ran.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("deterministic", derandomize=True, database=None,
                                      print_blob=True)
_hypothesis_settings.load_profile("deterministic")


@pytest.fixture
def dumbbell():
    """A factory of N-pair dumbbell topologies (dicts): S_i -> T_i over a 10 Mb/s, 20 ms
    bottleneck R1-R2, 100 Mb/s access links, `total_mb` split evenly over Reno flows."""
    def make(pairs: int, total_mb: float = 32.0, start_s: float = 0.0) -> dict:
        hosts = [f"S{i}" for i in range(1, pairs + 1)] + [f"T{i}" for i in range(1, pairs + 1)]
        links = [{"id": "LB", "ends": ["R1", "R2"], "rate_mbps": 10, "delay_ms": 20,
                  "buffer_kb": 55}]
        links += [{"id": f"LS{i}", "ends": [f"S{i}", "R1"], "rate_mbps": 100, "delay_ms": 1,
                   "buffer_kb": 200} for i in range(1, pairs + 1)]
        links += [{"id": f"LT{i}", "ends": ["R2", f"T{i}"], "rate_mbps": 100, "delay_ms": 1,
                   "buffer_kb": 200} for i in range(1, pairs + 1)]
        flows = [{"id": f"F{i}", "src": f"S{i}", "dst": f"T{i}", "data_mb": total_mb / pairs,
                  "start_s": start_s, "algorithm": "reno"} for i in range(1, pairs + 1)]
        return {"name": f"dumbbell_{pairs}", "units": "si",
                "packet_bytes": {"data": 1500, "ack": 40}, "routing": {"protocol": "static"},
                "hosts": hosts, "routers": ["R1", "R2"], "links": links, "flows": flows}
    return make


@pytest.fixture
def run_cli():
    """Run `python initializer.py ARGS...` in a child process; returns the CompletedProcess."""
    import subprocess
    import sys

    def run(*args, cwd=None, timeout=120):
        return subprocess.run([sys.executable, str(ROOT / "initializer.py"), *map(str, args)],
                              capture_output=True, text=True, cwd=cwd, timeout=timeout)
    return run
