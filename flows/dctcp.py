"""DCTCP (RFC 8257, "Data Center TCP (DCTCP): TCP Congestion Control for Data Centers", 2017).

Windows are in packets (the RFC's bytes divided by the packet size), times in seconds of simulated
time. Section numbers below are those of RFC 8257.

DCTCP needs ECN: a flow running it must set ``"ecn": true`` (the loader refuses it otherwise).
Switches mark packets with CE as soon as the queue exceeds a threshold K (§3.1, the ``step``
queue discipline); the receiver's ECE echoes exactly the CE marks of the packets each ACK covers,
acknowledging at once when the mark changes (§3.2, the transport's ``"dctcp"`` echo,
flows/receiver.py).

The sender (§3.3) estimates the fraction of marked data:

* per ACK, the packets it newly acknowledges are added to ``bytes_acked``, and to
  ``bytes_marked`` if it carried ECE;
* once per window of data (when the cumulative ACK passes ``window_end``, the next packet to send
  when the previous window was closed) ``M = bytes_marked / bytes_acked`` and
  ``alpha = (1 - g) alpha + g M``; the counters restart and ``window_end = snd_nxt``.

On an ECE, at most once per window (the transport's rule, RFC 3168 §6.1.2), the window becomes
``cwnd (1 - alpha / 2)`` (§3.3 step 10), at least two packets; ssthresh follows it. Growth is
Reno's: slow start, then one packet per window of ACKs (§3.3: "as in [RFC5681]"), and losses are
handled as in conventional TCP (§3.4): ssthresh = FlightSize / 2, with the transport's SACK
loss recovery (RFC 6675) as in Linux. alpha starts at 1 (§3.3: a conservative first reaction).

On the Linux stack (``flow.stack == "linux"``) it is Linux's tcp_dctcp (net/ipv4/tcp_dctcp.c):

* `dctcp_update_alpha`, on every ACK once the cumulative ACK reaches ``next_seq`` (Linux's
  ``!before(snd_una, next_seq)``, one packet earlier than RFC 8257's ``>``), in Linux's fixed
  point: alpha is an integer in [0, 1024] (DCTCP_MAX_ALPHA), ``alpha -= min_not_zero(alpha,
  alpha >> shift)`` -- so an alpha below 16 (g = 1/16, shift 4) drops to 0 at the first window
  without marks -- then ``alpha = min(alpha + (delivered_ce << (10 - shift)) / delivered,
  1024)``. The shift is log2(1/g), g rounded to a power of 1/2 (Linux's dctcp_shift_g).
* `dctcp_ssthresh` on an ECN echo: ``max(cwnd - (cwnd alpha >> 11), 2)`` of the integer window;
  the transport enters CWR and reduces towards it with PRR over a round trip
  (tcp_enter_cwr / tcp_cwnd_reduction), not at once.
* on a loss (entering Recovery, or a timeout: dctcp_state, dctcp_cwnd_event(CA_EVENT_LOSS),
  dctcp_react_to_loss): ssthresh = max(cwnd >> 1, 2), the window, not the flight size.
* `dctcp_cwnd_undo`: an undone reduction returns to max(cwnd, the window before the last
  reduction).
* growth is tcp_reno_cong_avoid (`CongestionControl.linux_reno_growth`).

The receiver's delayed-ACK state machine for CE changes (dctcp_ece_ack_update) is the transport's
(flows/receiver.py). `report()` gives ``{"alpha": ...}`` on both stacks.
"""
from __future__ import annotations

import math
from typing import ClassVar

from flows.congestion import CongestionControl, EcnEcho, RecoveryMode


