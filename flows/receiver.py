"""The receiving side of a flow: in-order delivery to the application, and acknowledgements.

Every data packet that arrives, duplicates included, is acknowledged at once (no delayed ACKs)
by an ACK carrying the cumulative ACK (the next packet expected in order) and the sequence number
of the packet that triggered it (one SACK block of one packet), echoing that packet's send time
and whether it was a retransmission (for the sender's RTT samples under Karn's rule). Because
every ACK is cumulative, a lost ACK is repaired by the next one. Out-of-order packets are
buffered; bytes are delivered to the application strictly in order, and each delivered packet
must start exactly at the next expected byte and have its expected size (`in_order`).

`EcnDelayedReceiver` adds, when a flow asks for them, the ECN echo and delayed ACKs (see its
docstring and docs/model.md, "ECN, DCTCP and delayed ACKs"); flows without either use `Receiver`
and pay nothing for them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from components.packet import ACK, Packet
from flows.linux_stack import LINUX_INITIAL_RTO_S

if TYPE_CHECKING:
    from simulator.engine import Simulator


class Receiver:
    """Receives a flow's data packets at host `host` and acknowledges them to `peer`, whose
    ACK handler is `on_ack`. `host` and `peer` are any objects with `send(packet)` (hosts,
    or a test's stand-ins), which compiled code calls dynamically (docs/model.md, "Compiled
    core"); `n_packets` is a count, or math.inf."""

    __slots__ = ("ack_bytes", "arrived_bytes", "delivered_bytes", "host", "in_order",
                 "last_new_s", "last_packet_bytes", "n_packets", "on_ack", "out_of_order",
                 "packet_bytes", "peer", "rcv_nxt", "sim", "flow_hash")

    def __init__(self, sim: Simulator, host: Any, peer: Any, n_packets: int | float,
                 packet_bytes: int, last_packet_bytes: int, ack_bytes: int,
                 on_ack: Callable[[Packet], None], start_s: float):
        self.sim = sim
        self.host = host
        self.peer = peer
        self.n_packets = n_packets
        self.packet_bytes = packet_bytes
        self.last_packet_bytes = last_packet_bytes
        self.ack_bytes = ack_bytes
        self.on_ack = on_ack
        self.rcv_nxt = 0                  # the next packet expected in order
        self.out_of_order: set[int] = set()
        # (`Any`: Python objects when compiled, which the flow probes compare by identity,
        # netsim/probes.py)
        self.delivered_bytes: Any = 0     # delivered to the application, in order
        self.arrived_bytes: Any = 0       # data bytes that reached the receiver, in order or not
        self.in_order = True
        self.last_new_s = start_s         # when data not received before last arrived
        self.flow_hash = 0                # ECMP hash of the ACK direction (routing/ecmp.py)

    def on_data(self, packet: Packet) -> None:
        """A data packet arrived: deliver what is now in order, then acknowledge."""
        # `_accept(packet)`, inline (once per data packet): count it, deliver what is now in
        # order, buffer it if it is ahead
        size = packet.size_bytes
        self.arrived_bytes += size
        seq = packet.seq
        rcv_nxt = self.rcv_nxt
        if seq == rcv_nxt:
            self.last_new_s = self.sim.now
            out_of_order = self.out_of_order
            packet_bytes = self.packet_bytes
            delivered = self.delivered_bytes
            if not out_of_order and rcv_nxt != self.n_packets - 1:
                # the common case: the next packet in order, nothing buffered behind it, not
                # the last one (whose size may differ)
                if rcv_nxt * packet_bytes != delivered or size != packet_bytes:
                    self.in_order = False
                self.delivered_bytes = delivered + size
                self.rcv_nxt = rcv_nxt = rcv_nxt + 1
            else:
                self._deliver_in_order(size, rcv_nxt)
                rcv_nxt = self.rcv_nxt
        elif seq > rcv_nxt and seq not in self.out_of_order:
            self.last_new_s = self.sim.now
            self.out_of_order.add(seq)
        host = self.host
        host.send(Packet(ACK, host, self.peer, self.ack_bytes, self.on_ack, -1, rcv_nxt, seq,
                         packet.sent_s, packet.retx, None, False, self.flow_hash))

    def _accept(self, packet: Packet) -> None:
        """Count the packet, deliver what is now in order, buffer it if it is ahead."""
        size = packet.size_bytes
        self.arrived_bytes += size
        seq = packet.seq
        if seq == self.rcv_nxt:
            self.last_new_s = self.sim.now
            self._deliver_in_order(size, seq)
        elif seq > self.rcv_nxt and seq not in self.out_of_order:
            self.last_new_s = self.sim.now
            self.out_of_order.add(seq)

    def _deliver_in_order(self, size: int, rcv_nxt: int) -> None:
        """Deliver packet `rcv_nxt` (the next expected, `size` bytes) and the buffered packets
        that follow it. Each must start at the next expected byte and have the size its
        sequence number gives it."""
        out_of_order = self.out_of_order
        n_packets, packet_bytes = self.n_packets, self.packet_bytes
        delivered = self.delivered_bytes
        while True:
            expected = self.last_packet_bytes if rcv_nxt == n_packets - 1 else packet_bytes
            if rcv_nxt * packet_bytes != delivered or size != expected:
                self.in_order = False
            delivered += size
            rcv_nxt += 1
            if rcv_nxt not in out_of_order:
                break
            out_of_order.remove(rcv_nxt)
            size = self.last_packet_bytes if rcv_nxt == n_packets - 1 else packet_bytes
        self.delivered_bytes = delivered
        self.rcv_nxt = rcv_nxt


class EcnDelayedReceiver(Receiver):
    """A receiver with ECN echo and/or delayed ACKs.

    ECN echo (`ecn` ``"classic"``, RFC 3168 §6.1.3): once a data packet arrives with CE set,
    every ACK carries ECE until a data packet arrives with CWR (a packet with both sets it again).
    ``"dctcp"`` (RFC 8257 §3.2): each ACK's ECE is the CE mark of the packets it acknowledges.
    With either, a packet whose CE mark differs from the previous one's is a state change: the
    packets still unacknowledged are acknowledged at once with the old ECE, then the new packet
    is handled with the new one (so delayed ACKs never merge marked and unmarked packets).

    Delayed ACKs (`every` > 1, RFC 1122 §4.2.3.2, RFC 5681 §4.2): an in-order packet is
    acknowledged when `every` packets are unacknowledged, or when the timer (`timeout_s`, started
    by the first unacknowledged packet) expires. Out-of-order packets, duplicates, packets that
    fill a gap, and the packet that completes the transfer are acknowledged at once. The ACK
    echoes the send time of the oldest packet it acknowledges (the RTT sample includes the delay,
    as with RFC 7323 timestamps) and is marked a retransmission if any of them was (Karn).
    """

    __slots__ = ("ce_state", "ece", "ecn", "every", "pending", "pending_retx", "pending_sent_s",
                 "timeout_s", "timer")

    def __init__(self, sim: Simulator, host: Any, peer: Any, n_packets: int | float,
                 packet_bytes: int, last_packet_bytes: int, ack_bytes: int,
                 on_ack: Callable[[Packet], None], start_s: float, *, ecn: str | None,
                 every: int = 1, timeout_s: float = 0.0):
        super().__init__(sim, host, peer, n_packets, packet_bytes, last_packet_bytes, ack_bytes,
                         on_ack, start_s)
        from simulator.engine import Timer
        self.ecn = ecn                # None, "classic" or "dctcp"
        self.every = every
        self.timeout_s = timeout_s
        self.ece = False              # classic: echo ECE on every ACK until CWR
        self.ce_state = False         # the CE mark of the last data packet (state changes)
        self.pending = 0              # in-order packets received and not yet acknowledged
        self.pending_sent_s = 0.0     # send time of the oldest of them
        self.pending_retx = False
        self.timer = Timer(sim, self._delayed_ack)

    def on_data(self, packet: Packet) -> None:
        if self.ecn is not None:
            self._echo(packet)
        seq = packet.seq
        rcv_nxt = self.rcv_nxt
        gap = bool(self.out_of_order)
        self._accept(packet)
        if not self.pending:
            self.pending_sent_s = packet.sent_s
            self.pending_retx = packet.retx
        elif packet.retx:
            self.pending_retx = True
        self.pending += 1
        if (seq != rcv_nxt or gap or self.pending >= self.every
                or self.rcv_nxt >= self.n_packets):
            self._send_ack(seq)
        elif not self.timer.active:
            self.timer.start(self.timeout_s)

    def _echo(self, packet: Packet) -> None:
        """The ECE the next ACK carries, after `packet`'s CE mark."""
        ce = packet.ce
        if ce != self.ce_state:
            # RFC 8257 §3.2 (and a prompt echo of a new mark for RFC 3168): ACK what is
            # pending with the old state first
            if self.pending:
                self._send_ack(-1)
            self.ce_state = ce
        if self.ecn == "classic":
            if packet.payload is True:      # CWR: the sender reacted
                self.ece = False
            if ce:
                self.ece = True
        else:
            self.ece = ce

    def _delayed_ack(self) -> None:
        if self.pending:
            self._send_ack(-1)

    def _send_ack(self, sack_seq: int) -> None:
        self.timer.cancel()
        ack = Packet(ACK, self.host, self.peer, self.ack_bytes, self.on_ack, -1, self.rcv_nxt,
                     sack_seq, self.pending_sent_s, self.pending_retx, None, False, self.flow_hash)
        if self.ece:
            ack.payload = True
        self.pending = 0
        self.host.send(ack)


# Linux's delayed-ACK constants (include/net/tcp.h, HZ = 1000)
TCP_ATO_MIN_S = 0.040          # TCP_ATO_MIN: the smallest ACK timeout
TCP_DELACK_MIN_S = 0.040       # TCP_DELACK_MIN
TCP_DELACK_MAX_S = 0.200       # TCP_DELACK_MAX
TCP_MAX_QUICKACKS = 16         # TCP_MAX_QUICKACKS
# the receiver's icsk_rto is TCP_TIMEOUT_INIT (flows/linux_stack.LINUX_INITIAL_RTO_S): it takes
# no RTT sample here


TCP_NUM_SACKS = 4              # TCP_NUM_SACKS: the SACK blocks a receiver remembers
TCP_SACK_BLOCKS_TS = 3         # blocks an ACK carries beside the timestamps option: 40 bytes
                               # of options, 12 + 4 + 8 each (tcp_established_options)
ECN_ACK_NOW = 1                # what an ECN packet asks of the ACK: at once (ICSK_ACK_NOW) ...
ECN_QUICKACK = 2               # ... or quick-ACK mode (tcp_enter_quickack_mode(sk, 2))


class LinuxReceiver(EcnDelayedReceiver):
    """A receiver that acknowledges as Linux does (net/ipv4/tcp_input.c, tcp_output.c).

    * Quick-ACK mode (tcp_incr_quickack, tcp_in_quickack_mode): the first data packet, a gap in
      arrivals longer than the receiver's RTO, and a duplicate (tcp_data_queue's "retransmit":
      tcp_enter_quickack_mode) allow `TCP_MAX_QUICKACKS` = 16 ACKs at once, one per packet
      (Linux: min(rcv_wnd / 2 MSS, 16); the initial 64 kB window gives 16).
    * Otherwise an ACK goes out when more than one full packet is unacknowledged
      (__tcp_ack_snd_check: every second full segment), and at once for an out-of-order packet,
      one that fills a gap, a duplicate, and the packet that completes the transfer.
    * The delayed-ACK timer (tcp_send_delayed_ack) runs for the ACK timeout ``ato``, adapted
      per in-order arrival as tcp_event_data_recv does: starting at TCP_ATO_MIN (40 ms); an
      arrival within 20 ms of the previous one sets ato = ato / 2 + 20 ms, one within ato sets
      ato = min(ato / 2 + gap, RTO); it is bounded by 200 ms (TCP_DELACK_MAX, the socket's
      icsk_delack_max); a pending timer that expires within ato / 4 sends the ACK now.
    * Duplicates are reported by a D-SACK (RFC 2883): the ACK's `seq` field carries the
      duplicate's sequence number (-1 otherwise), which the extended sender reads for undo.
    * ECN (`_ecn_receive`): tcp_ecn_accept_cwr (CWR stops the echo, and the segment is
      acknowledged at once), then, except for a duplicate, tcp_data_ecn_check
      (__tcp_ecn_check_ce): classic ECN echoes ECE from the first CE mark until CWR and
      acknowledges a new mark at once (quick-ACK mode for 2 ACKs), as it does a Not-ECT packet
      after ECT ones ("probably a retransmit"); DCTCP (dctcp_ece_ack_update) echoes each
      packet's mark and, when the mark changes, first acknowledges what is pending with the
      old one, then the new packet at once. A DCTCP receiver's ACKs are ECT (tcp_ecn_send keeps
      ECT for an algorithm that needs ECN).

    What an ACK carries beyond the model's fields, for the captures (netsim/pcap.py reads it
    through `ack_note`, set only when a capture is installed):

    * TCP timestamps (RFC 7323 §4.3, tcp_replace_ts_recent): TS.Recent (`ts_recent_s`, as the
      send time it echoes) is taken from a segment at or below rcv_wup (rcv_nxt when the last
      ACK left) and not older (PAWS), so a delayed ACK echoes the first segment it covers, an
      ACK of an out-of-order segment the last in-order one, the ACK of a hole's filler the
      filler. A duplicate wholly below rcv_wup is turned away before (tcp_validate_incoming,
      tcp_sequence) and leaves it unchanged. The D-SACK ACK's `sent_s` is TS.Recent (the
      sender's undo reads it as the echo); the other ACKs' `sent_s` stays the send time of the
      packet the sender's RTT sample is taken from (Linux's skb timestamps: the oldest packet
      acknowledged, or the newly sacked one).
    * SACK blocks (RFC 2018 §4, tcp_sack_new_ofo_skb, tcp_sack_remove): the out-of-order
      packets are kept as contiguous ranges (`ofo_end`, `ofo_start`: first packet <-> one past
      the last), each updated in O(1) per out-of-order packet; `sack_starts` lists the ranges
      reported, most recent first (up to TCP_NUM_SACKS), so the first block is the whole range
      holding the packet that triggered the ACK. `sack_blocks` gives an ACK's blocks: the
      D-SACK first (RFC 2883 §4), at most 3 with timestamps.

    The model's sender still learns one packet per ACK (`sack_seq`). Not modelled: SACK
    compression of out-of-order ACKs (tcp_comp_sack_nr, at most 1 ms or 5 % of the RTT here),
    the receiver's own RTT estimate (its RTO is taken as 1 s), PAWS discards, and the pingpong
    (interactive) mode."""

    __slots__ = ("ack_ect", "ack_note", "ato_s", "ecn_seen", "last_rcv_s", "ofo_end",
                 "ofo_start", "quick", "rcv_wup", "sack_starts", "ts_recent_s")

    def __init__(self, sim: Simulator, host: Any, peer: Any, n_packets: int | float,
                 packet_bytes: int, last_packet_bytes: int, ack_bytes: int,
                 on_ack: Callable[[Packet], None], start_s: float, *, ecn: str | None):
        super().__init__(sim, host, peer, n_packets, packet_bytes, last_packet_bytes, ack_bytes,
                         on_ack, start_s, ecn=ecn, every=2, timeout_s=TCP_ATO_MIN_S)
        self.ato_s = 0.0           # icsk_ack.ato (0: no data yet)
        self.last_rcv_s = start_s  # icsk_ack.lrcvtime
        self.quick = 0             # icsk_ack.quick: ACKs still to send at once
        self.rcv_wup = 0           # tp->rcv_wup: rcv_nxt when the last ACK was sent
        self.ts_recent_s = 0.0     # tp->rx_opt.ts_recent, as the send time of its segment
        self.ecn_seen = False      # TCP_ECN_SEEN: an ECT or CE packet arrived
        self.ack_ect = ecn == "dctcp"   # tcp_ecn_send: !tcp_ca_needs_ecn clears ECT on ACKs
        self.ofo_end: dict[int, int] = {}     # out-of-order range: first packet -> one past last
        self.ofo_start: dict[int, int] = {}   # and one past the last -> first
        self.sack_starts: list[int] = []      # tp->selective_acks: ranges, most recent first
        # called with (receiver, ACK) as each ACK leaves (the captures, netsim/pcap.py)
        self.ack_note: Callable[[LinuxReceiver, Packet], None] | None = None

    def on_data(self, packet: Packet) -> None:
        seq = packet.seq
        rcv_nxt = self.rcv_nxt
        out_of_order = self.out_of_order
        gap = bool(out_of_order)
        duplicate = seq < rcv_nxt or (gap and seq in out_of_order)
        # tcp_replace_ts_recent (RFC 7323 §4.3): a segment at rcv_wup, or ending there (one
        # wholly below it fails tcp_sequence first), records its TSval unless older
        # (tcp_paws_check)
        wup = self.rcv_wup
        if seq <= wup and seq + 1 >= wup and packet.sent_s >= self.ts_recent_s:
            self.ts_recent_s = packet.sent_s
        ecn_action = 0
        if self.ecn is not None:
            ecn_action = self._ecn_receive(packet, duplicate)
        if seq == rcv_nxt:
            # tcp_event_data_recv: adapt the ACK timeout to the arrival gaps (per in-order
            # packet)
            now = self.sim.now
            ato = self.ato_s
            if ato == 0.0:
                self.quick = TCP_MAX_QUICKACKS          # tcp_incr_quickack
                self.ato_s = TCP_ATO_MIN_S
            else:
                arrival_gap = now - self.last_rcv_s
                if arrival_gap <= TCP_ATO_MIN_S / 2.0:
                    self.ato_s = ato / 2.0 + TCP_ATO_MIN_S / 2.0
                elif arrival_gap < ato:
                    ato = ato / 2.0 + arrival_gap       # min(ato, LINUX_INITIAL_RTO_S)
                    self.ato_s = LINUX_INITIAL_RTO_S if LINUX_INITIAL_RTO_S < ato else ato
                elif arrival_gap > LINUX_INITIAL_RTO_S:
                    if self.quick < TCP_MAX_QUICKACKS:
                        self.quick = TCP_MAX_QUICKACKS
            self.last_rcv_s = now
            if not gap and seq != self.n_packets - 1:
                # `_accept(packet)` in its common case, inline: the next packet, nothing
                # buffered
                size = packet.size_bytes
                self.last_new_s = now
                self.arrived_bytes += size
                if rcv_nxt * self.packet_bytes != self.delivered_bytes \
                        or size != self.packet_bytes:
                    self.in_order = False
                self.delivered_bytes += size
                self.rcv_nxt = rcv_nxt + 1
            else:
                self._accept(packet)
                if gap:
                    self._sack_remove(seq + 1)
        else:
            self._accept(packet)
            if seq > rcv_nxt:
                if duplicate:
                    self._sack_touch(seq)
                else:
                    self._sack_new_ofo(seq)
        if ecn_action & ECN_QUICKACK:
            # tcp_data_ecn_check, after tcp_event_data_recv's ato update
            self._enter_quickack_mode(2)
        if duplicate:
            self._enter_quickack_mode(TCP_MAX_QUICKACKS)
            self._send_ack(seq, dsack=seq)
            return
        pending = self.pending
        if not pending:
            self.pending_sent_s = packet.sent_s
            self.pending_retx = packet.retx
        elif packet.retx:
            self.pending_retx = True
        self.pending = pending = pending + 1
        if (ecn_action or seq != rcv_nxt or gap or self.quick > 0 or pending >= self.every
                or self.rcv_nxt >= self.n_packets):
            self._send_ack(seq)
            return
        # tcp_send_delayed_ack: arm the timer for ato (bounded), or keep an earlier one
        ato = self.ato_s
        if ato > TCP_DELACK_MIN_S and ato > 0.5:
            ato = 0.5                                   # max_ato = HZ / 2 (no RTT estimate)
        if ato > TCP_DELACK_MAX_S:
            ato = TCP_DELACK_MAX_S
        timer = self.timer
        if timer.active:
            if timer.deadline <= self.sim.now + ato / 4.0:
                self._send_ack(-1)                      # about to expire: ACK now
            return                                      # keep the earlier deadline
        timer.start(ato)

    def _enter_quickack_mode(self, max_quickacks: int) -> None:
        """tcp_enter_quickack_mode: at least `max_quickacks` ACKs at once (tcp_incr_quickack),
        ato back to TCP_ATO_MIN."""
        if self.quick < max_quickacks:
            self.quick = max_quickacks
        self.ato_s = TCP_ATO_MIN_S

    def _ecn_receive(self, packet: Packet, duplicate: bool) -> int:
        """The ECN part of a data packet's arrival (Linux tcp_data_queue): tcp_ecn_accept_cwr,
        then, unless it is a duplicate, tcp_data_ecn_check (__tcp_ecn_check_ce) with DCTCP's
        CA events (dctcp_ece_ack_update). Returns what the packet asks of its ACK
        (ECN_ACK_NOW, ECN_QUICKACK bits)."""
        action = 0
        if packet.payload is True:
            # tcp_ecn_accept_cwr: the sender reduced its window (TCP_ECN_DEMAND_CWR cleared);
            # its cwnd may be very low, so a data segment with CWR is acknowledged now
            self.ece = False
            action = ECN_ACK_NOW
        if duplicate:
            return action           # tcp_data_queue: no ECN check of a duplicate
        ce = packet.ce
        if ce or packet.ect:
            if self.ecn == "dctcp":
                # dctcp_ece_ack_update (CA_EVENT_ECN_IS_CE / CA_EVENT_ECN_NO_CE): on a change
                # of the CE state, an ACK that was delayed goes first with the prior state,
                # then this packet is acknowledged at once
                if ce != self.ce_state:
                    if self.pending:
                        self.ece = self.ce_state          # dctcp_ece_ack_cwr(sk, *ce_state)
                        self._send_ack(-1, prior=True)    # __tcp_send_ack(sk, prior_rcv_nxt)
                    action |= ECN_ACK_NOW
                    self.ce_state = ce
                self.ece = ce                             # dctcp_ece_ack_cwr(sk, new state)
            elif ce and not self.ece:
                # __tcp_ecn_check_ce, INET_ECN_CE without TCP_ECN_DEMAND_CWR: "Better not
                # delay acks, sender can have a very low cwnd"
                self.ece = True
                action |= ECN_QUICKACK
            self.ecn_seen = True                          # TCP_ECN_SEEN
        elif self.ecn_seen:
            # INET_ECN_NOT_ECT after ECT: "it is probably a retransmit"
            action |= ECN_QUICKACK
        return action

    # -- SACK blocks (what the captures show; the model's sender reads `sack_seq`) --------------
    def _sack_new_ofo(self, seq: int) -> None:
        """tcp_data_queue_ofo, tcp_sack_new_ofo_skb, tcp_sack_maybe_coalesce: packet `seq`
        arrived out of order and joins its neighbouring ranges; that range's block goes
        first, the blocks it absorbed go."""
        ofo_end, ofo_start = self.ofo_end, self.ofo_start
        start, end = seq, seq + 1
        right = ofo_end.pop(end, None)          # a range beginning just after it
        if right is not None:
            del ofo_start[right]
            end = right
        left = ofo_start.pop(seq, None)         # a range ending just before it
        if left is not None:
            start = left
        ofo_end[start] = end
        ofo_start[end] = start
        starts = [start]
        for other in self.sack_starts:
            if other != start and other != seq + 1 and len(starts) < TCP_NUM_SACKS:
                starts.append(other)
        self.sack_starts = starts

    def _sack_touch(self, seq: int) -> None:
        """tcp_data_queue_ofo on an out-of-order duplicate (add_sack): the block holding it
        goes first."""
        starts = self.sack_starts
        for i, start in enumerate(starts):
            if start <= seq < self.ofo_end[start]:
                if i:
                    starts.insert(0, starts.pop(i))
                return

    def _sack_remove(self, first: int) -> None:
        """tcp_ofo_queue, tcp_sack_remove: the range that began at `first` is now delivered in
        order; its block goes."""
        end = self.ofo_end.pop(first, None)
        if end is not None:
            del self.ofo_start[end]
            rcv_nxt = self.rcv_nxt
            self.sack_starts = [start for start in self.sack_starts if start > rcv_nxt]

    def sack_blocks(self, dsack: int) -> list[tuple[int, int]]:
        """The SACK blocks of an ACK sent now (packets, first to one past the last), as
        tcp_options_write: the D-SACK of packet `dsack` (if >= 0) first (RFC 2883 §4), then
        the ranges most recent first (RFC 2018 §4), at most TCP_SACK_BLOCKS_TS in all."""
        blocks = [(dsack, dsack + 1)] if dsack >= 0 else []
        ofo_end = self.ofo_end
        for start in self.sack_starts:
            if len(blocks) >= TCP_SACK_BLOCKS_TS:
                break
            blocks.append((start, ofo_end[start]))
        return blocks

    def _send_ack(self, sack_seq: int, dsack: int = -1, prior: bool = False) -> None:
        ack = Packet(ACK, self.host, self.peer, self.ack_bytes, self.on_ack, dsack, self.rcv_nxt,
                     sack_seq, self.pending_sent_s, self.pending_retx, None, self.ack_ect,
                     self.flow_hash)
        if dsack >= 0:
            # no RTT sample from a duplicate (Karn: retx; linux_rto: the D-SACK); its echo is
            # TS.Recent (tcp_replace_ts_recent)
            ack.sent_s, ack.retx = self.ts_recent_s, True
        if self.ece:
            ack.payload = True
        if not prior:
            # tcp_event_ack_sent (not for DCTCP's ACK of the prior rcv_nxt)
            self.timer.cancel()
            if self.quick > 0:
                self.quick -= 1                         # tcp_dec_quickack_mode
                if self.quick == 0:
                    self.ato_s = TCP_ATO_MIN_S
        self.pending = 0
        self.rcv_wup = self.rcv_nxt                     # tcp_select_window
        note = self.ack_note
        if note is not None:
            note(self, ack)
        self.host.send(ack)
