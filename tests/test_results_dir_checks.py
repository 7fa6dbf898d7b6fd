"""A results directory whose summary.json or check.json holds a field of the wrong type is one
line naming the file, the field and what was expected, exit 2, for `report DIR` and for
`python -m netsim.iperf_json DIR` (the readers check the fields they use, plot_tool.schema's
SUMMARY_FIELDS and CHECK_FIELDS, when they read the file): never a traceback."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """The results of a short run of test_case_0 (one FAST flow over one link), with --check."""
    from netsim.cli import main
    out = tmp_path_factory.mktemp("checks") / "tc0"
    assert main(["test_case_0", "--duration", "2", "--check", "--no-plots", "--quiet",
                 "--out", str(out)]) == 0
    return out


def damaged(results: Path, tmp_path: Path, change, name: str = "summary.json") -> Path:
    """A copy of `results` whose `name` is changed by `change` (a function of the parsed file)."""
    copy = tmp_path / "damaged"
    shutil.copytree(results, copy)
    data = json.loads((copy / name).read_text(encoding="utf-8"))
    change(data)
    (copy / name).write_text(json.dumps(data), encoding="utf-8")
    return copy


def report(directory: Path, capsys) -> tuple[int, str]:
    from netsim.cli import main
    code = main(["report", str(directory), "-o", str(directory.parent / "r.html"), "--quiet"])
    return code, capsys.readouterr().err


def iperf(directory: Path, capsys) -> tuple[int, str]:
    from netsim.iperf_json import main
    code = main([str(directory), "-o", str(directory.parent / "i.json")])
    return code, capsys.readouterr().err


def _set(*path, value):
    def change(data):
        for key in path[:-1]:
            data = data[key]
        data[path[-1]] = value
    return change


def _delete(*path):
    def change(data):
        for key in path[:-1]:
            data = data[key]
        del data[path[-1]]
    return change


SUMMARY_CASES = [
    # the fuzzer's reproductions (a direction object replaced by 1.5, "hosts": 7)
    (_set("links", "L1", "directions", "H1->H2", value=1.5),
     'links.L1.directions["H1->H2"]: expected an object, got 1.5'),
    (_set("hosts", value=7), "hosts: expected an object, got 7"),
    (_set("end_time_s", value="L1\nx"), 'end_time_s: expected a time in seconds, got "L1\\nx"'),
    (_set("flows", "F1", value="x"), 'flows.F1: expected an object, got "x"'),
    (_set("links", "L1", value=1), "links.L1: expected an object, got 1"),
    (_set("flows", "F1", "start_s", value=[1, 2]), "flows.F1.start_s: expected a time in "
                                                    "seconds, got a list"),
    (_set("links", "L1", "directions", "H1->H2", "utilization", value=[1, 2]),
     'links.L1.directions["H1->H2"].utilization: expected a number or null, got a list'),
    (_set("links", "L1", "ends", value=["H1"]), 'links.L1.ends: expected a list of two strings, '
                                                'got a list'),
    (_set("links", "L1", "ends", value=["H1", 2]), "links.L1.ends[1]: expected a string, got 2"),
    (_set("links", "L1", "down_s", value=[[1, "x"]]),
     'links.L1.down_s[0][1]: expected a time in seconds, got "x"'),
    (_set("links", "L1", "down_s", value=[[-1, 2]]),
     "links.L1.down_s[0][0]: expected a time in seconds from 0 to 1e+20, got -1"),
    # (the figures draw a time-varying link's capacity from it)
    (_set("links", "L1", "rate_schedule_mbps", value=[[1, "x"]]),
     'links.L1.rate_schedule_mbps[0][1]: expected a positive number, got "x"'),
    (_set("links", "L1", "rate_schedule_mbps", value=[[1]]),
     "links.L1.rate_schedule_mbps[0]: expected [time, rate], got a list"),
    (_set("links", "L1", "rate_schedule_mbps", value=5),
     "links.L1.rate_schedule_mbps: expected a list of [time, rate] pairs, got 5"),
    (_set("flows", "F1", "retransmissions", value=True),
     "flows.F1.retransmissions: expected an integer, got true"),
    (_set("flows", "F1", "min_rtt_ms", value=1e300),
     "flows.F1.min_rtt_ms: expected a number (of magnitude at most 1e+20) or null, got 1e+300"),
    (_set("units", "bits_per_mbit", value=0), "units.bits_per_mbit: expected a positive number, "
                                              "got 0"),
    (_set("interval_s", value=1e-320), "interval_s: expected a time from 1e-09 s to 1e+06 s, "
                                       "got 1e-320"),
    (_set("interval_s", value=1e-9), "end_time_s: expected at most 20000000 sampling intervals "
                                     "of interval_s = 1e-09 s, got 2 s (2e+09 intervals)"),
    (_delete("links", "L1", "ends"), "links.L1.ends: missing, expected a list of two strings"),
]


@pytest.mark.parametrize("change, problem", SUMMARY_CASES)
def test_a_wrong_summary_field_is_one_line_for_the_report(results, tmp_path, capsys, change,
                                                          problem):
    directory = damaged(results, tmp_path, change)
    assert report(directory, capsys) == (
        2, f"error: report {directory}: {directory}/summary.json: {problem}\n")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("change, problem", SUMMARY_CASES)
def test_a_wrong_summary_field_is_one_line_for_iperf_json(results, tmp_path, capsys, change,
                                                          problem):
    directory = damaged(results, tmp_path, change)
    assert iperf(directory, capsys) == (2, f"error: {directory}/summary.json: {problem}\n")
    assert not (tmp_path / "i.json").exists()


@pytest.mark.parametrize("field", ["end_time_s", "interval_s"])
def test_iperf_json_needs_the_times_the_report_can_do_without(results, tmp_path, capsys, field):
    directory = damaged(results, tmp_path, _delete(field))
    assert iperf(directory, capsys) == (
        2, f"error: {directory}/summary.json: {field}: missing, expected a "
           f"{'positive ' if field == 'interval_s' else ''}time in seconds\n")
    assert report(directory, capsys) == (0, "")


def test_a_flow_without_its_start_is_refused_by_iperf_json(results, tmp_path, capsys):
    directory = damaged(results, tmp_path, _delete("flows", "F1", "start_s"))
    assert iperf(directory, capsys) == (
        2, f"error: {directory}/summary.json: flows.F1.start_s: missing, expected a time in "
           f"seconds\n")


@pytest.mark.parametrize("change, problem", [
    (_set("max_error_pct", value=[1]), "max_error_pct: expected a number or null, got a list"),
    (_set("passed", value="yes"), 'passed: expected a boolean or null, got "yes"'),
    (_set("compared", value=None), "compared: expected an integer, got null"),
])
def test_a_wrong_check_field_is_one_line_for_the_report(results, tmp_path, capsys, change,
                                                        problem):
    directory = damaged(results, tmp_path, change, "check.json")
    assert report(directory, capsys) == (
        2, f"error: report {directory}: {directory}/check.json: {problem}\n")


def test_the_results_as_written_pass(results, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(results, copy)
    assert report(copy, capsys) == (0, "")
    assert iperf(copy, capsys) == (0, "")
