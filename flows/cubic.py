"""CUBIC (RFC 9438, "CUBIC for Fast and Long-Distance Networks", 2023).

Windows are in packets (the RFC's segments), times in seconds of simulated time. Section numbers
below are those of RFC 9438.

Congestion avoidance (§4.2). A congestion-avoidance stage (an *epoch*) begins at the first ACK of
new data the flow receives in congestion avoidance after a congestion event; that instant is
``t_epoch`` and the window then is ``cwnd_epoch``. The window follows the cubic curve

    W_cubic(t) = C (t - K)^3 + W_max,    t = now - t_epoch,    K = cbrt((W_max - cwnd_epoch) / C)

whose plateau is W_max, reached K seconds into the epoch. We always use this general K (§4.2):
after a fast retransmit from a full window cwnd_epoch = beta W_max, so it equals the familiar
cbrt(W_max (1 - beta) / C), but it also covers epochs that begin at another window (fast
convergence, the 2-packet floor, a window that moved between the loss and the epoch). When the
epoch begins at or above W_max there is no plateau ahead: K = 0 and W_max = cwnd_epoch, the curve
§4.8 and §4.10 prescribe when W_max is unknown. On each ACK the target is W_cubic(t + RTT), RTT
the smoothed RTT, clamped to [cwnd, 1.5 cwnd]; the window grows by (target - cwnd) / cwnd per
acknowledged packet (§4.4 concave region below W_max, §4.5 convex region above), never past the
target in one ACK (only matters for an ACK covering more than a window).

Reno-friendly region (§4.3). W_est estimates the window of an AIMD(alpha_cubic, beta) flow: it
starts at cwnd_epoch and grows by alpha_cubic / cwnd per acknowledged packet, alpha_cubic =
3 (1 - beta) / (1 + beta); once W_est reaches cwnd_prior (the window when ssthresh was last set)
alpha_cubic becomes 1, Reno's own increase. (RFC 9438 compares with cwnd_prior; this equals W_max
unless fast convergence lowered W_max.) Whenever W_cubic(t) < W_est the flow is in the
Reno-friendly region and the window is W_est -- or the cubic increase, if that is larger: the
window never shrinks without a congestion event.

Multiplicative decrease (§4.6) and fast convergence (§4.7). On the third duplicate ACK, and on
the first timeout of a loss episode, ssthresh = max(beta cwnd, 2) and cwnd_prior = cwnd. We use
cwnd rather than FlightSize, which §4.6 allows provided the window cannot grow while less than a
window is in flight: the window grows only on ACKs of a flight that filled it (§5.8: no growth
while application-limited). Before the reduction W_max is updated: with fast convergence and
cwnd below the previous W_max, W_max = cwnd (1 + beta) / 2 (release bandwidth to a newcomer),
else W_max = cwnd. The epoch ends and the next congestion-avoidance ACK starts a new one.
Fast recovery uses the transport's SACK-based loss recovery (RFC 6675, as Linux CUBIC does): the
window drops to ssthresh at once, without Reno's inflation, and stays there when recovery ends.

Timeout (§4.8). ssthresh is set as in §4.6, the window becomes one packet (RFC 5681) and slow
start runs up to ssthresh; the first epoch after it uses K = 0 and W_max = W_est = cwnd_epoch, so
it probes upwards from where slow start left off.

Slow start (§4.10) is RFC 5681 slow start (`CongestionControl.slow_start`) up to ssthresh, which is
unbounded at first unless the transport sets it; when the first slow start ends without a loss
(a configured initial ssthresh) the first epoch is set up as after a timeout and cwnd_prior is
that window. HyStart++ (RFC 9406, recommended by §4.10; `flows.hystart`) runs in the initial slow
start unless the parameter ``hystart`` is 0 (false): when the minimum RTT of a round has risen,
slow start gives way to Conservative Slow Start and then to congestion avoidance (ssthresh =
cwnd, the first epoch as after a configured ssthresh), before the first loss. An ECN echo is a
congestion event like a loss (§4.6, the transport's reaction calls `ssthresh()`). Pacing and
spurious congestion-event undo (§4.9) are not implemented. The elapsed time t is not corrected
for application-limited periods (§5.8): flows here send continuously until their data runs out.

On the Linux stack (``flow.stack == "linux"``) every hook is Linux's tcp_cubic instead
(`flows.cubic_linux.LinuxCubic`): the 2008 HyStart (ACK train and delay increase from a window of
16, then straight to congestion avoidance, no conservative slow start), Linux's fixed-point curve
with the minimum RTT as its look-ahead, fast convergence, and Linux's Reno-friendly estimate,
which keeps growing at 8/15 = 0.53 packet per round trip. Undo is tcp_reno_undo_cwnd (the base
class's `undo_cwnd`). `report()` gives ``{"w_max_pkts": ...}`` (W_max, Linux's last_max_cwnd;
NaN while unknown on the classic stack, 0 on the Linux stack as in Linux).
"""
from __future__ import annotations

