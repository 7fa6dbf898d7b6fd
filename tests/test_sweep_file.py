"""Sweep-file validation (topologies/sweep_file.py) against hostile or oversized input: every
problem is one line naming the file and the field, exit status 2, before anything is allocated."""
from __future__ import annotations

from pathlib import Path

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from initializer import main
from topologies import validation
from netsim.sweep_file import SweepError, load_sweep
from topologies.validation import MAX_DEPTH, MAX_RANGE_NUM, MAX_SEEDS, MAX_SWEEP_RUNS

ROOT = Path(__file__).resolve().parent.parent

GOOD = {
    "name": "small", "topology": "lossy_link", "duration_s": 1,
    "parameters": {"links.L1.delay_ms": [5, 10], "flows.F1.data_mb": [None]},
    "seeds": 2,
    "metrics": ["flows.F1.goodput_mbps"],
}


def write(tmp_path, data, name="sweep.json"):
    path = tmp_path / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def error_of(path) -> str:
    with pytest.raises(SweepError) as info:
        load_sweep(path)
    message = str(info.value)
    assert len(message.splitlines()) == 1 and message.isprintable()
    assert message.startswith(f"{path}: ")
    return message


def cli(tmp_path, path):
    """Run `initializer.py sweep PATH` in a subprocess: (exit status, stderr lines)."""
    done = subprocess.run([sys.executable, str(ROOT / "initializer.py"), "sweep", str(path),
                           "--out", str(tmp_path / "out"), "--quiet"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stderr.splitlines()


def test_a_good_sweep_loads(tmp_path):
    sweep = load_sweep(write(tmp_path, GOOD))
    assert sweep.name == "small" and len(sweep.runs()) == 4


# -- reading the file -----------------------------------------------------------------------------

def test_duplicate_keys_are_refused(tmp_path):
    text = json.dumps(GOOD)[:-1] + ', "seeds": 3}'
    assert error_of(write(tmp_path, text)).endswith('top level: duplicate field "seeds"')
    text = json.dumps(GOOD).replace('"links.L1.delay_ms": [5, 10]',
                                    '"links.L1.delay_ms": [5], "links.L1.delay_ms": [10]')
    assert error_of(write(tmp_path, text)).endswith('parameters: duplicate field "links.L1.delay_ms"')


def test_invalid_utf8_is_refused_with_its_place(tmp_path):
    content = json.dumps(GOOD).encode().replace(b'"small"', b'"sm\xe9ll"')
    assert error_of(write(tmp_path, content)).endswith(
        "not valid UTF-8: byte 0xe9 at line 1, column 13 (byte offset 12)")


def test_very_deep_nesting_is_one_line(tmp_path):
    message = error_of(write(tmp_path, '{"description": ' + "[" * 100_000))
    assert message.endswith(f"nested deeper than {MAX_DEPTH} levels at line 1, column 80")


def test_a_5001_digit_integer_is_one_line(tmp_path):
    text = json.dumps(GOOD).replace('"seeds": 2', '"seeds": ' + "7" * 5001)
    assert "integer with 5001 digits at line 1, column" in error_of(write(tmp_path, text))


def test_non_finite_numbers_are_refused(tmp_path):
    text = json.dumps(GOOD).replace('"duration_s": 1', '"duration_s": NaN')
    assert "not valid JSON: NaN is not allowed" in error_of(write(tmp_path, text))


def test_jsonpickle_tags_are_refused_anywhere(tmp_path):
    data = dict(GOOD, parameters={"links.L1.delay_ms": [5, {"py/object": "os.system"}]})
    assert error_of(write(tmp_path, data)).endswith(
        'parameters["links.L1.delay_ms"][1]: jsonpickle tag "py/object" is not allowed; sweep files '
        'are plain JSON data')


def test_a_file_over_the_size_limit_is_refused(tmp_path, monkeypatch):
    path = write(tmp_path, GOOD)
    monkeypatch.setattr(validation, "MAX_FILE_BYTES", 64)
    assert error_of(path).endswith(f"file too large: {path.stat().st_size} bytes; at most 64 bytes "
                                   f"are read")


def test_a_list_over_the_list_limit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(validation, "MAX_ITEMS", 10)
    data = dict(GOOD, parameters={"links.L1.delay_ms": list(range(1, 12))})
    assert error_of(write(tmp_path, data)).endswith(
        'parameters["links.L1.delay_ms"]: list of 11 entries; at most 10 are allowed')


# -- counts with maxima, refused before anything is allocated -------------------------------------

@pytest.mark.parametrize("seeds, shown", [(1e9, "1000000000.0"), (1_000_000_000, "1000000000"),
                                          (0, "0"), (True, "true"), ("3", '"3"')])
def test_seed_counts(tmp_path, seeds, shown):
    message = error_of(write(tmp_path, dict(GOOD, seeds=seeds)))
    assert message.endswith(f'field "seeds": expected a count of seeds from 1 to {MAX_SEEDS}, '
                            f"got {shown} (or a list of seeds)")


def test_seed_lists(tmp_path):
    assert load_sweep(write(tmp_path, dict(GOOD, seeds=[7, 0, 3]))).seeds == [7, 0, 3]
    assert error_of(write(tmp_path, dict(GOOD, seeds=[1, 2, 1]))).endswith(
        'field "seeds[2]": seed 1 is already listed')
    assert error_of(write(tmp_path, dict(GOOD, seeds=[1, -2]))).endswith(
        'field "seeds[1]": expected an integer >= 0, got -2')
    assert error_of(write(tmp_path, dict(GOOD, seeds=[]))).endswith(
        f'field "seeds": expected a list of 1 to {MAX_SEEDS} seeds, got 0')
    assert error_of(write(tmp_path, dict(GOOD, seeds=list(range(MAX_SEEDS + 1))))).endswith(
        f'field "seeds": expected a list of 1 to {MAX_SEEDS} seeds, got {MAX_SEEDS + 1}')


@pytest.mark.parametrize("num, shown", [(1e9, "1000000000.0"), (1_000_000_000, "1000000000"),
                                        (MAX_RANGE_NUM + 1, str(MAX_RANGE_NUM + 1)), (0, "0"),
                                        (2.0, "2.0")])
def test_range_counts(tmp_path, num, shown):
    data = dict(GOOD, parameters={"links.L1.delay_ms": {"from": 1, "to": 2, "num": num}})
    assert error_of(write(tmp_path, data)).endswith(
        f'parameters: "links.L1.delay_ms": field "num": expected a whole number from 1 to '
        f"{MAX_RANGE_NUM}, got {shown}")


@pytest.mark.parametrize("bound, shown", [("1", '"1"'), (True, "true"), (None, "null")])
def test_range_bounds_are_numbers(tmp_path, bound, shown):
    data = dict(GOOD, parameters={"links.L1.delay_ms": {"from": bound, "to": 2, "num": 2}})
    assert error_of(write(tmp_path, data)).endswith(
        f'"links.L1.delay_ms": field "from": expected a finite number, got {shown}')


def test_total_runs_are_capped_before_the_points_are_built(tmp_path, monkeypatch):
    data = dict(GOOD, seeds=100, parameters={
        "links.L1.delay_ms": {"from": 1, "to": 100, "num": 10_000}, "flows.F1.data_mb": [None]})
    built = []
    monkeypatch.setattr("netsim.sweep_file.Sweep.points", lambda self: built.append(1) or [])
    assert error_of(write(tmp_path, data)).endswith(
        f'field "parameters": 10000 points x 100 seeds = 1000000 runs; at most {MAX_SWEEP_RUNS} '
        f"runs are allowed in one sweep")
    many = {f"links.L1.delay_ms": {"from": 1, "to": 2, "num": 1000}, "links.L1.buffer_kb": [1] * 1000,
            "flows.F1.data_mb": [None]}
    assert error_of(write(tmp_path, dict(GOOD, parameters=many))).endswith(
        f'field "parameters": more than {MAX_SWEEP_RUNS} points; at most {MAX_SWEEP_RUNS} runs are '
        f"allowed in one sweep")
    assert built == []


def test_metrics_and_plots_are_checked_before_the_points_are_built(tmp_path, monkeypatch):
    built = []
    monkeypatch.setattr("netsim.sweep_file.Sweep.points", lambda self: built.append(1) or [])
    plot = {"file": "g.png", "x": "links.L1.rate_mbps", "y": "flows.F1.goodput_mbps"}
    assert error_of(write(tmp_path, dict(GOOD, plots=[plot]))).endswith(
        'plots[0]: field "x": "links.L1.rate_mbps" is not a swept parameter (did you mean '
        '"links.L1.delay_ms"?); parameters: links.L1.delay_ms, flows.F1.data_mb')
    assert error_of(write(tmp_path, dict(GOOD, metrics=["flows.F9.goodput_mbps"]))).endswith(
        'field "metrics": "flows.F9.goodput_mbps": no flow "F9" (did you mean "F1"?)')
    assert built == []


# -- the base topology ----------------------------------------------------------------------------

@pytest.mark.parametrize("content, expected", [
    ("hello, world", "not valid JSON: Expecting value at line 1, column 1"),
    (b"\x89PNG\r\n\x1a\n\x00", "not valid UTF-8: byte 0x89 at line 1, column 1 (byte offset 0)"),
    ('{"hosts": [], "hosts": []}', 'top level: duplicate field "hosts"'),
    ('{"hosts": ["H1"], "links": []', "not valid JSON: Expecting ',' delimiter at line 1, column 30"),
])
def test_a_topology_that_is_not_a_topology_file_is_one_line(tmp_path, content, expected):
    write(tmp_path, content, name="topo.txt")
    path = write(tmp_path, dict(GOOD, topology="topo.txt"))
    assert error_of(path).endswith(f'field "topology": {tmp_path / "topo.txt"}: {expected}')
    status, lines = cli(tmp_path, path)
    assert status == 2 and lines == [f'error: {path}: field "topology": {tmp_path / "topo.txt"}: '
                                     f"{expected}"]


def test_a_topology_that_is_a_directory(tmp_path):
    (tmp_path / "nets").mkdir()
    assert error_of(write(tmp_path, dict(GOOD, topology="nets"))).endswith(
        f'field "topology": "{tmp_path / "nets"}" is a directory, not a topology file')


def test_an_invalid_base_topology_names_its_file(tmp_path):
    data = json.loads((ROOT / "topologies" / "lossy_link.json").read_text())
    data["links"][0]["rate_mbps"] = -1
    write(tmp_path, data, name="net.json")
    message = error_of(write(tmp_path, dict(GOOD, topology="net.json")))
    assert message.endswith(f'field "topology": {tmp_path / "net.json"}: links[0] "{data["links"][0]["id"]}": '
                            f'field "rate_mbps": expected a positive number, got -1')


def test_a_topology_name_that_cannot_be_a_path(tmp_path):
    assert error_of(write(tmp_path, dict(GOOD, topology="x" * 5000))).endswith(
        '"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..."; presets: ' + ", ".join(
            sorted([p.stem for p in (ROOT / "topologies").glob("*.json")]
                   + [f"examples/{p.stem}" for p in (ROOT / "topologies").glob("examples/*.json")])))
    assert 'no file or preset "a\\u0000b"' in error_of(write(tmp_path, dict(GOOD, topology="a\x00b")))


# -- names ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, expected", [
    ("../../x", 'expected a plain file name (no "/"), got "../../x"'),
    ("/abs/x", 'expected a plain file name (no "/"), got "/abs/x"'),
    ("a/b", 'expected a plain file name (no "/"), got "a/b"'),
    ("..", 'expected a plain file name (not "." or ".."), got ".."'),
    ("a\x1bb", 'expected a plain file name (no control characters), got "a\\u001bb" (U+001B)'),
    ("", 'expected a plain file name, got ""'),
    (7, "expected a plain file name (a string), got 7"),
])
def test_sweep_name_must_be_a_plain_file_name(tmp_path, name, expected):
    assert error_of(write(tmp_path, dict(GOOD, name=name))).endswith(f'field "name": {expected}')


