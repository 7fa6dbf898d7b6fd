"""A run that ends before a flow starts (a start_s at or after its end, e.g. under a shorter
--duration), or before a workload opens any flow, says so on stderr: their goodputs read 0, which a
student took for a fault of the network (acceptance tests Z14 and Z16)."""
from __future__ import annotations

import json

from netsim.cli_output import never_started


def _summary(flows: dict, workloads: dict | None = None, end_s: float = 10.0) -> dict:
    return {"end_time_s": end_s, "flows": flows, "workloads": workloads or {},
            "stop_reason": "duration"}


def _flow(start_s: float, sent: int = 0) -> dict:
    return {"start_s": start_s, "packets_sent": sent}


def test_flows_and_workloads_that_never_started_are_named():
    flows = {"F1": _flow(0.0, 900), "F2": _flow(20.0), "F3": _flow(10.0)}
    assert never_started(_summary(flows)) == [
        "2 flows never started: the run ended at 10 s, before F2 at 20 s, F3 at 10 s (their "
        "goodputs read 0)"]
    workloads = {"W": {"flows_started": 0}, "X": {"flows_started": 12}}
    assert never_started(_summary({"F1": _flow(0.0, 900)}, workloads)) == [
        "workload W opened no flow before the run ended at 10 s (a start_s at or after the end, "
        "or arrivals too rare for the run's length)"]
    assert never_started(_summary({"F1": _flow(0.0, 900)}, {"X": {"flows_started": 1}})) == []


def test_a_run_stopped_early_says_why_itself():
    """A run that failed or was interrupted at t = 0 has every flow unstarted: no warning."""
    summary = {**_summary({"F1": _flow(0.0)}, end_s=0.0), "stop_reason": "error"}
    assert never_started(summary) == []


def test_a_flow_starting_at_the_end_never_started():
    """Its first packet goes out at the last instant (acceptance test Z18)."""
    assert never_started(_summary({"F1": _flow(10.0, 1)})) == [
        "1 flow never started: the run ended at 10 s, before F1 at 10 s (its goodput reads 0)"]


def test_many_are_counted_after_the_first_few():
    flows = {f"F{i}": _flow(20.0 + i) for i in range(7)}
    assert never_started(_summary(flows)) == [
        "7 flows never started: the run ended at 10 s, before F0 at 20 s, F1 at 21 s, F2 at 22 s "
        "and 4 more (their goodputs read 0)"]


def test_the_command_warns(tmp_path, root, run_cli):
    data = json.loads((root / "topologies" / "test_case_0.json").read_text())
    data["flows"].append({**data["flows"][0], "id": "F2", "start_s": 20})
    path = tmp_path / "late.json"
    path.write_text(json.dumps(data))
    done = run_cli(path, "--duration", "3", "--no-plots", "--quiet", "--out", tmp_path / "o")
    assert (done.returncode, done.stderr) == (0, (
        "warning: 1 flow never started: the run ended at 3 s, before F2 at 20 s (its goodput "
        "reads 0)\n"))
