"""RACK-TLP (RFC 8985) on the extended sender (flows/rack.py, flows/linux_sender.py).

One flow over one link (make_flow: 8 Mb/s, 5 ms each way, 1000-byte packets: a packet takes
1 ms, the round trip about 11 ms), on the Linux stack; single packets are dropped by sequence
number.
"""
from __future__ import annotations

import pytest

from components.packet import DATA
from flows.rack import RackScoreboard
from topologies.spec import TransportSpec


def _linux(**fields):
    return TransportSpec(stack="linux", **fields)


def _record_sends(sim, h1):
    """Every data packet h1 sends, as (time, seq, retx)."""
    sent = []
    send = h1.send

    def spy(packet):
        if packet.kind == DATA:
            sent.append((sim.now, packet.seq, packet.retx))
        return send(packet)
    h1.send = spy
    return sent


def _record_acks(sim, h1):
    """Every ACK arriving at h1, as (time, cum, sack)."""
    acks = []
    deliver = h1.links[0].directions
    direction = next(d for d in deliver if d.dst is h1)
    receive = direction.dst_receive

    def spy(packet):
        acks.append((sim.now, packet.ack_seq, packet.sack_seq))
        receive(packet)
    direction.dst_receive = spy
    return acks


def test_rack_marks_a_loss_after_the_reordering_window_without_three_dupacks(
        make_flow, drop_at, drop_first_copy):
    # the third packet from the end is lost: only two packets above it can be sacked, so the
    # duplicate-ACK threshold never fires; RACK marks it min_rtt / 4 after the first SACK
    sim, h1, h2, flow = make_flow(packets=40, transport=_linux(tlp=False))
    sent = _record_sends(sim, h1)
    acks = _record_acks(sim, h1)
    drop_at(h2, drop_first_copy([37]))
    sim.run()
    assert flow.finished and flow.delivered_all()
    counters = flow.sender.counters()
    assert counters["rto"] == 0 and counters["rack_lost"] == 1
    assert counters["sack_recoveries"] == 1
    retx = [(t, seq) for t, seq, r in sent if r]
    assert [seq for _, seq in retx] == [37]
    sacks = [(t, sack) for t, cum, sack in acks if cum == 37 and sack > 37]
    assert len(sacks) == 2                           # two SACKs: below the threshold of three
    xmit = {seq: t for t, seq, r in sent if not r}
    reo_wnd = flow.rtt.min_rtt / 4.0
    # lost when xmit(37) + RACK.rtt + reo_wnd <= now, with RACK.rtt that of the last delivery
    # (packet 39, sent with 38); the reorder timer adds Linux's 2 ms (TCP_TIMEOUT_MIN)
    last_t, last_seq = sacks[-1]
    expected = xmit[37] + (last_t - xmit[last_seq]) + reo_wnd + 0.002
    assert retx[0][0] == pytest.approx(expected, abs=1e-9)
    assert retx[0][0] - sacks[0][0] < 0.5 * flow.rtt.min_rtt


def test_the_classic_stack_needs_a_timeout_for_the_same_loss(make_flow, drop_at,
                                                             drop_first_copy):
    sim, _h1, h2, flow = make_flow(packets=40)
    drop_at(h2, drop_first_copy([37]))
    sim.run()
    assert flow.finished and flow.timeouts == 1


def test_a_tail_loss_probe_repairs_the_last_packet_without_a_timeout(make_flow, drop_at,
                                                                     drop_first_copy):
    sim, h1, h2, flow = make_flow(packets=40, transport=_linux())
    sent = _record_sends(sim, h1)
    drop_at(h2, drop_first_copy([39]))
    sim.run()
    assert flow.finished and flow.delivered_all()
    counters = flow.sender.counters()
    assert counters["rto"] == 0 and counters["tlp"] == 1
    assert [seq for _, seq, r in sent if r] == [39]           # the probe resent the tail


