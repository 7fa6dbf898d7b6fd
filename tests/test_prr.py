"""Proportional Rate Reduction (RFC 6937, PRR-SSRB as Linux's tcp_cwnd_reduction; flows/prr.py)."""
from __future__ import annotations

import pytest

from components.packet import DATA
from flows.congestion import CaEvent, CongestionControl
from flows.dctcp import Dctcp
from flows.prr import PrrWindow
from topologies.spec import TransportSpec


class _Flow:
    """What PrrWindow reads: the window, ssthresh, prior_cwnd and the packets in flight."""

    def __init__(self, cwnd, in_flight):
        self.cwnd = cwnd
        self.ssthresh = cwnd / 2
        self.prior_cwnd = cwnd
        self.in_flight = in_flight
        self.state = "open"

    def pipe(self):
        return self.in_flight


def _reduce(cwnd, lost, acks, advancing=False):
    """RFC 6937 §6's example: a window of `cwnd` packets with `lost` of them lost, then `acks`
    ACKs each delivering one packet (`advancing`: and advancing snd_una); returns the packets
    sent on each ACK."""
    flow = _Flow(float(cwnd), cwnd - lost)
    window = PrrWindow(flow, CongestionControl(flow), 3)
    window.begin_reduction()
    sent = []
    for _ in range(acks):
        flow.in_flight -= 1                          # one packet delivered
        window.on_delivery(1, 0, advancing)
        sndcnt = int(flow.cwnd) - flow.in_flight
        window.on_sent(sndcnt)
        flow.in_flight += sndcnt
        sent.append(sndcnt)
    return sent, flow


def test_one_loss_in_twenty_sends_one_packet_per_two_acks():
    # RFC 6937 §6, first example: cwnd 20, ssthresh 10, one loss, 19 ACKs: PRR sends on every
    # other ACK (the first one the retransmission) while pipe > ssthresh; at pipe = ssthresh the
    # slow-start reduction bound keeps it there; it ends with 10 packets in flight
    sent, flow = _reduce(20, 1, 19)
    assert sent == [1, 0] * 8 + [0, 1, 1]
    assert flow.in_flight == 10 == flow.ssthresh


def test_the_slow_start_reduction_bound_catches_up_after_heavy_losses():
    # RFC 6937 §6, heavy losses: 11 of 20 lost, pipe 9 < ssthresh 10 at once: PRR-SSRB sends
    # the delivered packets + 1 (Linux: when the ACK advances snd_una and marks no new loss)
    # until pipe is back at ssthresh, then one per delivered packet
    sent, flow = _reduce(20, 11, 6, advancing=True)
    assert sent == [2, 1, 1, 1, 1, 1]
    assert flow.in_flight == 10 == flow.ssthresh
    sent, flow = _reduce(20, 11, 6, advancing=False)   # without the +1: stays one below
    assert sent == [1] * 6 and flow.in_flight == 9


def test_a_sender_in_prr_recovery_ends_at_ssthresh_without_timeout(make_flow, drop_at,
                                                                   drop_first_copy):
    transport = TransportSpec(stack="linux", initial_ssthresh_pkts=40, tlp=False)
    sim, _h1, h2, flow = make_flow(packets=400, transport=transport, buffer_bytes=10**7)
    states = []
    on_ack = flow.receiver.on_ack

    def spy(ack):
        on_ack(ack)
        states.append((flow.state, flow.cwnd, flow.ssthresh))
    flow.receiver.on_ack = spy
    drop_at(h2, drop_first_copy([150]))
    sim.run()
    assert flow.finished and flow.delivered_all() and flow.timeouts == 0
    recovery = [i for i, (state, _, _) in enumerate(states) if state == "recovery"]
    assert recovery
    after = states[recovery[-1] + 1]
    assert after[0] == "open" and after[1] == pytest.approx(states[recovery[-1]][2])
    # during recovery the window follows pipe + sndcnt: never above the window before it
    prior = states[recovery[0] - 1][1]
    assert all(cwnd <= prior for _, cwnd, _ in (states[i] for i in recovery))


def test_prr_off_sets_the_window_to_ssthresh_at_once(make_flow, drop_at, drop_first_copy):
    transport = TransportSpec(stack="linux", initial_ssthresh_pkts=40, tlp=False, prr=False)
    sim, _h1, h2, flow = make_flow(packets=400, transport=transport, buffer_bytes=10**7)
    windows = []
    on_ack = flow.receiver.on_ack

    def spy(ack):
        on_ack(ack)
        if flow.state == "recovery":
            windows.append((flow.cwnd, flow.ssthresh))
    flow.receiver.on_ack = spy
    drop_at(h2, drop_first_copy([150]))
    sim.run()
    assert flow.finished and windows
    assert all(cwnd == ssthresh for cwnd, ssthresh in windows)


def test_recovery_sends_counted_as_fast_retransmits(make_flow, drop_at, drop_first_copy):
    sim, h1, h2, flow = make_flow(packets=300, transport=TransportSpec(stack="linux", tlp=False))
    retx = []
    send = h1.send

    def spy(packet):
        if packet.kind == DATA and packet.retx:
            retx.append(packet.seq)
        return send(packet)
    h1.send = spy
    drop_at(h2, drop_first_copy([120, 125]))
    sim.run()
    counters = flow.sender.counters()
    assert sorted(retx) == [120, 125]
    assert counters["fast_retransmits"] == 2 and counters["sack_recoveries"] == 1


class _RecordingDctcp(Dctcp):
    """DCTCP that records the congestion events and the window at each."""

    name = "dctcp-recording"

    def __init__(self, flow, params=None):
        super().__init__(flow, params)
        self.events = []

    def cwnd_event(self, event):
        self.events.append((event, self.flow.cwnd, self.flow.sim.now))
        super().cwnd_event(event)


def test_an_ecn_echo_enters_cwr_and_prr_reduces_over_a_round_trip():
    from networks import run, two_hosts

    from flows import register_algorithm
    register_algorithm(_RecordingDctcp)
    topology = two_hosts(rate_mbps=10.0, delay_ms=10.0, buffer_kb=200.0,
                         algorithm="dctcp-recording", data_mb=None, duration_s=3.0,
                         transport={"stack": "linux"})
    topology["flows"][0]["ecn"] = True
    topology["links"][0]["queue"] = {"discipline": "step", "k_kb": 20}
    results = run(topology)
    flow = results.network.flows["F1"]
    events = [event for event, _, _ in flow.cc.events]
    assert CaEvent.ENTER_CWR in events and CaEvent.COMPLETE_CWR in events
    first = events.index(CaEvent.ENTER_CWR)
    assert events[first + 1] == CaEvent.COMPLETE_CWR             # each CWR ends before the next
    enter_cwnd, enter_s = flow.cc.events[first][1:]
    complete_cwnd, complete_s = flow.cc.events[first + 1][1:]
    assert complete_s - enter_s >= 0.5 * flow.sender.rtt.min_rtt    # over about a round trip
    assert complete_cwnd < enter_cwnd
    assert flow.sender.ecn_reactions >= 1 and flow.timeouts == 0
