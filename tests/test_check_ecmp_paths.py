"""`--check` on an ECMP run predicts on the paths the flows took (theory.paths.run_paths on the
run's network), not on the tie rule's single path: a flow hashed onto the second branch of a
diamond is predicted there, no compared row lies on a link that carried nothing, packet spraying
(no single path per flow) gives no model, and a model made on the static paths (`predict(spec)`,
as sweeps make it) does not compare the flows hashing moved, nor those sharing a link with them.

The diamond: S0, S1, S2 -- R1 = (RA | RB) = R2 -- T0, T1, T2; the four fabric links at 100 Mb/s
with step marking at 20 kB, the access links at 1 Gb/s; three DCTCP flows S_i -> T_i. With seed
1 flow hashing sends F0 and F2 through RA (the tie rule's branch) and F1 through RB.
"""
from __future__ import annotations

import pytest

from netsim.run import simulate
from theory.check import compare, predict_run
from theory.fluid import predict
from topologies.loader import load_topology

SETTLE_S = 0.5
PACKET_KB = 1.024


def diamond(ecmp, seed=1, n=3, duration_s=1.0) -> dict:
    def link(link_id, a, b, rate=100, delay_ms=0.5, **extra):
        return dict({"id": link_id, "ends": [a, b], "rate_mbps": rate, "delay_ms": delay_ms,
                     "buffer_kb": 200}, **extra)
    step = {"discipline": "step", "k_kb": 20}
    links = [link(f"S{i}", f"S{i}", "R1", 1000, 0.25) for i in range(n)]
    links += [link("UA", "R1", "RA", queue=step), link("UB", "R1", "RB", queue=step),
              link("DA", "RA", "R2", queue=step), link("DB", "RB", "R2", queue=step)]
    links += [link(f"T{i}", "R2", f"T{i}", 1000, 0.25) for i in range(n)]
    topology = {"units": "si", "hosts": [f"S{i}" for i in range(n)] + [f"T{i}" for i in range(n)],
                "routers": ["R1", "RA", "RB", "R2"], "links": links,
                "flows": [{"id": f"F{i}", "src": f"S{i}", "dst": f"T{i}", "algorithm": "dctcp",
                           "ecn": True} for i in range(n)],
                "duration_s": duration_s, "seed": seed}
    if ecmp:
        topology["routing"] = {"ecmp": ecmp}
    return topology


@pytest.fixture(scope="module")
def hashed():
    spec = load_topology(diamond(True))
    results = simulate(spec, interval_s=0.01)
    return spec, results


def nodes(path) -> list:
    return [path[0].link.ends[path[0].index]] + [hop.dst for hop in path]


def link_rows(report) -> list:
    return [row for iv in report["intervals"] for row in iv["rows"] if row["kind"] == "link"]


def flow_rows(report) -> list:
    return [row for iv in report["intervals"] for row in iv["rows"] if row["kind"] == "flow"]


def carried_mbps(results, resource_id: str) -> float:
    link, label = resource_id.split(" ")
    return results.summary["links"][link]["directions"][label]["avg_rate_mbps"]


def test_the_seed_hashes_one_flow_off_the_tie_rules_branch(hashed):
    _, results = hashed
    taken = {fid: results.network.flow_paths(fid) for fid in ("F0", "F1", "F2")}
    assert taken == {"F0": [["S0", "R1", "RA", "R2", "T0"]], "F1": [["S1", "R1", "RB", "R2", "T1"]],
                     "F2": [["S2", "R1", "RA", "R2", "T2"]]}


