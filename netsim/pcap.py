"""Packet captures (--pcap): one pcap file per link direction, for Wireshark and tcpdump.

Each captured packet is a synthesized Ethernet/IPv4/TCP frame (UDP for "cbr" and "onoff"
flows), built with dpkt (the `pcap` extra): hosts get addresses 10.0.0.1, 10.0.0.2, ... and
MACs 02:00:00:00:xx:xx in file order; a flow's sender uses port 10000 + its index, its receiver
port 5001. Sequence numbers count payload bytes: a packet of `size_bytes` (headers included,
as everywhere in netsim) carries size - 40 payload bytes, and packet k of a flow starts at byte
k * (data packet size - 40); ACK numbers are the cumulative ACK in the same bytes, with one SACK
block for the packet that triggered the ACK when it lies above the cumulative ACK; ECT/CE set
the IP ECN field, CWR/ECE the TCP flags. Routing messages are UDP port 520 (as RIP).

A direction's packets are captured when they leave its transmitter and reach the far end
(timestamp: the simulated arrival time), before impairments act on them, so a packet lost by an
impairment is captured and a packet dropped by the full buffer is not; packets in flight when a
link fails are not captured. Frames are stored truncated to their headers (the record keeps the
full length), so a capture costs about 70 bytes per packet. Nothing is installed without
--pcap: a run without it pays nothing.
"""
from __future__ import annotations

import struct
from pathlib import Path

import dpkt

from components.packet import ACK, DATA

MSS_HEADERS = 40          # IPv4 + TCP headers without options, counted in a packet's size
RECEIVER_PORT = 5001
ROUTING_PORT = 520


MAX_PART_CHARS = 60       # an id's part of a file name; longer ones end in a digest


def file_part(text: str) -> str:
    """An id as part of a file name, one to one: ASCII letters and digits are kept, every other
    character (UTF-8 byte) is written %XX, so "L_1" and "L 1" (or "a-b" + "c" and "a" + "b-c")
    never give the same name and the separators "_" and "-" of the capture names stay
    unambiguous; an id longer than MAX_PART_CHARS once encoded is cut and ends in "~" and
    16 hex digits of its SHA-256 ("~" is never produced by the encoding)."""
    out = "".join(c if c.isascii() and c.isalnum() else
                  "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass")) for c in text)
    if len(out) > MAX_PART_CHARS:
        import hashlib
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        out = out[:MAX_PART_CHARS - 17] + "~" + digest
    return out


_safe = file_part            # the name plot_tool.seqplot imports (seq_<flow>.png)


class Endpoints:
    """Addresses of hosts and routers, and which flow (and end) a packet belongs to."""

    def __init__(self, network):
        nodes = list(network.hosts.values()) + list(network.routers.values())
        self.ip = {node: bytes((10, 0, (i + 1) >> 8, (i + 1) & 255)) for i, node in enumerate(nodes)}
        self.mac = {node: bytes((2, 0, 0, 0, (i + 1) >> 8, (i + 1) & 255))
                    for i, node in enumerate(nodes)}
        self.by_endpoint = {}      # id(receiver or sender object) -> (flow, sender port)
        for k, flow in enumerate(network.flows.values()):
            port = 10000 + k
            if hasattr(flow, "receiver"):
                self.by_endpoint[id(flow.receiver)] = (flow, port)
                self.by_endpoint[id(flow.sender)] = (flow, port)
            else:                                       # cbr / onoff: UDP
                self.by_endpoint[id(flow)] = (flow, port)


