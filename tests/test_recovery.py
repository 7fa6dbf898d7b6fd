"""Loss recovery modes of the transport: Reno, NewReno (RFC 6582) and SACK-based (RFC 6675)."""
from __future__ import annotations

import pytest

from components.packet import DATA
from flows.fast import Fast
from flows.newreno import NewReno
from flows.reno import Reno
from test_transport import drop_at, drop_first_copy, make_flow
from topologies.spec import TransportSpec

# A window of about 60 packets in flight; eight of them lost at once.
LOST = [200, 203, 207, 210, 214, 219, 225, 230]


def run_with_burst_loss(algorithm):
    transport = TransportSpec(initial_ssthresh_pkts=60)
    sim, h1, h2, flow = make_flow(packets=600, algorithm=algorithm, transport=transport)
    retransmitted = []
    send = h1.send

    def spy(packet):
        if packet.kind == DATA and packet.retx:
            retransmitted.append((sim.now, packet.seq))
        return send(packet)
    h1.send = spy
    drop_at(h2, drop_first_copy(LOST))
    sim.run()
    assert flow.finished and flow.delivered_all()
    return flow, retransmitted


def test_reno_leaves_recovery_at_the_first_partial_ack():
    flow, retransmitted = run_with_burst_loss(Reno)
    assert sorted({seq for _, seq in retransmitted}) >= sorted(LOST)[:1]
    # one fast retransmit per episode at most: the rest needs further dupacks or timeouts
    assert flow.timeouts >= 1 or len(retransmitted) >= len(LOST)


def test_newreno_repairs_one_hole_per_partial_ack_without_timeout():
    flow, retransmitted = run_with_burst_loss(NewReno)
    assert flow.timeouts == 0
    assert [seq for _, seq in retransmitted] == LOST          # each hole once, in order
    times = [t for t, _ in retransmitted]
    gaps = [b - a for a, b in zip(times, times[1:])]
    rtt = flow.srtt
    assert all(gap > 0.5 * rtt for gap in gaps)               # one hole per round trip


def test_sack_recovery_repairs_every_hole_within_about_one_round_trip():
    flow, retransmitted = run_with_burst_loss(Fast)
    assert flow.timeouts == 0
    assert sorted(seq for _, seq in retransmitted) == LOST    # each hole once, nothing spurious
    times = [t for t, _ in retransmitted]
    assert times[-1] - times[0] < 1.5 * flow.srtt


def test_sack_pipe_counts_sacked_lost_and_retransmitted_packets():
    sim, h1, h2, flow = make_flow(packets=100, algorithm=Fast)
    flow.snd_una, flow.snd_nxt, flow.high_seq = 10, 30, 30
    for seq in (15, 16, 17, 20, 25):                  # five sacked
        flow._record_sack(seq)
    assert flow.sack_top == [17, 20, 25]
    # unsacked below 17 (the third highest sacked) are deemed lost: 10..14 -> 5 packets
    assert flow._lost_count(len(flow.sacked)) == 5
    assert flow.pipe() == 20 - 5 - 5
    flow.retx_out = {10, 11}
    assert flow.pipe() == 20 - 5 - 5 + 2
    flow.retx_next = 10
    assert flow._next_hole() == 12


def test_newreno_with_a_window_full_of_losses_falls_back_to_a_timeout():
    # RFC 6582 "impatient" timer: restarted on the first partial ACK only
    transport = TransportSpec(initial_ssthresh_pkts=60, min_rto_s=0.2)
    sim, h1, h2, flow = make_flow(packets=400, algorithm=NewReno, transport=transport)
    lost = list(range(150, 200, 2))                    # 25 losses in one window
    drop_at(h2, drop_first_copy(lost))
    sim.run()
    assert flow.finished and flow.delivered_all()
    assert flow.timeouts >= 1


@pytest.mark.parametrize("algorithm", [Reno, NewReno, Fast])
def test_every_mode_survives_heavy_random_loss(algorithm):
    sim, h1, h2, flow = make_flow(packets=800, algorithm=algorithm)
    rng = sim.rng
    drop_at(h2, lambda p: rng.random() < 0.08)
    drop_at(h1, lambda p: rng.random() < 0.08)
    sim.run()
    assert flow.finished and flow.delivered_all()
