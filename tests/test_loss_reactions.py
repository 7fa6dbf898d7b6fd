"""The classic transport's reactions to chosen losses, on Fall and Floyd's (1996) path: one window
reduction per window of data (RFC 3168 §6.1.2), ssthresh never above the window that was in
flight (RFC 5681 (4) as an upper bound), and a backed-off RTO kept until new data is
acknowledged (RFC 6298, the note after (5.7)).

The path is 8 Mb/s and 0.1 ms to a router, then 0.8 Mb/s and 100 ms, with buffers too large to
overflow: every loss is one the test chooses, by dropping the n-th transmission of a packet as it
reaches the receiver (or marking it CE). A flow starts with one packet and an ssthresh of 16, so
it is in congestion avoidance at about 17.7 packets when packet 60 is sent.
"""
from __future__ import annotations

import pytest

from flows import register_algorithm
from flows.congestion import CaEvent
from flows.reno import Reno
from netsim.run import Run
from topologies import load_topology


def _path(*, ecn: bool = False, algorithm: str = "reno", data_mb: float = 0.15,
          marking: bool = True, transport: dict | None = None) -> dict:
    bottleneck = {"id": "LB", "ends": ["R1", "K1"], "rate_mbps": 0.8, "delay_ms": 100,
                  "buffer_kb": 1000}
    if ecn and marking:                                # marks above 8 kB: ECN reactions, no loss
        bottleneck["queue"] = {"discipline": "step", "k_kb": 8}
    transport = {**({"initial_cwnd_pkts": 1} if ecn and marking else
                    {"initial_cwnd_pkts": 1, "initial_ssthresh_pkts": 16}), **(transport or {})}
    return {"name": "fall_floyd", "units": "si", "packet_bytes": {"data": 1000, "ack": 40},
            "transport": transport, "hosts": ["S1", "K1"], "routers": ["R1"],
            "links": [{"id": "LA", "ends": ["S1", "R1"], "rate_mbps": 8, "delay_ms": 0.1,
                       "buffer_kb": 1000}, bottleneck],
            "flows": [{"id": "F1", "src": "S1", "dst": "K1", "data_mb": data_mb, "start_s": 0,
                       "algorithm": algorithm, "ecn": ecn}]}


def _run_dropping(topology: dict, drops: dict, duration_s: float | None = None,
                  marks: dict | None = None):
    """Run `topology`, dropping transmission n of packet seq for each n in drops[seq] (counted
    from 1) as it reaches the receiver, and marking CE those in `marks` the same way; returns
    (the flow, its summary)."""
    run = Run(load_topology(topology), duration_s=duration_s)
    sender = run.network.flows["F1"].sender
    deliver = sender.deliver_data
    arrivals: dict = {}

    def deliver_unless_dropped(packet):
        n = arrivals[packet.seq] = arrivals.get(packet.seq, 0) + 1
        if n in (marks or {}).get(packet.seq, ()):
            packet.ce = True
        if n not in drops.get(packet.seq, ()):
            deliver(packet)

    sender.deliver_data = deliver_unless_dropped
    results = run.execute()
    return run.network.flows["F1"], results.summary["flows"]["F1"]


def test_a_second_loss_after_renos_partial_ack_exit_halves_the_window_again():
    """Reno leaves recovery at the partial ACK of the first loss with cwnd 9.5 and 25 packets of
    the inflated window in flight; the second fast retransmit took ssthresh = 25 / 2 = 12.5,
    above the window, and Reno ended with more than after one loss. Fall and Floyd's Reno halves
    again: ssthresh = 10 / 2 (what a window of 9.5 lets out)."""
    one, one_summary = _run_dropping(_path(), {60: {1}})
    two, two_summary = _run_dropping(_path(), {60: {1}, 62: {1}})
    assert one_summary["counters"]["fast_retransmits"] == 1 and one.ssthresh == 9.5
    assert two_summary["counters"]["fast_retransmits"] == 2 and two_summary["timeouts"] == 0
    assert two.ssthresh == 5.0 < one.ssthresh


def test_newreno_halves_once_for_two_losses_of_one_window():
    flow, summary = _run_dropping(_path(algorithm="newreno"), {60: {1}, 62: {1}})
    assert summary["retransmissions"] == 2 and summary["timeouts"] == 0
    assert flow.ssthresh == 9.5


@pytest.mark.parametrize("algorithm", ["reno", "newreno"])
def test_a_loss_in_the_window_an_ecn_reaction_reduced_keeps_its_ssthresh(algorithm):
    """The ECE that arrives at 1.46 s halves the window (50 -> ssthresh 25); packet 70, sent
    before that reaction, is lost and fast-retransmitted at 1.69 s. RFC 3168 §6.1.2: one
    reduction per window of data, so ssthresh stays 25 (it became 15.5, a second reduction)."""
    no_loss, quiet = _run_dropping(_path(ecn=True, algorithm=algorithm, data_mb=1.0), {},
                                   duration_s=2.0)
    assert quiet["ecn_reactions"] == 1 and no_loss.ssthresh == 25.0
    flow, summary = _run_dropping(_path(ecn=True, algorithm=algorithm, data_mb=1.0), {70: {1}},
                                  duration_s=2.0)
    assert summary["ecn_reactions"] == 1 and summary["counters"]["fast_retransmits"] == 1
    assert flow.ssthresh == 25.0


