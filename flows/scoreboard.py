"""The SACK scoreboard of a sender, and RFC 6675's estimates drawn from it.

The scoreboard keeps the packets above the first unacknowledged one (`snd_una`) that the
receiver reported by selective ACK (`sacked`), and, during SACK-based loss recovery, the
retransmissions of the current episode still in flight (`retx_out`). From them, in O(1) per ACK:

* a packet is *deemed lost* when `threshold` (the duplicate-ACK threshold) selectively
  acknowledged packets lie above it; `top` keeps the `threshold` highest sacked packets, so the
  lowest of them bounds the lost region;
* ``pipe`` (RFC 6675 SetPipe): outstanding packets, minus those sacked, minus those deemed lost,
  plus the retransmissions in flight;
* the next hole to repair: the lowest packet deemed lost and not yet retransmitted in this
  recovery (the search resumes where the previous one stopped, `retx_next`), RFC 6675 NextSeg
  rule (1); and, once per recovery episode, the "rescue" retransmission of rule (4) (`rescue`:
  the highest outstanding packet not selectively acknowledged, when the sender decides it may be
  lost, see `Sender._send_sack_recovery`). Rule (3), resending packets not deemed lost, is left
  out (docs/model.md).

The sender also skips sacked packets when it goes back to `snd_una` (go-back-N).
"""
from __future__ import annotations

from bisect import insort
from typing import TYPE_CHECKING

from simulator.compiled import plain_mypyc_attr

if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr


# (mypyc_attr: simulator/compiled.py, `plain_mypyc_attr`)
globals().setdefault("mypyc_attr", plain_mypyc_attr)


@mypyc_attr(allow_interpreted_subclasses=True)       # flows/rack.py's RackScoreboard
class Scoreboard:
    """Selectively acknowledged packets above snd_una and the retransmissions in flight."""

    __slots__ = ("rescue_armed", "rescue_rxt", "retx_next", "retx_out", "sacked", "threshold",
                 "top")

    def __init__(self, threshold: int):
        self.threshold = threshold
        self.sacked: set[int] = set()      # sequence numbers above snd_una the receiver reported
        self.top: list[int] = []           # the (up to) threshold highest of them, ascending
        self.retx_out: set[int] = set()    # SACK recovery: retransmissions of this episode in flight
        self.retx_next = 0                 # SACK recovery: where the search for the next hole resumes
        self.rescue_rxt = -1               # RFC 6675 RescueRxt: the recovery point of the episode
        #                                    that made its rescue retransmission (-1: none yet)
        self.rescue_armed = False          # a partial ACK came: the sending it brings may rescue

    def record(self, seq: int) -> None:
        """The receiver reported packet `seq` (above snd_una, not reported before)."""
        self.sacked.add(seq)
        self.retx_out.discard(seq)
        top = self.top
        if len(top) < self.threshold or seq > top[0]:
            insort(top, seq)
            if len(top) > self.threshold:
                del top[0]

    def advance(self, snd_una: int, cum: int) -> None:
        """The cumulative ACK moved from `snd_una` to `cum`: forget what it covers."""
        sacked, retx_out = self.sacked, self.retx_out
        for seq in range(snd_una, cum):
            sacked.discard(seq)
            retx_out.discard(seq)
        top = self.top
        if top and top[0] < cum:
            top[:] = sorted(sacked)[-self.threshold:] if sacked else []

    def retransmitting(self, seq: int) -> None:
        """SACK recovery retransmits hole `seq`; the next search starts above it."""
        self.retx_out.add(seq)
        self.retx_next = seq + 1

    def clear_retransmissions(self) -> None:
        """A timeout: the retransmissions in flight no longer count (go-back-N resends)."""
        self.retx_out.clear()

    def lost_count(self, snd_una: int, n_sacked: int) -> int:
        """Packets deemed lost: unsacked packets below the threshold-th highest sacked one
        (exactly `threshold` sacked packets lie at or above it)."""
        threshold = self.threshold
        if n_sacked < threshold:
            return 0
        return (self.top[0] - snd_una) - (n_sacked - threshold)

    def pipe(self, snd_una: int, snd_nxt: int) -> int:
        """RFC 6675 estimate of the packets in flight: outstanding, minus those selectively
        acknowledged, minus those deemed lost, plus the retransmissions in flight."""
        n_sacked = len(self.sacked)
        return (snd_nxt - snd_una) - n_sacked - self.lost_count(snd_una, n_sacked) \
            + len(self.retx_out)

    def next_hole(self, snd_una: int) -> int | None:
        """The lowest packet deemed lost and not yet retransmitted in this recovery, or None."""
        if len(self.sacked) < self.threshold:
            return None
        limit = self.top[0]
        seq = max(self.retx_next, snd_una)
        sacked, retx_out = self.sacked, self.retx_out
        while seq < limit and (seq in sacked or seq in retx_out):
            seq += 1
        self.retx_next = seq
        return seq if seq < limit else None

    def rescue(self, snd_una: int, snd_nxt: int, recovery_point: int) -> int | None:
        """RFC 6675 NextSeg rule (4): the highest outstanding packet not selectively
        acknowledged, once per recovery episode (not while snd_una, HighACK, is at or below the
        RescueRxt the last rescue set, its episode's recovery point), unless it is already
        being retransmitted; else None. It moves neither HighRxt (`retx_next`) nor pipe."""
        if snd_una <= self.rescue_rxt:
            return None
        seq = snd_nxt - 1
        sacked = self.sacked
        while seq >= snd_una and seq in sacked:
            seq -= 1
        if seq < snd_una or seq in self.retx_out:
            return None
        self.rescue_rxt = recovery_point
        return seq
