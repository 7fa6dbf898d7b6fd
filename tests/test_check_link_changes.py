"""`--check` on links that change (theory/link_changes.py): the intervals are cut at every
change of a link, a flow whose path departs from the topology's fixed links has no model there,
the fluid timeline stops at the first change on the delay-based flows' paths, and a link back
to its values is compared again."""
from __future__ import annotations

import pytest
from networks import dumbbell, run, two_hosts

from theory.check import compare, predict_run
from theory.check_report import format_report
from theory.link_changes import LinkTimeline
from topologies import load_topology


def reno_with_outage() -> dict:
    """One Reno flow over a lossy 20 Mb/s link that is down from 3 s to 4 s."""
    topology = two_hosts(rate_mbps=20, delay_ms=5, impairment={"loss_rate": 0.01},
                         duration_s=12, transport={"min_rto_s": 0.2})
    topology["events"] = [{"at_s": 3, "link": "L", "action": "down"},
                          {"at_s": 4, "link": "L", "action": "up"}]
    return topology


def check(topology: dict, settle_s: float = 1.0) -> dict:
    results = run(topology, interval_s=0.1)
    spec = load_topology(topology)
    return compare(results, predict_run(spec, results), settle_s=settle_s)


def test_an_outage_cuts_the_intervals_and_is_not_compared():
    report = check(reno_with_outage(), settle_s=0.5)
    assert report["link_changes_s"] == [3.0, 4.0]
    spans = [(iv["start_s"], iv["end_s"]) for iv in report["intervals"]]
    assert spans == [(0.0, 3.0), (3.0, 4.0), (4.0, 12.0)]
    down, after = report["intervals"][1]["rows"][0], report["intervals"][2]["rows"][0]
    assert down["no_model"] == ("link L is down (since 3 s, its events): every model takes the "
                                "topology's links as fixed and up")
    assert after.get("no_model") is None and after["error_pct"] is not None   # repaired: compared


def fast_pair(schedule) -> dict:
    """Two FAST flows over a 10 Mb/s bottleneck, the second from 4 s, with a rate schedule."""
    topology = dumbbell(2, rate_mbps=10, delay_ms=10, buffer_kb=500, algorithm="fast",
                        params={"alpha": 20}, start_s=[0.0, 4.0], duration_s=16)
    bottleneck = next(link for link in topology["links"] if link["id"] == "L")
    if schedule:
        bottleneck["rate_schedule"] = schedule
    return topology


def test_a_rate_change_stops_the_fluid_timeline_and_its_comparison():
    topology = fast_pair([[8, 5]])
    spec = load_topology(topology)
    results = run(topology, interval_s=0.1)
    model = predict_run(spec, results)
    assert model.horizon_s == 8.0
    assert max(iv.end_s for iv in model.timeline) == 8.0 and model.finish_s == {}
    report = compare(results, model, settle_s=1.0)
    assert report["unmatched"] == []
    before, after = report["intervals"][-2:]
    assert (before["start_s"], before["end_s"], after["start_s"]) == (4.0, 8.0, 8.0)
    assert all(r.get("no_model") is None for r in before["rows"])
    reason = ("link L runs at 5 Mb/s (since 8 s, its rate_schedule), not its 10 Mb/s: every "
              "model takes the topology's links as fixed and up")
    assert {r["no_model"] for r in after["rows"]} == {reason}
    assert "not compared" in format_report(report)


def test_a_rate_that_returns_leaves_the_link_as_the_models_take_it():
    timeline = LinkTimeline(load_topology(fast_pair([[8, 5], [12, 10]])))
    assert timeline.times() == [8.0, 12.0]
    assert list(timeline.departures(8.0)) == ["L"]
    assert timeline.departures(7.9) == {} and timeline.departures(12.0) == {}
    assert list(timeline.departures(8.0)) == ["L"]            # (asked again, earlier)
    same = LinkTimeline(load_topology(fast_pair([[8, 10]])))  # a change to the value it has
    assert same.departures(9.0) == {}


def test_a_schedule_entry_at_time_zero_is_the_links_value():
    spec = load_topology(fast_pair([[0, 5], [8, 10]]))
    link = next(ls for ls in spec.links if ls.id == "L")
    assert link.rate_bps == pytest.approx(5e6) and link.rate_schedule == ((8.0, 1e7),)
    assert LinkTimeline(spec).departures(7.0) == {}
    assert LinkTimeline(spec).departures(9.0)["L"].startswith("link L runs at 10 Mb/s (since 8 s")


def test_a_change_on_a_link_no_flow_crosses_cuts_nothing():
    """Each cut costs the settling time: a schedule on an idle link must not leave every
    interval too short to compare (found in review: 12 one-second intervals, none compared)."""
    topology = fast_pair([])
    topology["links"].append({"id": "X", "ends": ["R1", "R2"], "rate_mbps": 1, "delay_ms": 100,
                              "buffer_kb": 10, "rate_schedule": [[t, 2 + t % 2] for t in
                                                                 range(1, 16)]})
    report = check(topology)
    assert report["link_changes_s"] == []
    assert [(iv["start_s"], iv["end_s"]) for iv in report["intervals"]] == [(0.0, 4.0),
                                                                            (4.0, 16.0)]
    assert report["compared"] > 0
