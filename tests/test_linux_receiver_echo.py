"""What the Linux receiver (flows/receiver.py `LinuxReceiver`) acknowledges and echoes, as Linux's
tcp_input.c: the ECN echo (tcp_ecn_accept_cwr, tcp_data_ecn_check / __tcp_ecn_check_ce,
dctcp_ece_ack_update), TS.Recent (RFC 7323 §4.3, tcp_replace_ts_recent), the D-SACK's echo and the
SACK blocks (RFC 2018 §4, RFC 2883 §4: tcp_sack_new_ofo_skb, tcp_sack_remove)."""
from __future__ import annotations

import math

from components.packet import ACK, DATA, Packet
from flows.receiver import TCP_SACK_BLOCKS_TS, LinuxReceiver
from simulator.engine import Simulator


class _Host:
    """A host that keeps the ACKs it sends."""

    def __init__(self):
        self.sent = []

    def send(self, packet):
        self.sent.append(packet)


def _receiver(ecn=None):
    sim = Simulator(1)
    host = _Host()
    receiver = LinuxReceiver(sim, host, host, math.inf, 1000, 1000, 64, lambda p: None, 0.0,
                             ecn=ecn)
    return sim, host, receiver


def _arrive(sim, receiver, seq, at_s, *, ce=False, ect=True, cwr=False, sent_s=None, retx=False):
    """Data packet `seq` arrives at `at_s` (sent `sent_s`, default 10 ms before)."""
    sim.now = at_s
    packet = Packet(DATA, None, None, 1000, None, seq, -1, -1,
                    at_s - 0.010 if sent_s is None else sent_s, retx, True if cwr else None, ect)
    packet.ce = ce
    receiver.on_data(packet)


def _past_quick_acks(sim, receiver, host, ecn_seen=True):
    """Packets 0..15 in order 1 ms apart (the 16 quick ACKs), then 16 and 17: one delayed ACK.
    Returns the next free sequence number and time; no ACK is pending."""
    for seq in range(18):
        _arrive(sim, receiver, seq, 0.001 * seq)
    assert receiver.quick == 0 and receiver.pending == 0 and host.sent[-1].ack_seq == 18
    host.sent.clear()
    return 18, 0.018


# -- D3: classic ECN ---------------------------------------------------------------------------
def test_a_new_ce_mark_is_acknowledged_at_once_with_ece():
    """__tcp_ecn_check_ce: CE without TCP_ECN_DEMAND_CWR enters quick-ACK mode (2): the marked
    packet is acknowledged at once, and that ACK carries ECE (before: delayed)."""
    sim, host, receiver = _receiver("classic")
    seq, t = _past_quick_acks(sim, receiver, host)
    _arrive(sim, receiver, seq, t + 0.001, ce=True)
    assert [(a.ack_seq, a.payload) for a in host.sent] == [(seq + 1, True)]


def test_no_ack_without_ece_before_the_marked_packet_classic():
    """dctcp_ece_ack_update's 'ACK the pending packets with the old state first' is DCTCP's:
    with classic ECN a CE packet behind a delayed one gives one ACK, covering both, with ECE."""
    sim, host, receiver = _receiver("classic")
    seq, t = _past_quick_acks(sim, receiver, host)
    _arrive(sim, receiver, seq, t + 0.001)                   # delayed
    assert host.sent == []
    _arrive(sim, receiver, seq + 1, t + 0.002, ce=True)
    assert [(a.ack_seq, a.payload) for a in host.sent] == [(seq + 2, True)]


def test_a_cwr_segment_is_acknowledged_at_once_without_ece():
    """tcp_ecn_accept_cwr: CWR clears TCP_ECN_DEMAND_CWR and sets ICSK_ACK_NOW."""
    sim, host, receiver = _receiver("classic")
    seq, t = _past_quick_acks(sim, receiver, host)
    _arrive(sim, receiver, seq, t + 0.001, ce=True)
    _arrive(sim, receiver, seq + 1, t + 0.002)               # quick-ACK mode's second ACK
    host.sent.clear()
    _arrive(sim, receiver, seq + 2, t + 0.003)               # delayed, still echoing
    assert host.sent == [] and receiver.ece
    _arrive(sim, receiver, seq + 3, t + 0.004, cwr=True)     # would be the 2nd anyway ...
    _arrive(sim, receiver, seq + 4, t + 0.005, cwr=True)     # ... this one only by CWR
    assert [(a.ack_seq, a.payload) for a in host.sent] == [(seq + 4, None), (seq + 5, None)]


def test_a_not_ect_packet_after_ect_ones_is_acknowledged_at_once():
    """__tcp_ecn_check_ce, INET_ECN_NOT_ECT after TCP_ECN_SEEN: 'probably a retransmit'."""
    sim, host, receiver = _receiver("classic")
    seq, t = _past_quick_acks(sim, receiver, host)
    _arrive(sim, receiver, seq, t + 0.001, ect=False)
    assert [a.ack_seq for a in host.sent] == [seq + 1]


def test_a_duplicate_ce_mark_is_not_read():
    """tcp_data_queue: a duplicate goes out before tcp_data_ecn_check."""
    sim, host, receiver = _receiver("classic")
    seq, t = _past_quick_acks(sim, receiver, host)
    _arrive(sim, receiver, seq - 1, t + 0.001, ce=True)
    assert not receiver.ece and host.sent[-1].payload is None


