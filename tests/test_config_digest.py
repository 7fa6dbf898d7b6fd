"""The configuration digest (topologies/spec.py): `config_text` writes exactly the text that
defines it, ``json.dumps(resolved_config(...), sort_keys=True, separators=(",", ":"),
default=repr, allow_nan=True)``, for the shipped topologies and for specs with every field a
rule leaves out (or keeps) set either way."""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topologies.loader import load_topology
from topologies.spec import (
    GilbertElliottSpec,
    ImpairmentSpec,
    config_digest,
    config_text,
    resolved_config,
)

TOPOLOGIES = sorted((Path(__file__).resolve().parent.parent / "topologies").glob("*.json"))


def defined_text(spec, duration_s, seed, interval_s) -> str:
    config = resolved_config(spec, duration_s=duration_s, seed=seed, interval_s=interval_s)
    return json.dumps(config, sort_keys=True, separators=(",", ":"), default=repr,
                      allow_nan=True)


def workload_topology(**workload) -> dict:
    return {"hosts": ["H1", "H2"], "routers": ["R1"],
            "links": [{"id": "A", "ends": ["H1", "R1"], "rate_mbps": 10, "delay_ms": 1,
                       "buffer_kb": 100},
                      {"id": "B", "ends": ["R1", "H2"], "rate_mbps": 10, "delay_ms": 1,
                       "buffer_kb": 100}],
            "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 1,
                       "algorithm": "cubic"}],
            "workloads": [{"id": "W", "src": ["H1"], "dst": ["H2"], "arrivals_per_s": 10,
                           "sizes": "websearch", "algorithm": "reno", **workload}],
            "duration_s": 1}


@pytest.mark.parametrize("path", TOPOLOGIES, ids=lambda p: p.stem)
@pytest.mark.parametrize("stack", [None, "linux"])
def test_the_text_of_each_shipped_topology_is_the_defined_one(path, stack):
    spec = load_topology(path, stack=stack)
    for duration_s, seed, interval_s in ((None, 1, 0.1), (12.5, 7, 0.25)):
        text = config_text(spec, duration_s, seed, interval_s)
        assert text == defined_text(spec, duration_s, seed, interval_s)
        assert config_digest(spec, duration_s=duration_s, seed=seed, interval_s=interval_s) \
            == hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("workload", [{}, {"ecn": True}, {"stop_s": 0.5, "start_s": 0.1}])
def test_workloads_with_and_without_their_optional_fields(workload):
    spec = load_topology(workload_topology(**workload))
    assert config_text(spec, 1.0, 1, 0.1) == defined_text(spec, 1.0, 1, 0.1)


odd_floats = st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf, 1e-300, 0.1]) | \
    st.floats(allow_nan=True, allow_infinity=True)
impairments = st.builds(
    ImpairmentSpec, loss_rate=odd_floats,
    loss_model=st.none() | st.builds(GilbertElliottSpec, odd_floats, odd_floats),
    jitter_s=odd_floats, jitter_reorder=st.booleans(),
    jitter_mode=st.sampled_from(["added", "netem"]))
params = st.dictionaries(st.text(max_size=4), st.none() | st.booleans() | st.integers() |
                         odd_floats | st.text(max_size=3) | st.lists(st.integers(), max_size=2),
                         max_size=3)
# The first st.text draw in a process without Hypothesis's cached Unicode tables (a fresh
# checkout, CI) builds them: about 1.2 s once, which the too_slow health check takes for slow
# generation when that draw falls in a test's first example.
TEXT_ONCE = settings(suppress_health_check=[HealthCheck.too_slow])


@TEXT_ONCE
@given(st.data())
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_varied_fields_give_the_defined_text(data):
    """Links, flows, routing and transports with their fields drawn (NaN and infinities, signed
    zeros, shared and distinct impairments, queues, schedules, ECMP, the Linux stack's fields)."""
    spec = load_topology(TOPOLOGIES[0])
    shared = data.draw(impairments)
    links = [replace(link, cost_s=data.draw(st.none() | odd_floats),
                     delay_s=data.draw(odd_floats),
                     impairments=data.draw(st.sampled_from([(shared, shared),
                                                            (shared, ImpairmentSpec())])
                                           | st.tuples(impairments, impairments)),
                     queue=data.draw(st.none() | params),
                     rate_schedule=tuple(data.draw(st.lists(st.tuples(odd_floats, odd_floats),
                                                            max_size=2))))
             for link in spec.links]
    flows = [replace(flow, params=data.draw(params),
                     transport=flow.transport.overridden(
                         stack=data.draw(st.sampled_from(["classic", "linux"])),
                         sack=data.draw(st.none() | st.booleans()),
                         rwnd_kb=data.draw(st.none() | odd_floats)))
             for flow in spec.flows]
    routing = replace(spec.routing, ecmp=data.draw(st.sampled_from([None, "flow", "packet"])))
    spec = replace(spec, links=links, flows=flows, routing=routing,
                   algorithms={"reno": data.draw(params)})
    duration_s = data.draw(st.none() | odd_floats)
    assert config_text(spec, duration_s, 3, 0.1) == defined_text(spec, duration_s, 3, 0.1)