def test_sweep_name_defaults_to_the_file_name_which_is_checked_too(tmp_path):
    data = {k: v for k, v in GOOD.items() if k != "name"}
    assert load_sweep(write(tmp_path, data, name="mine.json")).name == "mine"
    assert error_of(write(tmp_path, data, name="...json")).endswith(
        'field "name": expected a plain file name (not "." or ".."), got ".." (the file name without '
        'extension; give a "name")')


def test_a_path_as_sweep_name_exits_2_with_one_line_and_writes_nothing(tmp_path):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    path = write(work, dict(GOOD, name="../../../escaped"))
    done = subprocess.run([sys.executable, str(ROOT / "initializer.py"), "sweep", str(path),
                           "--quiet"], cwd=work, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f'error: {path}: field "name": expected a plain file name '
                                        f'(no "/"), got "../../../escaped"']
    assert not (tmp_path / "escaped").exists() and not (work / "results").exists()


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=30))
def test_any_sweep_name_is_confined_or_refused_in_one_line(tmp_path_factory, name):
    tmp_path = tmp_path_factory.mktemp("names")
    path = write(tmp_path, dict(GOOD, name=name))
    try:
        sweep = load_sweep(path)
    except SweepError as exc:
        message = str(exc)
        assert len(message.splitlines()) == 1 and message.isprintable()
        assert message.startswith(f'{path}: field "name": expected a plain file name')
    else:
        out = ROOT / "results" / "sweeps"
        assert (out / sweep.name).parent == out and sweep.name == name