# -- DCTCP ---------------------------------------------------------------------------------------
def test_dctcp_acks_the_pending_packet_with_the_old_state_then_the_new_one_at_once():
    """dctcp_ece_ack_update: a delayed ACK goes first with the prior CE state, then ICSK_ACK_NOW
    acknowledges the packet that changed it. DCTCP's ACKs are ECT (tcp_ecn_send)."""
    sim, host, receiver = _receiver("dctcp")
    seq, t = _past_quick_acks(sim, receiver, host)
    _arrive(sim, receiver, seq, t + 0.001)                   # delayed, unmarked
    _arrive(sim, receiver, seq + 1, t + 0.002, ce=True)
    assert [(a.ack_seq, a.payload) for a in host.sent] == [(seq + 1, None), (seq + 2, True)]
    assert all(a.ect for a in host.sent)
    host.sent.clear()
    _arrive(sim, receiver, seq + 2, t + 0.003)               # back to unmarked: at once
    assert [(a.ack_seq, a.payload) for a in host.sent] == [(seq + 3, None)]


def test_classic_acks_are_not_ect():
    sim, host, receiver = _receiver("classic")
    _arrive(sim, receiver, 0, 0.0)
    assert host.sent[-1].ect is False


# -- D1, D2: TS.Recent, D-SACK, SACK blocks ----------------------------------------------------
def test_ts_recent_stays_with_the_last_in_order_segment_on_out_of_order_arrivals():
    """RFC 7323 §4.3 (tcp_replace_ts_recent: seq <= rcv_wup): out-of-order segments do not move
    TS.Recent; the filler of the hole does."""
    sim, host, receiver = _receiver()
    _arrive(sim, receiver, 0, 0.010, sent_s=0.0)
    assert receiver.ts_recent_s == 0.0
    for seq in (2, 3, 4):
        _arrive(sim, receiver, seq, 0.010 + seq * 0.001, sent_s=seq * 0.001)
        assert receiver.ts_recent_s == 0.0
    _arrive(sim, receiver, 1, 0.030, sent_s=0.020, retx=True)   # the filler
    assert receiver.ts_recent_s == 0.020 and host.sent[-1].ack_seq == 5


def test_a_dsack_ack_echoes_ts_recent_not_the_receivers_clock():
    """A duplicate wholly below rcv_wup fails tcp_sequence: TS.Recent stays; its D-SACK ACK
    echoes TS.Recent (before: the receiver's clock) and is no RTT sample (retx)."""
    sim, host, receiver = _receiver()
    for seq in range(4):
        _arrive(sim, receiver, seq, 0.010 + 0.001 * seq, sent_s=0.001 * seq)
    _arrive(sim, receiver, 1, 0.050, sent_s=0.030, retx=True)    # a spurious retransmission
    ack = host.sent[-1]
    assert ack.seq == 1 and ack.retx
    assert ack.sent_s == receiver.ts_recent_s == 0.003 and ack.sent_s < sim.now


def test_the_first_sack_block_is_the_whole_contiguous_range_most_recent_first():
    sim, _host, receiver = _receiver()
    _arrive(sim, receiver, 0, 0.0)
    steps = [(2, [(2, 3)]), (3, [(2, 4)]), (6, [(6, 7), (2, 4)]), (5, [(5, 7), (2, 4)]),
             (9, [(9, 10), (5, 7), (2, 4)]), (4, [(2, 7), (9, 10)]), (1, [(9, 10)]),
             (7, [(9, 10)]), (8, [])]
    for k, (seq, blocks) in enumerate(steps):
        _arrive(sim, receiver, seq, 0.001 * (k + 1))
        assert receiver.sack_blocks(-1) == blocks, seq
        assert dict(receiver.ofo_end) == {start: end for start, end in blocks}
    assert receiver.rcv_nxt == 10 and not receiver.ofo_start and not receiver.sack_starts


def test_a_dsack_goes_first_and_its_range_next():
    """RFC 2883 §4: the D-SACK block first; a duplicate of out-of-order data moves its range to
    the second place (tcp_data_queue_ofo, add_sack); at most 3 blocks beside the timestamps."""
    sim, host, receiver = _receiver()
    _arrive(sim, receiver, 0, 0.0)
    for k, seq in enumerate((2, 4, 6, 8)):
        _arrive(sim, receiver, seq, 0.001 * (k + 1))
    _arrive(sim, receiver, 4, 0.010)                               # duplicate of 4
    assert host.sent[-1].seq == 4
    assert receiver.sack_blocks(4) == [(4, 5), (4, 5), (8, 9)][:TCP_SACK_BLOCKS_TS]
    _arrive(sim, receiver, 0, 0.011)                               # duplicate below the window
    assert receiver.sack_blocks(0) == [(0, 1), (4, 5), (8, 9)]


def test_the_ack_note_is_told_every_ack():
    sim, host, receiver = _receiver()
    noted = []
    receiver.ack_note = lambda r, ack: noted.append((ack, r.sack_blocks(ack.seq)))
    _arrive(sim, receiver, 0, 0.0)
    _arrive(sim, receiver, 2, 0.001)
    assert [ack for ack, _ in noted] == host.sent and all(a.kind == ACK for a in host.sent)
    assert noted[-1][1] == [(2, 3)]
