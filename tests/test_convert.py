"""`initializer.py convert`: the 2015 CS/EE 143 simulator's files (jsonpickle dumps, read as
plain data) in this project's format. The fixtures in tests/data/legacy/ are the three test
cases written in the 2015 format (/work/shared/legacy-2015-format.md) from the shipped files."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from netsim.convert import LegacyError, convert, convert_file
from netsim import load_topology, simulate
from topologies.spec import resolved_config

ROOT = Path(__file__).resolve().parent.parent
LEGACY = ROOT / "tests" / "data" / "legacy"


def comparable(spec) -> dict:
    config = resolved_config(spec, duration_s=spec.duration_s, seed=1, interval_s=0.1)
    return json.loads(json.dumps(config, default=repr))


@pytest.mark.parametrize("case", [0, 1, 2])
def test_the_three_test_cases_convert_to_the_shipped_topologies(case):
    converted = load_topology(convert_file(LEGACY / f"test_case_{case}.json"))
    shipped = load_topology(ROOT / "topologies" / f"test_case_{case}.json")
    mine, theirs = comparable(converted), comparable(shipped)
    for config in (mine, theirs):
        for key in ("name", "description"):
            config["topology"].pop(key, None)
    assert mine == theirs


@pytest.mark.parametrize("case", [0, 2])
def test_a_converted_file_simulates_identically(case, tmp_path):
    convert_file(LEGACY / f"test_case_{case}.json", tmp_path / "new.json")
    duration = 15.0 if case == 2 else None
    ours = simulate(load_topology(tmp_path / "new.json"), duration_s=duration).summary
    shipped = simulate(load_topology(ROOT / "topologies" / f"test_case_{case}.json"),
                       duration_s=duration).summary
    assert ours["events"] == shipped["events"]
    assert ours["end_time_s"] == shipped["end_time_s"]
    for fid, flow in shipped["flows"].items():
        assert ours["flows"][fid]["finish_s"] == flow["finish_s"]
        assert ours["flows"][fid]["packets_sent"] == flow["packets_sent"]


def test_the_command_writes_the_file(tmp_path, run_cli):
    done = run_cli("convert", LEGACY / "test_case_1.json", "-o", tmp_path / "tc1.json")
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "tc1.json").read_text())
    assert data["name"] == "tc1" and data["routing"]["protocol"] == "bellman-ford"
    assert run_cli(tmp_path / "tc1.json", "--duration", "1", "--no-plots", "--quiet",
                   "--out", tmp_path / "r").returncode == 0
    to_stdout = run_cli("convert", LEGACY / "test_case_0.json")
    assert to_stdout.returncode == 0 and json.loads(to_stdout.stdout)["links"][0]["rate_mbps"] == 10


def test_an_existing_file_is_replaced_only_with_force(tmp_path, run_cli):
    """As `generate -o`: a student's own topology is not overwritten by a typo in -o."""
    mine = tmp_path / "mine.json"
    mine.write_text('{"my": "own"}')
    done = run_cli("convert", LEGACY / "test_case_0.json", "-o", mine)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: -o {mine}: exists; pass --force to replace it"]
    assert mine.read_text() == '{"my": "own"}'
    done = run_cli("convert", LEGACY / "test_case_0.json", "-o", mine, "--force")
    assert done.returncode == 0 and json.loads(mine.read_text())["name"] == "mine"


def legacy(case=0) -> dict:
    return json.loads((LEGACY / f"test_case_{case}.json").read_text())


def mutated(change) -> dict:
    data = legacy()
    change(data)
    return data


@pytest.mark.parametrize("data, expected", [
    (mutated(lambda d: d["flows"][0].update({"py/reduce": [{"py/function": "os.system"}, ["x"]]})),
     '"py/reduce" is a jsonpickle tag'),
    (mutated(lambda d: d["links"][0].update(end_1_device={"py/id": 1})), '"py/id" is an object reference'),
    (mutated(lambda d: d.update({"py/object": "network_simulator.host.Host"})), "NetworkTopology"),
    (mutated(lambda d: d["links"][0].update(capacity_bps=-1)), 'links[0]: field "capacity_bps"'),
    (mutated(lambda d: d["links"][0].pop("link_buffer")), 'links[0]: missing field "link_buffer"'),
    (mutated(lambda d: d["flows"][0].update({"py/object": "network_simulator.flow.FlowDummy"})),
     "FlowDummy"),
    (mutated(lambda d: d["flows"][0].update(dest_addr="H9")),
     'converted topology is not valid: '),
    (mutated(lambda d: d["flows"][0].update(dest_addr="H9")),   # the 2015 file's field beside
     'flows[0] "F1": field "dst" (dest_addr in the 2015 file): unknown node "H9"'),   # netsim's
    ([1, 2], "NetworkTopology"),
])
def test_bad_legacy_files_are_one_line(tmp_path, run_cli, data, expected):
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    done = run_cli("convert", path, "-o", tmp_path / "new.json")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "old.json" in lines[0] and expected in lines[0], done.stderr
    assert not (tmp_path / "new.json").exists()


