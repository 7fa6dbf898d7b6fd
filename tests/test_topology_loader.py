"""Tests of topologies.loader: format, unit conversion, merging rules, and one-line error messages."""
from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows import ALGORITHMS
from flows.congestion import CongestionControl
from topologies.loader import TopologyError, TRANSPORT_RULES, load_topology
from topologies.spec import (BINARY, DEFAULT_ALGORITHM, DEFAULT_SEED, DEFAULT_SETTLE_S,
                             DEFAULT_UPDATE_INTERVAL_S, NO_IMPAIRMENT, SI, TRANSPORT_FIELDS,
                             GilbertElliottSpec, ImpairmentSpec, LinkEventSpec, PacketSizes,
                             RoutingSpec, TransportSpec)

TOPOLOGIES = Path(__file__).resolve().parent.parent / "topologies"
KNOWN_ALGORITHMS = (", ".join(sorted(ALGORITHMS))
                    + "; an algorithm of your own is loaded with --plugin FILE.py")


def base() -> dict:
    """A small valid topology: H1 - R1 - H2 plus H3 - R1, one flow H1 -> H2."""
    return {
        "hosts": ["H1", "H2", "H3"],
        "routers": ["R1"],
        "links": [
            {"id": "L1", "ends": ["H1", "R1"], "rate_mbps": 10, "delay_ms": 10, "buffer_kb": 64},
            {"id": "L2", "ends": ["R1", "H2"], "rate_mbps": 5, "delay_ms": 2.5, "buffer_kb": 32},
            {"id": "L3", "ends": ["H3", "R1"], "rate_mbps": 1, "delay_ms": 0, "buffer_kb": 0},
        ],
        "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 1}],
    }


