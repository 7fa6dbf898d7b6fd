"""The command's CPU time by phase (netsim/cli.py `log_cpu_phases`, -v INFO): every phase named,
in order, none negative, the parts adding up to the total, the simulation's time per event; and
nothing of it in the results (summary.json is the same with and without -v INFO)."""
from __future__ import annotations

import json
import re

PHASES = ("start-up", "loading", "building", "simulating", "results", "writing", "other")


def test_the_phase_line_names_every_phase_and_adds_up(run_cli, root, tmp_path):
    done = run_cli(root / "topologies" / "test_case_0.json", "--no-plots", "--quiet",
                   "-v", "INFO", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "CPU by phase:" in line]
    assert len(lines) == 1 and lines[0].startswith("INFO netsim.cli: ")
    line = lines[0]
    seconds = {name: float(value) for name, value in re.findall(r"([a-z-]+) ([0-9.]+) s", line)}
    assert tuple(name for name in seconds if name in PHASES) == PHASES
    assert all(seconds[name] >= 0 for name in PHASES)
    total = float(re.search(r"total ([0-9.]+) s", line).group(1))
    assert sum(seconds[name] for name in PHASES) <= total + 0.004       # rounding of 7 parts
    assert sum(seconds[name] for name in PHASES) >= total - 0.004
    events = json.loads((tmp_path / "out" / "summary.json").read_text())["events"]
    assert f"{events} events" in line
    per_event = float(re.search(r"simulating [0-9.]+ s \(([0-9.]+) us/event\)", line).group(1))
    assert abs(per_event - seconds["simulating"] / events * 1e6) < 0.01 + \
        0.0005 / events * 1e6


def test_without_info_nothing_is_logged_and_the_results_are_the_same(run_cli, root, tmp_path):
    topology = root / "topologies" / "test_case_0.json"
    quiet = run_cli(topology, "--no-plots", "--quiet", "--out", tmp_path / "a")
    info = run_cli(topology, "--no-plots", "--quiet", "-v", "INFO", "--out", tmp_path / "b")
    assert quiet.returncode == info.returncode == 0
    assert "CPU by phase" not in quiet.stderr

    def summary(name):
        data = json.loads((tmp_path / name / "summary.json").read_text())
        data.pop("wall_time_s")
        return data
    assert summary("a") == summary("b")