import math
from typing import ClassVar

from flows.congestion import LOSS, CongestionControl, RecoveryMode
from flows.cubic_linux import LinuxCubic
from flows.hystart import HyStart

MAX_C = 1e6     # C at most: Linux's cube_factor 2^40 / (C x 1024) keeps 10 bits (docs/algorithms.md)


class Cubic(CongestionControl):
    """CUBIC per RFC 9438: cubic window growth around the last congestion window."""

    name = "cubic"
    fast_recovery = True
    recovery = RecoveryMode.SACK
    theory_model = "cubic"
    PARAMETERS: ClassVar[dict[str, float]] = {"C": 0.4, "beta": 0.7, "fast_convergence": 1,
                                              "hystart": True}
    __slots__ = ("c", "beta", "alpha_cubic", "fast_convergence", "w_max", "cwnd_prior", "k",
                 "t_epoch", "cwnd_epoch", "west", "after_timeout", "hystart", "lx")

    def __init__(self, flow, params=None):
        super().__init__(flow, params)
        self.c = float(self.params["C"])
        self.beta = float(self.params["beta"])
        self.fast_convergence = bool(self.params["fast_convergence"])
        # §4.3: the AIMD increase that matches Reno's average window
        self.alpha_cubic = 3.0 * (1.0 - self.beta) / (1.0 + self.beta)
        self.w_max: float | None = None        # unknown until the first congestion event or epoch
        self.cwnd_prior: float | None = None   # cwnd when ssthresh was last set
        self.k = 0.0
        self.t_epoch: float | None = None      # None: no epoch running; the next CA ACK starts one
        self.cwnd_epoch: float | None = None
        self.west: float | None = None
        self.after_timeout = False
        # RFC 9406 HyStart++ in the initial slow start (None: off)
        self.hystart: HyStart | None = HyStart() if self.params["hystart"] else None
        # the Linux stack: tcp_cubic's hooks instead (None on the classic stack)
        self.lx = (LinuxCubic(self, self.c, self.beta, self.fast_convergence,
                              bool(self.params["hystart"])) if self.linux else None)
        if self.lx is not None:
            self.hystart = None

    @classmethod
    def param_problem(cls, name: str, value):
        if name == "hystart":
            if value not in (0, 1):       # true, false, 1 or 0
                return "expected true or false"
            return None
        if name == "fast_convergence":
            if isinstance(value, bool) or value not in (0, 1):
                return "expected 0 (off) or 1 (on)"
            return None
        problem = super().param_problem(name, value)
        if problem:
            return problem
        if name == "beta" and value >= 1:
            return "expected a number in (0, 1)"
        if name == "C" and value > MAX_C:
            return (f"expected a positive number of at most {MAX_C:g} (Linux's fixed point: "
                    f"cube_factor = 2^40 / (C x 1024) keeps 10 bits)")
        return None

    # -- the curve, exposed for tests --------------------------------------------------------
    def k_seconds(self) -> float:
        """K of the current (or last) epoch: seconds from its start to the plateau W_max."""
        return self.k

    def w_cubic(self, t: float) -> float:
        """The cubic window t seconds after the start of the epoch."""
        # §4.2 Figure 1: W_cubic(t) = C (t - K)^3 + W_max
        w_max = self.w_max
        assert w_max is not None, "W_max is known once an epoch has begun"
        return self.c * (t - self.k) ** 3 + w_max

    def w_est(self) -> float | None:
        """The Reno-friendly window estimate W_est of the current epoch (§4.3)."""
        return self.west

    # -- hooks -------------------------------------------------------------------------------
    def init(self) -> None:
        if self.lx is not None:
            self.lx.init()

    def report(self) -> dict[str, float]:
        if self.lx is not None:
            return self.lx.report()
        return {"w_max_pkts": math.nan if self.w_max is None else self.w_max}

    def ssthresh(self) -> float:
        if self.lx is not None:
            return self.lx.ssthresh()
        cwnd = self.flow.cwnd
        # §4.7 fast convergence: remember the window, or less of it if the saturation point fell
        if self.fast_convergence and self.w_max is not None and cwnd < self.w_max:
            self.w_max = cwnd * (1.0 + self.beta) / 2.0
        else:
            self.w_max = cwnd
        # §4.6 Figure 5: cwnd_prior = cwnd
        self.cwnd_prior = cwnd
        self.t_epoch = None
        self.after_timeout = False
        # §4.6 Figure 5: ssthresh = max(cwnd beta, 2)
        return max(cwnd * self.beta, 2.0)

    def on_state(self, old: str, new: str) -> None:
        # §4.6: cwnd = ssthresh in fast recovery, without inflation, is the transport's SACK
        # recovery window; §4.8: one packet after a timeout, its loss window.
        if self.lx is not None:
            self.lx.on_state(new)
            return
        if new == LOSS:
            self.after_timeout = True
            self.t_epoch = None

    def on_rtt(self, rtt_s: float) -> None:
        if self.lx is not None:
            self.lx.on_rtt(rtt_s)
            return
        hystart = self.hystart
        if hystart is not None and self.flow.ssthresh == math.inf:
            hystart.on_rtt(rtt_s)

    def on_ack(self, acked_pkts: float) -> None:
        if self.lx is not None:
            self.lx.on_ack(acked_pkts)
            return
        flow = self.flow
        hystart = self.hystart
        if hystart is not None and flow.ssthresh == math.inf:
            # §4.10 with RFC 9406: HyStart++ in the initial slow start
            if hystart.on_ack(flow.snd_una, flow.snd_nxt, flow.sim.now):
                flow.ssthresh = flow.cwnd    # RFC 9406 §4.2: CSS over, congestion avoidance
            elif hystart.in_css:
                if flow.flight_size() + acked_pkts >= flow.cwnd:
                    # RFC 9406 §4.2: cwnd += min(N, L) / CSS_GROWTH_DIVISOR
                    flow.cwnd += min(acked_pkts, self.abc_limit) / hystart.growth_divisor()
                return
        if flow.flight_size() + acked_pkts < flow.cwnd:
            return                           # §4.6, §5.8: the window was not the limit
        if flow.cwnd < flow.ssthresh:
            acked_pkts = self.slow_start(acked_pkts)
            if acked_pkts <= 0:
                return
        self._congestion_avoidance(acked_pkts)

    # -- congestion avoidance ----------------------------------------------------------------
    def _start_epoch(self, now: float) -> None:
        cwnd = self.flow.cwnd
        self.t_epoch = now
        self.cwnd_epoch = cwnd
        self.west = cwnd                     # §4.3, §4.8: W_est starts at cwnd_epoch
        if self.cwnd_prior is None:
            self.cwnd_prior = cwnd           # §4.1.2: the first slow start ended here
        if self.after_timeout or self.w_max is None or cwnd >= self.w_max:
            self.w_max = cwnd                # §4.8, §4.10: K = 0, plateau at cwnd_epoch
            self.k = 0.0
        else:
            # §4.2 Figure 2: K = cbrt((W_max - cwnd_epoch) / C)
            self.k = ((self.w_max - cwnd) / self.c) ** (1.0 / 3.0)
        self.after_timeout = False

    def _congestion_avoidance(self, acked: float) -> None:
        flow = self.flow
        now = flow.sim.now
        if self.t_epoch is None:
            self._start_epoch(now)
        t_epoch, west, cwnd_prior = self.t_epoch, self.west, self.cwnd_prior
        assert t_epoch is not None and west is not None and cwnd_prior is not None   # the epoch's
        t = now - t_epoch
        rtt = flow.srtt or 0.0
        cwnd = flow.cwnd
        # §4.3: alpha_cubic until W_est reaches cwnd_prior, then Reno's 1
        alpha = 1.0 if west >= cwnd_prior else self.alpha_cubic
        # §4.3 Figure 4: W_est += alpha * segments_acked / cwnd
        self.west = west = west + alpha * acked / cwnd
        # §4.2 Figure 3: target = W_cubic(t + RTT) clamped to [cwnd, 1.5 cwnd]
        target = min(max(self.w_cubic(t + rtt), cwnd), 1.5 * cwnd)
        # §4.4, §4.5: cwnd += (target - cwnd) / cwnd per acknowledged packet
        grown = min(cwnd + (target - cwnd) / cwnd * acked, target)
        # §4.3: Reno-friendly region when W_cubic(t) < W_est: cwnd follows W_est
        if self.w_cubic(t) < west:
            grown = max(grown, west)
        flow.cwnd = grown
