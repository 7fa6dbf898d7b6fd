"""FAST TCP's window update on hand-computed RTT sequences, without a simulator."""
from __future__ import annotations

from pathlib import Path

import pytest

from flows.congestion import LOSS, OPEN, RECOVERY
from flows.fast import Fast
from flows.recovery import SackWindow, recovery_window


@pytest.fixture
def make(fake_flow):
    """make(cwnd=10.0, **params) -> (flow, Fast on it)."""
    def make(cwnd=10.0, **params):
        flow = fake_flow(cwnd)
        return flow, Fast(flow, params)
    return make


def test_defaults_and_tick_interval(make):
    flow, cc = make()
    assert cc.params == {"alpha": 20.0, "gamma": 0.5, "update_interval_s": 0.05, "rtt_samples": 40}
    assert cc.tick_interval_s == 0.05
    _, cc = make(update_interval_s=0.02)
    assert cc.tick_interval_s == 0.02


def test_update_follows_the_fast_equation(make):
    flow, cc = make(cwnd=100.0, alpha=50, gamma=0.5)
    cc.on_rtt(0.100)                         # baseRTT
    cc.on_rtt(0.140)
    cc.on_rtt(0.120)                         # avgRTT = 0.12
    cc.tick()
    expected = 0.5 * 100 + 0.5 * (0.100 / 0.120 * 100 + 50)
    assert flow.cwnd == pytest.approx(expected)


def test_growth_is_at_most_doubling_per_update(make):
    flow, cc = make(cwnd=4.0, alpha=100)
    cc.on_rtt(0.05)
    cc.tick()                                # the equation asks for 4 + 50: capped at 8
    assert flow.cwnd == 8.0
    cc.tick()
    assert flow.cwnd == 16.0


def test_equilibrium_keeps_alpha_packets_queued(make):
    # with RTT = base + q and w = x * RTT, the fixed point is x * q = alpha
    flow, cc = make(cwnd=10.0, alpha=30, gamma=0.5)
    base, rate = 0.1, 1000.0                  # packets/s the bottleneck gives the flow
    for _ in range(200):
        rtt = max(base, flow.cwnd / rate)     # a queue forms once the window exceeds the BDP
        cc.on_rtt(rtt)
        cc.samples.clear()
        cc.sample_sum = 0.0
        cc.on_rtt(rtt)
        cc.tick()
    rtt = flow.cwnd / rate
    assert rate * (rtt - base) == pytest.approx(30, rel=1e-6)


def test_average_uses_only_the_last_n_samples(make):
    flow, cc = make(rtt_samples=3)
    for rtt in (0.5, 0.1, 0.2, 0.3):
        cc.on_rtt(rtt)
    assert cc.average_rtt() == pytest.approx(0.2)
    assert cc.base_rtt == 0.1


def test_no_update_without_samples_or_during_recovery(make):
    flow, cc = make(cwnd=10.0)
    cc.tick()
    assert flow.cwnd == 10.0
    cc.on_rtt(0.1)
    flow.state = RECOVERY
    cc.tick()
    assert flow.cwnd == 10.0


def test_loss_response_halves_and_timeout_restarts_from_one(make):
    flow, cc = make(cwnd=40.0)
    window = recovery_window(flow, cc, 3)     # the transport's window during recovery
    window.loss_reaction()
    assert flow.ssthresh == 20.0
    window.enter_recovery()
    assert flow.cwnd == 20.0                  # halved, no inflation: SACK recovery counts pipe
    assert Fast.recovery == "sack" and isinstance(window, SackWindow)
    window.end_episode()
    assert flow.cwnd == 20.0 and flow.state == OPEN
    window.enter_loss()
    assert flow.cwnd == 1.0 and flow.state == LOSS


def test_after_a_timeout_the_update_waits_for_an_ack(make):
    """In LOSS the clock alone does not grow the window: an update needs snd_una to have moved
    since the previous one (over a dead path, one retransmission per timeout, as Reno)."""
    flow, cc = make(cwnd=40.0)
    cc.on_rtt(0.1)
    cc.tick()                                 # OPEN: updates, remembering snd_una (0)
    flow.state, flow.cwnd = LOSS, 1.0         # the timeout's loss window
    for _ in range(5):
        cc.tick()
    assert flow.cwnd == 1.0
    flow.snd_una = 1                          # the retransmission is acknowledged
    cc.tick()
    assert flow.cwnd == 2.0                   # at most doubling
    cc.tick()
    assert flow.cwnd == 2.0                   # nothing acknowledged since
    flow.state = OPEN
    cc.tick()
    assert flow.cwnd == 4.0                   # OPEN: on the clock again


def test_a_timeout_over_a_dead_link_sends_one_packet_per_timeout(tmp_path):
    """Test case 0's FAST flow with its link down 5-8 s: into the outage go only the
    retransmissions of its timeouts (before: the clock grew the window to 16 packets and more, 77
    packets dropped by the dead link in 0.7 s)."""
    import csv
    import json

    from netsim.event_trace import EventTrace
    from netsim.run import Run
    from topologies.loader import load_topology
    data = json.loads((Path(__file__).resolve().parents[1] / "topologies"
                       / "test_case_0.json").read_text())
    data["events"] = [{"at_s": 5.0, "link": "L1", "action": "down"},
                      {"at_s": 8.0, "link": "L1", "action": "up"}]
    data["flows"][0]["data_mb"] = 8
    trace = tmp_path / "trace.csv"
    run = Run(load_topology(data))
    try:
        with EventTrace(trace) as tracer:
            tracer.install(run.network)
            results = run.execute()
    finally:
        run.close()
    with open(trace) as fh:
        dead = [row for row in csv.DictReader(fh) if row["cause"] == "link_down"]
    flow = results.summary["flows"]["F1"]
    assert flow["finish_s"] is not None and flow["timeouts"] >= 2
    assert len(dead) <= flow["timeouts"]
    assert all(row["kind"] == "data" for row in dead)


def test_acks_do_not_move_the_window(make):
    flow, cc = make(cwnd=10.0)
    cc.on_ack(5)
    assert flow.cwnd == 10.0


@pytest.mark.parametrize("name, value, problem", [
    ("gamma", 1.5, "expected a number in (0, 1]"),
    ("rtt_samples", 2.5, "expected a whole number of samples from 1 to 1000000"),
    ("alpha", -1, "expected a positive number"),
])
def test_parameter_checks(name, value, problem):
    assert Fast.param_problem(name, value) == problem
