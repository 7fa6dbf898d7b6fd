"""Where the delay-based equilibrium (FAST, Vegas) holds in `--check`: its flows share one
equilibrium, which has no loss term, so random loss on any of their data paths, or a predicted
backlog that a buffer cannot hold, makes every row of the interval (rates, delays, backlogs)
and the flows' completion times "no model". Before, FAST with 1 % random loss was compared and
its queue came out 34 % off, and Vegas flows leaving a third of the link idle passed within
3-8 %; a buffer too small for the predicted backlog printed a warning that the model did not
hold and counted 49-99 % errors against the tolerance anyway."""
from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from networks import link

from netsim.run import simulate
from theory.check import compare, predict_run
from topologies.loader import load_topology


def dumbbell(algorithm="fast", flows=2, buffer_kb=500, impairments=None, data_mb=None,
             duration_s=6):
    bottleneck = link("LB", "R1", "R2", 10, 10, buffer_kb=buffer_kb)
    if impairments:
        bottleneck["impairments"] = impairments
    ids = range(1, flows + 1)
    return {"units": "si", "packet_bytes": {"data": 1500, "ack": 40},
            "hosts": [h for i in ids for h in (f"S{i}", f"T{i}")], "routers": ["R1", "R2"],
            "links": [bottleneck] + [link(f"LS{i}", f"S{i}", "R1") for i in ids]
            + [link(f"LT{i}", "R2", f"T{i}") for i in ids],
            "flows": [{"id": f"F{i}", "src": f"S{i}", "dst": f"T{i}", "algorithm": algorithm,
                       "params": {"alpha": 20} if algorithm == "fast" else {},
                       "data_mb": data_mb} for i in ids],
            "duration_s": duration_s}


def checked(topology):
    spec = load_topology(topology)
    results = simulate(spec)
    return compare(results, predict_run(spec, results), settle_s=2.0)


def rows(report):
    return [row for iv in report["intervals"] for row in iv["rows"]]


@pytest.mark.parametrize("algorithm", ["fast", "vegas"])
def test_random_loss_on_a_data_path_leaves_the_equilibrium(algorithm):
    report = checked(dumbbell(algorithm, impairments={"R1->R2": {"loss_rate": 0.01}}))
    assert rows(report) and all(row["error_pct"] is None for row in rows(report))
    (reason,) = {row["no_model"] for row in rows(report)}
    assert re.fullmatch(r"random loss on the data path of F1 \(LB R1->R2: loss_rate 0\.01; \d+ "
                        r"lost in the compared window\): the delay-based equilibrium has no loss "
                        r"term \(each loss cuts a window, and the queues stay below the packets "
                        r"each flow would keep there\)", reason)
    assert {row["quantity"] for row in rows(report)} >= {"rate_mbps", "backlog_kb"}


def test_a_loss_rate_that_drops_nothing_keeps_the_equilibrium():
    """The rule is on losses in the compared window, not on a configured rate: 1e-9 drops
    nothing in a few seconds, and was made "no model" for the whole run."""
    report = checked(dumbbell(impairments={"R1->R2": {"loss_rate": 1e-9}}))
    compared = [row for row in rows(report) if row["error_pct"] is not None]
    assert {row["quantity"] for row in compared} == {"rate_mbps", "queue_delay_ms", "backlog_kb"}


def test_loss_of_acks_only_keeps_the_equilibrium():
    report = checked(dumbbell(impairments={"R2->R1": {"loss_rate": 0.01}}))
    compared = [row for row in rows(report) if row["error_pct"] is not None]
    assert {row["quantity"] for row in compared} == {"rate_mbps", "queue_delay_ms", "backlog_kb"}
    assert max(row["error_pct"] for row in compared) < 10.0


def test_completion_times_of_lossy_flows_are_not_compared():
    report = checked(dumbbell(impairments={"R1->R2": {"loss_rate": 0.01}}, data_mb=2.0,
                              duration_s=None))
    assert [row["id"] for row in report["completion"]] == ["F1", "F2"]
    assert all(row["error_pct"] is None and row["no_model"].startswith("random loss on the data "
                                                                       "path of F1")
               for row in report["completion"])