def test_the_probe_timeout_is_two_srtt_when_several_packets_are_out(make_flow, drop_at,
                                                                    drop_first_copy):
    # the last two packets are lost: at the ACK of the packet before them two are out, so
    # PTO = 2 SRTT + 2 ms (Linux; RFC 8985 §7.2 2 SRTT); the probe resends the highest, whose
    # SACK lets RACK repair the other one without a timeout
    sim, h1, h2, flow = make_flow(packets=40, transport=_linux())
    sent = _record_sends(sim, h1)
    acks = _record_acks(sim, h1)
    srtts = []
    on_ack = flow.sender.on_ack

    def spy(ack):
        on_ack(ack)
        srtts.append((sim.now, flow.srtt))
    flow.receiver.on_ack = spy
    drop_at(h2, drop_first_copy([38, 39]))
    sim.run()
    assert flow.finished and flow.delivered_all()
    counters = flow.sender.counters()
    assert counters["rto"] == 0 and counters["tlp"] == 1 and counters["rack_lost"] == 1
    probe = next(t for t, seq, r in sent if r)
    last_ack = max(t for t, _, _ in acks if t < probe)
    srtt = next(s for t, s in srtts if t == last_ack)
    assert probe - last_ack == pytest.approx(2 * srtt + 0.002, abs=1e-9)
    assert sorted(seq for _, seq, r in sent if r) == [38, 39]


def test_a_lost_retransmission_is_detected_without_a_timeout(make_flow, drop_at):
    transport = _linux(initial_ssthresh_pkts=20)
    sim, h1, h2, flow = make_flow(packets=300, transport=transport)
    sent = _record_sends(sim, h1)
    copies = {"n": 0}

    def twice(packet):                               # packet 100 and its first retransmission
        if packet.kind == DATA and packet.seq == 100 and copies["n"] < 2:
            copies["n"] += 1
            return True
        return False
    drop_at(h2, twice)
    sim.run()
    assert flow.finished and flow.delivered_all()
    counters = flow.sender.counters()
    assert counters["rto"] == 0
    assert counters["lost_retrans"] == 1
    assert [seq for _, seq, r in sent if r] == [100, 100]


def test_rack_waits_in_send_order_and_stops_at_the_first_packet_not_expired():
    now = [0.0]
    board = RackScoreboard(3, rack=True, now=lambda: now[0])
    for seq in range(6):
        board.on_send(seq, 0.001 * seq, retx=False)
    now[0] = 0.020
    board.sack(4, min_rtt=0.010)                     # RACK.xmit_ts = 4 ms, RACK.rtt = 16 ms
    assert (board.rack_ts, board.rack_seq) == (0.004, 4)
    assert board.rack_rtt == pytest.approx(0.016)
    # with reo_wnd 2 ms, at 20.5 ms packet s is lost when s ms + 16 + 2 <= 20.5: 0, 1, 2
    now[0] = 0.0205
    marked, wait = board.detect(False, 0.5, 0.008, 0)   # reo_wnd = min_rtt / 4 = 2 ms
    assert marked == 3 and board.lost == {0, 1, 2} and board.rack_lost == 3
    assert wait == pytest.approx(0.0005)             # packet 3 expires 0.5 ms later
    assert board.pipe(0, 6) == 6 - 1 - 3
    assert board.next_hole(0) == 0
    board.on_send(0, 0.0205, retx=True)
    assert board.next_hole(0) == 1 and board.pipe(0, 6) == 6 - 1 - 3 + 1
    assert not board.reord_seen
    board.sack(3, min_rtt=0.010)                     # below the highest sacked: reordering
    assert board.reord_seen


def test_an_ambiguous_early_ack_of_a_retransmission_is_ignored():
    now = [0.0]
    board = RackScoreboard(3, rack=True, now=lambda: now[0])
    board.on_send(0, 0.0, retx=False)
    board.on_send(0, 0.050, retx=True)
    now[0] = 0.052                                   # 2 ms after the retransmission < min_rtt
    board.sack(0, min_rtt=0.010)
    assert board.rack_ts == -1.0


@pytest.mark.parametrize("algorithm", ["reno", "cubic"])
def test_slow_start_overshoot_in_a_deep_buffer_is_repaired_without_a_timeout(algorithm):
    # 10 Mb/s, 50 ms, a 4-BDP buffer: the losses are found late (after a reorder timer, one
    # round trip of queue later); the timer armed from the lost packet's first send would expire
    # before its retransmission's ACK, but resending the first outstanding packet restarts it
    # (Linux tcp_xmit_retransmit_queue). Linux has no timeout here either.
    from networks import run, two_hosts
    topology = two_hosts(rate_mbps=10.0, delay_ms=25.0, buffer_kb=4 * 62.5, data_mb=6.0,
                         algorithm=algorithm, transport={"stack": "linux"})
    results = run(topology)
    flow = results.network.flows["F1"]
    assert flow.finished and flow.delivered_all()
    counters = flow.sender.counters()
    assert counters["rack_lost"] > 0 and counters["rto"] == 0
