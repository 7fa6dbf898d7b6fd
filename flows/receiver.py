"""The receiving side of a flow: in-order delivery to the application, and acknowledgements.

Every data packet that arrives, duplicates included, is acknowledged at once (no delayed ACKs)
by an ACK carrying the cumulative ACK (the next packet expected in order) and the sequence number
of the packet that triggered it (one SACK block of one packet), echoing that packet's send time
and whether it was a retransmission (for the sender's RTT samples under Karn's rule). Because
every ACK is cumulative, a lost ACK is repaired by the next one. Out-of-order packets are
buffered; bytes are delivered to the application strictly in order, and each delivered packet
must start exactly at the next expected byte and have its expected size (`in_order`).

This is where a delayed-ACK policy or ECN echo would live.
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
                 "packet_bytes", "peer", "rcv_nxt", "sim")

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

    def on_data(self, packet: Packet) -> None:
        """A data packet arrived: deliver what is now in order, then acknowledge."""
        self.last_arrival_s = self.sim.now
        size = packet.size_bytes
        self.arrived_bytes += size
        seq = packet.seq
        rcv_nxt = self.rcv_nxt
        if seq == rcv_nxt:
            # Deliver it and the buffered packets that follow it. Each must start at the next
            # expected byte and have the size its sequence number gives it.
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
        elif seq > rcv_nxt:
            self.out_of_order.add(seq)
        self.host.send(Packet(ACK, self.host, self.peer, self.ack_bytes, self.on_ack, -1,
                              self.rcv_nxt, seq, packet.sent_s, packet.retx))