def write(tmp_path: Path, data, name: str = "x.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def error_of(tmp_path: Path, data, **kwargs) -> str:
    path = write(tmp_path, data)
    with pytest.raises(TopologyError) as info:
        load_topology(path, **kwargs)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    return message


class Tunable(CongestionControl):
    """A test-only algorithm with parameters, to exercise parameter merging and validation."""

    name = "tunable"
    PARAMETERS = {"alpha": 1.0, "beta": 0.5, "gamma": 3.0}


@pytest.fixture
def tunable(monkeypatch):
    monkeypatch.setitem(ALGORITHMS, "tunable", Tunable)
    return Tunable


# -- unit conversion and defaults ------------------------------------------------------------------

def test_si_units_are_the_default():
    spec = load_topology(base())
    assert spec.units == SI
    l1, l2, l3 = spec.links
    assert l1.rate_bps == 10 * 10**6 and l2.rate_bps == 5 * 10**6
    assert l1.delay_s == pytest.approx(0.010) and l2.delay_s == pytest.approx(0.0025)
    assert l1.buffer_bytes == 64_000 and l2.buffer_bytes == 32_000 and l3.buffer_bytes == 0
    assert spec.flows[0].data_bytes == 10**6


def test_binary_units():
    data = base()
    data["units"] = "binary"
    data["links"][0]["buffer_kb"] = 1.5
    data["flows"][0]["data_mb"] = 2.5
    spec = load_topology(data)
    assert spec.units == BINARY
    assert spec.link("L1").rate_bps == 10 * 2**20
    assert spec.link("L1").buffer_bytes == 1536
    assert spec.link("L2").buffer_bytes == 32 * 1024
    assert spec.flow("F1").data_bytes == int(2.5 * 2**20)


def test_defaults():
    spec = load_topology(base())
    assert spec.name == "topology" and spec.description == "" and spec.source == "<dict>"
    assert spec.packet_sizes == PacketSizes(1024, 64, 64)
    assert spec.routing == RoutingSpec("static", DEFAULT_UPDATE_INTERVAL_S, DEFAULT_SETTLE_S)
    assert (DEFAULT_UPDATE_INTERVAL_S, DEFAULT_SETTLE_S) == (5.0, 0.15)
    assert all(link.cost_s is None for link in spec.links)
    assert spec.events == []
    assert all(link.impairments == (NO_IMPAIRMENT, NO_IMPAIRMENT) for link in spec.links)
    assert spec.duration_s is None and spec.seed == DEFAULT_SEED
    assert spec.hosts == ["H1", "H2", "H3"] and spec.routers == ["R1"]
    assert all(link.duplex == "full" for link in spec.links)
    flow = spec.flows[0]
    assert flow.start_s == 0.0 and flow.algorithm == DEFAULT_ALGORITHM
    assert flow.transport == TransportSpec() and flow.params == {}
    assert spec.algorithms == {}


def test_name_defaults_to_file_stem_and_source_is_the_path(tmp_path):
    path = write(tmp_path, base(), "my_net.json")
    spec = load_topology(str(path))
    assert spec.name == "my_net" and spec.source == str(path)


def test_explicit_top_level_values():
    data = base() | {"name": "n", "description": "d", "duration_s": 12, "seed": 7,
                     "packet_bytes": {"data": 1500, "routing": 100}, "routing": {"protocol": "static"}}
    spec = load_topology(data)
    assert (spec.name, spec.description, spec.duration_s, spec.seed) == ("n", "d", 12.0, 7)
    assert spec.packet_sizes == PacketSizes(data_bytes=1500, ack_bytes=64, routing_bytes=100)


def test_flow_without_data_runs_forever_and_duration_is_not_required():
    data = base()
    del data["flows"][0]["data_mb"]
    data["flows"].append({"id": "F2", "src": "H2", "dst": "H1", "data_mb": None, "start_s": 3})
    spec = load_topology(data)
    assert spec.flow("F1").data_bytes is None and spec.flow("F2").data_bytes is None
    assert spec.flow("F2").start_s == 3.0 and spec.duration_s is None


def test_tiny_data_is_at_least_one_byte():
    data = base()
    data["flows"][0]["data_mb"] = 1e-9
    assert load_topology(data).flows[0].data_bytes == 1


def test_per_link_duplex_overrides_the_topology_default():
    data = base() | {"duplex": "half"}
    data["links"][1]["duplex"] = "full"
    spec = load_topology(data)
    assert [link.duplex for link in spec.links] == ["half", "full", "half"]
    data = base()
    data["links"][2]["duplex"] = "half"
    assert [link.duplex for link in load_topology(data).links] == ["full", "full", "half"]


def test_parallel_links_and_host_to_host_links_are_allowed():
    data = {"hosts": ["A", "B"], "routers": ["R1", "R2"],
            "links": [{"id": "a", "ends": ["A", "R1"], "rate_mbps": 1, "delay_ms": 1, "buffer_kb": 1},
                      {"id": "p1", "ends": ["R1", "R2"], "rate_mbps": 1, "delay_ms": 1, "buffer_kb": 1},
                      {"id": "p2", "ends": ["R2", "R1"], "rate_mbps": 2, "delay_ms": 1, "buffer_kb": 1},
                      {"id": "b", "ends": ["R2", "B"], "rate_mbps": 1, "delay_ms": 1, "buffer_kb": 1}],
            "flows": [{"id": "F", "src": "A", "dst": "B"}]}
    assert [link.ends for link in load_topology(data).links][1:3] == [("R1", "R2"), ("R2", "R1")]


# -- transport and params merging -----------------------------------------------------------------

def test_transport_merging_order():
    data = base() | {"transport": {"initial_cwnd_pkts": 2, "min_rto_s": 0.2, "dupack_threshold": 4}}
    data["flows"].append({"id": "F2", "src": "H3", "dst": "H2",
                          "transport": {"initial_cwnd_pkts": 10, "initial_ssthresh_pkts": 64}})
    spec = load_topology(data)
    assert spec.flow("F1").transport == TransportSpec(initial_cwnd_pkts=2.0, min_rto_s=0.2,
                                                       dupack_threshold=4)
    assert spec.flow("F2").transport == TransportSpec(initial_cwnd_pkts=10.0, initial_ssthresh_pkts=64.0,
                                                       min_rto_s=0.2, dupack_threshold=4)


def test_transport_rules_cover_every_transport_field():
    assert set(TRANSPORT_RULES) == set(TRANSPORT_FIELDS)


def test_params_merging_order(tunable):
    data = base() | {"algorithms": {"tunable": {"alpha": 2.0, "beta": 0.7}}}
    data["flows"][0] |= {"algorithm": "tunable", "params": {"beta": 0.9}}
    data["flows"].append({"id": "F2", "src": "H3", "dst": "H2", "algorithm": "tunable"})
    spec = load_topology(data)
    assert spec.flow("F1").params == {"alpha": 2.0, "beta": 0.9, "gamma": 3.0}
    assert spec.flow("F2").params == {"alpha": 2.0, "beta": 0.7, "gamma": 3.0}
    assert spec.algorithms == {"tunable": {"alpha": 2.0, "beta": 0.7}}
    assert Tunable.PARAMETERS == {"alpha": 1.0, "beta": 0.5, "gamma": 3.0}   # not mutated


# -- the --algorithm override ----------------------------------------------------------------------

def test_algorithm_override_switches_every_flow():
    data = base()
    data["flows"][0]["algorithm"] = "tahoe"
    data["flows"].append({"id": "F2", "src": "H3", "dst": "H2"})
    spec = load_topology(data, algorithm="tahoe")
    assert [flow.algorithm for flow in spec.flows] == ["tahoe", "tahoe"]
    assert [flow.algorithm for flow in load_topology(data).flows] == ["tahoe", "reno"]


def test_algorithm_override_params_rules(tunable):
    data = base() | {"algorithms": {"tunable": {"alpha": 2.0}}}
    data["flows"][0] |= {"algorithm": "tunable", "params": {"beta": 0.9}}
    data["flows"].append({"id": "F2", "src": "H3", "dst": "H2", "algorithm": "reno"})
    spec = load_topology(data, algorithm="tunable")
    # F1 already used tunable: keeps its own params on top of the file's block.
    assert spec.flow("F1").params == {"alpha": 2.0, "beta": 0.9, "gamma": 3.0}
    # F2 switches: the file's algorithms["tunable"] block over tunable's defaults.
    assert spec.flow("F2").algorithm == "tunable"
    assert spec.flow("F2").params == {"alpha": 2.0, "beta": 0.5, "gamma": 3.0}
    # Without a file block: the defaults.
    del data["algorithms"]
    assert load_topology(data, algorithm="tunable").flow("F2").params == Tunable.PARAMETERS
    # Switching away drops a flow's params of its old algorithm.
    assert load_topology(data, algorithm="reno").flow("F1").params == {}


def test_algorithm_override_unknown_name(tmp_path):
    """Named as the caller gave it: `algorithm=` here (the command line says --algorithm)."""
    with pytest.raises(TopologyError) as info:
        load_topology(write(tmp_path, base()), algorithm="rneo")
    assert str(info.value) == ('algorithm: unknown algorithm "rneo" (did you mean "reno"?); '
                               'known: ' + KNOWN_ALGORITHMS)


# -- shipped topologies ----------------------------------------------------------------------------

def shipped(n: int):
    return load_topology(TOPOLOGIES / f"test_case_{n}.json")


@pytest.mark.parametrize("n", [0, 1, 2])
def test_shipped_common_settings(n):
    spec = shipped(n)
    assert spec.name == f"test_case_{n}" and f"test case {n}" in spec.description
    assert spec.units == BINARY and spec.seed == 1 and spec.duration_s is None
    assert spec.packet_sizes.data_bytes == 1024 and spec.packet_sizes.ack_bytes == 64
    protocol = "static" if n == 0 else "bellman-ford"       # issue 3: TC1 and TC2 route dynamically
    assert spec.routing == RoutingSpec(protocol=protocol)
    assert spec.events == [] and all(link.cost_s is None for link in spec.links)
    assert all(link.duplex == "half" and link.delay_s == pytest.approx(0.01) for link in spec.links)
    alpha = {0: 50, 1: 30, 2: 50}[n]                        # the CS/EE 143 FAST parameters
    assert all(flow.algorithm == "fast" for flow in spec.flows)
    assert all(flow.params == {"alpha": alpha, "gamma": 0.5, "update_interval_s": 0.05,
                               "rtt_samples": 40} for flow in spec.flows)


def test_shipped_test_case_0():
    spec = shipped(0)
    assert spec.hosts == ["H1", "H2"] and spec.routers == []
    (link,) = spec.links
    assert link.ends == ("H1", "H2") and link.rate_bps == 10 * 2**20 and link.buffer_bytes == 64 * 1024
    (flow,) = spec.flows
    assert (flow.src, flow.dst, flow.data_bytes, flow.start_s) == ("H1", "H2", 20 * 2**20, 1.0)


def test_shipped_test_case_1():
    spec = shipped(1)
    assert spec.routers == ["R1", "R2", "R3", "R4"]
    ends = {link.id: link.ends for link in spec.links}
    assert ends == {"L0": ("H1", "R1"), "L1": ("R1", "R2"), "L2": ("R1", "R3"),
                    "L3": ("R2", "R4"), "L4": ("R3", "R4"), "L5": ("R4", "H2")}
    assert spec.link("L0").rate_bps == spec.link("L5").rate_bps == 12.5 * 2**20
    assert all(spec.link(f"L{i}").rate_bps == 10 * 2**20 for i in range(1, 5))
    assert all(link.buffer_bytes == 64 * 1024 for link in spec.links)
    flow = spec.flow("F1")
    assert (flow.src, flow.dst, flow.data_bytes, flow.start_s) == ("H1", "H2", 20 * 2**20, 0.5)


def test_shipped_test_case_2():
    spec = shipped(2)
    assert spec.hosts == ["S1", "S2", "S3", "T1", "T2", "T3"]
    assert spec.link("L1").rate_bps == 10 * 2**20
    assert spec.link("L1").buffer_bytes == 128 * 1024
    assert spec.link("LT2").ends == ("T2", "R2") and spec.link("LT2").rate_bps == 12.5 * 2**20
    assert all(link.buffer_bytes == 128 * 1024 for link in spec.links)
    got = [(f.id, f.src, f.dst, f.data_bytes, f.start_s) for f in spec.flows]
    assert got == [("F1", "S1", "T1", 35 * 2**20, 0.5), ("F2", "S2", "T2", 15 * 2**20, 10.0),
                   ("F3", "S3", "T3", 30 * 2**20, 20.0)]


# -- reading errors --------------------------------------------------------------------------------

def test_missing_file(tmp_path):
    path = tmp_path / "nope.json"
    with pytest.raises(TopologyError, match=r"nope\.json: cannot read file: No such file or directory"):
        load_topology(path)


def test_invalid_json(tmp_path):
    message = error_of(tmp_path, '{\n  "hosts": ["H1"]\n  "links": []\n}')
    assert "not valid JSON: Expecting ',' delimiter at line 3, column 3" in message


@pytest.mark.parametrize("text, expected", [
    ('{\n  // my topology\n  "hosts": ["A"]\n}', "Expecting property name enclosed in double "
     "quotes at line 2, column 3; JSON has no comments"),
    ('{\n  "hosts": ["A", "B",],\n  "links": []\n}', "Expecting value at line 2, column 22; a "
     "trailing comma (JSON allows none before ] or })"),
    ('{\n  "hosts": ["A"],\n}', "Expecting property name enclosed in double quotes at line 3, "
     "column 1; a trailing comma (JSON allows none before ] or })"),
    ('{"name": "abc', "Unterminated string starting at line 1, column 10"),    # (not "at at")
])
def test_a_hand_written_files_json_mistakes_are_named(tmp_path, text, expected):
    assert error_of(tmp_path, text).endswith(f"x.json: not valid JSON: {expected}")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_rejected_at_parse_time(tmp_path, literal):
    data = json.dumps(base()).replace('"rate_mbps": 10', f'"rate_mbps": {literal}')
    message = error_of(tmp_path, data)
    assert "not valid JSON" in message and literal.lstrip("-") in message


def test_top_level_must_be_an_object(tmp_path):
    message = error_of(tmp_path, "[1, 2]")
    assert message.endswith("top level: expected a JSON object, got a list")


def test_duplicate_json_keys(tmp_path):
    text = json.dumps(base()).replace('"rate_mbps": 10,', '"rate_mbps": 10, "rate_mbps": 20,')
    message = error_of(tmp_path, text)
    assert message.endswith('links[0]: duplicate field "rate_mbps"')


def test_dict_source_must_be_plain_data():
    data = base()
    data["links"][0]["ends"] = {"H1", "R1"}
    with pytest.raises(TopologyError, match=r'^<dict>: links\[0\]\.ends: expected plain JSON data'):
        load_topology(data)


# -- jsonpickle tags -------------------------------------------------------------------------------

def test_jsonpickle_object_tag_is_rejected(tmp_path):
    data = base()
    data["links"][0]["py/object"] = "topologies.spec.LinkSpec"
    message = error_of(tmp_path, data)
    assert message.endswith('links[0]: jsonpickle tag "py/object" is not allowed; '
                            'topology files are plain JSON data')


def test_jsonpickle_tag_nested_anywhere_is_rejected(tmp_path):
    data = base()
    data["flows"][0]["params"] = {"x": [1, {"py/set": [1]}]}
    assert error_of(tmp_path, data).endswith('flows[0].params.x[1]: jsonpickle tag "py/set" is not '
                                             'allowed; topology files are plain JSON data')
    assert "top level: jsonpickle tag" in error_of(tmp_path, {"py/type": "os.system"})


def test_jsonpickle_reduce_payload_never_runs(tmp_path):
    marker = tmp_path / "pwned"
    payload = {"py/reduce": [{"py/function": "os.system"}, {"py/tuple": [f"touch {marker}"]}]}
    data = base()
    data["links"][0]["rate_mbps"] = payload
    data["description"] = payload
    message = error_of(tmp_path, data)
    assert 'jsonpickle tag "py/reduce" is not allowed' in message
    assert not marker.exists()


# -- field errors ----------------------------------------------------------------------------------

def test_negative_rate(tmp_path):
    data = base()
    data["links"][1]["rate_mbps"] = -5
    message = error_of(tmp_path, data)
    assert message.endswith('links[1] "L2": field "rate_mbps": expected a positive number, got -5')


def test_unknown_field_with_suggestion(tmp_path):
    data = base()
    data["links"][0]["rate_mpbs"] = data["links"][0].pop("rate_mbps")
    message = error_of(tmp_path, data)
    assert message.endswith('links[0] "L1": unknown field "rate_mpbs" (did you mean "rate_mbps"?); '
                            'known: buffer_kb, cost, cost_ms, delay_ms, delay_schedule, duplex, duplicate_rate, ends, id, '
                            'impairments, jitter_mode, jitter_ms, jitter_reorder, loss_model, loss_rate, queue, rate_mbps, '
                            'rate_schedule, '
                            'reorder_delay_ms, reorder_rate')


def test_unknown_top_level_field(tmp_path):
    data = base()
    data["flow"] = data.pop("flows")
    assert 'top level: unknown field "flow" (did you mean "flows"?)' in error_of(tmp_path, data)


def test_missing_field(tmp_path):
    data = base()
    del data["links"][0]["delay_ms"]
    assert error_of(tmp_path, data).endswith('links[0] "L1": missing field "delay_ms"')
    data = base()
    del data["links"]
    assert error_of(tmp_path, data).endswith('top level: missing field "links"')


def test_wrong_type(tmp_path):
    data = base()
    data["links"][0]["delay_ms"] = "ten"
    assert error_of(tmp_path, data).endswith('links[0] "L1": field "delay_ms": expected a number, got "ten"')


@pytest.mark.parametrize("field, value, expected", [
    ("rate_mbps", True, "expected a number, got true"),
    ("rate_mbps", 0, "expected a positive number, got 0"),
    ("delay_ms", -1, "expected a number >= 0, got -1"),
    ("buffer_kb", None, "expected a number, got null"),
    ("duplex", "hafl", 'expected "full" or "half", got "hafl" (did you mean "half"?)'),
    ("ends", ["H1"], 'expected a list of two node ids, got a list of 1'),
    ("ends", ["R1", "R1"], 'expected two different nodes, got "R1" twice'),
])
def test_bad_link_fields(tmp_path, field, value, expected):
    data = base()
    data["links"][0][field] = value
    assert error_of(tmp_path, data).endswith(f'links[0] "L1": field "{field}": {expected}')


def test_link_to_unknown_node(tmp_path):
    data = base()
    data["links"][1]["ends"] = ["R1", "H9"]
    message = error_of(tmp_path, data)
    assert 'links[1] "L2": field "ends": unknown node "H9"' in message and "did you mean" in message


def test_duplicate_ids(tmp_path):
    data = base()
    data["links"][2]["id"] = "L1"
    assert error_of(tmp_path, data).endswith('links[2]: duplicate link id "L1" (already used by links[0])')
    data = base()
    data["flows"].append({"id": "F1", "src": "H3", "dst": "H2"})
    assert error_of(tmp_path, data).endswith('flows[1]: duplicate flow id "F1" (already used by flows[0])')
    data = base()
    data["routers"].append("H2")
    assert error_of(tmp_path, data).endswith('routers[1]: duplicate node id "H2" (already a host)')


def test_bad_ids(tmp_path):
    data = base()
    data["hosts"][1] = ""
    assert error_of(tmp_path, data).endswith('hosts[1]: expected a non-empty string node id, got ""')
    data = base()
    data["links"][0]["id"] = 5
    assert error_of(tmp_path, data).endswith('links[0]: field "id": expected a non-empty string, got 5')


def test_host_with_two_links(tmp_path):
    data = base()
    data["links"].append({"id": "L4", "ends": ["R1", "H1"], "rate_mbps": 1, "delay_ms": 1, "buffer_kb": 1})
    message = error_of(tmp_path, data)
    assert message.endswith('hosts: host "H1" has 2 links (L1, L4); a host has exactly one link')


def test_host_without_link(tmp_path):
    data = base()
    data["hosts"].append("H4")
    assert error_of(tmp_path, data).endswith('hosts: host "H4" has no link; a host has exactly one link')


def test_flow_to_unknown_node(tmp_path):
    data = base()
    data["flows"][0]["dst"] = "H9"
    message = error_of(tmp_path, data)
    assert message.endswith('flows[0] "F1": field "dst": unknown node "H9" (did you mean "H1"?)')


def test_flow_from_router(tmp_path):
    data = base()
    data["flows"][0]["src"] = "R1"
    assert error_of(tmp_path, data).endswith(
        'flows[0] "F1": field "src": "R1" is a router; flows run between hosts')


def test_flow_to_itself(tmp_path):
    data = base()
    data["flows"][0]["dst"] = "H1"
    assert 'flows[0] "F1": field "dst": expected a host other than src, got "H1"' in error_of(tmp_path, data)


def test_unconnected_hosts(tmp_path):
    data = base()
    data["routers"].append("R2")
    data["links"][1]["ends"] = ["R2", "H2"]
    assert error_of(tmp_path, data).endswith('flows[0] "F1": hosts "H1" and "H2" are not connected')


def test_connectivity_host_to_host_link_and_separate_islands():
    # A direct host-to-host link connects its two hosts; separate islands are not connected.
    data = {"hosts": ["H1", "H2"], "routers": [],
            "links": [{"id": "L", "ends": ["H1", "H2"], "rate_mbps": 1, "delay_ms": 1, "buffer_kb": 1}],
            "flows": [{"id": "F", "src": "H1", "dst": "H2"}]}
    assert load_topology(data).flows[0].dst == "H2"
    data = {"hosts": ["A", "B", "C"], "routers": ["R"],
            "links": [{"id": "a", "ends": ["A", "R"], "rate_mbps": 1, "delay_ms": 1, "buffer_kb": 1},
                      {"id": "b", "ends": ["B", "C"], "rate_mbps": 1, "delay_ms": 1, "buffer_kb": 1},
                      {"id": "c", "ends": ["R", "R2"], "rate_mbps": 1, "delay_ms": 1, "buffer_kb": 1}],
            "flows": [{"id": "F", "src": "A", "dst": "C"}]}
    data["routers"].append("R2")   # R - R2 is a router island: A reaches R2 but never C
    with pytest.raises(TopologyError, match='hosts "A" and "C" are not connected'):
        load_topology(data)


@pytest.mark.parametrize("field, value, expected", [
    ("data_mb", 0, "expected a positive number or null, got 0"),
    ("data_mb", "1", 'expected a number or null, got "1"'),
    ("start_s", -0.5, "expected a number >= 0, got -0.5"),
    ("algorithm", "rneo", 'unknown algorithm "rneo" (did you mean "reno"?); known: ' + KNOWN_ALGORITHMS),
    ("params", [], "expected an object of parameters, got a list"),
])
def test_bad_flow_fields(tmp_path, field, value, expected):
    data = base()
    data["flows"][0][field] = value
    assert error_of(tmp_path, data).endswith(f'flows[0] "F1": field "{field}": {expected}')


def test_unknown_parameter_of_algorithm_without_parameters(tmp_path):
    data = base()
    data["flows"][0]["params"] = {"beta": 0.5}
    assert error_of(tmp_path, data).endswith(
        'flows[0] "F1": field "params": unknown parameter "beta": algorithm "reno" has no parameters')
    data = base() | {"algorithms": {"tahoe": {"beta": 0.5}}}
    assert error_of(tmp_path, data).endswith(
        'algorithms: field "tahoe": unknown parameter "beta": algorithm "tahoe" has no parameters')


def test_parameter_errors_of_algorithm_with_parameters(tmp_path, tunable):
    data = base() | {"algorithms": {"tunable": {"bta": 0.5}}}
    assert error_of(tmp_path, data).endswith(
        'algorithms: field "tunable": unknown parameter "bta" of algorithm "tunable" '
        '(did you mean "beta"?); known: alpha, beta, gamma')
    data = base()
    data["flows"][0] |= {"algorithm": "tunable", "params": {"alpha": -1}}
    assert error_of(tmp_path, data).endswith(
        'flows[0] "F1": field "params.alpha": expected a positive number, got -1')


def test_unknown_algorithm_in_algorithms_block(tmp_path):
    data = base() | {"algorithms": {"tahoo": {}}}
    assert error_of(tmp_path, data).endswith(
        'algorithms: unknown algorithm "tahoo" (did you mean "tahoe"?); known: ' + KNOWN_ALGORITHMS)


@pytest.mark.parametrize("block, expected", [
    ({"initial_cwnd_pkts": 0}, 'field "initial_cwnd_pkts": expected a positive number, got 0'),
    ({"initial_ssthresh_pkts": "big"}, 'field "initial_ssthresh_pkts": expected a number or null, got "big"'),
    ({"dupack_threshold": 2.5}, 'field "dupack_threshold": expected an integer, got 2.5'),
    ({"dupack_threshold": 0}, 'field "dupack_threshold": expected a positive integer, got 0'),
    ({"max_rto_s": 0.5}, 'field "max_rto_s": expected a number >= min_rto_s (1.0), got 0.5'),
    ({"min_rto_s": 100}, 'field "min_rto_s": expected a number <= max_rto_s (60.0), got 100'),
    ({"min_rto": 1}, 'unknown field "min_rto" (did you mean "min_rto_s"?)'),
])
def test_bad_transport(tmp_path, block, expected):
    assert f"x.json: transport: {expected}" in error_of(tmp_path, base() | {"transport": block})
    data = base()
    data["flows"][0]["transport"] = block
    if expected.startswith("unknown"):
        expected = f'field "transport": {expected}'
    else:
        expected = expected.replace('field "', 'field "transport.', 1)
    assert f'flows[0] "F1": {expected}' in error_of(tmp_path, data)


def test_flow_transport_checked_against_the_merged_values(tmp_path):
    data = base() | {"transport": {"max_rto_s": 10}}
    data["flows"][0]["transport"] = {"min_rto_s": 20}
    assert error_of(tmp_path, data).endswith(
        'flows[0] "F1": field "transport.min_rto_s": expected a number <= max_rto_s (10.0), got 20')


@pytest.mark.parametrize("field, value, expected", [
    ("units", "metric", 'field "units": expected "si" or "binary", got "metric"'),
    ("duplex", "ful", 'field "duplex": expected "full" or "half", got "ful" (did you mean "full"?)'),
    ("seed", True, 'field "seed": expected an integer, got true'),
    ("seed", -1, 'field "seed": expected an integer >= 0, got -1'),
    ("duration_s", 0, 'field "duration_s": expected a positive number or null, got 0'),
    ("name", 3, 'field "name": expected a non-empty string, got 3'),
    ("transport", [], 'field "transport": expected an object, got a list'),
    ("hosts", "H1", 'field "hosts": expected a list of node ids, got "H1"'),
])
def test_bad_top_level_fields(tmp_path, field, value, expected):
    assert error_of(tmp_path, base() | {field: value}).endswith(f"top level: {expected}")


@pytest.mark.parametrize("block, expected", [
    ({"packet_bytes": {"data": 0}}, 'packet_bytes: field "data": expected a positive integer, got 0'),
    ({"packet_bytes": {"dta": 1}}, 'packet_bytes: unknown field "dta" (did you mean "data"?)'),
    ({"routing": {"protocol": "rip"}},
     'routing: field "protocol": expected "static" or "bellman-ford", got "rip"'),
    ({"routing": {"protocol": "bellmanford"}},
     'routing: field "protocol": expected "static" or "bellman-ford", got "bellmanford" '
     '(did you mean "bellman-ford"?)'),
    ({"routing": {"protocl": "static"}}, 'routing: unknown field "protocl" (did you mean "protocol"?)'),
])
def test_bad_blocks(tmp_path, block, expected):
    assert f"x.json: {expected}" in error_of(tmp_path, base() | block)


# -- routing block ---------------------------------------------------------------------------------

def test_routing_bellman_ford_with_timers():
    data = base() | {"routing": {"protocol": "bellman-ford", "update_interval_s": 2, "settle_s": 0.5}}
    assert load_topology(data).routing == RoutingSpec("bellman-ford", 2.0, 0.5)
    data = base() | {"routing": {"protocol": "bellman-ford"}}
    assert load_topology(data).routing == RoutingSpec("bellman-ford", 5.0, 0.15)


def test_routing_timers_are_accepted_with_static_routing():
    data = base() | {"routing": {"update_interval_s": 1, "settle_s": 0}}
    assert load_topology(data).routing == RoutingSpec("static", 1.0, 0.0)
    data = base() | {"routing": {"settle_s": 4.5}}
    assert load_topology(data).routing == RoutingSpec("static", 5.0, 4.5)


@pytest.mark.parametrize("block, expected", [
    ({"update_interval_s": 0}, 'field "update_interval_s": expected a positive number, got 0'),
    ({"update_interval_s": "5"}, 'field "update_interval_s": expected a number, got "5"'),
    ({"update_interval_s": None}, 'field "update_interval_s": expected a number, got null'),
    ({"settle_s": -0.1}, 'field "settle_s": expected a number >= 0, got -0.1'),
    ({"settle_s": True}, 'field "settle_s": expected a number, got true'),
    ({"settle_s": 5}, 'field "settle_s": expected a number < update_interval_s (5.0), got 5'),
    ({"update_interval_s": 1, "settle_s": 2},
     'field "settle_s": expected a number < update_interval_s (1.0), got 2'),
    ({"update_interval_s": 0.1}, 'field "update_interval_s": expected a number > settle_s (0.15), got 0.1'),
    ({"update_interval_s": 0.15}, 'field "update_interval_s": expected a number > settle_s (0.15), got 0.15'),
    ({"protocol": "bellman-ford", "update_interval_s": 1e-9, "settle_s": 0},
     'field "update_interval_s": expected at least 0.001 s between Bellman-Ford rounds (each '
     'router sends its vector to every neighbour each round), got 1e-09'),
    ({"protocol": "bellman-ford", "update_intervall_s": 1},
     'unknown field "update_intervall_s" (did you mean "update_interval_s"?); '
     'known: ecmp, protocol, settle_s, update_interval_s'),
])
def test_bad_routing_timers(tmp_path, block, expected):
    assert error_of(tmp_path, base() | {"routing": block}).endswith(f"x.json: routing: {expected}")


# -- link cost -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["cost_ms", "cost"])      # (cost: the older name)
def test_link_cost_is_in_milliseconds(name):
    data = base()
    data["links"][0][name] = 20
    data["links"][1][name] = 0.5
    spec = load_topology(data)
    assert spec.link("L1").cost_s == pytest.approx(0.02)
    assert spec.link("L2").cost_s == pytest.approx(0.0005)
    assert spec.link("L3").cost_s is None
    assert spec.link("L1").delay_s == pytest.approx(0.010)   # the delay itself is unchanged


def test_link_cost_same_in_both_unit_systems():
    data = base() | {"units": "binary"}
    data["links"][0]["cost"] = 20
    assert load_topology(data).link("L1").cost_s == pytest.approx(0.02)


@pytest.mark.parametrize("value, expected", [
    (0, "expected a positive number, got 0"),
    (-3, "expected a positive number, got -3"),
    ("20", 'expected a number, got "20"'),
    (None, "expected a number, got null"),
    (False, "expected a number, got false"),
])
@pytest.mark.parametrize("name", ["cost_ms", "cost"])
def test_bad_link_cost(tmp_path, value, expected, name):
    data = base()
    data["links"][2][name] = value
    assert error_of(tmp_path, data).endswith(f'links[2] "L3": field "{name}": {expected}')


def test_a_link_gives_its_cost_once(tmp_path):
    data = base()
    data["links"][2].update(cost_ms=20, cost=20)
    assert error_of(tmp_path, data).endswith(
        'links[2] "L3": field "cost": the older name of cost_ms, which the link gives too: '
        'keep one')


def test_misspelled_link_cost(tmp_path):
    data = base()
    data["links"][0]["cots"] = 5
    assert 'links[0] "L1": unknown field "cots" (did you mean "cost"?)' in error_of(tmp_path, data)
    data["links"][0].pop("cots")
    data["links"][0]["cost_sm"] = 5
    assert 'unknown field "cost_sm" (did you mean "cost_ms"?)' in error_of(tmp_path, data)


# -- link impairments -----------------------------------------------------------------------------

def impaired(link_fields: dict) -> dict:
    """base() with `link_fields` added to link L2 (ends R1, H2: directions "R1->H2" and "H2->R1")."""
    data = base()
    data["links"][1].update(link_fields)
    return data


def impairments_of(link_fields: dict) -> tuple:
    return load_topology(impaired(link_fields)).link("L2").impairments


def impairment_error(tmp_path, link_fields: dict) -> str:
    message = error_of(tmp_path, impaired(link_fields))
    assert 'x.json: links[1] "L2": ' in message
    return message.split('x.json: links[1] "L2": ', 1)[1]


GE = {"type": "gilbert-elliott", "p_good_to_bad": 0.01, "p_bad_to_good": 0.25}


def test_impairments_default_to_none():
    assert impairments_of({}) == (NO_IMPAIRMENT, NO_IMPAIRMENT)
    assert impairments_of({"impairments": {}}) == (NO_IMPAIRMENT, NO_IMPAIRMENT)
    assert impairments_of({"impairments": {"R1->H2": {}}}) == (NO_IMPAIRMENT, NO_IMPAIRMENT)
    assert not NO_IMPAIRMENT.active
    # Explicit zeros are no impairment either.
    zeros = {"loss_rate": 0, "duplicate_rate": 0, "reorder_rate": 0, "jitter_ms": 0}
    assert impairments_of(zeros) == (NO_IMPAIRMENT, NO_IMPAIRMENT)


def test_link_level_impairments_apply_to_both_directions_and_are_converted():
    forward, backward = impairments_of({"loss_rate": 0.01, "duplicate_rate": 0.5, "reorder_rate": 0.1,
                                        "reorder_delay_ms": 5, "jitter_ms": 2.5, "jitter_reorder": True})
    expected = ImpairmentSpec(loss_rate=0.01, duplicate_rate=0.5, reorder_rate=0.1,
                              reorder_delay_s=0.005, jitter_s=0.0025, jitter_reorder=True)
    assert forward == backward == expected
    assert forward.active
    assert all(isinstance(value, float) for value in (forward.loss_rate, forward.duplicate_rate,
                                                      forward.reorder_rate, forward.jitter_s))


def test_impairment_units_do_not_depend_on_the_unit_system():
    data = impaired({"jitter_ms": 4, "reorder_rate": 1, "reorder_delay_ms": 20}) | {"units": "binary"}
    forward, _ = load_topology(data).link("L2").impairments
    assert forward.jitter_s == pytest.approx(0.004) and forward.reorder_delay_s == pytest.approx(0.02)


def test_gilbert_elliott_loss_model():
    forward, backward = impairments_of({"loss_model": GE})
    assert forward == backward == ImpairmentSpec(loss_model=GilbertElliottSpec(0.01, 0.25, 0.0, 1.0))
    model = impairments_of({"loss_model": GE | {"loss_good": 0.001, "loss_bad": 0.5}})[0].loss_model
    assert model == GilbertElliottSpec(p_good_to_bad=0.01, p_bad_to_good=0.25, loss_good=0.001, loss_bad=0.5)
    model = impairments_of({"loss_model": GE | {"p_good_to_bad": 1, "p_bad_to_good": 1, "loss_good": 1,
                                                "loss_bad": 0}})[0].loss_model
    assert model == GilbertElliottSpec(1.0, 1.0, 1.0, 0.0)
    # An explicit zero loss_rate may accompany a loss model.
    assert impairments_of({"loss_model": GE, "loss_rate": 0})[0].loss_model is not None


def test_one_direction_only():
    forward, backward = impairments_of({"impairments": {"H2->R1": {"loss_rate": 0.01}}})
    assert forward == NO_IMPAIRMENT and backward == ImpairmentSpec(loss_rate=0.01)


def test_directions_follow_the_order_of_ends():
    data = impaired({"impairments": {"R1->H2": {"loss_rate": 0.2}}})
    data["links"][1]["ends"] = ["H2", "R1"]
    forward, backward = load_topology(data).link("L2").impairments
    assert forward == NO_IMPAIRMENT and backward == ImpairmentSpec(loss_rate=0.2)


def test_direction_values_override_link_values_field_by_field():
    forward, backward = impairments_of({
        "loss_rate": 0.05, "jitter_ms": 10, "duplicate_rate": 0.01,
        "impairments": {"R1->H2": {"loss_rate": 0.2, "jitter_reorder": True},
                        "H2->R1": {"jitter_ms": 0, "duplicate_rate": 0}},
    })
    assert forward == ImpairmentSpec(loss_rate=0.2, duplicate_rate=0.01, jitter_s=0.01, jitter_reorder=True)
    assert backward == ImpairmentSpec(loss_rate=0.05)


def test_direction_may_switch_loss_model_by_zeroing_the_link_loss_rate():
    forward, backward = impairments_of({"loss_rate": 0.01,
                                        "impairments": {"H2->R1": {"loss_rate": 0, "loss_model": GE}}})
    assert forward == ImpairmentSpec(loss_rate=0.01)
    assert backward == ImpairmentSpec(loss_model=GilbertElliottSpec(0.01, 0.25))


def test_reorder_and_jitter_settings_inherited_across_levels():
    # The delay at link level serves the one direction that reorders.
    forward, backward = impairments_of({"reorder_delay_ms": 8,
                                        "impairments": {"R1->H2": {"reorder_rate": 0.3}}})
    assert forward == ImpairmentSpec(reorder_rate=0.3, reorder_delay_s=0.008) and backward == NO_IMPAIRMENT
    # The rate at link level, the delay per direction.
    forward, backward = impairments_of({"reorder_rate": 0.1,
                                        "impairments": {"R1->H2": {"reorder_delay_ms": 1},
                                                        "H2->R1": {"reorder_delay_ms": 2}}})
    assert (forward.reorder_delay_s, backward.reorder_delay_s) == (pytest.approx(0.001), pytest.approx(0.002))
    # A direction may switch reordering or jitter off; the inherited settings then do not show.
    forward, backward = impairments_of({"reorder_rate": 0.1, "reorder_delay_ms": 5, "jitter_ms": 3,
                                        "jitter_reorder": True,
                                        "impairments": {"H2->R1": {"reorder_rate": 0, "jitter_ms": 0}}})
    assert forward == ImpairmentSpec(reorder_rate=0.1, reorder_delay_s=0.005, jitter_s=0.003,
                                     jitter_reorder=True)
    assert backward == NO_IMPAIRMENT


@pytest.mark.parametrize("fields, expected", [
    ({"loss_rate": 1.5}, 'field "loss_rate": expected a number in [0, 1), got 1.5'),
    ({"loss_rate": 1}, 'field "loss_rate": expected a number in [0, 1), got 1'),
    ({"loss_rate": -0.1}, 'field "loss_rate": expected a number in [0, 1), got -0.1'),
    ({"loss_rate": True}, 'field "loss_rate": expected a number, got true'),
    ({"loss_rate": "1%"}, 'field "loss_rate": expected a number, got "1%"'),
    ({"loss_rate": None}, 'field "loss_rate": expected a number, got null'),
    ({"duplicate_rate": 1.01}, 'field "duplicate_rate": expected a number in [0, 1], got 1.01'),
    ({"duplicate_rate": False}, 'field "duplicate_rate": expected a number, got false'),
    ({"reorder_rate": -1}, 'field "reorder_rate": expected a number in [0, 1], got -1'),
    ({"reorder_rate": 0.1, "reorder_delay_ms": 0},
     'field "reorder_delay_ms": expected a positive number, got 0'),
    ({"reorder_rate": 0.1, "reorder_delay_ms": "5"},
     'field "reorder_delay_ms": expected a number, got "5"'),
    ({"jitter_ms": -2}, 'field "jitter_ms": expected a number >= 0, got -2'),
    ({"jitter_ms": 2, "jitter_reorder": 1}, 'field "jitter_reorder": expected true or false, got 1'),
    ({"jitter_ms": 2, "jitter_reorder": "true"},
     'field "jitter_reorder": expected true or false, got "true"'),
    ({"loss_model": "gilbert-elliott"}, 'field "loss_model": expected an object, got "gilbert-elliott"'),
    ({"loss_model": {"p_good_to_bad": 0.1, "p_bad_to_good": 0.1}},
     'field "loss_model": missing field "type"'),
    ({"loss_model": GE | {"type": "gilbert"}},
     'field "loss_model.type": expected "gilbert-elliott", got "gilbert" (did you mean "gilbert-elliott"?)'),
    ({"loss_model": GE | {"type": "bernoulli", "p": 0.1}},
     'field "loss_model.type": expected "gilbert-elliott", got "bernoulli"'),
    ({"loss_model": GE | {"p_good_2_bad": 0.1}},
     'field "loss_model": unknown field "p_good_2_bad" (did you mean "p_good_to_bad"?); '
     'known: loss_bad, loss_good, p_bad_to_good, p_good_to_bad, type'),
    ({"loss_model": {"type": "gilbert-elliott", "p_good_to_bad": 0.1}},
     'field "loss_model": missing field "p_bad_to_good"'),
    ({"loss_model": GE | {"p_good_to_bad": 0}},
     'field "loss_model.p_good_to_bad": expected a number in (0, 1], got 0'),
    ({"loss_model": GE | {"p_bad_to_good": 1.5}},
     'field "loss_model.p_bad_to_good": expected a number in (0, 1], got 1.5'),
    ({"loss_model": GE | {"loss_good": -0.5}},
     'field "loss_model.loss_good": expected a number in [0, 1], got -0.5'),
    ({"loss_model": GE | {"loss_bad": True}}, 'field "loss_model.loss_bad": expected a number, got true'),
    ({"los_rate": 0.1}, 'unknown field "los_rate" (did you mean "loss_rate"?)'),
])
def test_bad_impairment_values(tmp_path, fields, expected):
    assert impairment_error(tmp_path, fields).startswith(expected)


@pytest.mark.parametrize("fields, expected", [
    ({"R1->H2": {"loss_rate": 1.5}},
     'field "impairments.R1->H2.loss_rate": expected a number in [0, 1), got 1.5'),
    ({"H2->R1": {"jitter_reorder": 0, "jitter_ms": 1}},
     'field "impairments.H2->R1.jitter_reorder": expected true or false, got 0'),
    ({"H2->R1": {"loss_model": GE | {"p_bad_to_good": 0}}},
     'field "impairments.H2->R1.loss_model.p_bad_to_good": expected a number in (0, 1], got 0'),
    ({"R1->H2": {"los_rate": 0.1}},
     'field "impairments.R1->H2": unknown field "los_rate" (did you mean "loss_rate"?); '
     'known: duplicate_rate, jitter_mode, jitter_ms, jitter_reorder, loss_model, loss_rate, '
     'reorder_delay_ms, reorder_rate'),
    ({"R1->H2": {"delay_ms": 5}}, 'field "impairments.R1->H2": unknown field "delay_ms"'),
    ({"R1->H2": 0.01}, 'field "impairments.R1->H2": expected an object, got 0.01'),
    ({"R1->H3": {}},
     'field "impairments": unknown direction "R1->H3" (did you mean "R1->H2"?); known: H2->R1, R1->H2'),
    ({"H2-R1": {}}, 'field "impairments": unknown direction "H2-R1" (did you mean "H2->R1"?)'),
    ({"forward": {}}, 'field "impairments": unknown direction "forward"; known: H2->R1, R1->H2'),
])
def test_bad_direction_objects(tmp_path, fields, expected):
    assert impairment_error(tmp_path, {"impairments": fields}).startswith(expected)


def test_ambiguous_direction_labels(tmp_path):
    # Ends "R1" and "R1->R1" make both labels "R1->R1->R1": impairments cannot say which is meant.
    data = base()
    data["routers"].append("R1->R1")
    data["links"].append({"id": "L4", "ends": ["R1", "R1->R1"], "rate_mbps": 1, "delay_ms": 1,
                          "buffer_kb": 1, "impairments": {"R1->R1->R1": {"loss_rate": 0.1}}})
    assert error_of(tmp_path, data).endswith(
        'links[3] "L4": field "impairments": both directions are labelled "R1->R1->R1"; '
        'give the impairments at link level or rename a node')
    data["links"][3]["impairments"] = {}
    data["links"][3]["loss_rate"] = 0.1
    assert load_topology(data).link("L4").impairments == (ImpairmentSpec(loss_rate=0.1),) * 2


def test_impairments_must_be_an_object(tmp_path):
    assert impairment_error(tmp_path, {"impairments": [{"loss_rate": 0.1}]}) == (
        'field "impairments": expected an object of directions, got a list')


def test_direction_example_from_the_documentation(tmp_path):
    data = base()
    data["routers"].append("R2")
    data["hosts"].append("H4")
    data["links"] += [{"id": "L4", "ends": ["R1", "R2"], "rate_mbps": 10, "delay_ms": 1, "buffer_kb": 64,
                       "impairments": {"R1->R3": {}}},
                      {"id": "L5", "ends": ["R2", "H4"], "rate_mbps": 10, "delay_ms": 1, "buffer_kb": 64}]
    assert error_of(tmp_path, data).endswith(
        'x.json: links[3] "L4": field "impairments": unknown direction "R1->R3" (did you mean "R1->R2"?); '
        'known: R1->R2, R2->R1')


@pytest.mark.parametrize("fields, expected", [
    # reorder_delay_ms is required with a reorder_rate > 0 ...
    ({"reorder_rate": 0.1}, 'field "reorder_delay_ms": required when reorder_rate > 0'),
    ({"impairments": {"R1->H2": {"reorder_rate": 0.1}}},
     'field "impairments.R1->H2.reorder_delay_ms": required when reorder_rate > 0'),
    ({"reorder_rate": 0.1, "impairments": {"H2->R1": {"reorder_delay_ms": 3}}},
     'field "reorder_delay_ms": required when reorder_rate > 0'),   # R1->H2 has none
    # ... and not allowed without one.
    ({"reorder_delay_ms": 5}, 'field "reorder_delay_ms": not allowed without reorder_rate > 0'),
    ({"reorder_delay_ms": 5, "reorder_rate": 0},
     'field "reorder_delay_ms": not allowed without reorder_rate > 0'),
    ({"impairments": {"H2->R1": {"reorder_delay_ms": 5}}},
     'field "impairments.H2->R1.reorder_delay_ms": not allowed without reorder_rate > 0'),
    ({"reorder_rate": 0.1, "reorder_delay_ms": 1, "impairments": {"H2->R1": {"reorder_rate": 0,
                                                                             "reorder_delay_ms": 4}}},
     'field "impairments.H2->R1.reorder_delay_ms": not allowed without reorder_rate > 0'),
    # jitter_reorder needs jitter_ms > 0 (either value of jitter_reorder).
    ({"jitter_reorder": True}, 'field "jitter_reorder": not allowed without jitter_ms > 0'),
    ({"jitter_reorder": False, "jitter_ms": 0}, 'field "jitter_reorder": not allowed without jitter_ms > 0'),
    ({"impairments": {"R1->H2": {"jitter_reorder": True}, "H2->R1": {"jitter_ms": 1}}},
     'field "impairments.R1->H2.jitter_reorder": not allowed without jitter_ms > 0'),
    ({"jitter_reorder": True, "impairments": {"H2->R1": {"jitter_ms": 0}}},
     'field "jitter_reorder": not allowed without jitter_ms > 0'),
    # loss_model and a non-zero loss_rate: use one loss model.
    ({"loss_rate": 0.01, "loss_model": GE},
     'field "loss_model": not allowed together with a non-zero "loss_rate" (0.01); use one loss model'),
    ({"loss_rate": 0.01, "impairments": {"H2->R1": {"loss_model": GE}}},
     'field "impairments.H2->R1.loss_model": not allowed together with a non-zero "loss_rate" (0.01); '
     'use one loss model'),
    ({"loss_model": GE, "impairments": {"R1->H2": {"loss_rate": 0.2}}},
     'field "impairments.R1->H2.loss_rate": expected 0 when "loss_model" is given (use one loss model), '
     'got 0.2'),
    ({"impairments": {"R1->H2": {"loss_rate": 0.2, "loss_model": GE}}},
     'field "impairments.R1->H2.loss_model": not allowed together with a non-zero '
     '"impairments.R1->H2.loss_rate" (0.2); use one loss model'),
])
def test_impairment_consistency_rules(tmp_path, fields, expected):
    assert impairment_error(tmp_path, fields) == expected


def test_impairments_with_jitter_or_reorder_inherited_by_one_direction_are_valid():
    # A link-level jitter_reorder used by the direction that has jitter.
    forward, backward = impairments_of({"jitter_reorder": True, "impairments": {"H2->R1": {"jitter_ms": 7}}})
    assert forward == NO_IMPAIRMENT and backward == ImpairmentSpec(jitter_s=0.007, jitter_reorder=True)


def test_impairments_are_checked_after_the_other_link_fields(tmp_path):
    data = impaired({"loss_rate": 2, "rate_mbps": -1})
    assert error_of(tmp_path, data).endswith('field "rate_mbps": expected a positive number, got -1')


def test_impairments_leave_the_input_unmodified():
    fields = {"loss_rate": 0.01, "jitter_ms": 1,
              "impairments": {"H2->R1": {"loss_rate": 0, "loss_model": GE | {"loss_bad": 0.9}}}}
    data = impaired(fields)
    before = copy.deepcopy(data)
    load_topology(data)
    assert data == before


# -- link events -----------------------------------------------------------------------------------

def down(at_s, link="L2"):
    return {"at_s": at_s, "link": link, "action": "down"}


def up(at_s, link="L2"):
    return {"at_s": at_s, "link": link, "action": "up"}


def test_events_are_converted_and_sorted_by_time_then_file_order():
    data = base() | {"events": [up(20), down(12), down(5, "L1"), down(12, "L3"), up(12, "L1"),
                                down(30.5), down(0, "L3"), up(3, "L3")]}
    spec = load_topology(data)
    assert spec.events == [
        LinkEventSpec(0.0, "L3", "down"), LinkEventSpec(3.0, "L3", "up"),
        LinkEventSpec(5.0, "L1", "down"), LinkEventSpec(12.0, "L2", "down"),
        LinkEventSpec(12.0, "L3", "down"), LinkEventSpec(12.0, "L1", "up"),
        LinkEventSpec(20.0, "L2", "up"), LinkEventSpec(30.5, "L2", "down"),
    ]
    assert all(isinstance(event.at_s, float) for event in spec.events)


def test_same_time_events_of_different_links_keep_file_order():
    data = base() | {"events": [down(7, "L3"), down(7, "L1"), down(7, "L2")]}
    assert [event.link for event in load_topology(data).events] == ["L3", "L1", "L2"]


def test_a_link_may_stay_down_and_events_may_be_empty():
    assert load_topology(base() | {"events": [down(1)]}).events == [LinkEventSpec(1.0, "L2", "down")]
    assert load_topology(base() | {"events": []}).events == []


def test_down_of_a_down_link(tmp_path):
    data = base() | {"events": [down(1, "L1"), down(5), down(12), up(20)]}
    assert error_of(tmp_path, data).endswith(
        'events[2]: field "action": link "L2" is already down at 12 s')


def test_down_of_a_down_link_written_out_of_time_order(tmp_path):
    # The later event in time is the redundant one, whatever the file order.
    data = base() | {"events": [down(20), down(10)]}
    assert error_of(tmp_path, data).endswith(
        'events[0]: field "action": link "L2" is already down at 20 s')


def test_up_of_an_up_link(tmp_path):
    data = base() | {"events": [up(2.5, "L3")]}
    assert error_of(tmp_path, data).endswith('events[0]: field "action": link "L3" is already up at 2.5 s')
    data = base() | {"events": [down(1), up(2), up(3)]}
    assert error_of(tmp_path, data).endswith('events[2]: field "action": link "L2" is already up at 3 s')


def test_two_events_of_a_link_at_the_same_time(tmp_path):
    data = base() | {"events": [down(1, "L1"), down(12), down(4, "L3"), up(12)]}
    assert error_of(tmp_path, data).endswith(
        'events[3]: field "at_s": link "L2" already has an event at 12 s (events[1])')
    # Checked before the alternation rule: here events[0] alone would be an "up" of an up link.
    data = base() | {"events": [up(0.5), down(0.5)]}
    assert error_of(tmp_path, data).endswith(
        'events[1]: field "at_s": link "L2" already has an event at 0.5 s (events[0])')
    # And before it over the whole list: the earlier alternation problem is not reported first.
    data = base() | {"events": [down(1), down(2), up(9, "L1"), down(9, "L1")]}
    assert error_of(tmp_path, data).endswith(
        'events[3]: field "at_s": link "L1" already has an event at 9 s (events[2])')


def test_event_on_unknown_link_suggests_the_closest(tmp_path):
    data = base() | {"events": [down(1, "L4")]}
    assert error_of(tmp_path, data).endswith('events[0]: field "link": unknown link "L4" (did you mean "L1"?)')
    data = base()
    data["links"][1]["id"] = "core"
    data["events"] = [down(1, "cores")]
    assert error_of(tmp_path, data).endswith(
        'events[0]: field "link": unknown link "cores" (did you mean "core"?)')
    data["events"] = [down(1, "zzzzzz")]
    assert error_of(tmp_path, data).endswith(
        'events[0]: field "link": unknown link "zzzzzz"; known: L1, L3, core')


@pytest.mark.parametrize("event, expected", [
    ({"at_s": -1, "link": "L2", "action": "down"}, 'field "at_s": expected a number >= 0, got -1'),
    ({"at_s": "1", "link": "L2", "action": "down"}, 'field "at_s": expected a number, got "1"'),
    ({"at_s": None, "link": "L2", "action": "down"}, 'field "at_s": expected a number, got null'),
    ({"at_s": 1, "link": 2, "action": "down"}, 'field "link": expected a link id, got 2'),
    ({"at_s": 1, "link": "L2", "action": "dwon"},
     'field "action": expected "down" or "up", got "dwon" (did you mean "down"?)'),
    ({"at_s": 1, "link": "L2", "action": "fail"}, 'field "action": expected "down" or "up", got "fail"'),
    ({"at_s": 1, "link": "L2"}, 'missing field "action"'),
    ({"link": "L2", "action": "down"}, 'missing field "at_s"'),
    ({"at": 1, "link": "L2", "action": "down"},
     'unknown field "at" (did you mean "at_s"?); known: action, at_s, link'),
    ({"at_s": 1, "link": "L2", "action": "down", "id": "E1"},
     'unknown field "id"; known: action, at_s, link'),
    ("L2 down", 'expected an event object, got "L2 down"'),
    ([1, "L2", "down"], "expected an event object, got a list"),
])
def test_bad_event_fields(tmp_path, event, expected):
    data = base() | {"events": [down(1, "L1"), event]}
    assert error_of(tmp_path, data).endswith(f"events[1]: {expected}")


def test_events_must_be_a_list(tmp_path):
    assert error_of(tmp_path, base() | {"events": down(1)}).endswith(
        'top level: field "events": expected a list of event objects, got an object')


def test_event_entries_checked_before_the_alternation_rule(tmp_path):
    # events[0] breaks the alternation rule, but events[2] has a bad field: the field error wins.
    data = base() | {"events": [up(1), down(2), {"at_s": 3, "link": "L2", "action": "off"}]}
    assert 'events[2]: field "action": expected "down" or "up", got "off"' in error_of(tmp_path, data)


def test_input_dict_is_not_modified():
    data = base() | {"transport": {"min_rto_s": 0.5}, "algorithms": {"reno": {}},
                     "routing": {"protocol": "bellman-ford"}, "events": [up(9), down(3)]}
    data["links"][0]["cost"] = 7
    before = copy.deepcopy(data)
    load_topology(data, algorithm="tahoe")
    assert data == before


# -- property test ---------------------------------------------------------------------------------

positive = st.floats(min_value=1e-3, max_value=1e4, allow_nan=False)
non_negative = st.floats(min_value=0, max_value=1e4, allow_nan=False)
times = st.just(0.0) | positive        # 0 or resolvable (topologies/bounds.py)
data_sizes = st.floats(min_value=1e-3, max_value=100, allow_nan=False)


@st.composite
def chains(draw):
    """Random valid topologies: H0 - R0 - ... - Rk - H1 with random link numbers."""
    n_routers = draw(st.integers(min_value=0, max_value=6))
    nodes = ["H0"] + [f"R{i}" for i in range(n_routers)] + ["H1"]
    links = [{"id": f"L{i}", "ends": [a, b], "rate_mbps": draw(positive), "delay_ms": draw(times),
              "buffer_kb": draw(non_negative), "duplex": draw(st.sampled_from(["full", "half"]))}
             for i, (a, b) in enumerate(zip(nodes, nodes[1:]))]
    # (data_mb within what the slowest link, 1e-3 Mbps, carries in 1e6 s: topologies/bounds.py)
    flow = {"id": "F", "src": "H0", "dst": "H1", "data_mb": draw(data_sizes), "start_s": draw(times)}
    return {"units": draw(st.sampled_from(["si", "binary"])), "hosts": ["H0", "H1"],
            "routers": nodes[1:-1], "links": links, "flows": [flow]}


@settings(max_examples=60, deadline=None)
@given(chains())
def test_random_chains_round_trip_numbers(data):
    spec = load_topology(data)
    units = SI if data["units"] == "si" else BINARY
    for raw, link in zip(data["links"], spec.links):
        assert link.id == raw["id"] and link.ends == tuple(raw["ends"]) and link.duplex == raw["duplex"]
        assert math.isclose(link.rate_bps / units.bits_per_mbit, raw["rate_mbps"])
        assert math.isclose(link.delay_s * 1000, raw["delay_ms"], abs_tol=1e-12)
        assert abs(link.buffer_bytes - raw["buffer_kb"] * units.bytes_per_kb) <= 0.5
    flow, raw = spec.flows[0], data["flows"][0]
    assert flow.data_bytes >= 1 and abs(flow.data_bytes - raw["data_mb"] * units.bytes_per_mb) <= 0.5
    assert flow.start_s == raw["start_s"]


# -- input limits, confined names, ids (topologies/validation.py) --------------------------------

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

from topologies import validation  # noqa: E402

ROOT = TOPOLOGIES.parent


@pytest.mark.parametrize("name, expected", [
    ("../../x", 'expected a plain file name (no "/"), got "../../x"'),
    ("/abs/x", 'expected a plain file name (no "/"), got "/abs/x"'),
    ("a/b", 'expected a plain file name (no "/"), got "a/b"'),
    ("..", 'expected a plain file name (not "." or ".."), got ".."'),
    ("a\x07b", 'expected a plain file name (no control characters), got "a\\u0007b" (U+0007)'),
    ("a\nerror: forged line", 'expected a plain file name (no control characters), '
                              'got "a\\nerror: forged line" (U+000A)'),
    ("", 'expected a non-empty string, got ""'),
])
def test_topology_name_must_be_a_plain_file_name(tmp_path, name, expected):
    assert error_of(tmp_path, base() | {"name": name}).endswith(f'top level: field "name": {expected}')


def test_a_default_name_from_the_file_name_is_checked_too(tmp_path):
    path = write(tmp_path, base(), name="...json")          # stem ".."
    with pytest.raises(TopologyError) as info:
        load_topology(path)
    assert str(info.value).endswith('top level: field "name": expected a plain file name (not "." or '
                                    '".."), got ".." (the file name without extension; give a "name")')
    assert load_topology(write(tmp_path, base() | {"name": "ok"}, name="...json")).name == "ok"


def test_name_with_a_path_is_refused_by_the_cli_and_nothing_is_written(tmp_path):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    data = base() | {"name": "../../x", "duration_s": 0.1}
    path = write(work, data)
    done = subprocess.run([sys.executable, str(ROOT / "initializer.py"), str(path), "--no-plots"],
                          cwd=work, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f'error: {path}: top level: field "name": expected a plain '
                                        f'file name (no "/"), got "../../x"']
    assert not (tmp_path / "x").exists() and not (work / "results").exists()


@pytest.mark.parametrize("where, change", [
    ("links[0]", lambda d: d["links"][0].update(id="L1\nerror: forged line")),
    ("flows[0]", lambda d: d["flows"][0].update(id="F1\nerror: forged line")),
])
def test_ids_with_control_characters_are_refused(tmp_path, where, change):
    data = base()
    change(data)
    message = error_of(tmp_path, data)
    assert message.endswith(f'{where}: field "id": expected an id without control characters, got '
                            f'"{where[0].upper()}1\\nerror: forged line" (U+000A)')


def test_node_ids_with_control_characters_are_refused(tmp_path):
    data = base()
    data["hosts"][1] = "H2\u2028"
    assert error_of(tmp_path, data).endswith('hosts[1]: expected an id without control characters, '
                                             'got "H2\\u2028" (U+2028)')


def test_newline_in_an_id_cannot_forge_a_line_in_the_cli(tmp_path):
    data = base()
    data["links"][2]["id"] = "L3\nerror: forged line"
    path = write(tmp_path, data)
    done = subprocess.run([sys.executable, str(ROOT / "initializer.py"), str(path), "-l", "L9"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "forged line" in done.stderr and "\\n" in done.stderr


def test_deep_nesting_and_long_integers_are_one_line(tmp_path):
    assert f"nested deeper than {validation.MAX_DEPTH} levels at line 1, column" in \
        error_of(tmp_path, '{"hosts": ' + "[" * 100_000)
    text = json.dumps(base()).replace('"rate_mbps": 10', '"rate_mbps": ' + "1" * 5001)
    assert "integer with 5001 digits at line 1, column" in error_of(tmp_path, text)


def test_invalid_utf8(tmp_path):
    path = tmp_path / "x.json"
    path.write_bytes(b'{"name": "\xc3\x28"}')
    with pytest.raises(TopologyError, match=r"not valid UTF-8: byte 0xc3 at line 1, column 11 "
                                            r"\(byte offset 10\)$"):
        load_topology(path)


def test_size_and_list_limits_apply_to_topologies(tmp_path, monkeypatch):
    path = write(tmp_path, base())
    monkeypatch.setattr(validation, "MAX_FILE_BYTES", 100)
    with pytest.raises(TopologyError, match=r"file too large: \d+ bytes; at most 100 bytes are read$"):
        load_topology(path)
    monkeypatch.undo()
    monkeypatch.setattr(validation, "MAX_ITEMS", 5)
    data = base()
    data["routers"] += [f"X{i}" for i in range(5)]
    assert error_of(tmp_path, data).endswith("routers: list of 6 entries; at most 5 are allowed")
    with pytest.raises(TopologyError, match=r"^<dict>: routers: list of 6 entries"):
        load_topology(data)


def test_a_huge_list_is_refused_by_size_before_parsing(tmp_path):
    path = tmp_path / "x.json"
    with open(path, "wb") as handle:                        # 100 MB of "[0,0,0,...": sparse tail
        handle.write(b'{"hosts": [' + b"0," * 1000)
        handle.truncate(100_000_000)
    with pytest.raises(TopologyError, match=r"file too large: 100000000 bytes; at most"):
        load_topology(path)


def _chain(n_links: int) -> dict:
    routers = [f"R{i}" for i in range(n_links - 1)]
    nodes = ["H0"] + routers + ["H1"]
    links = [{"id": f"L{i}", "ends": [a, b], "rate_mbps": 10, "delay_ms": 1, "buffer_kb": 64}
             for i, (a, b) in enumerate(zip(nodes, nodes[1:]))]
    return {"hosts": ["H0", "H1"], "routers": routers, "links": links,
            "flows": [{"id": "F1", "src": "H0", "dst": "H1", "data_mb": 1}]}


@pytest.mark.slow
def test_large_real_topologies_still_load(tmp_path):
    many_links = write(tmp_path, json.dumps(_chain(10_000), indent=2), name="links.json")
    data = base()
    data["flows"] = [{"id": f"F{i}", "src": "H1", "dst": "H2", "data_mb": 1, "start_s": i * 0.001,
                      "algorithm": "reno"} for i in range(100_000)]
    many_flows = write(tmp_path, json.dumps(data, indent=2), name="flows.json")
    assert os.path.getsize(many_flows) < validation.MAX_FILE_BYTES
    assert len(load_topology(many_links).links) == 10_000
    assert len(load_topology(many_flows).flows) == 100_000
