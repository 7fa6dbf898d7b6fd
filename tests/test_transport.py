"""The reliable transport: delivery under loss, ACK loss, RTO estimation and backoff, Karn's rule."""
from __future__ import annotations

import pytest

from components.packet import ACK, DATA, Packet
from flows.reno import Reno
from flows.tahoe import Tahoe
from topologies.spec import TransportSpec

def test_lossless_transfer_delivers_everything_in_order(make_flow):
    sim, h1, h2, flow = make_flow(packets=300)
    sim.run()
    assert flow.finished and flow.delivered_all()
    assert flow.retransmissions == 0 and flow.timeouts == 0
    assert flow.packets_sent == 300


def test_last_packet_may_be_short(make_flow):
    sim, h1, h2, flow = make_flow(data_bytes=10_500)
    sim.run()
    assert flow.n_packets == 11 and flow.last_packet_bytes == 500
    assert flow.delivered_bytes == 10_500 and flow.delivered_all()


@pytest.mark.parametrize("algorithm", [Tahoe, Reno])
def test_forced_data_loss_is_repaired(algorithm, make_flow, drop_at, drop_first_copy):
    sim, h1, h2, flow = make_flow(packets=400, algorithm=algorithm)
    lost = [5, 6, 7, 40, 120, 121, 300, 399]
    dropped = drop_at(h2, drop_first_copy(lost))
    sim.run()
    assert len(dropped) == len(lost)
    assert flow.finished and flow.delivered_all()
    assert flow.retransmissions >= len(lost)


def test_losing_the_last_packet_is_repaired_by_the_timer(make_flow, drop_at, drop_first_copy):
    sim, h1, h2, flow = make_flow(packets=50)
    drop_at(h2, drop_first_copy([49]))
    sim.run()
    assert flow.finished and flow.delivered_all()
    assert flow.timeouts == 1          # no later packet can produce duplicate ACKs


def test_one_lost_ack_never_stalls_the_flow(make_flow, drop_at):
    # Regression: the ACK of the very last packet is lost; the sender must not wait forever.
    sim, h1, h2, flow = make_flow(packets=30)
    lost = []

    def last_ack(packet):
        if packet.kind == ACK and packet.ack_seq == 30 and not lost:
            lost.append(packet)
            return True
        return False
    drop_at(h1, last_ack)
    sim.run()
    assert lost and flow.finished and flow.delivered_all()


def test_many_lost_acks_are_covered_by_cumulative_acks(make_flow, drop_at):
    sim, h1, h2, flow = make_flow(packets=500)
    rng = sim.rng
    dropped = drop_at(h1, lambda p: p.kind == ACK and rng.random() < 0.3)
    sim.run()
    assert len(dropped) > 100
    assert flow.finished and flow.delivered_all()
    # Cumulative ACKs repair lost ones: no data is resent, except at most once when every
    # ACK of the final packets is lost (nothing later can cover them, so the timer fires).
    assert flow.timeouts <= 1 and flow.retransmissions <= 1


def test_random_data_and_ack_loss_in_both_directions(make_flow, drop_at):
    sim, h1, h2, flow = make_flow(packets=600, algorithm=Reno)
    rng = sim.rng
    drop_at(h2, lambda p: rng.random() < 0.05)
    drop_at(h1, lambda p: rng.random() < 0.05)
    sim.run()
    assert flow.finished and flow.delivered_all()


def test_rto_backs_off_exponentially_and_ssthresh_is_cut_once(make_flow, drop_at):
    transport = TransportSpec(min_rto_s=0.2, initial_rto_s=1.0, max_rto_s=60.0)
    sim, h1, h2, flow = make_flow(packets=100, transport=transport)
    blackhole = {"on": False}
    drop_at(h2, lambda p: blackhole["on"])
    sim.schedule_at(0.1, lambda _: blackhole.update(on=True))
    sim.schedule_at(6.5, lambda _: blackhole.update(on=False))
    fired = []                       # (time, rto after, ssthresh after) of each timeout
    on_timeout = flow.sender.on_timeout

    def watch():
        on_timeout()
        fired.append((sim.now, flow.rto, flow.ssthresh))
    flow.sender.timer.callback = watch
    sim.run()
    assert flow.finished and flow.delivered_all()
    times = [t for t, _, _ in fired]
    assert len(times) >= 4 and all(t < 6.5 for t in times[:-1])
    gaps = [b - a for a, b in zip(times, times[1:])]
    for earlier, later in zip(gaps, gaps[1:]):
        assert later == pytest.approx(2 * earlier, rel=1e-9)     # RFC 6298 (5.5)
    assert [rto for _, rto, _ in fired[1:]] == [2 * rto for _, rto, _ in fired[:-1]]
    assert len({ssthresh for _, _, ssthresh in fired}) == 1   # one reaction per episode
    assert flow.timeouts == len(fired)


