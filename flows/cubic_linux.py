"""CUBIC as Linux's tcp_cubic runs it (net/ipv4/tcp_cubic.c), for flows on the Linux stack.

`flows.cubic.Cubic` hands its hooks to a `LinuxCubic` when ``flow.stack == "linux"``. The
differences from the classic stack's RFC 9438 CUBIC, function by function:

* Constants in Linux's fixed point, from the class's parameters: beta = 717/1024 (``beta``
  rounded to 1/1024), C = bic_scale x 10 / 1024 = 410/1024 (bic_scale = ``C`` x 1024 / 10
  rounded, 41), time in units of 1/1024 s (BICTCP_HZ), the cubic root exact (Linux's table
  lookup and one Newton step is within about 0.2 % of it). The kernel clock is jiffies of
  1 / `HZ` s (CONFIG_HZ = 1000).
* `cubictcp_cong_avoid`: nothing unless the window limited the sender (tcp_is_cwnd_limited);
  below ssthresh tcp_slow_start (integer window, the whole ACK, no per-ACK limit); then
  `bictcp_update` gives ``cnt``, the ACKed packets per one-packet increase, applied by
  tcp_cong_avoid_ai (`CongestionControl.linux_cong_avoid_ai`).
* `bictcp_update`: recomputes ``cnt`` when the window changed or every HZ/32, at most once per
  jiffy; the epoch starts at the first congestion-avoidance ACK (K = 0 and the origin at cwnd if
  cwnd >= last_max_cwnd); the target is the cubic curve at t + delay_min (the minimum RTT, not
  the SRTT); cnt = cwnd / (target - cwnd), or 100 cwnd when the target is not above cwnd; while
  no loss has set last_max_cwnd, cnt <= 20 (5 % a round trip).
  tcp_friendliness: the Reno estimate tcp_cwnd grows one packet per cwnd x beta_scale / 8
  ACKed packets, beta_scale = 8 (1024 + 717) / 3 / (1024 - 717) = 15 in integers: a rate of
  8/15 = 0.53 packet per round trip, which Linux keeps (RFC 9438 §4.3 switches to 1 once the
  estimate passes cwnd_prior; Linux does not); when tcp_cwnd > cwnd, cnt <= cwnd / (tcp_cwnd -
  cwnd). Finally cnt >= 2 (at most 1.5 x a round trip).
* `cubictcp_recalc_ssthresh`: the epoch ends; fast convergence last_max_cwnd = cwnd (1024 +
  717) / 2048 when cwnd < last_max_cwnd, else cwnd; ssthresh = max(cwnd x 717 / 1024, 2), all
  on the integer window. The transport's PRR brings the window down to it.
* `cubictcp_state`: entering Loss (a timeout) resets everything (bictcp_reset: last_max_cwnd,
  delay_min, the epoch, HyStart's ``found``) and starts a new HyStart round.
* `cubictcp_acked`: RTT samples within 1 s of the epoch's start are ignored; delay_min is the
  minimum of the others; in slow start, until HyStart has found its exit, `HyStartLinux`
  (flows/hystart.py) runs. HyStart also runs in a slow start after a timeout, as in Linux.
* undo: tcp_reno_undo_cwnd (the base class's `undo_cwnd`).

Not modelled: `cubictcp_cwnd_event` shifting the epoch after an idle period (flows here do not
go idle), the pacing status other than "not paced", and initial_ssthresh (0: none, the default).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from flows.hystart import HyStartLinux

if TYPE_CHECKING:
    from flows.congestion import CongestionControl

HZ = 1000                      # jiffies per second (CONFIG_HZ)
BETA_SCALE = 1024              # BICTCP_BETA_SCALE
BICTCP_HZ = 10                 # time in 1/2^10 s


class LinuxCubic:
    """The bictcp state of one flow and Linux's CUBIC hooks (see the module docstring)."""

    __slots__ = ("cc", "beta", "bic_scale", "cube_rtt_scale", "cube_factor", "beta_scale",
                 "fast_convergence", "hystart", "cnt", "last_max_cwnd", "last_cwnd",
                 "last_time", "bic_origin_point", "bic_k", "delay_min_s", "epoch_start",
                 "ack_cnt", "tcp_cwnd")

    def __init__(self, cc: CongestionControl, c: float, beta: float, fast_convergence: bool,
                 hystart: bool):
        self.cc = cc
        self.beta = round(beta * BETA_SCALE)                     # 717 for 0.7
        self.bic_scale = max(round(c * BETA_SCALE / 10.0), 1)    # 41 for 0.4
        self.cube_rtt_scale = self.bic_scale * 10                # cubictcp_register
        self.cube_factor = (1 << (10 + 3 * BICTCP_HZ)) // (self.bic_scale * 10)
        self.beta_scale = 8 * (BETA_SCALE + self.beta) // 3 // (BETA_SCALE - self.beta)
        self.fast_convergence = fast_convergence
        self.hystart = HyStartLinux() if hystart else None
        self.cnt = 0
        self.reset()

    def reset(self) -> None:
        """bictcp_reset."""
        self.cnt = 0
        self.last_max_cwnd = 0
        self.last_cwnd = 0
        self.last_time = 0
        self.bic_origin_point = 0
        self.bic_k = 0
        self.delay_min_s = 0.0
        self.epoch_start: int | None = None
        self.ack_cnt = 0
        self.tcp_cwnd = 0
        if self.hystart is not None:
            self.hystart.found = False

    def _jiffies(self) -> int:
        return int(self.cc.flow.sim.now * HZ)

    # -- hooks -------------------------------------------------------------------------------
    def init(self) -> None:
        """cubictcp_init."""
        self.reset()
        if self.hystart is not None:
            flow = self.cc.flow
            self.hystart.reset(flow.sim.now, flow.snd_nxt)

    def on_state(self, new: str) -> None:
        """cubictcp_state: a timeout resets the state and starts a HyStart round."""
        if new == "loss":
            self.reset()
            if self.hystart is not None:
                flow = self.cc.flow
                self.hystart.reset(flow.sim.now, flow.snd_nxt)

    def on_rtt(self, rtt_s: float) -> None:
        """cubictcp_acked."""
        if self.epoch_start is not None and self._jiffies() - self.epoch_start < HZ:
            return                               # right after a reduction: discarded
        delay = rtt_s if rtt_s > 0 else 1e-6
        if self.delay_min_s == 0.0 or delay < self.delay_min_s:
            self.delay_min_s = delay
        hystart = self.hystart
        flow = self.cc.flow
        if hystart is not None and not hystart.found and flow.cwnd < flow.ssthresh:
            if hystart.update(flow.sim.now, delay, self.delay_min_s, int(flow.cwnd),
                              flow.snd_una, flow.snd_nxt, flow.srtt, flow.packet_bytes):
                flow.ssthresh = float(int(flow.cwnd))     # tp->snd_ssthresh = snd_cwnd

    def ssthresh(self) -> float:
        """cubictcp_recalc_ssthresh."""
        cwnd = int(self.cc.flow.cwnd)
        self.epoch_start = None
        if cwnd < self.last_max_cwnd and self.fast_convergence:
            self.last_max_cwnd = cwnd * (BETA_SCALE + self.beta) // (2 * BETA_SCALE)
        else:
            self.last_max_cwnd = cwnd
        return float(max(cwnd * self.beta // BETA_SCALE, 2))

    def on_ack(self, acked_pkts: float) -> None:
        """cubictcp_cong_avoid."""
        cc = self.cc
        flow = cc.flow
        if not flow.is_cwnd_limited:
            return
        acked = int(acked_pkts)
        if flow.cwnd < flow.ssthresh:
            acked = cc.linux_slow_start(acked)
            if acked <= 0:
                return
        self.update(int(flow.cwnd), acked)
        cc.linux_cong_avoid_ai(self.cnt, acked)

    # -- bictcp_update -----------------------------------------------------------------------
    def update(self, cwnd: int, acked: int) -> None:
        """bictcp_update: `cnt` for the window `cwnd` after `acked` more ACKed packets."""
        self.ack_cnt += acked
        now = self._jiffies()
        if self.last_cwnd == cwnd and now - self.last_time <= HZ // 32:
            return
        if not (self.epoch_start is not None and now == self.last_time):
            self._cubic_cnt(cwnd, now, acked)
        # tcp_friendliness: the Reno estimate, 8/15 packet per round trip
        delta = (cwnd * self.beta_scale) >> 3
        while delta and self.ack_cnt > delta:
            self.ack_cnt -= delta
            self.tcp_cwnd += 1
        if self.tcp_cwnd > cwnd:
            max_cnt = cwnd // (self.tcp_cwnd - cwnd)
            if self.cnt > max_cnt:
                self.cnt = max_cnt
        self.cnt = max(self.cnt, 2)

    def _cubic_cnt(self, cwnd: int, now: int, acked: int) -> None:
        self.last_cwnd = cwnd
        self.last_time = now
        if self.epoch_start is None:
            self.epoch_start = now               # the epoch begins
            self.ack_cnt = acked
            self.tcp_cwnd = cwnd
            if self.last_max_cwnd <= cwnd:
                self.bic_k = 0
                self.bic_origin_point = cwnd
            else:
                # K = cbrt((W_max - cwnd) / C), in 1/1024 s (cube_factor = 2^40 / (C 1024))
                self.bic_k = int(math.pow(self.cube_factor * (self.last_max_cwnd - cwnd),
                                          1.0 / 3.0) + 1e-9)
                self.bic_origin_point = self.last_max_cwnd
        # t = now - epoch_start + delay_min, in 1/1024 s
        t_jiffies = now - self.epoch_start + math.ceil(self.delay_min_s * HZ)
        t = (t_jiffies << BICTCP_HZ) // HZ
        offs = abs(t - self.bic_k)
        delta = (self.cube_rtt_scale * offs * offs * offs) >> (10 + 3 * BICTCP_HZ)
        if t < self.bic_k:
            target = self.bic_origin_point - delta
        else:
            target = self.bic_origin_point + delta
        if target > cwnd:
            self.cnt = cwnd // (target - cwnd)
        else:
            self.cnt = 100 * cwnd                # very small increment
        if self.last_max_cwnd == 0 and self.cnt > 20:
            self.cnt = 20                        # no loss yet: 5 % a round trip

    def report(self) -> dict[str, float]:
        return {"w_max_pkts": float(self.last_max_cwnd)}
