"""Unreliable rate-based traffic sources: constant bit rate ("cbr") and on-off ("onoff").

A `RateFlow` sends data packets of the topology's data size at `rate_bps` from `start_s`, with no
congestion control, no acknowledgements and no retransmission: what the network drops is lost.
An on-off source alternates periods of sending at `rate_bps` (mean `on_s`) and of silence (mean
`off_s`), fixed or exponentially distributed (drawn from the run's one generator, `sim.rng`); it
starts with an on period. A source with `data_bytes` stops once it has sent that many bytes and
finishes when its last packet arrives (or `DRAIN_S` after sending it, if it was lost); without,
it sends until the run ends. The receiving end counts what arrives.

The packet in flight carries its sequence number (packets, from 0) and send time; `lost` is
sent - received (at the end of a run it includes the packets still in flight). The receiver
counts each sequence number once: a copy an impairment made of a packet that already arrived is
not received again (`SeenWindow`, over the last `SEEN_WINDOW_S` of packets at the source's
rate). The attributes the
run harness and the flow probe read for bulk flows exist here with neutral values (no window, no
RTT samples), see docs/outputs.md.
"""
from __future__ import annotations

import math
from typing import Callable

from components.packet import DATA, Packet

KINDS = ("cbr", "onoff")
PERIODS = ("fixed", "exponential")
DRAIN_S = 1.0     # a source with data finishes when its last packet arrives, or this long after
                  # sending it if it was lost
SEEN_WINDOW_S = 4.0   # the receiver knows which packets arrived among those the source sent
                      # in this long (at its rate) before the newest one: a later copy of an
                      # older packet counts as an arrival (SeenWindow)


class SeenWindow:
    """Which of the newest `size` sequence numbers (a power of two) arrived: a ring of bits,
    so the memory is the window's, not the packets'. A number older than the window counts as
    arriving for the first time."""

    __slots__ = ("bits", "mask", "top")

    def __init__(self, size: int):
        self.bits = bytearray(max(size >> 3, 1))
        self.mask = size - 1
        self.top = -1                 # the highest number seen

    def first_time(self, seq: int) -> bool:
        """Record `seq`; whether it had not arrived before (within the window)."""
        bits, mask = self.bits, self.mask
        if seq > self.top:            # the numbers it passes leave the window's oldest end
            if seq - self.top > mask:
                bits[:] = bytes(len(bits))
            else:
                for new in range(self.top + 1, seq + 1):   # (their slots held older numbers)
                    bits[(new & mask) >> 3] &= ~(1 << (new & 7)) & 0xFF
            self.top = seq
        elif seq <= self.top - mask - 1:
            return True               # older than the window: counted
        i = seq & mask
        bit = 1 << (i & 7)
        if bits[i >> 3] & bit:
            return False
        bits[i >> 3] |= bit
        return True


def seen_window_size(rate_bps: float, packet_bytes: int) -> int:
    """The power of two that holds `SEEN_WINDOW_S` of packets at the rate (at least 1 024, at
    most 2^24: 2 MB)."""
    packets = SEEN_WINDOW_S * rate_bps / (8.0 * packet_bytes)
    return 1 << min(24, max(10, math.ceil(math.log2(max(packets, 1.0)))))


