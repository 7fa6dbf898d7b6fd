"""Packet captures (--pcap): what tcpdump on each host would record, or one file per link direction.

Two kinds of capture, both classic pcap (microsecond timestamps, Ethernet; frames packed with
struct, the `pcap` extra's dpkt reads them back for the time-sequence plots):

* host captures (`--pcap`, `install_host_captures`): ``pcap/<host>.pcap`` for each host of the
  flows of interest, both directions of its interface, timestamped when the host hands a packet
  to its link (sends) and when a packet arrives from it (receives), as tcpdump on that host
  would see them. Every packet the host sends is recorded, also one its own link's buffer then
  drops (the buffer is modelled as beyond the capture point, like a router's queue);
* link captures (`--pcap-links`, `install_captures`): ``pcap/<link>_<A>-<B>.pcap`` per
  direction of the links of interest, recorded when a packet reaches the far end (before
  impairments act on it: a packet an impairment loses is recorded, one the full buffer drops is
  not, nor one in flight when the link fails).

Frames are synthesized (docs/outputs.md, "Packet captures"): hosts and routers get addresses
10.0.0.1, 10.0.0.2, ... and MACs 02:00:00:00:xx:xx in file order; flow k (file order) sends
from port 10000 + k (wrapping within 10000..65535) to port 5001. There is no handshake (the
model has none). Every TCP segment carries the timestamps option (RFC 7323): TSval is the
sending host's clock in ms (the simulated time, floor), TSecr echoes: an ACK echoes the TSval
of the data packet it echoes (the model's echo; a Linux-stack receiver's TS.Recent, RFC 7323
§4.3, which it reports through its `ack_note` as each ACK leaves), a data packet the TSval of the
last ACK that reached its sender. A packet of S bytes (IPv4 + TCP headers included, as
everywhere in netsim):

* data: IPv4 total length S, TCP header 32 bytes (20 + 12 of NOP NOP TS), payload S - 52
  (at least 1); packet k of a flow starts at byte k * (data packet size - 52);
* ACK: no payload, ever. TCP options NOP NOP TS, then NOP NOP SACK with its blocks: a Linux-stack
  receiver's (`LinuxReceiver.sack_blocks`: the D-SACK first, RFC 2883 §4, then the whole
  contiguous out-of-order ranges, most recent first, RFC 2018 §4, at most 3), else one block
  (the packet that triggered the ACK, when above the cumulative ACK); then End-of-Option-List
  padding up to S - 40 bytes (at most 40, whole 4-byte words); the IPv4 total length is 40 +
  those options, the frame 14 + max(S, that length) bytes (the rest is Ethernet padding). A
  64-byte ACK is exactly 20 + 20 + 12 + 12 (72 and 80 bytes with 2 and 3 blocks, as Linux's); a
  40-byte ACK is stored 52 or 64 bytes long (its options do not fit in the model's size);
* "cbr"/"onoff" packets are UDP of IPv4 length S; routing messages UDP port 520 (as RIP).

ECT/CE set the IP ECN field, CWR/ECE the TCP flags; a retransmission has PSH set (netsim's
mark, read by plot_tool/seqplot.py). Every retransmission lies below the highest sequence sent,
so Wireshark's analysis flags it: a retransmission, or "Out-Of-Order" when it is sent less than
3 ms after the segment that reached the highest sequence and is not a copy of that segment (its
threshold with no handshake to take an RTT from, packet-tcp.c; docs/outputs.md, "Packet
captures"). Frames are stored truncated to their headers (the record keeps the full length), so
a capture costs about 80 bytes per packet. Nothing is installed without --pcap / --pcap-links:
a run without them pays nothing.
"""
from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import dpkt

from components.packet import ACK, DATA
from netsim.iperf_json import DATA_HEADERS  # a data packet's headers: MSS_HEADERS + TS option 12
from plot_tool.schema import RECEIVER_PORT, host_capture_name, link_capture_name, sender_port

# capture file names and ports: one definition, read back by plot_tool.seqplot
from plot_tool.schema import file_part as file_part  # an id as part of a file name

MSS_HEADERS = 40          # IPv4 + TCP headers without options, counted in a packet's size
TS_OPTION = b"\x01\x01\x08\x0a"    # NOP NOP kind 8 length 10, then TSval and TSecr
MAX_OPTION_BYTES = 40
MIN_FRAME_BYTES = 60      # Ethernet minimum (without FCS): shorter frames are padded
MAX_PACKET_BYTES = 65535   # an IPv4 packet's 16-bit total length: larger ones cannot be written
ROUTING_PORT = 520
SENT_MEMORY = 1 << 16     # ACK send clocks remembered until their arrival (oldest forgotten)


