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

from typing import TYPE_CHECKING, Callable

from components.packet import ACK, Packet

if TYPE_CHECKING:
    from components.node import Host
    from simulator.engine import Simulator


class Receiver:
    """Receives a flow's data packets at host `host` and acknowledges them to `peer`, whose
    ACK handler is `on_ack`."""

    __slots__ = ("ack_bytes", "arrived_bytes", "delivered_bytes", "host", "in_order",
                 "last_arrival_s", "last_packet_bytes", "n_packets", "on_ack", "out_of_order",
                 "packet_bytes", "peer", "rcv_nxt", "sim", "flow_hash")

    def __init__(self, sim: Simulator, host: Host, peer: Host, n_packets: float,
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
        self.delivered_bytes = 0          # delivered to the application, in order
        self.arrived_bytes = 0            # data bytes that reached the receiver, in order or not
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

    def __init__(self, sim: Simulator, host: Host, peer: Host, n_packets: float,
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
        ecn = self.ecn
        if ecn is not None:
            ce = packet.ce
            if ce != self.ce_state:
                # RFC 8257 §3.2 (and a prompt echo of a new mark for RFC 3168): ACK what is
                # pending with the old state first
                if self.pending:
                    self._send_ack(-1)
                self.ce_state = ce
            if ecn == "classic":
                if packet.payload is True:      # CWR: the sender reacted
                    self.ece = False
                if ce:
                    self.ece = True
            else:
                self.ece = ce
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