def test_rto_follows_rfc6298(make_flow):
    transport = TransportSpec(min_rto_s=0.001, initial_rto_s=1.0)
    sim, h1, h2, flow = make_flow(transport=transport)
    flow.rtt.sample(0.1)
    assert flow.srtt == pytest.approx(0.1) and flow.rtt.rttvar == pytest.approx(0.05)
    assert flow.rto == pytest.approx(0.1 + 4 * 0.05)
    flow.rtt.sample(0.2)
    rttvar = 0.75 * 0.05 + 0.25 * abs(0.1 - 0.2)
    srtt = 0.875 * 0.1 + 0.125 * 0.2
    assert flow.rtt.rttvar == pytest.approx(rttvar) and flow.srtt == pytest.approx(srtt)
    assert flow.rto == pytest.approx(srtt + 4 * rttvar)


def test_rto_is_clamped_to_min_and_max(make_flow):
    sim, h1, h2, flow = make_flow(transport=TransportSpec(min_rto_s=1.0, max_rto_s=3.0))
    flow.rtt.sample(0.01)
    assert flow.rto == 1.0
    flow.rtt.sample(5.0)
    assert flow.rto == 3.0


def _ack(flow, cum, sack, sent_s, retx):
    return Packet(ACK, flow.dst, flow.src, 40, flow.sender.on_ack, -1, cum, sack, sent_s, retx)


def test_karns_rule_no_rtt_sample_from_retransmitted_packets(make_flow):
    sim, h1, h2, flow = make_flow(packets=20)
    sim.run(until=0.0)            # the flow has started and sent its first packet
    assert flow.snd_nxt == 1
    sim.now = 0.3
    flow.sender.on_ack(_ack(flow, 1, 0, 0.0, retx=True))
    assert flow.rtt_count == 0 and flow.srtt is None
    flow.sender.on_ack(_ack(flow, 2, 1, 0.1, retx=False))
    assert flow.rtt_count == 1 and flow.srtt == pytest.approx(0.2)


def test_backed_off_rto_is_kept_until_a_valid_sample(make_flow):
    transport = TransportSpec(min_rto_s=0.2, initial_rto_s=1.0)
    sim, h1, h2, flow = make_flow(packets=20, transport=transport)
    sim.run(until=0.0)
    flow.rtt.sample(0.05)
    base = flow.rto
    flow.sender.on_timeout()
    assert flow.rto == pytest.approx(2 * base)
    sim.now = 1.0
    flow.sender.on_ack(_ack(flow, 1, 0, 0.5, retx=True))   # ACK of a retransmission: no sample
    assert flow.rto == pytest.approx(2 * base)
    flow.sender.on_ack(_ack(flow, 2, 1, 0.95, retx=False))  # valid sample: RTO recomputed
    assert flow.rto < 2 * base


def test_receiver_acks_every_packet_with_cumulative_and_selective_information(make_flow, drop_at,
                                                                             drop_first_copy):
    sim, h1, h2, flow = make_flow(packets=10)
    acks = []
    drop_at(h2, drop_first_copy([2]))
    drop_at(h1, lambda packet: acks.append((packet.ack_seq, packet.sack_seq)))
    sim.run()
    # cwnd 1, 2, 3: packet 2 is lost, 3 and 4 produce duplicate ACKs (too few for fast
    # retransmit); the timer resends 2 and the cumulative ACK jumps past the buffered 3 and 4.
    assert acks[:5] == [(1, 0), (2, 1), (2, 3), (2, 4), (5, 2)]
    assert all(cum == sack + 1 for cum, sack in acks[5:])
    assert flow.delivered_all()


def test_duplicates_are_acked_and_not_delivered_twice(make_flow):
    sim, h1, h2, flow = make_flow(packets=5)
    sim.run()
    delivered = flow.delivered_bytes
    sent = []
    h2.send = lambda packet: sent.append(packet) or True
    receive = flow.receiver.on_data
    receive(Packet(DATA, h1, h2, 1000, receive, 2, -1, -1, sim.now, True))
    assert flow.delivered_bytes == delivered and flow.in_order
    assert len(sent) == 1 and sent[0].ack_seq == 5 and sent[0].sack_seq == 2


def test_selective_acks_prevent_needless_go_back_n_retransmissions(make_flow, drop_at,
                                                                   drop_first_copy):
    # Tahoe goes back to snd_una after a loss; packets the receiver reported are skipped.
    sim, h1, h2, flow = make_flow(packets=200, algorithm=Tahoe)
    drop_at(h2, drop_first_copy([50]))
    sim.run()
    assert flow.delivered_all()
    assert flow.retransmissions < 10


def test_endless_flow_runs_until_stopped(make_flow):
    sim, h1, h2, flow = make_flow(buffer_bytes=20_000, endless=True)
    sim.run(until=10.0)
    assert sim.now == 10.0
    assert not flow.finished and flow.in_order
    # one RTO after the slow-start overshoot, then the link stays busy
    assert flow.timeouts == 1
    assert flow.delivered_bytes > 0.8 * make_flow.RATE_BPS / 8 * 10.0