def _ms(t: float) -> int:
    """A host's TCP timestamp clock (ms) at simulated time `t`: whole ms of the capture's
    microsecond timestamp."""
    return (round(t * 1e6) // 1000) & 0xFFFFFFFF


class Endpoints:
    """Addresses of hosts and routers, which flow (and port) a packet belongs to, and the TCP
    timestamp state the frames share (ACK send clocks, each flow's last echoed ACK)."""

    def __init__(self, network):
        nodes = list(network.hosts.values()) + list(network.routers.values())
        self.ip = {node: bytes((10, 0, (i + 1) >> 8, (i + 1) & 255)) for i, node in enumerate(nodes)}
        self.mac = {node: bytes((2, 0, 0, 0, (i + 1) >> 8, (i + 1) & 255))
                    for i, node in enumerate(nodes)}
        self.by_endpoint = {}      # id(receiver or sender object) -> (flow, sender port)
        self.ts_recent = {}        # sender port -> TSval of the last ACK that reached the sender
        self.ack_clock = {}        # id(ACK packet) -> TSval when it was sent (bounded)
        # id(ACK packet) -> (ACK, TSecr, SACK blocks) as a Linux receiver sent it (bounded)
        self.ack_options = {}
        for k, flow in enumerate(network.flows.values()):
            port = sender_port(k)
            if hasattr(flow, "receiver"):
                self.by_endpoint[id(flow.receiver)] = (flow, port)
                self.by_endpoint[id(flow.sender)] = (flow, port)
                if hasattr(flow.receiver, "ack_note"):  # LinuxReceiver: TS.Recent and SACK
                    self._listen(flow.receiver)
            else:                                       # cbr / onoff: UDP
                self.by_endpoint[id(flow)] = (flow, port)

    def _listen(self, receiver) -> None:
        """Have `receiver` tell this capture each ACK's TSecr and SACK blocks as it sends it
        (after any other capture's listener: host and link captures each keep their own)."""
        before = receiver.ack_note
        options = self.ack_options

        def note(receiver, ack):
            if before is not None:
                before(receiver, ack)
            if len(options) >= SENT_MEMORY:
                del options[next(iter(options))]
            options[id(ack)] = (ack, _ms(receiver.ts_recent_s), receiver.sack_blocks(ack.seq))

        receiver.ack_note = note

    def ack_echo(self, packet, arrived: bool):
        """The TSecr and SACK blocks (packet numbers) a Linux receiver sent `packet` with, or
        None (another receiver, or an ACK it did not send: a link's duplicate)."""
        key = id(packet)
        found = self.ack_options.get(key)
        if found is None or found[0] is not packet:
            return None
        if arrived:
            del self.ack_options[key]
        return found[1], found[2]

    def ack_tsval(self, packet, now: float, sending: bool) -> int:
        """The TSval of an ACK: the receiver's clock when it sent it (known when a capture saw
        it sent; else when a capture first saw it)."""
        clock = self.ack_clock
        key = id(packet)
        if sending:
            clock.pop(key, None)                 # an id reused since: the new packet counts
        else:
            found = clock.get(key)
            if found is not None and found[0] is packet:
                return found[1]
        if len(clock) >= SENT_MEMORY:
            del clock[next(iter(clock))]
        value = _ms(now)
        clock[key] = (packet, value)
        return value

    def forget(self, packet) -> None:
        """The ACK reached its destination: its send clock is no longer needed."""
        found = self.ack_clock.get(id(packet))
        if found is not None and found[0] is packet:
            del self.ack_clock[id(packet)]


def size_problem(sizes) -> str | None:
    """Why packets of these `PacketSizes` (topologies/spec.py) cannot be captured, or None:
    one larger than an IPv4 packet (`MAX_PACKET_BYTES`)."""
    for field, size in (("data", sizes.data_bytes), ("ack", sizes.ack_bytes),
                        ("routing", sizes.routing_bytes)):
        if size > MAX_PACKET_BYTES:
            return (f"packet_bytes.{field} is {size} bytes, and a capture holds IPv4 packets of "
                    f"at most {MAX_PACKET_BYTES} bytes (a 16-bit total length)")
    return None


def _byte(flow, k: int) -> int:
    """Sequence number (bytes) where packet k of `flow` starts (payloads of at least 1 byte,
    as `frame` writes them)."""
    mss = max(flow.packet_bytes - DATA_HEADERS, 1)
    n = flow.n_packets
    if k >= n:                              # past the last packet: its end
        k = int(n) - 1
        return (k * mss + max(flow.last_packet_bytes - DATA_HEADERS, 1)) & 0xFFFFFFFF
    return (k * mss) & 0xFFFFFFFF


_ETH_IP = struct.Struct(">6s6sH")                  # Ethernet: destination, source, type
_IP = struct.Struct(">BBHHHBBH4s4s")               # IPv4 header without options
_TCP = struct.Struct(">HHIIBBHHH")                  # TCP header without options
_UDP = struct.Struct(">HHHH")
_TS = struct.Struct(">4sII")                        # NOP NOP TS, TSval, TSecr
_SACK_HEAD = struct.Struct(">BBBB")                 # NOP NOP SACK kind 5, length
_SACK_BLOCK = struct.Struct(">II")                  # left edge, right edge
_WORDS = struct.Struct(">10H")
TH_PUSH, TH_ACK, TH_ECE, TH_CWR = 0x08, 0x10, 0x40, 0x80
PROTO_TCP, PROTO_UDP = 6, 17
DONT_FRAGMENT = 0x4000                              # the IPv4 flags and fragment offset field


def _ip_header(tos: int, length: int, proto: int, src: bytes, dst: bytes) -> bytes:
    """An IPv4 header (no options, TTL 64; TCP with Don't Fragment, as Linux sends it with path
    MTU discovery) with its checksum."""
    header = _IP.pack(0x45, tos, length, 0, DONT_FRAGMENT if proto == PROTO_TCP else 0, 64,
                      proto, 0, src, dst)
    return header[:10] + _checksum(sum(_WORDS.unpack(header))) + header[12:]


def _tcp_checksummed(segment: bytes, tcp_length: int, src: bytes, dst: bytes) -> bytes:
    """`segment` (a TCP header with its options, checksum 0) with the TCP checksum (RFC 9293
    §3.1) of the whole segment of `tcp_length` bytes: its payload, not stored, is zeros, which
    add nothing to the sum. A pure ACK is stored whole, so Wireshark's validation passes."""
    words = segment + b"\0" if len(segment) % 2 else segment
    total = (sum(struct.unpack(f">{len(words) // 2}H", words))
             + sum(struct.unpack(">4H", src + dst)) + PROTO_TCP + tcp_length)
    return segment[:16] + _checksum(total) + segment[18:]


def _checksum(total: int) -> bytes:
    """The Internet checksum (RFC 1071) of 16-bit words whose plain sum is `total`: the sum
    folded to 16 bits with end-around carry, complemented, big-endian."""
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return struct.pack(">H", ~total & 0xFFFF)


def frame(ends: Endpoints, packet, src_mac: bytes, dst_mac: bytes, now: float,
          sending: bool, arrived: bool) -> tuple[bytes, int]:
    """The frame of `packet` seen at `now` between MACs `src_mac` and `dst_mac` (headers only:
    Ethernet, IPv4, TCP with options and its checksum, or UDP without a checksum) and its full
    length on the wire. `sending`: the capture is at
    the host that sends it; `arrived`: at its destination."""
    size = packet.size_bytes
    owner = getattr(packet.deliver, "__self__", None)
    known = ends.by_endpoint.get(id(owner))
    tos = (2 if packet.ect else 0) | (1 if packet.ce else 0)
    if known is None or not hasattr(known[0], "receiver"):   # routing or cbr: UDP
        port = known[1] if known is not None else ROUTING_PORT
        dport = RECEIVER_PORT if known is not None else ROUTING_PORT
        transport = _UDP.pack(port, dport, max(8, size - 20), 0)
        proto = PROTO_UDP
        ip_len = max(size, 28)
    else:
        flow, port = known
        if packet.kind == DATA:
            flags = TH_ACK | (TH_PUSH if packet.retx else 0)
            if packet.payload is True:
                flags |= TH_CWR
            opts = _TS.pack(TS_OPTION, _ms(packet.sent_s), ends.ts_recent.get(port, 0))
            transport = _TCP.pack(port, RECEIVER_PORT, _byte(flow, packet.seq), 1,
                                  (5 + len(opts) // 4) << 4, flags, 65535, 0, 0) + opts
            ip_len = max(size, DATA_HEADERS + 1)
        else:
            flags = TH_ACK | (TH_ECE if packet.payload is True else 0)
            tsval = ends.ack_tsval(packet, now, sending)
            if arrived:
                ends.ts_recent[port] = tsval
                ends.forget(packet)
            echo = ends.ack_echo(packet, arrived)
            if echo is not None:
                # a Linux receiver's ACK: TSecr = TS.Recent (RFC 7323 §4.3), the D-SACK and
                # the contiguous ranges (RFC 2883 §4, RFC 2018 §4; flows/receiver.py)
                tsecr, blocks = echo
            else:
                tsecr = _ms(packet.sent_s)
                blocks = [(packet.sack_seq, packet.sack_seq + 1)] \
                    if packet.kind == ACK and packet.sack_seq > packet.ack_seq >= 0 else []
            opts = _TS.pack(TS_OPTION, tsval, tsecr)
            if blocks:
                opts += _SACK_HEAD.pack(1, 1, 5, 2 + 8 * len(blocks)) + b"".join(
                    [_SACK_BLOCK.pack(_byte(flow, left), _byte(flow, right))
                     for left, right in blocks])
            room = min(MAX_OPTION_BYTES, size - MSS_HEADERS) // 4 * 4
            if room > len(opts):                       # End of Option List, then zeros
                opts += b"\0" * (room - len(opts))
            transport = _TCP.pack(RECEIVER_PORT, port, 1, _byte(flow, max(packet.ack_seq, 0)),
                                  (5 + len(opts) // 4) << 4, flags, 65535, 0, 0) + opts
            ip_len = MSS_HEADERS + len(opts)
        proto = PROTO_TCP
    # the IP total length is the packet's length on the wire (the frame is stored truncated)
    ip = ends.ip
    src, dst = ip.get(packet.src, b"\0\0\0\0"), ip.get(packet.dst, b"\0\0\0\0")
    if proto == PROTO_TCP:
        transport = _tcp_checksummed(transport, ip_len - 20, src, dst)
    data = _ETH_IP.pack(dst_mac, src_mac, 0x0800) + _ip_header(tos, ip_len, proto, src, dst) \
        + transport
    return data, max(MIN_FRAME_BYTES, 14 + max(size, ip_len))


class PcapFile:
    """A classic pcap file (microsecond timestamps, Ethernet) written record by record."""

    __slots__ = ("fh", "packets", "path")

    def __init__(self, path: Path):
        self.path = path
        self.packets = 0
        self.fh = open(path, "wb")
        self.fh.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, dpkt.pcap.DLT_EN10MB))

    def record(self, now: float, data: bytes, full: int) -> None:
        seconds = int(now)
        micros = round((now - seconds) * 1e6)
        if micros >= 1000000:
            seconds, micros = seconds + 1, micros - 1000000
        self.fh.write(struct.pack("<IIII", seconds, micros, len(data), full))
        self.fh.write(data)
        self.packets += 1

    def close(self) -> None:
        if not self.fh.closed:
            self.fh.close()


class Capture(PcapFile):
    """Writes one link direction's packets to a pcap file, then hands them on to `receive`."""

    __slots__ = ("d", "ends", "receive", "sim")

    def __init__(self, d, ends: Endpoints, path: Path, receive):
        super().__init__(path)
        self.d = d
        self.ends = ends
        self.sim = d.sim
        self.receive = receive

    def __call__(self, packet) -> None:
        self.write(packet)
        self.receive(packet)

    def write(self, packet) -> None:
        ends, d = self.ends, self.d
        now = self.sim.now
        data, full = frame(ends, packet, ends.mac.get(d.src, b"\0" * 6),
                           ends.mac.get(d.dst, b"\0" * 6), now, False, packet.dst is d.dst)
        self.record(now, data, full)


# descriptors left for what else a run opens while its captures are open (the trace files, a
# log, --trace, the interpreter's own)
RESERVED_FILES = 64


class TooManyCaptures(ValueError):
    """The captures asked for need more files open at once than this process may open."""


def capture_file_count(network, *, hosts: bool, links: bool, flows=None, link_ids=None) -> int:
    """How many capture files `install_host_captures` (hosts) and `install_captures` (links)
    would keep open for this selection: one per host with a link, one per link direction."""
    count = 0
    if hosts:
        count += sum(1 for host in capture_hosts(network, flows) if host.port is not None)
    if links:
        count += sum(len(link.directions) for link in network.links.values()
                     if link_ids is None or link.id in link_ids)
    return count


def reserve_open_files(count: int) -> None:
    """Make room for `count` capture files open at once: raise this process's soft limit of
    open files up to its hard limit if it is lower than that needs (as Go's runtime does for
    every program), else TooManyCaptures saying how many it may open. Without the `resource`
    module (not Unix) nothing is checked: opening then fails on its own."""
    try:
        import resource
    except ImportError:                        # pragma: no cover - not Unix
        return
    needed = count + RESERVED_FILES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or needed <= soft:
        return
    if hard == resource.RLIM_INFINITY or needed <= hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
        return
    raise TooManyCaptures(f"{count} capture files would be open at once, and this process may "
                          f"open {hard} files (with {RESERVED_FILES} for the rest of the run): "
                          f"capture fewer (--pcap with -F FLOW ..., --pcap-links with -l LINK "
                          f"...) or raise the limit (ulimit -n)")


def close_quietly(captures: list) -> None:
    """Close the captures opened so far when installing the rest failed (an error closing one
    would hide the failure, which is what the caller reports)."""
    for capture in captures:
        try:
            capture.close()
        except OSError:
            pass


def install_captures(network, directory, links=None) -> list:
    """Capture every direction of `links` (ids; None: all) into `directory`/<link>_<A>-<B>.pcap
    (each id written by `file_part`, so different ids never share a file).
    Call before the run; close the returned captures after it."""
    problem = size_problem(network.spec.packet_sizes)
    if problem is not None:
        raise ValueError(problem)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    ends = Endpoints(network)
    captures: list = []
    try:
        for link in network.links.values():
            if links is not None and link.id not in links:
                continue
            for d in link.directions:
                path = directory / link_capture_name(link.id, d.src.id, d.dst.id)
                if d.guard is not None:           # inside the failure guard (survives repairs)
                    capture = Capture(d, ends, path, d.guard.receive)
                    d.guard.receive = capture
                else:
                    capture = Capture(d, ends, path, d.dst_receive)
                    d.dst_receive = capture
                captures.append(capture)
    except BaseException:
        close_quietly(captures)
        raise
    return captures


class HostCapture(PcapFile):
    """What tcpdump on one host records: the packets it sends (when it sends them) and those
    that arrive over its link (when they arrive)."""

    __slots__ = ("ends", "host", "mac", "peer_mac", "sim")

    def __init__(self, host, ends: Endpoints, path: Path):
        super().__init__(path)
        self.host = host
        self.ends = ends
        self.sim = host.port.sim
        self.mac = ends.mac.get(host, b"\0" * 6)
        self.peer_mac = ends.mac.get(host.port.dst, b"\0" * 6)

    def sent(self, packet) -> None:
        now = self.sim.now
        data, full = frame(self.ends, packet, self.mac, self.peer_mac, now, True, False)
        self.record(now, data, full)

    def received(self, packet) -> None:
        now = self.sim.now
        data, full = frame(self.ends, packet, self.peer_mac, self.mac, now, False,
                           packet.dst is self.host)
        self.record(now, data, full)


def _capturing_host_class(base: Any, capture: HostCapture) -> type:
    """A subclass of the host class `base` (no new slots: the host switches to it) whose `send`
    records the packet first."""
    send = base.send
    sent = capture.sent

    def capturing_send(self, packet):
        sent(packet)
        return send(self, packet)

    return type(f"Capturing{base.__name__}", (base,), {"__slots__": (), "send": capturing_send})


def _wrap_arrivals(d, received) -> None:
    """Record the packets direction `d` delivers to its host: wrap its innermost receive
    callback (inside impairments and the failure guard, so a repaired link keeps recording)."""
    parent, inner = None, d.dst_receive
    while hasattr(inner, "receive") and not hasattr(inner, "__self__"):
        parent, inner = inner, inner.receive

    def receive(packet, _inner=inner):
        received(packet)
        _inner(packet)

    if parent is None:
        d.dst_receive = receive
    else:
        parent.receive = receive


def capture_hosts(network, flows=None) -> list:
    """The hosts at either end of `flows` (ids; None: every flow), in file order."""
    wanted = set()
    for flow in network.flows.values():
        if flows is None or flow.id in flows:
            wanted.add(flow.src)
            wanted.add(flow.dst)
    return [host for host in network.hosts.values() if host in wanted]


def install_host_captures(network, directory, flows=None) -> list:
    """Capture at each host of `flows` (ids; None: all) into `directory`/<host>.pcap: the host's
    class is switched to one whose `send` records, and the directions into it record arrivals.
    Call before the run; close the returned captures after it."""
    problem = size_problem(network.spec.packet_sizes)
    if problem is not None:
        raise ValueError(problem)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    ends = Endpoints(network)
    captures: list = []
    try:
        for host in capture_hosts(network, flows):
            if host.port is None:
                continue
            capture = HostCapture(host, ends, directory / host_capture_name(host.id))
            host.__class__ = _capturing_host_class(type(host), capture)
            for link in host.links:
                for d in link.directions:
                    if d.dst is host:
                        _wrap_arrivals(d, capture.received)
            captures.append(capture)
    except BaseException:
        close_quietly(captures)
        raise
    return captures