# -- other fields, one line whatever they hold ---------------------------------------------------

def test_newline_in_a_parameter_path_stays_on_one_line(tmp_path, capsys):
    data = dict(GOOD, parameters={"links.L1\nerror: forged line.delay_ms": [1]})
    path = write(tmp_path, data)
    message = error_of(path)
    assert message.endswith('parameters: "links.L1\\nerror: forged line.delay_ms": no link '
                            '"L1\\nerror: forged line"')
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


@pytest.mark.parametrize("change, expected", [
    ({"description": ["x"]}, 'field "description": expected a string, got a list'),
    ({"duration_s": True}, 'field "duration_s": expected a positive number, got true'),
    ({"interval_s": -1}, 'field "interval_s": expected a positive number, got -1'),
    ({"combine": "crosss"}, 'field "combine": expected "cross" or "zip", got "crosss" '
                            '(did you mean "cross"?)'),
    ({"metrics": "jain_index"}, 'field "metrics": expected a list of metric names, got "jain_index"'),
    ({"metrics": ["flows.F1.goodput_mpbs"]}, 'field "metrics": "flows.F1.goodput_mpbs": unknown flow '
                                             'metric "goodput_mpbs" (did you mean "goodput_mbps"?)'),
    ({"plots": {"file": "a.png"}}, 'field "plots": expected a list of plot objects, got an object'),
    ({"topology": 3}, 'field "topology": expected a topology file or preset name, got 3'),
    ({"sweeep": 1}, 'unknown field "sweeep" (did you mean "seeds"?); known: name, '),
])
def test_settings_are_checked_with_one_line(tmp_path, change, expected):
    message = error_of(write(tmp_path, dict(GOOD, **change)))
    assert expected in message