def test_a_backlog_the_buffer_cannot_hold_leaves_the_equilibrium():
    report = checked(dumbbell(flows=4, buffer_kb=30))       # 4 x 20 packets: 120 KB predicted
    assert report["warnings"] and "exceeds its 30 KB buffer" in report["warnings"][0]
    assert rows(report) and all(row["error_pct"] is None for row in rows(report))
    assert {row["no_model"] for row in rows(report)} == {
        "the predicted backlog of LB R1->R2 (120.0 KB) exceeds its 30 KB buffer: the run drops "
        "packets, which the equilibrium has no term for"}


def test_no_prediction_is_written_or_drawn_where_a_buffer_cannot_hold_the_backlog(tmp_path):
    """predictions.csv (what the figures draw dashed) has no rows for a predicted interval
    whose backlog a buffer cannot hold: the check compares none of them (acceptance test Z7:
    FAST's dashed backlog went to 120 KB over a 55 KB buffer, its RTT above any the path can
    have). Two flows keep 60 KB in a 100 KB buffer; from 4 s, four would keep more than it holds."""
    import csv

    from theory.check_report import write_check

    topology = dumbbell(flows=4, buffer_kb=100, duration_s=8)
    for flow in topology["flows"][2:]:
        flow["start_s"] = 4.0
    spec = load_topology(topology)
    results = simulate(spec)
    model = predict_run(spec, results)
    report = compare(results, model, settle_s=2.0)
    write_check(tmp_path, report, model, results.units, links=results.summary["links"])
    with open(tmp_path / "predictions.csv", newline="") as fh:
        written = list(csv.DictReader(fh))
    backlogs = [(float(r["start_s"]), float(r["low"])) for r in written
                if r["kind"] == "link" and r["id"] == "LB" and r["direction"] == "R1->R2"]
    assert backlogs == [(0.0, pytest.approx(60.0))]
    assert {r["id"] for r in written if r["kind"] == "flow"} == {"F1", "F2"}
    assert all(float(r["end_s"]) <= 4.0 + 1e-9 for r in written)
    (warning,) = report["warnings"]
    assert warning.startswith("[4 s, 8 s]: the predicted backlog of LB R1->R2 (") and (
        "KB) exceeds its 100 KB buffer" in warning)
    # without the links, and a report without `no_equilibrium` (results of an older check):
    # every interval of the timeline
    write_check(tmp_path, dict(report, no_equilibrium=[]), model, results.units)
    with open(tmp_path / "predictions.csv", newline="") as fh:
        assert any(float(r["start_s"]) >= 4.0 for r in csv.DictReader(fh))


