"""Packets: data, acknowledgements and routing messages.

A packet is a passive record. `deliver` is the callable its destination node hands it to, so
nodes forward and deliver packets without knowing what flows or routing agents are.
"""
from __future__ import annotations

DATA = 0
ACK = 1
ROUTING = 2
KIND_NAMES = ("data", "ack", "routing")


class Packet:
    """One packet. Sizes include headers; `seq` numbers packets, not bytes.

    Data packets carry `seq`, their send time `sent_s` and whether they are a retransmission
    (`retx`). ACKs carry the cumulative ACK `ack_seq` (next packet expected in order), the sequence
    number of the data packet that triggered them `sack_seq` (selective-ACK information), and
    echo that packet's `sent_s` and `retx` (for RTT samples under Karn's rule).

    ECN (RFC 3168): `ect` marks a packet as ECN-capable (set by the sender), `ce` records that a
    queue experienced congestion (set by a queue instead of dropping an `ect` packet). A flow's
    data packets carry CWR and its ACKs ECE as ``payload is True`` (flows/sender.py, receiver.py).

    `hops`: how many routers have forwarded it so far; a router drops a packet that has been
    forwarded as many times as the network has routers, which only a forwarding loop can do
    (`components.node.Router`).

    `flow_hash`: the flow's ECMP hash (routing/ecmp.py), computed once per flow and direction; 0
    when the run has no flow-hashing ECMP (routers then never read it).
    """

    __slots__ = ("kind", "src", "dst", "size_bytes", "deliver", "seq", "ack_seq", "sack_seq",
                 "sent_s", "retx", "payload", "ect", "ce", "flow_hash", "hops")

    def __init__(self, kind: int, src, dst, size_bytes: int, deliver, seq: int = -1,
                 ack_seq: int = -1, sack_seq: int = -1, sent_s: float = 0.0, retx: bool = False,
                 payload=None, ect: bool = False, flow_hash: int = 0):
        self.kind = kind
        self.src = src
        self.dst = dst
        self.size_bytes = size_bytes
        self.deliver = deliver
        self.seq = seq
        self.ack_seq = ack_seq
        self.sack_seq = sack_seq
        self.sent_s = sent_s
        self.retx = retx
        self.payload = payload
        self.ect = ect
        self.ce = False
        self.flow_hash = flow_hash
        self.hops = 0

    def copy(self) -> Packet:
        """Another packet with the same fields (a duplicate made on a link: it goes on by
        itself, with its own hop count and ECN mark from here on)."""
        twin = Packet(self.kind, self.src, self.dst, self.size_bytes, self.deliver, self.seq,
                      self.ack_seq, self.sack_seq, self.sent_s, self.retx, self.payload,
                      self.ect, self.flow_hash)
        twin.ce = self.ce
        twin.hops = self.hops
        return twin

    def __repr__(self) -> str:
        return (f"Packet({KIND_NAMES[self.kind]}, {getattr(self.src, 'id', self.src)}->"
                f"{getattr(self.dst, 'id', self.dst)}, seq={self.seq}, ack={self.ack_seq}, "
                f"{self.size_bytes} B)")