def test_bad_sweep_exits_2_with_a_single_stderr_line(tmp_path):
    path = write(tmp_path, dict(GOOD, seeds=1e9))
    status, lines = cli(tmp_path, path)
    assert status == 2
    assert lines == [f'error: {path}: field "seeds": expected a count of seeds from 1 to {MAX_SEEDS}, '
                     f"got 1000000000.0 (or a list of seeds)"]


def test_a_path_that_cannot_vary_lists_every_kind_that_can(tmp_path):
    path = write(tmp_path, dict(GOOD, parameters={"hosts": ["H1"]}))
    assert error_of(path) == (
        f'{path}: parameters: "hosts": cannot vary "hosts"; vary links.<id>..., flows.<id>..., '
        f"workloads.<id>... or one of duration_s, units, duplex, packet_bytes, routing, "
        f"transport, algorithms")


@pytest.mark.parametrize("param, kind", [("flows.F1.id", "flow"), ("links.*.id", "link")])
def test_an_id_cannot_vary(tmp_path, param, kind):
    """Metrics, plots and the other parameters name entries by id: varying flows.F1.id ran, and
    flows.F1.goodput_mbps then had no value in every run, with only "KeyError: 'F1'" to say
    why (found by fuzzing)."""
    path = write(tmp_path, dict(GOOD, parameters={param: ["F1", "G1"]}))
    assert error_of(path) == (f'{path}: parameters: "{param}": cannot vary an id: the metrics, '
                              f"plots and parameters of a sweep name each {kind} by it")


