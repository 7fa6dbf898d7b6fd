"""Loss recovery modes of the transport: Reno, NewReno (RFC 6582) and SACK-based (RFC 6675)."""
from __future__ import annotations

import pytest

from components.packet import DATA
from flows.fast import Fast
from flows.newreno import NewReno
from flows.reno import Reno
from topologies.spec import TransportSpec

# A window of about 60 packets in flight; eight of them lost at once.
LOST = [200, 203, 207, 210, 214, 219, 225, 230]


@pytest.fixture
def run_with_burst_loss(make_flow, drop_at, drop_first_copy):
    return lambda algorithm: _run_with_burst_loss(algorithm, make_flow, drop_at, drop_first_copy)


def _run_with_burst_loss(algorithm, make_flow, drop_at, drop_first_copy):
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


def test_reno_leaves_recovery_at_the_first_partial_ack(run_with_burst_loss):
    flow, retransmitted = run_with_burst_loss(Reno)
    assert sorted({seq for _, seq in retransmitted}) >= sorted(LOST)[:1]
    # one fast retransmit per episode at most: the rest needs further dupacks or timeouts
    assert flow.timeouts >= 1 or len(retransmitted) >= len(LOST)


def test_newreno_repairs_one_hole_per_partial_ack_without_timeout(run_with_burst_loss):
    flow, retransmitted = run_with_burst_loss(NewReno)
    assert flow.timeouts == 0
    assert [seq for _, seq in retransmitted] == LOST          # each hole once, in order
    times = [t for t, _ in retransmitted]
    gaps = [b - a for a, b in zip(times, times[1:])]
    rtt = flow.srtt
    assert all(gap > 0.5 * rtt for gap in gaps)               # one hole per round trip


def test_sack_recovery_repairs_every_hole_within_about_one_round_trip(run_with_burst_loss):
    flow, retransmitted = run_with_burst_loss(Fast)
    assert flow.timeouts == 0
    assert sorted(seq for _, seq in retransmitted) == LOST    # each hole once, nothing spurious
    times = [t for t, _ in retransmitted]
    assert times[-1] - times[0] < 1.5 * flow.srtt


def test_sack_pipe_counts_sacked_lost_and_retransmitted_packets(make_flow):
    sim, h1, h2, flow = make_flow(packets=100, algorithm=Fast)
    sender, board = flow.sender, flow.sender.scoreboard
    sender.snd_una, sender.snd_nxt, sender.high_seq = 10, 30, 30
    for seq in (15, 16, 17, 20, 25):                  # five sacked
        board.record(seq)
    assert board.top == [17, 20, 25]
    # unsacked below 17 (the third highest sacked) are deemed lost: 10..14 -> 5 packets
    assert board.lost_count(sender.snd_una, len(board.sacked)) == 5
    assert sender.pipe() == 20 - 5 - 5
    board.retx_out = {10, 11}
    assert sender.pipe() == 20 - 5 - 5 + 2
    board.retx_next = 10
    assert board.next_hole(sender.snd_una) == 12


def test_newreno_with_a_window_full_of_losses_falls_back_to_a_timeout(make_flow, drop_at,
                                                                      drop_first_copy):
    # RFC 6582 "impatient" timer: restarted on the first partial ACK only
    transport = TransportSpec(initial_ssthresh_pkts=60, min_rto_s=0.2)
    sim, h1, h2, flow = make_flow(packets=400, algorithm=NewReno, transport=transport)
    lost = list(range(150, 200, 2))                    # 25 losses in one window
    drop_at(h2, drop_first_copy(lost))
    sim.run()
    assert flow.finished and flow.delivered_all()
    assert flow.timeouts >= 1


@pytest.mark.parametrize("algorithm", [Reno, NewReno, Fast])
def test_every_mode_survives_heavy_random_loss(algorithm, make_flow, drop_at):
    sim, h1, h2, flow = make_flow(packets=800, algorithm=algorithm)
    rng = sim.rng
    drop_at(h2, lambda p: rng.random() < 0.08)
    drop_at(h1, lambda p: rng.random() < 0.08)
    sim.run()
    assert flow.finished and flow.delivered_all()
