"""Delivery-rate samples (Cheng et al., "Delivery Rate Estimation", IETF draft), for algorithms
that set `wants_rate_samples` (BBR).

Each transmission records how many packets had been delivered (cumulatively or selectively
acknowledged) and when; each ACK that delivers packets yields a `RateSample` from the most
recently sent of them: packets delivered since that transmission divided by the longer of its
send interval and its ACK interval. A sample is flagged application-limited when the packet was
sent while the flow had no new data left (or while the algorithm marked the flow application-
limited through `app_limited_until`). O(1) per packet.

The sample's RTT (`rtt_s`, Linux's ``rs->rtt_us``: tcp_clean_rtx_queue's ``ca_rtt_us``) follows
Karn's rule as Linux does: it is the time since the most recent transmission of the last packet
the ACK delivers cumulatively, when none of those was ever retransmitted (no
FLAG_RETRANS_DATA_ACKED), or of the packet it selectively acknowledges, when that one never was
(tcp_sacktag_one's ``last_sackt``), the latter taking precedence; None when neither: a
retransmitted packet's ACK may answer the original, and would give an RTT shorter than the path's.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

# per packet in flight: (delivered, delivered time, first sent time, sent time, app-limited,
# retransmitted)
TxRecord = tuple[int, float, float, float, bool, bool]


class RateSample:
    """One delivery-rate sample, handed to `CongestionControl.on_rate_sample`.

    A flow reuses one object for all its samples (like Linux's on-stack ``rate_sample``): read
    it during the call, copy what must be kept."""

    __slots__ = ("delivered", "delivery_rate_pps", "interval_s", "is_app_limited",
                 "newly_delivered", "prior_delivered", "rtt_s")

    def __init__(self, delivery_rate_pps: float, delivered: int, prior_delivered: int,
                 interval_s: float, rtt_s: float | None, is_app_limited: bool,
                 newly_delivered: int):
        self.delivery_rate_pps = delivery_rate_pps
        self.delivered = delivered
        self.prior_delivered = prior_delivered
        self.interval_s = interval_s
        self.rtt_s = rtt_s
        self.is_app_limited = is_app_limited
        self.newly_delivered = newly_delivered


class RateSampler:
    """The delivery-rate bookkeeping of one sender."""

    __slots__ = ("app_limited_until", "delivered", "delivered_time_s", "first_sent_s", "records",
                 "sample")

    def __init__(self) -> None:
        self.delivered = 0            # packets delivered (cumulatively or selectively ACKed)
        self.delivered_time_s = 0.0
        self.first_sent_s = 0.0
        self.app_limited_until = 0    # samples of packets below this delivered count: app-limited
        self.records: dict[int, TxRecord] = {}
        self.sample = RateSample(0.0, 0, 0, 0.0, 0.0, False, 0)

    def on_send(self, seq: int, now: float, in_flight: int, no_new_data: bool) -> None:
        """Packet `seq` leaves at `now` with `in_flight` packets outstanding (itself included);
        `no_new_data`: the flow has sent all its data."""
        records = self.records
        if not records and in_flight <= 1:
            self.first_sent_s = self.delivered_time_s = now    # nothing in flight: restart
        delivered = self.delivered
        if no_new_data:
            self.app_limited_until = delivered + in_flight or 1
        records[seq] = (delivered, self.delivered_time_s, self.first_sent_s, now,
                        delivered < self.app_limited_until, seq in records)   # (sent before)

    def on_ack(self, now: float, snd_una: int, cum: int, sack: int, new_sack: bool,
               sacked: Iterable[int]) -> RateSample | None:
        """The sample of an ACK (cumulative ACK `cum`, selective ACK `sack`, `new_sack` if it
        reports a packet not reported before) that arrives while `snd_una` is the first
        unacknowledged packet and `sacked` the packets reported before; None if the ACK
        delivers nothing or gives no usable interval."""
        records = self.records
        rtt_s: float | None = None
        if cum == snd_una + 1 and sack == snd_una:    # the common case: one packet in order
            latest = records.pop(snd_una, None)
            newly_delivered = 1
            if latest is not None and not latest[5]:
                rtt_s = now - latest[3]
        else:                                         # cumulatively ACKed (not sacked before)
            newly = [seq for seq in range(snd_una, cum) if seq not in sacked]
            if new_sack:                              # ... and the one this ACK reports
                newly.append(sack)
            if not newly:
                return None
            latest = None
            cum_sent = -1.0                           # Karn: the last cumulatively ACKed one's
            for seq in newly:                         # transmission, unless any was resent
                record = records.pop(seq, None)
                if record is None:
                    continue
                if latest is None or record[3] > latest[3]:
                    latest = record
                if seq == sack and new_sack and seq >= cum:
                    if not record[5]:
                        rtt_s = now - record[3]       # the SACKed packet's, first
                elif record[5]:
                    cum_sent = math.inf
                elif record[3] > cum_sent:
                    cum_sent = record[3]
            if rtt_s is None and 0.0 <= cum_sent < math.inf:
                rtt_s = now - cum_sent
            newly_delivered = len(newly)
        self.delivered += newly_delivered
        if latest is None:
            return None
        prior_delivered, prior_time, first_sent, sent, app_limited, _ = latest
        self.first_sent_s = sent
        self.delivered_time_s = now
        interval = max(sent - first_sent, now - prior_time)
        if interval <= 0.0:
            return None
        rs = self.sample
        rs.delivery_rate_pps = (self.delivered - prior_delivered) / interval
        rs.delivered = self.delivered
        rs.prior_delivered = prior_delivered
        rs.interval_s = interval
        rs.rtt_s = rtt_s
        rs.is_app_limited = app_limited
        rs.newly_delivered = newly_delivered
        return rs
