"""Every run ends: completion, duration, the stall guard, and runs that cannot end."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from netsim import RunError, load_topology, simulate
from netsim.run import Run

ROOT = Path(__file__).resolve().parent.parent

TC0 = json.loads((ROOT / "topologies" / "test_case_0.json").read_text())


def test_stall_guard_stops_a_flow_that_cannot_progress_and_says_why():
    data = json.loads((ROOT / "topologies" / "test_case_1.json").read_text())
    data["routing"] = {"protocol": "static"}        # nothing will put the routes back
    run = Run(load_topology(data), stall_timeout_s=20.0)
    for router in run.network.routers.values():
        router.routes.clear()                    # no router knows a way anywhere
    results = run.execute()
    summary = results.summary
    assert summary["stop_reason"] == "stalled"
    assert "F1 made no progress since t=0.500 s" in summary["stop_detail"]
    assert "lack of a route" in summary["stop_detail"]
    assert 20.0 <= summary["end_time_s"] <= 22.5
    assert summary["flows"]["F1"]["completed"] is False
    assert summary["flows"]["F1"]["timeouts"] >= 3


def test_endless_flow_needs_a_duration():
    data = copy.deepcopy(TC0)
    data["flows"][0]["data_mb"] = None
    spec = load_topology(data)
    with pytest.raises(RunError, match="flow F1 has no data_mb, so nothing ends the run"):
        simulate(spec)
    results = simulate(spec, duration_s=2.0)
    assert results.summary["stop_reason"] == "duration"
    assert results.summary["flows"]["F1"]["finish_s"] is None
    assert results.summary["flows"]["F1"]["goodput_mbps"] > 1.0


def test_topology_without_flows_needs_a_duration():
    data = copy.deepcopy(TC0)
    data["flows"] = []
    with pytest.raises(RunError, match="no flows"):
        simulate(load_topology(data))
    assert simulate(load_topology(data), duration_s=1.0).summary["end_time_s"] == 1.0


def test_run_stops_when_finite_flows_complete_even_with_a_long_duration():
    spec = load_topology(ROOT / "topologies" / "test_case_0.json")
    results = simulate(spec, duration_s=1000.0)
    assert results.summary["stop_reason"] == "completed"
    assert results.summary["end_time_s"] < 60.0


@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_bad_duration_and_interval_are_rejected(bad):
    spec = load_topology(ROOT / "topologies" / "test_case_0.json")
    with pytest.raises(RunError, match="duration"):
        Run(spec, duration_s=bad)
    with pytest.raises(RunError, match="interval"):
        Run(spec, interval_s=bad)


@pytest.mark.parametrize("seed", [-4, 1.5, "abc", True, None.__class__])
def test_the_api_refuses_a_seed_the_topology_would(seed):
    """As the command line's --seed and a topology's "seed": a non-negative integer (-4 ran as
    4, under another configuration digest; True, 1.5 and "abc" were written to summary.json)."""
    from netsim.run import RunError, simulate
    from topologies.loader import load_topology
    spec = load_topology({"hosts": ["A", "B"],
                          "links": [{"id": "L", "ends": ["A", "B"], "rate_mbps": 10,
                                     "delay_ms": 5, "buffer_kb": 50}],
                          "flows": [{"id": "F", "src": "A", "dst": "B", "data_mb": 0.1}]})
    with pytest.raises(RunError, match=r"^seed: expected a non-negative integer of at most 20 "
                                       r"digits \(as a topology's seed\), got "):
        simulate(spec, seed=seed)
    assert simulate(spec, seed=10 ** 20 - 1).summary["seed"] == 10 ** 20 - 1


@pytest.mark.parametrize("seed, shown", [(10 ** 20, str(10 ** 20)),
                                         (10 ** 5000, "an integer of 16610 bits")],
                         ids=["21 digits", "5001 digits"])
def test_a_seed_of_more_digits_than_a_topology_may_hold_is_refused(seed, shown):
    """10**30 used to run, and wrote a summary.json whose seed plot and report refused."""
    from netsim.run import RunError, simulate
    from topologies.loader import load_topology
    spec = load_topology({"hosts": ["A", "B"],
                          "links": [{"id": "L", "ends": ["A", "B"], "rate_mbps": 10,
                                     "delay_ms": 5, "buffer_kb": 50}],
                          "flows": [{"id": "F", "src": "A", "dst": "B", "data_mb": 0.1}]})
    with pytest.raises(RunError) as raised:
        simulate(spec, seed=seed)
    assert str(raised.value) == ("seed: expected a non-negative integer of at most 20 digits "
                                 f"(as a topology's seed), got {shown}")


@pytest.mark.parametrize("spec", [{"hosts": ["A", "B"]}, "topologies/test_case_0.json", None])
def test_the_api_names_load_topology_for_what_is_not_a_spec(spec):
    """A dict or a path given to simulate() failed deep inside with an AttributeError."""
    from netsim.run import Run, simulate
    for call in (simulate, Run):
        with pytest.raises(TypeError, match=r"^expected a TopologySpec, got (dict|str|NoneType): "
                                            r"read a file or a dict with netsim.load_topology "
                                            r"first$"):
            call(spec)


# Two paths between R1 and R2: static routing sends the data over X and the ACKs over Y (the
# equal-cost tie goes to the first link listed at each end). Y1 fails at 1 s and nothing routes
# the ACKs around it: the data still arrives, and the flow can never finish.
ONE_WAY = {
    "hosts": ["H1", "H2"], "routers": ["R1", "R2", "R3", "R4"],
    "routing": {"protocol": "static"},
    "links": [
        {"id": "A", "ends": ["H1", "R1"], "rate_mbps": 10, "delay_ms": 1, "buffer_kb": 100},
        {"id": "X1", "ends": ["R1", "R3"], "rate_mbps": 10, "delay_ms": 5, "buffer_kb": 100},
        {"id": "Y2", "ends": ["R4", "R2"], "rate_mbps": 10, "delay_ms": 5, "buffer_kb": 100},
        {"id": "Y1", "ends": ["R1", "R4"], "rate_mbps": 10, "delay_ms": 5, "buffer_kb": 100},
        {"id": "X2", "ends": ["R3", "R2"], "rate_mbps": 10, "delay_ms": 5, "buffer_kb": 100},
        {"id": "B", "ends": ["R2", "H2"], "rate_mbps": 10, "delay_ms": 1, "buffer_kb": 100}],
    "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 5, "algorithm": "reno"}],
    "events": [{"at_s": 1.0, "link": "Y1", "action": "down"}],
}


@pytest.mark.parametrize("stack", ["classic", "linux"])
def test_resending_data_the_receiver_already_has_is_not_progress(stack):
    """With its ACK path down, a sender resends its oldest packet at every RTO and the receiver
    gets each copy: arrivals, but no progress. The run used to go on to t = 12.5 M s (617 MB of
    flows.csv at a 1 s interval); the stall guard now stops it."""
    data = copy.deepcopy(ONE_WAY)
    data["transport"] = {"stack": stack}
    run = Run(load_topology(data), interval_s=1.0, stall_timeout_s=300.0)
    results = run.execute()
    summary = results.summary
    flow = run.network.flows["F1"]
    assert summary["stop_reason"] == "stalled"
    assert flow.receiver.rcv_nxt > flow.snd_una        # the data got through, the ACKs did not
    assert f"its receiver holding the first {flow.receiver.rcv_nxt} in order" \
        in summary["stop_detail"]
    assert "no new data reached its receiver, none was newly acknowledged" \
        in summary["stop_detail"]
    progress_s = flow.last_progress_s
    assert 1.0 < progress_s < 2.0                       # the last new data, around the failure
    assert progress_s + 300.0 <= summary["end_time_s"] <= progress_s + 302.0
    assert flow.timeouts >= 5                          # it kept resending all that time


def test_a_duplicate_arrival_is_not_progress_and_new_data_out_of_order_is():
    from flows.receiver import Receiver
    from simulator.engine import Simulator
    sim = Simulator()
    sent = []
    host = type("Host", (), {"send": staticmethod(sent.append)})()

    def packet(seq):
        from components.packet import DATA, Packet
        return Packet(DATA, host, host, 1000, None, seq, 0, -1, 0.0, False, None, False, 0)

    receiver = Receiver(sim, host, host, 10, 1000, 1000, 40, lambda ack: None, 0.0)
    for now, seq, progress_s in [(1.0, 0, 1.0), (2.0, 0, 1.0), (3.0, 2, 3.0), (4.0, 2, 3.0),
                                 (5.0, 1, 5.0), (6.0, 1, 5.0)]:
        sim.now = now
        receiver.on_data(packet(seq))
        assert receiver.last_new_s == progress_s, (now, seq)
    assert receiver.rcv_nxt == 3 and len(sent) == 6       # every arrival is still acknowledged


def test_a_run_without_duration_ends_at_the_largest_time(monkeypatch):
    """A flow that keeps making progress, however slowly, is stopped at MAX_RUN_TIME_S (here
    lowered to 20 s: 5 MB at 1 Mb/s needs 40 s). It is twice the largest time a file may give,
    so that a flow starting then can still finish (tests/test_bounded_statistics.py)."""
    import netsim.run
    from topologies.bounds import MAX_RUN_TIME_S, MAX_TIME_S
    assert MAX_RUN_TIME_S == 2 * MAX_TIME_S
    monkeypatch.setattr(netsim.run, "MAX_RUN_TIME_S", 20.0)
    data = copy.deepcopy(TC0)
    for link in data["links"]:
        link["rate_mbps"] = 1
    data["flows"][0]["data_mb"] = 5
    results = simulate(load_topology(data))
    summary = results.summary
    assert summary["stop_reason"] == "limit"
    assert summary["stop_detail"] == ("stopped at a bound: simulated time reached its limit "
                                      "of 20 s; give a duration to end sooner")
    assert summary["end_time_s"] == 20.0
    assert summary["flows"]["F1"]["completed"] is False


# H1 - R1 - R2 - R3 - H2: M (R2-R3) fails for good at 0.5 s, and with it every path.
CHAIN = {
    "hosts": ["H1", "H2"], "routers": ["R1", "R2", "R3"],
    "routing": {"protocol": "bellman-ford", "update_interval_s": 0.001, "settle_s": 0.0005},
    "links": [
        {"id": "A", "ends": ["H1", "R1"], "rate_mbps": 10, "delay_ms": 1, "buffer_kb": 50},
        {"id": "L", "ends": ["R1", "R2"], "rate_mbps": 10, "delay_ms": 5, "buffer_kb": 50},
        {"id": "M", "ends": ["R2", "R3"], "rate_mbps": 10, "delay_ms": 5, "buffer_kb": 50},
        {"id": "B", "ends": ["R3", "H2"], "rate_mbps": 10, "delay_ms": 1, "buffer_kb": 50}],
    "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 5, "algorithm": "reno"}],
    "events": [{"at_s": 0.5, "link": "M", "action": "down"}],
}


@pytest.mark.parametrize("protocol", ["bellman-ford", "static"])
def test_a_flow_cut_off_for_good_stops_the_run_soon(protocol):
    """No path of up links joins the flow's hosts and no link comes up later: it can never
    progress, so it waits only as long as its packets could still be on their way (here the
    1 s check), not the 1800 s of the stall guard (under 1 ms Bellman-Ford rounds, half an hour
    of CPU for 30 routers)."""
    from netsim.run import cut_off_wait_s
    data = copy.deepcopy(CHAIN)
    data["routing"]["protocol"] = protocol
    spec = load_topology(data)
    assert cut_off_wait_s(spec) == 1.0          # 4 hops of 5 ms plus 50 kB at 10 Mb/s: < 1 s
    run = Run(spec)
    summary = run.execute().summary
    assert summary["stop_reason"] == "stalled"
    assert "no path of up links joins H1 and H2 (down: M) and no link comes up later" \
        in summary["stop_detail"]
    progress_s = run.network.flows["F1"].last_progress_s
    assert progress_s < 0.6
    assert progress_s + 1.0 <= summary["end_time_s"] <= progress_s + 2.0 < 3.0


def test_a_flow_cut_off_until_a_repair_waits_for_it():
    data = copy.deepcopy(CHAIN)
    data["events"].append({"at_s": 40.0, "link": "M", "action": "up"})
    summary = simulate(load_topology(data)).summary
    assert summary["stop_reason"] == "completed"
    assert summary["end_time_s"] > 40.0


def test_a_cut_off_flow_waits_while_its_packets_may_still_arrive():
    """The wait covers one hop per router and one more, each the slowest link's delay and full
    buffer: at most CUT_OFF_WAIT_CAP_S."""
    from netsim.run import CUT_OFF_WAIT_CAP_S, cut_off_wait_s
    data = copy.deepcopy(CHAIN)
    data["links"][1].update(rate_mbps=1, buffer_kb=100, delay_ms=50)     # 0.9 s a hop
    wait_s = cut_off_wait_s(load_topology(data))
    assert wait_s == pytest.approx(4 * (0.05 + (100_000 + 65536) * 8 / 1e6))
    data["links"][1].update(rate_mbps=0.01)
    assert cut_off_wait_s(load_topology(data)) == CUT_OFF_WAIT_CAP_S


@pytest.mark.parametrize("count", [1, 3, 4, 13, 43])
def test_the_stall_line_gives_three_reasons_and_names_ten_more(count):
    """43 stalled flows of a fat tree with failed links made one line of 9 400 characters, on
    stderr and in the console's headline (acceptance testing at scale)."""
    from types import SimpleNamespace

    from netsim.run import stall_detail
    flows = [SimpleNamespace(id=f"F{i}") for i in range(count)]
    line = stall_detail(flows, lambda f: f"{f.id} made no progress")
    shown = [f"F{i} made no progress" for i in range(min(count, 3))]
    assert line.startswith("; ".join(shown))
    if count <= 3:
        assert line == "; ".join(shown)
    else:
        more = [f"F{i}" for i in range(3, min(count, 13))]
        assert line.endswith(f"; and {count - 3} more flow{'s' if count > 4 else ''} made no "
                             f"progress ({', '.join(more)}{', ...' if count > 13 else ''}; "
                             f"each flow's counters are in summary.json)")
