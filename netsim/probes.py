"""Probes: per-interval rows of the links.csv, flows.csv and hosts.csv traces.

Each probe turns an entity's cumulative counters into the values of one sampling interval, in the
topology's units (the column names say which: docs/outputs.md), and remembers the counters for the
next interval. Link directions and hosts sleep while idle (see `simulator.sampling`): their probe
returns None when nothing happened in the interval and nothing is left to happen without a new
packet, and their wake function is a counter that any new packet changes. A flow's probe sleeps
before the flow starts and for good once it has finished; it writes no rows then.
"""
from __future__ import annotations

import math

from simulator.sampling import SKIP

LINK_COLUMNS = ("rate_mbps", "buffer_kb", "buffer_pkts", "backlog_kb", "drops", "failure_drops",
                "impairment_drops", "routing_rate_mbps", "marks", "aqm_drops", "sojourn_ms")
FLOW_COLUMNS = ("send_rate_mbps", "recv_rate_mbps", "arrival_rate_mbps", "window_pkts", "rtt_ms")
HOST_COLUMNS = ("send_rate_mbps", "recv_rate_mbps")

LINK_IDLE_ROW = (0.0,) * (len(LINK_COLUMNS) - 1) + (math.nan,)   # no sojourn: empty
HOST_IDLE_ROW = (0.0,) * len(HOST_COLUMNS)


class DirectionProbe:
    """Rate, buffer occupancy, backlog, losses by cause and routing traffic of a link direction."""

    __slots__ = ("d", "mbit", "kb", "tx_bytes", "dropped", "area_bytes", "area_pkts", "area_work",
                 "failures", "impaired", "routing_bytes", "marks", "aqm_drops", "tx_pkts",
                 "soj_sum")

    def __init__(self, d, bits_per_mbit: float, bytes_per_kb: float):
        self.d = d
        self.mbit = float(bits_per_mbit)
        self.kb = float(bytes_per_kb)
        self.tx_bytes = self.dropped = self.failures = self.impaired = self.routing_bytes = 0
        self.area_bytes = self.area_pkts = self.area_work = 0.0
        self.marks = self.aqm_drops = self.tx_pkts = 0
        self.soj_sum = 0.0

    def wake(self) -> int:
        """Changes with every packet offered to the direction and every packet it loses on the
        way (the only things that can end an idle spell)."""
        d = self.d
        return d.arrived + d.impaired_drops + d.lost_in_flight

    def __call__(self, now: float, span: float):
        d = self.d
        d.settle(now)
        failures = d.failed + d.lost_in_flight
        if (d.tx_bytes == self.tx_bytes and d.area_bytes == self.area_bytes
                and d.area_work == self.area_work and d.dropped == self.dropped
                and failures == self.failures and d.impaired_drops == self.impaired
                and d.routing_bytes == self.routing_bytes and not d.q_pkts
                and d.aqm_drops == self.aqm_drops):
            return None            # an all-zero row, and empty: idle until a packet comes
        waiting = d.area_bytes - self.area_bytes
        row = ((d.tx_bytes - self.tx_bytes) * 8.0 / span / self.mbit, waiting / span / self.kb,
               (d.area_pkts - self.area_pkts) / span,
               (waiting + d.area_work - self.area_work) / span / self.kb,
               float(d.dropped - self.dropped), float(failures - self.failures),
               float(d.impaired_drops - self.impaired),
               (d.routing_bytes - self.routing_bytes) * 8.0 / span / self.mbit,
               float(d.marks - self.marks), float(d.aqm_drops - self.aqm_drops),
               (d.soj_sum - self.soj_sum) / (d.tx_pkts - self.tx_pkts) * 1e3
               if d.tx_pkts != self.tx_pkts else math.nan)
        self.marks, self.aqm_drops, self.tx_pkts, self.soj_sum = (d.marks, d.aqm_drops, d.tx_pkts,
                                                                  d.soj_sum)
        self.impaired = d.impaired_drops
        self.tx_bytes, self.dropped, self.failures = d.tx_bytes, d.dropped, failures
        self.area_bytes, self.area_pkts, self.area_work = d.area_bytes, d.area_pkts, d.area_work
        self.routing_bytes = d.routing_bytes
        return row


class FlowProbe:
    """Send rate, in-order delivery rate, arrival rate at the receiver, window and mean RTT of a
    flow; keeps the running mean of the sampled window for the summary."""

    __slots__ = ("f", "mbit", "bytes_sent", "delivered", "arrived", "rtt_sum", "rtt_count",
                 "window_sum", "window_rows")

    def __init__(self, f, bits_per_mbit: float):
        self.f = f
        self.mbit = float(bits_per_mbit)
        self.bytes_sent = self.delivered = self.arrived = self.rtt_count = 0
        self.rtt_sum = 0.0
        self.window_sum = 0.0
        self.window_rows = 0

    def wake(self) -> tuple:
        """Changes when the flow starts and when it finishes; a finished flow sleeps for good."""
        f = self.f
        return f.started, f.finish_s

    def __call__(self, now: float, span: float):
        f = self.f
        if now <= f.start_s:
            return SKIP if f.started else None      # no row for the interval it starts at the end of
        if f.finish_s is not None and f.finish_s <= now - span:
            return None
        count = f.rtt_count - self.rtt_count
        rtt_ms = (f.rtt_sum - self.rtt_sum) / count / 1e-3 if count else math.nan
        row = ((f.bytes_sent - self.bytes_sent) * 8.0 / span / self.mbit,
               (f.delivered_bytes - self.delivered) * 8.0 / span / self.mbit,
               (f.arrived_bytes - self.arrived) * 8.0 / span / self.mbit, float(f.cwnd), rtt_ms)
        self.bytes_sent, self.delivered, self.arrived = f.bytes_sent, f.delivered_bytes, f.arrived_bytes
        self.rtt_sum, self.rtt_count = f.rtt_sum, f.rtt_count
        self.window_sum += f.cwnd
        self.window_rows += 1
        return row

    def mean_window_pkts(self):
        """Mean of the sampled windows (None before the first sample)."""
        return self.window_sum / self.window_rows if self.window_rows else None


class HostProbe:
    """Bytes a host sent to and received from its link, as rates."""

    __slots__ = ("h", "mbit", "sent", "received")

    def __init__(self, h, bits_per_mbit: float):
        self.h = h
        self.mbit = float(bits_per_mbit)
        self.sent = self.received = 0

    def wake(self) -> int:
        h = self.h
        return h.sent_bytes + h.received_bytes

    def __call__(self, now: float, span: float):
        h = self.h
        if h.sent_bytes == self.sent and h.received_bytes == self.received:
            return None
        row = ((h.sent_bytes - self.sent) * 8.0 / span / self.mbit,
               (h.received_bytes - self.received) * 8.0 / span / self.mbit)
        self.sent, self.received = h.sent_bytes, h.received_bytes
        return row