def predictions(report, topology, tmp_path):
    """predictions.csv's rows (what the figures draw dashed) for `report` of `topology`."""
    import csv

    from theory.check_report import write_check

    spec = load_topology(topology)
    results = simulate(spec)
    write_check(tmp_path, report, predict_run(spec, results), results.units,
                links=results.summary["links"])
    with open(tmp_path / "predictions.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_reordering_that_starts_fast_retransmits_leaves_the_equilibrium(tmp_path):
    """netem's jitter reorders packets sent closer than the jitter's spread; the receiver's
    duplicate ACKs start fast retransmits that cut Vegas's window. The shipped
    almost_vegas_jitter example was compared, 98 % off, with its prediction drawn at 10 Mb/s
    (acceptance test Z7): now "no model", and no prediction drawn."""
    topology = dumbbell("vegas", flows=1, impairments={
        "R1->R2": {"jitter_ms": 5, "jitter_mode": "netem"}})
    report = checked(topology)
    assert rows(report) and all(row["error_pct"] is None for row in rows(report))
    (reason,) = {row["no_model"] for row in rows(report)}
    assert re.fullmatch(r"the data path of F1 reorders packets \(LB R1->R2: netem jitter; \d+ "
                        r"fast retransmits in the compared window\): duplicate ACKs of reordered "
                        r"packets cut the window as losses do, which the delay-based "
                        r"equilibrium has no term for", reason)
    assert report["no_equilibrium"] == [{"start_s": 0.0, "end_s": 6.0, "reason": reason}]
    assert predictions(report, topology, tmp_path) == []


def test_jitter_that_reorders_nothing_keeps_the_equilibrium():
    """The rule is on fast retransmits in the compared window: 0.1 ms of netem jitter cannot
    reorder packets sent 1.2 ms apart."""
    report = checked(dumbbell("vegas", flows=1, impairments={
        "R1->R2": {"jitter_ms": 0.1, "jitter_mode": "netem"}}))
    compared = [row for row in rows(report) if row["error_pct"] is not None]
    assert {row["quantity"] for row in compared} == {"rate_mbps", "queue_delay_ms", "backlog_kb"}
    assert report["no_equilibrium"] == []


def test_the_prediction_is_cut_where_the_equilibrium_does_not_hold(tmp_path):
    """F1 alone over a clean path, then F2 joins at 3 s over a lossy access link: the shared
    equilibrium is drawn for [0, 3] s only."""
    topology = dumbbell("vegas", duration_s=8)
    topology["flows"][1]["start_s"] = 3.0
    ls2 = next(entry for entry in topology["links"] if entry["id"] == "LS2")
    ls2["impairments"] = {"S2->R1": {"loss_rate": 0.02}}
    report = checked(topology)
    assert [(span["start_s"], span["end_s"]) for span in report["no_equilibrium"]] == [(3.0, 8.0)]
    written = predictions(report, topology, tmp_path)
    assert written and {row["id"] for row in written if row["kind"] == "flow"} == {"F1"}
    assert {(float(row["start_s"]), float(row["end_s"])) for row in written} == {(0.0, 3.0)}


@given(st.floats(0, 100), st.floats(0, 100),
       st.lists(st.tuples(st.floats(0, 100), st.floats(0, 100)), max_size=5))
def test_uncovered_parts_are_what_no_span_covers(start, length, spans):
    from theory.check_report import uncovered

    end = start + length
    spans = [(min(a, b), max(a, b)) for a, b in spans]
    parts = uncovered(start, end, spans)
    assert all(start <= a < b <= end for a, b in parts)
    assert all(b <= c for (_, b), (c, _) in itertools.pairwise(parts))
    for a, b in parts:                                   # no span covers a part's inside ...
        assert not any(s < b and e > a for s, e in spans)
    for point in [start + length * k / 7 for k in range(8)]:   # ... and every other point is
        inside = any(a <= point <= b for a, b in parts)           # covered by a span
        assert inside or any(s <= point <= e for s, e in spans) or end == start


def test_acks_behind_another_flows_standing_queue_leave_the_equilibrium():
    """Two FAST flows in opposite directions over one full-duplex link: each one's ACKs wait in
    the other's standing queue and leave it in bursts (ACK compression), so each direction is
    94 % busy with a queue; compared, the rates were 5.6 % and the backlogs 9.9 % off
    (acceptance test Z13). DCTCP's check had this rule; the fluid model's had not."""
    topology = {"units": "si", "packet_bytes": {"data": 1500, "ack": 40},
                "hosts": ["H1", "H2"], "routers": ["R1", "R2"],
                "links": [link("LB", "R1", "R2", 10, 10, buffer_kb=500),
                          link("L1", "H1", "R1"), link("L2", "R2", "H2")],
                "flows": [{"id": "F1", "src": "H1", "dst": "H2", "algorithm": "fast",
                           "params": {"alpha": 20}, "data_mb": None},
                          {"id": "F2", "src": "H2", "dst": "H1", "algorithm": "fast",
                           "params": {"alpha": 20}, "data_mb": None}],
                "duration_s": 6}
    report = checked(topology)
    assert rows(report) and all(row["error_pct"] is None for row in rows(report))
    (reason,) = {row["no_model"] for row in rows(report)}
    assert re.fullmatch(r"the ACKs of F\d wait in the standing queue of LB R\d->R\d, which holds "
                        r"the data of F\d \(ACK compression, Zhang, Shenker and Clark 1991\): "
                        r"they leave it in bursts, the link then idles while a queue stands, "
                        r"and the fluid equilibrium needs evenly clocked flows", reason)


def test_acks_on_a_half_duplex_link_of_the_flows_own_data_path_keep_the_equilibrium():
    """A half-duplex link is one transmitter for both directions: a flow's ACKs wait behind its
    own data there (test case 2), which the fluid model counts as the flows' shared resource."""
    topology = dumbbell(flows=2)
    topology["links"][0]["duplex"] = "half"
    report = checked(topology)
    compared = [row for row in rows(report) if row["error_pct"] is not None]
    assert {row["quantity"] for row in compared} >= {"rate_mbps", "queue_delay_ms"}