def test_a_loss_after_the_reduced_window_is_acknowledged_reduces_again():
    """Packet 120 is sent after the reaction's window (which ends below 101) is acknowledged:
    its loss is new congestion, and ssthresh falls below the 25 of the ECN reaction."""
    flow, summary = _run_dropping(_path(ecn=True, data_mb=1.0), {120: {1}}, duration_s=3.0)
    assert summary["ecn_reactions"] == 1 and summary["counters"]["fast_retransmits"] == 1
    assert flow.ssthresh < 25.0


def test_duplicate_acks_after_a_timeout_keep_the_backed_off_rto():
    """Packet 60 is lost four times. The duplicate ACKs of the packets sent after it reach the
    sender after the first timeout (2.59 s) and gave RTT samples that undid the backoff: the
    timeouts came 1, 2, 2 s apart (the third at 6.59 s). RFC 6298 (the note after (5.7)): the
    RTO collapses only once new data is acknowledged, so they come 1, 2, 4 s apart (the third at
    8.59 s)."""
    flow, summary = _run_dropping(_path(), {60: {1, 2, 3, 4}}, duration_s=8.0)
    assert summary["timeouts"] == 2
    assert flow.sender.rtt.rto == 4.0 and flow.sender.rtt.backoffs == 2
    flow, summary = _run_dropping(_path(), {60: {1, 2, 3, 4}}, duration_s=9.0)
    assert summary["timeouts"] == 3


def test_without_duplicate_acks_the_backoff_doubles_as_before():
    """The last packet lost once, then four times: nothing else is in flight, so the three
    further expiries come 2, 4 and 8 s after the first."""
    _, once = _run_dropping(_path(), {149: {1}})
    flow, summary = _run_dropping(_path(), {149: {1, 2, 3, 4}})
    assert once["timeouts"] == 1 and summary["timeouts"] == 4 and summary["completed"]
    assert summary["finish_s"] - once["finish_s"] == pytest.approx(2 + 4 + 8, abs=1e-9)
    assert flow.sender.rtt.backoffs == 4     # the ACK of a retransmission gives no sample (Karn)


class _EventRecordingReno(Reno):
    """Reno that records the congestion events the transport tells it of."""

    name = "reno_events"

    def __init__(self, flow, params=None):
        super().__init__(flow, params)
        self.events: list = []

    def cwnd_event(self, event):
        self.events.append(event)


def test_a_timeout_in_the_window_an_ecn_reaction_reduced_keeps_its_ssthresh():
    """Packets 70-99, sent before the reaction at 1.46 s, are lost: the timeout at 2.65 s finds
    the flow OPEN, but its window was reduced already; no new ssthresh, and no LOSS event (Linux
    raises CA_EVENT_LOSS only with the cut, tcp_enter_loss)."""
    register_algorithm(_EventRecordingReno)
    flow, summary = _run_dropping(_path(ecn=True, algorithm="reno_events", data_mb=1.0),
                                  {seq: {1} for seq in range(70, 100)}, duration_s=3.0)
    assert summary["ecn_reactions"] == 1 and summary["timeouts"] == 1
    assert flow.ssthresh == 25.0
    assert CaEvent.LOSS not in flow.cc.events


@pytest.mark.parametrize("mark, reactions", [(61, 1), (66, 0)])
def test_one_drop_and_one_mark_of_a_window_reduce_it_once_in_either_order(mark, reactions):
    """An ECN flow without a marking queue; packet 60 is lost and one packet is marked by hand.
    The mark on 61 comes back first (its ACK is the first duplicate): the ECN reaction, then a
    fast retransmit that keeps its ssthresh. The mark on 66 comes back after the fast
    retransmit: the loss reaction now queues CWR (RFC 3168 §6.1.2: after any reduction), the
    receiver stops echoing the mark, and recovery does not end in a second cut (4.5)."""
    flow, summary = _run_dropping(_path(ecn=True, marking=False), {60: {1}}, marks={mark: {1}})
    assert summary["ecn_reactions"] == reactions
    assert summary["counters"]["fast_retransmits"] == 1
    assert flow.ssthresh == 9.5


@pytest.mark.parametrize("transport, timeouts", [
    ({"sack": True}, 2),          # RFC 6298's estimator in the extended sender: 2 s, then 4 s
    ({"linux_rto": True}, 3),     # Linux's: every valid sample collapses the backoff
])
def test_the_estimator_decides_whether_duplicate_acks_collapse_the_backoff(transport, timeouts):
    """Packet 60 lost four times; timeouts counted by 8 s. With SACK the classic stack runs the
    extended sender, which keeps the backoff too; Linux's RTO (tcp_ack_update_rtt) does not."""
    _, summary = _run_dropping(_path(transport=transport), {60: {1, 2, 3, 4}}, duration_s=8.0)
    assert summary["timeouts"] == timeouts


def test_a_linux_timeout_in_cwr_keeps_the_reductions_ssthresh():
    """Linux's tcp_enter_loss recomputes ssthresh in CWR only once the reduction's window is
    acknowledged; the Linux stack cut it again (26 -> 19). A 100 kB flow: its last 30 packets
    are lost, and no ACK but the timeout's retransmissions' comes back."""
    flow, summary = _run_dropping(
        _path(ecn=True, data_mb=0.1, transport={"stack": "linux", "tlp": False}),
        {seq: {1} for seq in range(70, 100)})
    assert summary["ecn_reactions"] == 1 and summary["timeouts"] == 1
    assert flow.ssthresh == 26.0