@TEXT_ONCE
@given(st.data())
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_a_generated_network_written_a_column_at_a_time_gives_the_defined_text(data):
    """The links of a generated random graph are written a column at a time (the ids, the
    rates, ... of every link together); links with fields drawn among them (a cost, a signed
    zero, NaN or infinite delays, their own impairments, a queue, schedules of other lengths)
    split a column into kinds, and each must still be written as the definition writes it."""
    from topologies.generate import Common, random_graph
    spec = load_topology(random_graph(60, hosts=6, common=Common(flows=3)))
    links = list(spec.links)
    for index in data.draw(st.lists(st.integers(0, len(links) - 1), max_size=8)):
        links[index] = replace(
            links[index], cost_s=data.draw(st.none() | odd_floats),
            delay_s=data.draw(odd_floats), rate_bps=data.draw(odd_floats | st.integers()),
            impairments=data.draw(st.tuples(impairments, impairments)),
            queue=data.draw(st.none() | params),
            rate_schedule=tuple(data.draw(st.lists(st.tuples(odd_floats, odd_floats),
                                                   max_size=2))))
    spec = replace(spec, links=links)
    assert config_text(spec, 2.0, 1, 0.1) == defined_text(spec, 2.0, 1, 0.1)


def test_the_description_and_the_path_are_not_part_of_the_digest(tmp_path):
    """Fixing a typo in a topology's description re-ran a whole sweep: free text simulates
    nothing. Anything simulated still changes the digest."""
    from topologies import load_topology
    from topologies.spec import config_digest

    data = json.loads(next(p for p in TOPOLOGIES if p.name == "lossy_link.json").read_text())
    options = {"duration_s": 2.0, "seed": 1, "interval_s": 0.1}
    first = config_digest(load_topology(data), **options)
    assert config_digest(load_topology(dict(data, description="another text")), **options) == first
    assert config_digest(load_topology({k: v for k, v in data.items() if k != "description"}),
                         **options) == first
    (tmp_path / "elsewhere.json").write_text(json.dumps(data))
    assert config_digest(load_topology(tmp_path / "elsewhere.json"), **options) == first
    data["links"][0]["delay_ms"] += 1
    assert config_digest(load_topology(data), **options) != first


def test_a_duration_from_the_command_line_digests_as_one_in_the_file(tmp_path):
    """A single run's config_digest is the sweep's for the same configuration, however the
    duration was given: with --duration (the file's duration_s null) it differed, so a run could
    not be matched to its sweep row by digest."""
    from netsim.run import simulate
    from netsim.sweep_file import load_sweep
    from netsim.sweep_plan import plan

    root = Path(__file__).resolve().parent.parent / "topologies"
    data = json.loads((root / "lossy_link.json").read_text())
    data["flows"][0]["data_mb"] = None
    in_file = dict(data, duration_s=0.5)
    with simulate(load_topology(data), duration_s=0.5, seed=1) as given_on_the_command_line, \
            simulate(load_topology(in_file), seed=1) as written_in_the_file:
        digest = given_on_the_command_line.summary["config_digest"]
        assert digest == written_in_the_file.summary["config_digest"]
    (tmp_path / "t.json").write_text(json.dumps(data))
    (tmp_path / "s.json").write_text(json.dumps({
        "name": "s", "topology": str(tmp_path / "t.json"), "duration_s": 0.5, "seeds": [1],
        "parameters": {"links.L1.delay_ms": [data["links"][0]["delay_ms"]]},
        "metrics": ["end_time_s"]}))
    (run,) = plan(load_sweep(tmp_path / "s.json"))
    assert run.digest == digest