def test_a_flow_hashed_run_is_predicted_on_the_paths_the_flows_took(hashed):
    spec, results = hashed
    model = predict_run(spec, results)
    for fid in ("F0", "F1", "F2"):
        assert [nodes(model.paths[fid][0])] == results.network.flow_paths(fid)
        assert not model.run_paths[fid].sprayed
    report = compare(results, model, settle_s=SETTLE_S)
    rates = {row["id"]: row for row in flow_rows(report)}
    assert rates["F1"]["predicted"] == pytest.approx(100.0, rel=1e-3)      # RB alone
    assert rates["F0"]["predicted"] == pytest.approx(50.0, rel=1e-3)       # RA shared with F2
    assert all(row["error_pct"] < 5.0 for row in rates.values())
    links = {row["id"]: row for row in link_rows(report)}
    assert set(links) == {"UA R1->RA", "UB R1->RB", "DA RA->R2", "DB RB->R2"}
    assert links["UA R1->RA"]["predicted"][0] > 10 * PACKET_KB           # the sawtooth, N = 2
    assert links["UB R1->RB"]["predicted"][1] == pytest.approx(20 + PACKET_KB)   # K + 1 packet
    for downstream, upstream in (("DA RA->R2", "UA R1->RA"), ("DB RB->R2", "UB R1->RB")):
        assert links[downstream]["predicted"] == pytest.approx([0.0, PACKET_KB])
        assert links[downstream]["inputs"] == {"paced_by": [upstream]}
    assert report["max_error_pct"] < 5.0 and report["not_compared"] == 0


def test_no_compared_row_lies_on_a_link_that_carried_nothing(hashed):
    spec, results = hashed
    report = compare(results, predict_run(spec, results), settle_s=SETTLE_S)
    compared = [row for row in link_rows(report) if row["error_pct"] is not None]
    assert compared and all(carried_mbps(results, row["id"]) > 10.0 for row in compared)


def test_a_model_on_the_static_paths_does_not_compare_the_moved_flows(hashed):
    spec, results = hashed
    report = compare(results, predict(spec, others_ok=True), settle_s=SETTLE_S)
    rows = flow_rows(report)
    assert rows and all(row["error_pct"] is None for row in rows + link_rows(report))
    reasons = {row["id"]: row["no_model"] for row in rows}
    assert reasons["F1"].startswith("F1 took another path than the model's (through R1->RB): "
                                    "ECMP flow hashing or a route change moved it")
    assert reasons["F0"].startswith("F0 took another path than the model's (its ACKs through "
                                    "R2->RB)")


def test_without_the_network_an_ecmp_runs_flows_have_no_model(hashed):
    spec, results = hashed
    model = predict(spec, others_ok=True)
    network, results.network = results.network, None       # as if read back from disk
    try:
        report = compare(results, model, settle_s=SETTLE_S)
    finally:
        results.network = network
    assert report["compared"] == 0
    assert report["no_model_reasons"][0].startswith(
        "the run used ECMP (flow) and the check does not know which paths its flows took")


def test_sprayed_flows_have_no_model():
    spec = load_topology(diamond("packet", duration_s=0.6))
    results = simulate(spec, interval_s=0.01)
    model = predict_run(spec, results)
    assert all(model.run_paths[fid].sprayed and len(model.run_paths[fid].data) == 2
               for fid in ("F0", "F1", "F2"))
    report = compare(results, model, settle_s=SETTLE_S)
    assert report["compared"] == 0 and report["not_compared"] == 3
    assert report["no_model_reasons"][0] == (
        "ECMP packet spraying sent the packets of F0 over 2 equal-cost paths (2 for its ACKs): "
        "every model assumes one path per flow")


def test_a_workloads_flows_may_cross_every_member_of_an_equal_cost_set():
    """Each workload flow hashes anew, so the links its flows may load are every branch of the
    diamond (theory.paths.workload_hops); without ECMP, or on the static routes, the tie rule's
    branch alone."""
    from theory.paths import workload_hops
    from topologies.build import build_network
    for ecmp, branches in (("flow", {"UA", "UB", "DA", "DB"}), (None, {"UA", "DA"})):
        topology = diamond(ecmp, n=2)
        topology["workloads"] = [{"id": "W", "src": ["S0"], "dst": ["T0", "T1"],
                                  "arrivals_per_s": 10, "sizes": "websearch"}]
        spec = load_topology(topology)
        for network in (build_network(spec), None):
            data, acks = workload_hops(spec, network)["W"]
            if network is None:
                branches = {"UA", "DA"}                  # (the static routes: the tie rule's)
            assert {hop.link.id for hop in data} == {"S0", "T0", "T1"} | branches
            assert {hop.label for hop in data if hop.link.id in branches} <= {
                "R1->RA", "R1->RB", "RA->R2", "RB->R2"}
            assert {hop.link.id for hop in acks} == {"S0", "T0", "T1"} | branches
            assert all(hop.label.startswith(("T", "R")) for hop in acks)
