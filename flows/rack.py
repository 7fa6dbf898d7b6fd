"""The extended sender's scoreboard: SACK state, lost marks and RACK (RFC 8985).

Used by the extended sender (flows/linux_sender.py); the classic sender keeps the simpler
`flows.scoreboard.Scoreboard`. Per packet outstanding above snd_una it knows whether the receiver
selectively acknowledged it (`sacked`), whether it is marked lost (`lost`) and whether a
retransmission of it is in flight (`retx_out`), as Linux's TCPCB_SACKED_ACKED, TCPCB_LOST and
TCPCB_SACKED_RETRANS bits. From them, in O(1) per ACK:

* ``pipe`` (Linux tcp_packets_in_flight, RFC 6675 SetPipe): outstanding - sacked - lost +
  retransmissions in flight;
* the next packet to retransmit: the lowest marked lost and not yet retransmitted (Linux
  tcp_xmit_retransmit_queue walks the retransmission queue in sequence order).

Packets are marked lost in one of two ways:

* RACK (``rack=True``, RFC 8985 §6.2, Linux tcp_rack_detect_loss): the scoreboard remembers the
  send time of the most recently sent packet that was delivered (RACK.xmit_ts, ties broken by
  sequence number) and the RTT of that delivery (RACK.rtt). A packet sent before it and not yet
  delivered is lost once ``its send time + RACK.rtt + reo_wnd <= now``; otherwise `detect`
  returns how long until it would be (the reorder timer). Packets wait in send order (an
  OrderedDict; a retransmission moves to the back), so the scan stops at the first packet sent
  after RACK.xmit_ts or not yet expired: amortized O(1). A retransmission marked lost again is
  a lost retransmission (Linux LINUX_MIB_TCPLOSTRETRANSMIT), detected without a timeout. A
  delivery of a retransmitted packet earlier than min_rtt after the retransmission is
  ambiguous and ignored (RFC 8985 §6.2 step 2, Linux tcp_rack_advance). The reordering window
  (`reo_wnd`, Linux tcp_rack_reo_wnd) is the sender's to compute. Where Linux arms the reorder
  timer for the latest deadline of all the packets waiting, this scoreboard returns the earliest
  one (each packet is then marked when its own deadline passes).
* the duplicate-ACK threshold (``rack=False``, RFC 6675 IsLost): a packet is lost once
  `threshold` packets above it are sacked.

Delivery also tells whether the path reorders (Linux tcp_check_sack_reordering): a packet never
retransmitted delivered below the highest sacked one (`reord_seen`).
"""
from __future__ import annotations

import math
from collections import OrderedDict
from heapq import heappop, heappush
from typing import Callable

from flows.scoreboard import Scoreboard