class Capture:
    """Writes one direction's packets to a pcap file, then hands them on to `receive`."""

    __slots__ = ("d", "ends", "fh", "receive", "sim", "packets", "path")

    def __init__(self, d, ends: Endpoints, path: Path, receive):
        self.d = d
        self.ends = ends
        self.sim = d.sim
        self.receive = receive
        self.packets = 0
        self.path = path
        self.fh = open(path, "wb")
        self.fh.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, dpkt.pcap.DLT_EN10MB))

    def __call__(self, packet) -> None:
        self.write(packet)
        self.receive(packet)

    def frame(self, packet) -> bytes:
        ends = self.ends
        src, dst = packet.src, packet.dst
        size = packet.size_bytes
        owner = getattr(packet.deliver, "__self__", None)
        known = ends.by_endpoint.get(id(owner))
        tos = (2 if packet.ect else 0) | (1 if packet.ce else 0)
        if known is None or not hasattr(known[0], "receiver"):   # routing or cbr: UDP
            port = known[1] if known is not None else ROUTING_PORT
            dport = RECEIVER_PORT if known is not None else ROUTING_PORT
            transport: dpkt.Packet = dpkt.udp.UDP(sport=port, dport=dport, ulen=max(8, size - 20))
            proto = dpkt.ip.IP_PROTO_UDP
        else:
            flow, port = known
            mss = flow.packet_bytes - MSS_HEADERS
            opts = b""
            if packet.kind == DATA:
                flags = dpkt.tcp.TH_ACK | (dpkt.tcp.TH_PUSH if packet.retx else 0)
                if packet.payload is True:
                    flags |= dpkt.tcp.TH_CWR
                tcp = dpkt.tcp.TCP(sport=port, dport=RECEIVER_PORT, seq=(packet.seq * mss) & 0xFFFFFFFF,
                                   ack=1, flags=flags, win=65535)
            else:
                flags = dpkt.tcp.TH_ACK | (dpkt.tcp.TH_ECE if packet.payload is True else 0)
                if packet.kind == ACK and packet.sack_seq > packet.ack_seq >= 0:
                    left = packet.sack_seq * mss
                    opts = struct.pack(">BBBBII", 1, 1, 5, 10, left & 0xFFFFFFFF,
                                       (left + mss) & 0xFFFFFFFF)
                tcp = dpkt.tcp.TCP(sport=RECEIVER_PORT, dport=port, seq=1,
                                   ack=(max(packet.ack_seq, 0) * mss) & 0xFFFFFFFF, flags=flags,
                                   win=65535, opts=opts)
                tcp.off = 5 + len(opts) // 4
            transport = tcp
            proto = dpkt.ip.IP_PROTO_TCP
        ip = dpkt.ip.IP(src=ends.ip.get(src, b"\0\0\0\0"), dst=ends.ip.get(dst, b"\0\0\0\0"),
                        p=proto, ttl=64, tos=tos, data=transport)
        eth = dpkt.ethernet.Ethernet(src=ends.mac.get(self.d.src, b"\0" * 6),
                                     dst=ends.mac.get(self.d.dst, b"\0" * 6),
                                     type=dpkt.ethernet.ETH_TYPE_IP, data=ip)
        frame = bytearray(bytes(eth))
        # the IP total length is the packet's full size (the frame is stored truncated)
        header = bytearray(frame[14:34])
        header[2:4] = struct.pack(">H", max(size, len(frame) - 14))
        header[10:12] = b"\0\0"
        header[10:12] = struct.pack(">H", dpkt.in_cksum(bytes(header)))
        frame[14:34] = header
        return bytes(frame)

    def write(self, packet) -> None:
        data = self.frame(packet)
        now = self.sim.now
        seconds = int(now)
        micros = int(round((now - seconds) * 1e6))
        if micros >= 1000000:
            seconds, micros = seconds + 1, micros - 1000000
        full = 14 + max(packet.size_bytes, len(data) - 14)
        self.fh.write(struct.pack("<IIII", seconds, micros, len(data), full))
        self.fh.write(data)
        self.packets += 1

    def close(self) -> None:
        if not self.fh.closed:
            self.fh.close()


def install_captures(network, directory, links=None) -> list:
    """Capture every direction of `links` (ids; None: all) into `directory`/<link>_<A>-<B>.pcap
    (each id written by `file_part`, so different ids never share a file).
    Call before the run; close the returned captures after it."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    ends = Endpoints(network)
    captures = []
    for link in network.links.values():
        if links is not None and link.id not in links:
            continue
        for d in link.directions:
            path = directory / f"{_safe(link.id)}_{_safe(d.src.id)}-{_safe(d.dst.id)}.pcap"
            if d.guard is not None:                    # inside the failure guard (survives repairs)
                capture = Capture(d, ends, path, d.guard.receive)
                d.guard.receive = capture
            else:
                capture = Capture(d, ends, path, d.dst_receive)
                d.dst_receive = capture
            captures.append(capture)
    return captures
