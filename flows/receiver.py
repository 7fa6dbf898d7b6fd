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

if TYPE_CHECKING:
    from simulator.engine import Simulator


class Receiver:
    """Receives a flow's data packets at host `host` and acknowledges them to `peer`, whose
    ACK handler is `on_ack`. `host` and `peer` are any objects with `send(packet)` (hosts,
    or a test's stand-ins), which compiled code calls dynamically (docs/model.md, "Compiled
    core"); `n_packets` is a count, or math.inf."""

    __slots__ = ("ack_bytes", "arrived_bytes", "delivered_bytes", "host", "in_order",
                 "last_arrival_s", "last_packet_bytes", "n_packets", "on_ack", "out_of_order",
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
        self.last_arrival_s = start_s     # when a data packet last arrived
        self.flow_hash = 0                # ECMP hash of the ACK direction (routing/ecmp.py)

    def on_data(self, packet: Packet) -> None:
        """A data packet arrived: deliver what is now in order, then acknowledge."""
        # `_accept(packet)`, inline (once per data packet): count it, deliver what is now in
        # order, buffer it if it is ahead
        self.last_arrival_s = self.sim.now
        size = packet.size_bytes
        self.arrived_bytes += size
        seq = packet.seq
        rcv_nxt = self.rcv_nxt
        if seq == rcv_nxt:
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
        elif seq > rcv_nxt:
            self.out_of_order.add(seq)
        host = self.host
        host.send(Packet(ACK, host, self.peer, self.ack_bytes, self.on_ack, -1, rcv_nxt, seq,
                         packet.sent_s, packet.retx, None, False, self.flow_hash))

    def _accept(self, packet: Packet) -> None:
        """Count the packet, deliver what is now in order, buffer it if it is ahead."""
        self.last_arrival_s = self.sim.now
        size = packet.size_bytes
        self.arrived_bytes += size
        seq = packet.seq
        if seq == self.rcv_nxt:
            self._deliver_in_order(size, seq)
        elif seq > self.rcv_nxt:
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
RECEIVER_RTO_S = 1.0           # TCP_TIMEOUT_INIT: the receiver takes no RTT sample here


class LinuxReceiver(EcnDelayedReceiver):
    """A receiver that acknowledges as Linux does (net/ipv4/tcp_input.c, tcp_output.c), with
    the ECN echo of `EcnDelayedReceiver` when the flow uses ECN.

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

    Not modelled: SACK compression of out-of-order ACKs (tcp_comp_sack_nr, at most 1 ms or 5 %
    of the RTT here), the receiver's own RTT estimate (its RTO is taken as 1 s) and the
    pingpong (interactive) mode."""

    __slots__ = ("ato_s", "last_rcv_s", "quick")

    def __init__(self, sim: Simulator, host: Any, peer: Any, n_packets: int | float,
                 packet_bytes: int, last_packet_bytes: int, ack_bytes: int,
                 on_ack: Callable[[Packet], None], start_s: float, *, ecn: str | None):
        super().__init__(sim, host, peer, n_packets, packet_bytes, last_packet_bytes, ack_bytes,
                         on_ack, start_s, ecn=ecn, every=2, timeout_s=TCP_ATO_MIN_S)
        self.ato_s = 0.0           # icsk_ack.ato (0: no data yet)
        self.last_rcv_s = start_s  # icsk_ack.lrcvtime
        self.quick = 0             # icsk_ack.quick: ACKs still to send at once

    def on_data(self, packet: Packet) -> None:
        if self.ecn is not None:
            self._echo(packet)
        seq = packet.seq
        rcv_nxt = self.rcv_nxt
        out_of_order = self.out_of_order
        gap = bool(out_of_order)
        duplicate = seq < rcv_nxt or (gap and seq in out_of_order)
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
                    ato = ato / 2.0 + arrival_gap       # min(ato, RECEIVER_RTO_S)
                    self.ato_s = RECEIVER_RTO_S if RECEIVER_RTO_S < ato else ato
                elif arrival_gap > RECEIVER_RTO_S:
                    if self.quick < TCP_MAX_QUICKACKS:
                        self.quick = TCP_MAX_QUICKACKS
            self.last_rcv_s = now
            if not gap and seq != self.n_packets - 1:
                # `_accept(packet)` in its common case, inline: the next packet, nothing
                # buffered
                size = packet.size_bytes
                self.last_arrival_s = now
                self.arrived_bytes += size
                if rcv_nxt * self.packet_bytes != self.delivered_bytes \
                        or size != self.packet_bytes:
                    self.in_order = False
                self.delivered_bytes += size
                self.rcv_nxt = rcv_nxt + 1
            else:
                self._accept(packet)
        else:
            self._accept(packet)
        if duplicate:
            self.quick = max(self.quick, TCP_MAX_QUICKACKS)    # tcp_enter_quickack_mode
            self._send_ack(seq, dsack=seq)
            return
        pending = self.pending
        if not pending:
            self.pending_sent_s = packet.sent_s
            self.pending_retx = packet.retx
        elif packet.retx:
            self.pending_retx = True
        self.pending = pending = pending + 1
        if (seq != rcv_nxt or gap or self.quick > 0 or pending >= self.every
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

    def _send_ack(self, sack_seq: int, dsack: int = -1) -> None:
        self.timer.cancel()
        ack = Packet(ACK, self.host, self.peer, self.ack_bytes, self.on_ack, dsack, self.rcv_nxt,
                     sack_seq, self.pending_sent_s, self.pending_retx, None, False,
                     self.flow_hash)
        if dsack >= 0:
            ack.sent_s, ack.retx = self.sim.now, True   # no RTT sample from a duplicate
        if self.ece:
            ack.payload = True
        if self.quick > 0:
            self.quick -= 1                             # tcp_dec_quickack_mode
            if self.quick == 0:
                self.ato_s = TCP_ATO_MIN_S
        self.pending = 0
        self.host.send(ack)