class RackScoreboard(Scoreboard):
    """Sacked, lost and retransmitted packets above snd_una, and RACK's loss detection."""

    __slots__ = ("dup_mark", "fack", "lost", "lost_retrans", "now", "rack", "rack_lost",
                 "rack_rtt", "rack_seq", "rack_ts", "reord_seen", "to_retx", "waiting", "xmit")

    def __init__(self, threshold: int, rack: bool, now: Callable[[], float]):
        super().__init__(threshold)
        self.rack = rack
        self.now = now                     # the simulated time
        self.lost: set[int] = set()        # marked lost (retransmitted since or not)
        self.to_retx: list[int] = []       # heap of lost packets to retransmit (lazily cleaned)
        self.xmit: dict[int, tuple[float, bool]] = {}   # seq -> (last send time, retransmitted)
        self.waiting: OrderedDict[int, float] = OrderedDict()  # RACK candidates, in send order
        self.rack_ts = -1.0                # RACK.xmit_ts (-1: nothing delivered yet)
        self.rack_seq = -1                 # its packet (ties of send time broken by seq)
        self.rack_rtt = 0.0                # RACK.rtt
        self.fack = -1                     # highest packet ever sacked
        self.reord_seen = False
        self.dup_mark = 0                  # dupthresh marking has looked below this
        self.rack_lost = 0                 # packets RACK marked lost (first marks)
        self.lost_retrans = 0              # retransmissions marked lost again

    # -- sending -----------------------------------------------------------------------------
    def on_send(self, seq: int, now: float, retx: bool) -> None:
        """Packet `seq` leaves (`retx`: again)."""
        self.xmit[seq] = (now, retx)
        waiting = self.waiting
        if retx:
            self.retx_out.add(seq)
            waiting.pop(seq, None)
        waiting[seq] = now

    # -- delivery ----------------------------------------------------------------------------
    def _delivered(self, seq: int, min_rtt: float, now: float) -> None:
        """RACK's update for a packet delivered at `now` (RFC 8985 §6.2 steps 1-2)."""
        record = self.xmit.pop(seq, None)
        self.waiting.pop(seq, None)
        if record is None:
            return
        sent_s, retransmitted = record
        rtt = now - sent_s
        if retransmitted and rtt < min_rtt:
            return                                    # ambiguous: maybe the original
        if not retransmitted and seq < self.fack:
            self.reord_seen = True                    # delivered below a sacked packet
        if sent_s > self.rack_ts or (sent_s == self.rack_ts and seq > self.rack_seq):
            self.rack_ts = sent_s
            self.rack_seq = seq
            self.rack_rtt = rtt

    def sack(self, seq: int, min_rtt: float) -> None:
        """The receiver reported packet `seq` (above snd_una, not reported before)."""
        self._delivered(seq, min_rtt, self.now())
        self.record(seq)
        self.lost.discard(seq)
        if seq > self.fack:
            self.fack = seq

    def acked(self, snd_una: int, cum: int, min_rtt: float) -> int:
        """The cumulative ACK moved from `snd_una` to `cum`; returns the packets it delivered
        that were not sacked before."""
        sacked, lost = self.sacked, self.lost
        now = self.now()
        delivered = self._delivered
        if not sacked and not lost and not self.retx_out:   # the common case: in order
            # `_delivered(seq, min_rtt, now)` for each packet, inline (the same tests in the
            # same order; RACK's state read once and written back once)
            xmit, waiting = self.xmit, self.waiting
            rack_ts, rack_seq, rack_rtt = self.rack_ts, self.rack_seq, self.rack_rtt
            fack = self.fack
            for seq in range(snd_una, cum):
                record = xmit.pop(seq, None)
                waiting.pop(seq, None)
                if record is None:
                    continue
                sent_s, retransmitted = record
                rtt = now - sent_s
                if retransmitted:
                    if rtt < min_rtt:
                        continue                      # ambiguous: maybe the original
                elif seq < fack:
                    self.reord_seen = True            # delivered below a sacked packet
                if sent_s > rack_ts or (sent_s == rack_ts and seq > rack_seq):
                    rack_ts = sent_s
                    rack_seq = seq
                    rack_rtt = rtt
            self.rack_ts, self.rack_seq, self.rack_rtt = rack_ts, rack_seq, rack_rtt
            return cum - snd_una
        newly = 0
        for seq in range(snd_una, cum):
            if seq not in sacked:
                newly += 1
                delivered(seq, min_rtt, now)
            if lost:
                lost.discard(seq)
        self.advance(snd_una, cum)
        return newly

    def reo_wnd(self, recovering: bool, srtt: float, min_rtt: float) -> float:
        """RACK's reordering window (Linux tcp_rack_reo_wnd): without reordering seen, 0 during
        recovery and once `threshold` packets are sacked; else min_rtt / 4, at most SRTT."""
        if not self.reord_seen and (recovering or len(self.sacked) >= self.threshold):
            return 0.0
        return min(min_rtt / 4.0, srtt) if min_rtt < math.inf else 0.0

    # -- loss marking --------------------------------------------------------------------------
    def _mark(self, seq: int) -> None:
        if seq in self.retx_out:
            self.retx_out.discard(seq)
            self.lost_retrans += 1
        elif self.rack:
            self.rack_lost += 1
        self.lost.add(seq)
        heappush(self.to_retx, seq)

    def nothing_to_mark(self) -> bool:
        """Whether no packet waiting for RACK was sent before the most recently delivered one
        (RACK.xmit_ts, ties by sequence number): then `detect` marks nothing and nothing waits."""
        rack_ts = self.rack_ts
        waiting = self.waiting
        if rack_ts < 0.0 or not waiting:
            return True
        first = next(iter(waiting))
        sent_first = waiting[first]
        return sent_first > rack_ts or (sent_first == rack_ts and first >= self.rack_seq)

    def detect(self, recovering: bool, srtt: float, min_rtt: float,
               snd_una: int) -> tuple[int, float]:
        """Mark what RACK (or the duplicate-ACK threshold) deems lost now (`recovering`, `srtt`
        and `min_rtt` give the reordering window, `reo_wnd`); returns the number marked and the
        time until the next packet would be (0.0: none waiting)."""
        if not self.rack:
            return self._detect_by_dupthresh(snd_una), 0.0
        if self.nothing_to_mark():
            return 0, 0.0                             # the common case: nothing sent before
        rack_ts = self.rack_ts
        rack_seq = self.rack_seq
        reo_wnd = self.reo_wnd(recovering, srtt, min_rtt)
        expiry = self.rack_rtt + reo_wnd - self.now()
        expired = []
        timeout = 0.0
        for seq, sent_s in self.waiting.items():
            if sent_s > rack_ts or (sent_s == rack_ts and seq >= rack_seq):
                break                                 # sent after the last delivered packet
            remaining = sent_s + expiry
            if remaining > 0.0:
                timeout = remaining
                break
            expired.append(seq)
        for seq in expired:
            del self.waiting[seq]
            self._mark(seq)
        return len(expired), timeout

    def _detect_by_dupthresh(self, snd_una: int) -> int:
        if len(self.sacked) < self.threshold:
            return 0
        limit = self.top[0]
        sacked, lost, retx_out = self.sacked, self.lost, self.retx_out
        marked = 0
        for seq in range(max(self.dup_mark, snd_una), limit):
            if seq in self.xmit and seq not in sacked and seq not in lost and seq not in retx_out:
                self.waiting.pop(seq, None)
                self._mark(seq)
                marked += 1
        self.dup_mark = max(self.dup_mark, limit)
        return marked

    def mark_all_lost(self, snd_una: int, snd_nxt: int) -> None:
        """A retransmission timeout: every outstanding packet not sacked is lost, and no
        retransmission is in flight (Linux tcp_timeout_mark_lost)."""
        self.retx_out.clear()
        self.waiting.clear()
        sacked = self.sacked
        self.lost = {seq for seq in range(snd_una, snd_nxt) if seq not in sacked}
        self.to_retx = sorted(self.lost)

    def unmark_lost(self) -> None:
        """An undo: the packets marked lost were not (Linux tcp_undo_cwnd_reduction with
        unmark_loss); they wait for RACK again."""
        for seq in sorted(self.lost - self.retx_out):
            record = self.xmit.get(seq)
            if record is not None:
                self.waiting[seq] = record[0]
        self.lost.clear()
        self.to_retx.clear()

    # -- what the sender asks ------------------------------------------------------------------
    def pipe(self, snd_una: int, snd_nxt: int) -> int:
        return (snd_nxt - snd_una) - len(self.sacked) - len(self.lost) + len(self.retx_out)

    def next_hole(self, snd_una: int) -> int | None:
        """The lowest packet marked lost and not yet retransmitted, or None."""
        heap, lost, retx_out = self.to_retx, self.lost, self.retx_out
        while heap:
            seq = heap[0]
            if seq >= snd_una and seq in lost and seq not in retx_out:
                return seq
            heappop(heap)
        return None

    def retransmitting(self, seq: int) -> None:
        """Kept for the rate sampler's callers: `on_send` records retransmissions."""
        self.retx_out.add(seq)