class Dctcp(CongestionControl):
    """DCTCP: reduce the window in proportion to the fraction of ECN-marked data (RFC 8257)."""

    name = "dctcp"
    recovery = RecoveryMode.SACK
    theory_model = "dctcp"
    ecn_echo = EcnEcho.DCTCP
    requires_ecn = True
    PARAMETERS: ClassVar[dict[str, float]] = {"g": 1.0 / 16.0, "alpha_init": 1.0}
    MAX_ALPHA: ClassVar[int] = 1024        # Linux DCTCP_MAX_ALPHA: alpha 1.0 in fixed point
    __slots__ = ("g", "alpha", "window_end", "bytes_acked", "bytes_marked", "alpha_updates",
                 "alpha_fp", "shift_g", "loss_cwnd")

    def __init__(self, flow, params=None):
        super().__init__(flow, params)
        self.g = float(self.params["g"])
        self.alpha = float(self.params["alpha_init"])    # §3.3: DCTCP.Alpha, initialised to 1
        self.window_end = 0                               # §3.3: DCTCP.WindowEnd
        self.bytes_acked = 0                              # §3.3: DCTCP.BytesAcked (packets)
        self.bytes_marked = 0                             # §3.3: DCTCP.BytesMarked (packets)
        self.alpha_updates = 0                            # windows observed, for tests
        # Linux: alpha in fixed point (1024 = 1.0) and g = 1 / 2^shift_g (dctcp_shift_g)
        inverse = 1.0 / self.g                            # (inf for a g below 2^-1024: shift 10)
        self.shift_g = min(max(round(math.log2(inverse)), 0), 10) if inverse < math.inf else 10
        self.alpha_fp = min(round(self.alpha * self.MAX_ALPHA), self.MAX_ALPHA)
        self.loss_cwnd = 0.0                              # Linux ca->loss_cwnd, for undo

    @classmethod
    def param_problem(cls, name: str, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "expected a number"
        if name == "g" and not 0 < value <= 1:
            return "expected a number in (0, 1]"
        if name == "alpha_init" and not 0 <= value <= 1:
            return "expected a number in [0, 1]"
        return None

    # -- §3.3 the fraction of marked data --------------------------------------------------------
    def ecn_ack(self, acked_pkts: int, ece: bool) -> None:
        if self.linux:
            self._linux_update_alpha(acked_pkts, ece)
            return
        # §3.3 steps 1-3: count acknowledged and marked data
        self.bytes_acked += acked_pkts
        if ece:
            self.bytes_marked += acked_pkts
        flow = self.flow
        # §3.3 step 4: a window of data has been acknowledged
        if flow.snd_una <= self.window_end:
            return
        # §3.3 steps 5-6: M = BytesMarked / BytesAcked; Alpha = (1 - g) Alpha + g M
        if self.bytes_acked > 0:
            marked = self.bytes_marked / self.bytes_acked
            self.alpha = (1.0 - self.g) * self.alpha + self.g * marked
            self.alpha_updates += 1
        # §3.3 steps 7-8: the next window; reset the counters
        self.window_end = flow.snd_nxt
        self.bytes_acked = 0
        self.bytes_marked = 0

    def _linux_update_alpha(self, acked_pkts: int, ece: bool) -> None:
        """Linux dctcp_update_alpha (in_ack_event, after the ACK's packets were counted). The
        packets counted are those the cumulative ACK newly covers: a packet SACKed earlier is
        counted at the cumulative ACK that covers it, with that ACK's ECE, where Linux's
        tp->delivered counts it when it is SACKed. The totals agree; around a loss a packet may
        fall in the next observation window."""
        self.bytes_acked += acked_pkts                    # tp->delivered - ca->old_delivered
        if ece:
            self.bytes_marked += acked_pkts               # tp->delivered_ce - old_delivered_ce
        flow = self.flow
        if flow.snd_una < self.window_end:                # before(snd_una, next_seq)
            return
        alpha = self.alpha_fp
        decay = alpha >> self.shift_g
        alpha -= decay if decay else alpha                # min_not_zero(alpha, alpha >> g)
        if self.bytes_marked:
            marked = (self.bytes_marked << (10 - self.shift_g)) // max(1, self.bytes_acked)
            alpha = min(alpha + marked, self.MAX_ALPHA)
        self.alpha_fp = alpha
        self.alpha = alpha / self.MAX_ALPHA
        self.alpha_updates += 1
        self.window_end = flow.snd_nxt                    # dctcp_reset
        self.bytes_acked = 0
        self.bytes_marked = 0

    def ecn_ssthresh(self) -> float:
        if self.linux:
            # Linux dctcp_ssthresh: cwnd - (cwnd alpha >> 11), at least 2, integer window
            cwnd = int(self.flow.cwnd)
            self.loss_cwnd = float(cwnd)
            return float(max(cwnd - ((cwnd * self.alpha_fp) >> 11), 2))
        # §3.3 step 10: cwnd = cwnd (1 - Alpha / 2), once per window with marks (the transport's)
        return max(self.flow.cwnd * (1.0 - self.alpha / 2.0), 2.0)

    def ssthresh(self) -> float:
        if self.linux:
            # Linux dctcp_react_to_loss (entering Recovery, CA_EVENT_LOSS): max(cwnd >> 1, 2)
            cwnd = int(self.flow.cwnd)
            self.loss_cwnd = float(cwnd)
            return float(max(cwnd >> 1, 2))
        return super().ssthresh()                          # §3.4: as conventional TCP

    def undo_cwnd(self) -> float:
        """Linux dctcp_cwnd_undo: back to the window before the last reduction."""
        return max(self.flow.cwnd, self.loss_cwnd)

    def report(self) -> dict[str, float]:
        return {"alpha": self.alpha}

    # -- §3.3 growth and §3.4 loss as in conventional TCP ----------------------------------------
    on_ack = CongestionControl.standard_growth