def test_a_flow_metric_of_a_topology_without_flows_is_refused(tmp_path, root):
    topology = json.loads((root / "topologies" / "examples" / "websearch.json").read_text())
    (tmp_path / "ws.json").write_text(json.dumps(topology))
    path = write(tmp_path, {"name": "ws", "topology": "ws.json", "duration_s": 1,
                            "parameters": {"workloads.W.arrivals_per_s": [1, 2]},
                            "metrics": ["workloads.W.all.p99_slowdown", "jain_index"]})
    assert error_of(path) == (
        f'{path}: field "metrics": "jain_index": a metric of the topology\'s flows, and it has '
        f"none (a workload's flows are measured by workloads.<id>.<bucket>.<statistic>)")


def test_a_derived_metric_without_a_value_names_why():
    from netsim.sweep_metrics import MetricUnavailable, compute_metrics
    record = {"summary": {"flows": {"F1": {"goodput_mbps": 2.0, "avg_rtt_ms": None}}},
              "base_rtt_ms": {"F1": 10.0}}
    assert compute_metrics(record, ["jain_index", "total_goodput_mbps"]) == {
        "jain_index": 1.0, "total_goodput_mbps": 2.0}
    with pytest.raises(MetricUnavailable, match="^mean_rtt_ms: no flow of the run had an RTT "
                                                "sample$"):
        compute_metrics(record, ["mean_rtt_ms"])
    with pytest.raises(MetricUnavailable, match="^jain_index: the run has no flows"):
        compute_metrics({"summary": {"flows": {}}}, ["jain_index"])
    # every goodput 0 (runs stopped before any data arrived): 0/0, not "perfectly fair"
    idle = {"summary": {"flows": {f: {"goodput_mbps": 0.0, "avg_rtt_ms": None}
                                  for f in ("F1", "F2")}}}
    assert compute_metrics(idle, ["total_goodput_mbps"]) == {"total_goodput_mbps": 0.0}
    with pytest.raises(MetricUnavailable) as raised:
        compute_metrics(idle, ["jain_index"])
    assert str(raised.value) == ("jain_index: every flow's goodput is 0: Jain's index is 0/0 (1 "
                                 "would read as perfectly fair)")


def test_an_unreachable_scheduler_is_one_line_and_nothing_is_written(tmp_path, capsys,
                                                                     monkeypatch):
    pytest.importorskip("dask.distributed")
    import netsim.sweep_execute as execute
    monkeypatch.setattr(execute, "SCHEDULER_TIMEOUT_S", 1)
    path = write(tmp_path, GOOD)
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--scheduler", "tcp://127.0.0.1:9", "--out", str(out),
                 "--quiet"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: --scheduler: cannot connect to the Dask scheduler at "
                           "tcp://127.0.0.1:9: ")
    assert not out.exists()


def test_units_cannot_vary(tmp_path):
    """Runs in SI and binary units drew one axis labelled with the units of whichever run record
    sorted first (acceptance test Z17); one value, a fixed override, stays allowed."""
    path = write(tmp_path, dict(GOOD, parameters={"units": ["si", "binary"]}))
    assert error_of(path) == (f'{path}: parameters: "units": one value only (a fixed override): '
                              f"the metrics, axis labels and theory curves of a sweep are in one "
                              f"unit system; vary the rates and sizes instead, or make a sweep "
                              f"per unit system")
    load_sweep(write(tmp_path, dict(GOOD, parameters={"units": ["si"],
                                                      "links.L1.delay_ms": [5, 10]})))