def test_unreadable_and_broken_json(tmp_path, run_cli):
    (tmp_path / "broken.json").write_text('{"hosts": [')
    for path in (tmp_path / "missing.json", tmp_path / "broken.json"):
        done = run_cli("convert", path)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1


def test_fast_parameters_per_flow_and_reno_ssthresh():
    data = legacy(2)
    data["flows"][1]["alpha"] = 30.0
    data["flows"][2].update({"py/object": "network_simulator.flow.FlowReno", "ss_thresh": 64})
    topology = convert(data)
    assert "algorithms" not in topology
    assert topology["flows"][1]["params"] == {"alpha": 30, "gamma": 0.5}
    assert topology["flows"][2]["algorithm"] == "reno"
    assert topology["flows"][2]["transport"] == {"initial_ssthresh_pkts": 64}
    load_topology(topology)
    with pytest.raises(LegacyError):
        convert({"py/object": "x.NetworkTopology"})


def test_a_file_already_in_netsims_format_is_said_to_be_so(tmp_path, run_cli, root):
    done = run_cli("convert", root / "topologies" / "test_case_0.json", "-o", tmp_path / "n.json")
    assert done.returncode == 2
    assert done.stderr == (f"error: {root / 'topologies' / 'test_case_0.json'}: already a netsim "
                           f'topology (no jsonpickle "py/object"): nothing to convert; run it as '
                           f"it is\n")
    assert not (tmp_path / "n.json").exists()


@pytest.mark.parametrize("data", [
    {"name": "t", "hosts": ["H1", "H2"], "flows": []},          # incomplete: still netsim's
    {"routers": ["R1"]},
    {"hosts": [], "workloads": []},
])
def test_any_netsim_topology_is_recognised_not_only_a_complete_one(data):
    with pytest.raises(LegacyError, match=r'^f\.json: already a netsim topology \(no jsonpickle '
                                          r'"py/object"\): nothing to convert; run it as it is$'):
        convert(data, label="f.json")


def test_a_sweep_file_is_said_to_be_one(tmp_path, run_cli):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"topology": "lossy_link", "parameters": {"seed": [1]},
                                "metrics": ["flows.F1.goodput_mbps"]}))
    done = run_cli("convert", path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f'error: {path}: a netsim sweep file (no jsonpickle "py/object"): '
                           f"nothing to convert; run it with the sweep command (docs/sweeps.md)\n")


def test_a_file_of_neither_kind_keeps_the_2015_formats_message():
    with pytest.raises(LegacyError, match=r'^f\.json: top level: expected a '
                                          r'network_topology\.NetworkTopology object'):
        convert({"foo": 1}, label="f.json")


def test_numbers_convert_exactly():
    """12 significant digits where they are the number, else all its digits: 1e7 bit/s read
    9.53674316406 Mbps, another rate (acceptance test Z16)."""
    from netsim.convert import _number
    assert _number(1e7 / 2 ** 20) == 1e7 / 2 ** 20 and repr(_number(1e7 / 2 ** 20)) == \
        "9.5367431640625"
    assert _number(0.1) == 0.1 and _number(10.0) == 10 and isinstance(_number(10.0), int)
    assert _number(0.1 + 0.2) == 0.1 + 0.2


def test_a_2015_file_run_directly_is_pointed_to_convert(tmp_path, run_cli, root):
    source = root / "tests" / "data" / "legacy" / "test_case_0.json"
    path = tmp_path / "tc0_2015.json"
    path.write_bytes(source.read_bytes())
    done = run_cli(path, "--no-plots", "--out", tmp_path / "o")
    assert (done.returncode, done.stderr) == (2, (
        f"error: {path}: top level: jsonpickle tag \"py/object\" is not allowed; topology "
        f"files are plain JSON data (a 2015 topology: convert it with python initializer.py "
        f"convert {path} -o NEW.json)\n"))