class RateFlow:
    """A constant-bit-rate or on-off source from host `src` to host `dst` (see the module)."""

    __slots__ = ("sim", "id", "kind", "src", "dst", "data_bytes", "start_s", "rate_bps",
                 "packet_bytes", "on_s", "off_s", "periods", "interval_s", "started", "finish_s",
                 "on_finish", "packets_sent", "bytes_sent", "packets_received", "arrived_bytes",
                 "last_arrival_s", "last_send_s", "_on_until", "_next_seq", "_last_seq", "ecn",
                 "flow_hash", "_seen")

    # neutral values of what bulk flows report
    algorithm = property(lambda self: self.kind)
    retransmissions = 0
    timeouts = 0
    ecn_echoes = 0
    ecn_reactions = 0
    rtt_sum = 0.0
    rtt_count = 0
    cwnd = math.nan
    in_order = True

    def __init__(self, sim, flow_id: str, src, dst, data_bytes: int | None, start_s: float,
                 rate_bps: float, packet_bytes: int, *, kind: str = "cbr",
                 on_s: float | None = None, off_s: float | None = None,
                 periods: str = "fixed"):
        if kind not in KINDS:
            raise ValueError(f"flow {flow_id}: kind must be one of {KINDS}, got {kind!r}")
        if not rate_bps > 0:
            raise ValueError(f"flow {flow_id}: rate must be positive, got {rate_bps}")
        if kind == "onoff" and not (on_s is not None and on_s > 0 and off_s is not None
                                    and off_s >= 0):
            raise ValueError(f"flow {flow_id}: an on-off source needs on_s > 0 and off_s >= 0")
        if periods not in PERIODS:
            raise ValueError(f"flow {flow_id}: periods must be one of {PERIODS}, got {periods!r}")
        self.sim = sim
        self.id = flow_id
        self.kind = kind
        self.src = src
        self.dst = dst
        self.data_bytes = data_bytes
        self.start_s = start_s
        self.rate_bps = rate_bps
        self.packet_bytes = packet_bytes
        self.on_s = on_s
        self.off_s = off_s
        self.periods = periods
        self.ecn = False
        self.flow_hash = 0          # ECMP hash (routing/ecmp.py); 0: none
        self.interval_s = packet_bytes * 8.0 / rate_bps
        self.started = False
        self.finish_s: float | None = None
        self.on_finish: Callable | None = None
        self.packets_sent = 0
        self.bytes_sent = 0
        self.packets_received = 0
        self.arrived_bytes = 0
        self.last_arrival_s = start_s
        self.last_send_s = start_s
        self._on_until = math.inf
        self._next_seq = 0
        self._last_seq = -1       # the last packet, once sent (a source with data_bytes)
        self._seen: SeenWindow | None = None   # made at the first arrival
        sim.schedule_ahead(start_s, self._start)   # (parked until its slot: simulator/engine.py)

    # -- sending ---------------------------------------------------------------------------
    def _period(self, mean: float) -> float:
        if self.periods == "exponential" and mean > 0:
            return self.sim.rng.expovariate(1.0 / mean)
        return mean

    def _start(self, _=None) -> None:
        self.started = True
        self._turn_on()

    def _turn_on(self, _=None) -> None:
        if self.kind == "onoff":
            assert self.on_s is not None
            self._on_until = self.sim.now + self._period(self.on_s)
        self._send()

    def _send(self, _=None) -> None:
        if self.finish_s is not None or self._last_seq >= 0:
            return
        sim = self.sim
        now = sim.now
        if now >= self._on_until:                         # an off period begins
            assert self.off_s is not None
            sim.schedule(self._period(self.off_s), self._turn_on)
            return
        size = self.packet_bytes
        if self.data_bytes is not None:
            size = min(size, self.data_bytes - self.bytes_sent)
        packet = Packet(DATA, self.src, self.dst, size, self._arrive, seq=self._next_seq,
                        sent_s=now, flow_hash=self.flow_hash)
        self._next_seq += 1
        self.packets_sent += 1
        self.bytes_sent += size
        self.last_send_s = now
        self.src.send(packet)
        if self.data_bytes is not None and self.bytes_sent >= self.data_bytes:
            self._last_seq = packet.seq
            sim.schedule(DRAIN_S, self._finish)       # unless the last packet arrives first
            return
        sim.schedule(self.interval_s, self._send)

    # -- receiving -------------------------------------------------------------------------
    def _arrive(self, packet: Packet) -> None:
        seen = self._seen
        if seen is None:
            seen = self._seen = SeenWindow(seen_window_size(self.rate_bps, self.packet_bytes))
        if not seen.first_time(packet.seq):
            return                            # a copy of a packet that had arrived
        self.packets_received += 1
        self.arrived_bytes += packet.size_bytes
        self.last_arrival_s = self.sim.now
        if packet.seq == self._last_seq:
            self._finish()

    def _finish(self, _=None) -> None:
        if self.finish_s is None:
            self.finish_s = self.sim.now
            if self.on_finish is not None:
                self.on_finish(self)

    # -- what the run harness reads --------------------------------------------------------
    @property
    def delivered_bytes(self) -> int:
        """Bytes that reached the receiver (no reordering buffer: every arrival is delivered)."""
        return self.arrived_bytes

    @property
    def packets_lost(self) -> int:
        """Packets sent and not received (including, at the end of a run, those in flight)."""
        return self.packets_sent - self.packets_received

    @property
    def finished(self) -> bool:
        return self.finish_s is not None

    @property
    def last_progress_s(self) -> float:
        """A source that sends is making progress (the stall guard is about reliable flows)."""
        return max(self.last_send_s, self.last_arrival_s)

    def delivered_all(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"RateFlow({self.id}, {self.kind}, {self.src.id}->{self.dst.id})"
