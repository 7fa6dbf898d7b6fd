"""BBR v1 (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR: Congestion-Based Congestion
Control", ACM Queue 14(5), 2016; IETF draft-cardwell-iccrg-bbr-congestion-control-00, 2017).

Section numbers below are those of the draft. Windows and BDPs are in packets, rates in packets
per second (converted to bits per second only for the transport's pacer), times in seconds of
simulated time.

Every ACK that delivers packets runs the draft's BBRUpdateOnACK (`on_rate_sample`), one method
per named step, in the draft's order: BBRUpdateModelAndState -- `_update_btlbw` (with
BBRUpdateRound), `_check_cycle_phase`, `_check_full_pipe`, `_check_drain`, `_update_rtprop`,
`_check_probe_rtt` -- then BBRUpdateControlParameters (`_update_control_parameters`: the pacing
rate, then the window; the send quantum is fixed). A step that cannot act in the current state is
not called.

Path model (§4.1). BBR's input is the transport's delivery-rate samples (`on_rate_sample`, one
per ACK that delivers packets; `flows.transport.RateSample`).

* BtlBw (§4.1.1) is the maximum delivery rate over the last `btlbw_rounds` (BtlBwFilterLen = 10)
  packet-timed round trips: samples from rounds ``round_count - btlbw_rounds + 1 .. round_count``
  count, older ones are forgotten when a new sample enters the filter (an exact windowed max; the
  draft allows any windowed max filter). Rounds (§4.1.1.3): a round ends when a packet sent after
  the previous round ended is delivered, i.e. ``rs.prior_delivered >= next_round_delivered``.
  Application-limited samples enter the filter only if they are at least the current BtlBw
  (§4.1.1.4, §4.1.1.5).
* RTprop (§4.1.2) is the minimum RTT over `min_rtt_window_s` (RTpropFilterLen = 10 s), kept with
  the draft's combined min filter and ProbeRTT timer (§4.1.2.3): a sample at or below RTprop, or
  any sample once the estimate is older than the window, replaces it. RTT samples follow Karn's
  rule (§4.1.2.1: never from a retransmission): BBR takes the transport's valid RTT sample of the
  same ACK (`on_rtt`, called just before `on_rate_sample`); the ACK echoes the send time of the
  packet that triggered it, the most recently sent packet the ACK covers. RTprop is infinite
  (`min_rtt_s` = inf) until the first sample (§4.3.1: the flow has no SRTT when it starts).

Control parameters (§4.2).

* Pacing rate (§4.2.1) = pacing_gain x BtlBw, updated on every sample once the pipe is full, and
  before that only when it rises. At start (§4.3.1) it is high_gain x InitialCwnd / SRTT, with a
  nominal RTT of 1 ms when there is no RTT sample yet (always, here: the flow has not sent).
  InitialCwnd is the transport's initial window (§4.2.3.1; `transport.initial_cwnd_pkts`).
* Send quantum (§4.2.2): one packet, since the transport paces single packets (no TSO/GSO
  aggregates), so the "quanta" term of the target window is 3 packets.
* Target window (§4.2.3.2) = cwnd_gain x BDP + 3 packets, BDP = BtlBw x RTprop; InitialCwnd while
  RTprop is unknown. The window itself follows the core mechanism (§4.2.3.6): once the pipe is
  full it is min(cwnd + packets delivered, target) on every sample (so it is cut to the target at
  once and grows towards it by the packets delivered); before that it grows by the packets
  delivered while below the target; never below 4 packets (BBRMinPipeCwnd, §4.2.3.3), except as
  below. In steady state it is exactly max(cwnd_gain x BDP + 3, 4).

State machine (§4.3).

* Startup (§4.3.2): pacing_gain = cwnd_gain = `high_gain` (2/ln 2 ~ 2.885, the smallest gain that
  doubles the sending rate every round). The pipe is full (§4.3.2.2) when, at the start of three
  rounds in a row (non-app-limited samples), BtlBw did not grow by 25 % over the baseline.
* Drain (§4.3.3): pacing_gain = 1 / high_gain, cwnd_gain = high_gain, until the packets in flight
  are at most BBRInflight(1.0) = BDP + 3 packets; then ProbeBW.
* ProbeBW (§4.3.4): cwnd_gain = `cwnd_gain` (2); the pacing gain cycles through
  [5/4, 3/4, 1, 1, 1, 1, 1, 1], one phase per RTprop, except that the 5/4 phase lasts until
  packets were lost or the packets in flight reached 5/4 BDP + 3, and the 3/4 phase ends early
  once they are at most BDP + 3 (§4.3.4.3). The first phase is drawn at random, from every phase
  but 3/4 (§4.3.4.2), with the run's generator (`flow.sim.rng`), so runs stay reproducible.
  Restart from idle (§4.3.4.4) is not modelled: flows here never go idle before their data runs
  out.
* ProbeRTT (§4.3.5): when RTprop was not refreshed for `min_rtt_window_s`, pacing_gain =
  cwnd_gain = 1 and the window is capped at 4 packets (§4.2.3.5); once at most 4 packets are in
  flight BBR holds it for `probe_rtt_duration_s` (200 ms) and at least one round, then takes the
  RTprop sample as fresh, restores the window it had before and returns to ProbeBW (or Startup if
  the pipe was never filled). Packets sent meanwhile are marked application-limited (BBR sets the
  transport's `flow.app_limited_until`, the draft's ``C.app_limited``), so their low delivery
  rates do not lower BtlBw.

Packets in flight are the transport's RFC 6675 estimate `flow.pipe()` when the sample is taken,
which is before the transport applies the ACK's cumulative part: it is the draft's
"prior_inflight" (the gain cycle, §4.3.4.3), and also what Drain and ProbeRTT compare, at most
the packets this ACK delivered above the after-ACK value. Packets "newly lost" (the 5/4 phase
ends on a loss) are the retransmissions the transport made since the previous sample: it
retransmits every packet it deems lost.

Loss (§4.2.3.4). Loss is not BBR's congestion signal (``loss_based = False``), so the transport's
loss-based window policy is switched off (`flows.recovery.ModelWindow`): its SACK-based recovery
(RFC 6675) repairs losses, ssthresh is left as it is and entering fast recovery does not change the
window: BBR's model sets it on every sample, and the pacing rate spaces the repairs. BBR remembers
the window when an episode begins (`on_state`, BBRSaveCwnd) and, when it ends, the transport sets
the window BBR gives back (`restore_cwnd`, BBRRestoreCwnd: at least the remembered one), which the
next sample bounds by the target again. (The packet conservation during the first round of
recovery that the draft gives as one way to do this is not implemented.) After a retransmission
timeout the window is one packet (the transport's loss window; its go-back-N resends from the
first unacknowledged packet); the next sample raises it to the 4-packet floor and it grows by the
packets delivered, up to the target; when the timeout episode ends (LOSS -> OPEN) it is restored
to at least the one it had before.

On the Linux stack (``flow.stack == "linux"``) it is Linux's tcp_bbr v1 (net/ipv4/tcp_bbr.c):

* gains in Linux's fixed point: high_gain 739/256 (bbr_high_gain), drain_gain 88/256
  (bbr_drain_gain, not exactly 1/high_gain); pacing 1 % below gain x BtlBw
  (bbr_pacing_margin_percent);
* BBRInflight(gain) (`bbr_inflight`) = ceil(gain x BDP) (`bbr_bdp`) plus the quantization budget
  (`bbr_quantization_budget`, flows/bbr_model.py: 3 TSO bursts of `bbr_tso_segs_goal` packets,
  rounded up to even, + 2 in the probing phase), and the target window (`bbr_set_cwnd`) adds
  the ACK-aggregation estimate extra_acked (`bbr_update_ack_aggregation`,
  `bbr_ack_aggregation_cwnd`) once the pipe is full; the probing phase's in-flight test adds one
  TSO burst (`bbr_packets_in_net_at_edt`, pacing here releasing packets at once);
* RTprop takes a sample only if strictly lower (or once expired; `bbr_update_min_rtt`), so
  ProbeRTT comes every 10 s even on a path whose RTT never changes; the sample is the rate
  sample's RTT (Linux's rs->rtt_us: the most recently sent packet the ACK delivered, valid with
  timestamps), whatever the order in which the transport calls `on_rtt`;
* in the first round of fast recovery the window follows packet conservation, and each ACK's
  newly lost packets come off the window (`bbr_set_cwnd_to_recover_or_restore`); entering Drain
  sets ssthresh to BBRInflight(1) (`bbr_check_drain`);
* `bbr_undo_cwnd`: an undo resets the full-pipe detection and keeps the window.

Not modelled on either stack: the long-term (policer) bandwidth estimate (lt_bw, which needs a
loss rate of 20 % per interval), and restart from idle (CA_EVENT_TX_START). `report()` gives
``btlbw_bps``, ``min_rtt_s`` (NaN until known), ``pacing_gain``, ``cwnd_gain`` and, on the Linux
stack, ``extra_acked_pkts``.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar

from flows.bbr_linux import LinuxBbr
from flows.bbr_model import (
    BBR_UNIT,
    MIN_PIPE_CWND,
    PACING_MARGIN,
    BandwidthFilter,
    FullPipe,
    draft_cwnd,
    linux_gain,
)
from flows.congestion import OPEN, CongestionControl, RecoveryMode

if TYPE_CHECKING:
    from flows.rate_sampler import RateSample

STARTUP = "startup"
DRAIN = "drain"
PROBE_BW = "probe_bw"
PROBE_RTT = "probe_rtt"

GAIN_CYCLE = (1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)   # §4.3.4.1 pacing_gain_cycle
QUANTA_PKTS = 3.0            # §4.2.3.2: 3 send quanta of one packet (§4.2.2)
MAX_GAIN = float(BBR_UNIT)    # high_gain and cwnd_gain at most: 1 / high_gain >= 1 / BBR_UNIT
NOMINAL_RTT_S = 1e-3         # §4.2.1: RTT for the initial pacing rate when there is no SRTT


class Bbr(CongestionControl):
    """BBR v1: pace at the estimated bottleneck bandwidth, cap inflight at a multiple of the BDP."""

    name = "bbr"
    recovery = RecoveryMode.SACK
    theory_model = "rate"
    loss_based = False
    wants_rate_samples = True
    min_window_pkts = float(MIN_PIPE_CWND)        # §4.2.3.3 BBRMinPipeCwnd, from the first ACK
    PARAMETERS: ClassVar[dict[str, float]] = {"high_gain": 2.885, "cwnd_gain": 2.0, "btlbw_rounds": 10,
                  "min_rtt_window_s": 10.0, "probe_rtt_duration_s": 0.2}
    GAIN_CYCLE: ClassVar[tuple[float, ...]] = GAIN_CYCLE
    __slots__ = ("high_gain", "drain_gain", "probe_bw_cwnd_gain", "min_rtt_window_s",
                 "probe_rtt_duration_s", "state", "pacing_gain", "cwnd_gain", "pacing_rate_pps",
                 "initial_cwnd", "bw_filter", "min_rtt_s", "rtprop_stamp", "rtt_sample",
                 "round_count", "round_start", "next_round_delivered", "full_pipe",
                 "cycle_index", "cycle_stamp", "probe_rtt_done_stamp", "probe_rtt_round_done",
                 "prior_cwnd", "retx_seen", "lx")

    def __init__(self, flow, params=None):
        super().__init__(flow, params)
        p = self.params
        self.high_gain = float(p["high_gain"])
        self.drain_gain = 1.0 / self.high_gain
        if self.linux:                              # Linux's fixed point (BBR_UNIT)
            self.drain_gain = linux_gain(1.0 / self.high_gain)
            self.high_gain = linux_gain(self.high_gain, round_up=True)
        self.probe_bw_cwnd_gain = float(p["cwnd_gain"])
        self.min_rtt_window_s = float(p["min_rtt_window_s"])
        self.probe_rtt_duration_s = float(p["probe_rtt_duration_s"])
        self.state = STARTUP
        self.pacing_gain = self.high_gain
        self.cwnd_gain = self.high_gain
        self.pacing_rate_pps = 0.0
        self.bw_filter = BandwidthFilter(int(p["btlbw_rounds"]))
        self.rtt_sample: float | None = None   # the valid RTT sample of the ACK being processed
        self.cycle_index = 0
        self.cycle_stamp = 0.0
        self.lx = LinuxBbr(self) if self.linux else None   # the Linux stack's window steps
        self._reset_model(0.0)

    def _reset_model(self, now: float) -> None:
        """The path model and round counters at their starting values (§4.3.1 BBRInit)."""
        flow = self.flow
        self.initial_cwnd = float(flow.cwnd)
        self.bw_filter.clear()
        srtt = flow.srtt
        self.min_rtt_s = srtt if srtt else math.inf
        self.rtprop_stamp = now
        self.probe_rtt_done_stamp: float | None = None
        self.probe_rtt_round_done = False
        self.prior_cwnd = 0.0
        self.round_count = 0
        self.round_start = False
        self.next_round_delivered = 0
        self.full_pipe = FullPipe()
        self.retx_seen = flow.retransmissions
        if self.lx is not None:
            self.lx.reset(now)

    @classmethod
    def param_problem(cls, name: str, value):
        problem = super().param_problem(name, value)
        if problem:
            return problem
        if name == "btlbw_rounds" and not isinstance(value, int):
            return "expected a whole number of round trips >= 1"
        if name == "high_gain" and not 1 < value <= MAX_GAIN:
            return (f"expected a gain above 1 and at most {MAX_GAIN:g} (the drain gain, its "
                    f"inverse, is at least 1/{BBR_UNIT} in Linux's fixed point)")
        if name == "cwnd_gain" and value > MAX_GAIN:
            return (f"expected a positive gain of at most {MAX_GAIN:g} (a window of "
                    f"{MAX_GAIN:g} bandwidth-delay products)")
        return None

    # -- the model, exposed for tests --------------------------------------------------------
    def btl_bw_pps(self) -> float:
        """BtlBw: the windowed maximum delivery rate, packets per second (0 before any sample)."""
        return self.bw_filter.max_pps()

    def bdp_pkts(self) -> float | None:
        """BtlBw x RTprop in packets, or None while RTprop is unknown."""
        if self.min_rtt_s == math.inf:
            return None
        return self.btl_bw_pps() * self.min_rtt_s

    def inflight_pkts(self, gain: float) -> float:
        """§4.2.3.2 BBRInflight(gain): gain x BDP + quanta (InitialCwnd without RTprop)."""
        if self.lx is not None:
            return self.lx.window(self.btl_bw_pps(), gain)
        if self.min_rtt_s == math.inf:
            return self.initial_cwnd
        return gain * self.btl_bw_pps() * self.min_rtt_s + QUANTA_PKTS

    def target_cwnd(self) -> float:
        """§4.2.3.2 BBR.target_cwnd (Linux: with extra_acked)."""
        if self.lx is not None:
            return self.lx.target()
        return self.inflight_pkts(self.cwnd_gain)

    # -- hooks -------------------------------------------------------------------------------
    def init(self) -> None:
        """§4.3.1 BBRInit."""
        flow = self.flow
        srtt = flow.srtt
        self._reset_model(flow.sim.now)
        self._enter_startup()
        # §4.2.1 BBRInitPacingRate
        self.pacing_rate_pps = self.pacing_gain * self.initial_cwnd / (srtt or NOMINAL_RTT_S)
        flow.pacing_rate_bps = self._pacing_bps(self.pacing_rate_pps)

    def _pacing_bps(self, rate_pps: float) -> float:
        rate_bps = rate_pps * self.flow.packet_bytes * 8.0
        return rate_bps * PACING_MARGIN if self.linux else rate_bps

    def on_rtt(self, rtt_s: float) -> None:
        self.rtt_sample = rtt_s              # Karn-valid; used by the rate sample of this ACK

    def on_state(self, old: str, new: str) -> None:
        """§4.2.3.4 BBRSaveCwnd: remember the window when a loss episode begins (the transport
        then sets the loss window after a timeout, and asks `restore_cwnd` when it ends)."""
        if old == OPEN:
            self.prior_cwnd = self._save_cwnd(in_recovery=False)
        elif new != OPEN and old != new:
            self.prior_cwnd = self._save_cwnd(in_recovery=True)

    def restore_cwnd(self) -> float:
        """§4.2.3.4 BBRRestoreCwnd when a loss episode ends: at least the window remembered when
        it began, and no more than the ProbeRTT window while probing."""
        cwnd = max(self.flow.cwnd, self.prior_cwnd)
        if self.state == PROBE_RTT:
            cwnd = min(cwnd, MIN_PIPE_CWND)
        return cwnd

    def undo_cwnd(self) -> float:
        """Linux bbr_undo_cwnd: detect the full pipe afresh; the window stays."""
        self.full_pipe.full_bw = 0.0
        self.full_pipe.count = 0
        return self.flow.cwnd

    def report(self) -> dict[str, float]:
        values = {"btlbw_bps": self.btl_bw_pps() * self.flow.packet_bytes * 8.0,
                  "pacing_gain": self.pacing_gain, "cwnd_gain": self.cwnd_gain,
                  "min_rtt_s": self.min_rtt_s if self.min_rtt_s != math.inf else math.nan}
        if self.lx is not None:
            values["extra_acked_pkts"] = float(self.lx.aggregation.extra_acked_pkts())
        return values

    def on_rate_sample(self, rs: RateSample) -> None:
        """§4 BBRUpdateOnACK: BBRUpdateModelAndState, then BBRUpdateControlParameters, one
        method a step, in the draft's order (steps that cannot act now are not called)."""
        flow = self.flow
        now = flow.sim.now
        retx = flow.retransmissions                   # the packets newly lost are those the
        lost = retx - self.retx_seen                  # transport retransmitted since the last
        self.retx_seen = retx                         # sample (it resends every lost packet)
        rtt = self.rtt_sample if self.lx is None else rs.rtt_s    # Linux: rs->rtt_us
        self.rtt_sample = None
        # BBRUpdateModelAndState
        bw = self._update_btlbw(rs)
        if self.lx is not None:                       # Linux bbr_update_ack_aggregation
            self.lx.on_sample(now, bw, rs.newly_delivered, self.round_start)
        if self.state == PROBE_BW:
            self._check_cycle_phase(now, lost)
        else:
            self.full_pipe.check(bw, self.round_start, rs.is_app_limited)
            self._check_drain(now)
        expired = self._update_rtprop(now, rtt)
        if expired or self.state == PROBE_RTT:
            self._check_probe_rtt(now, rs, expired)
        self._update_control_parameters(rs, bw, lost)

    # -- the path model (§4.1) ---------------------------------------------------------------
    def _update_btlbw(self, rs: RateSample) -> float:
        """§4.1.1.5 BBRUpdateBtlBw, with §4.1.1.3 BBRUpdateRound first: the windowed maximum
        delivery rate (`BandwidthFilter`); returns it (BtlBw, packets per second)."""
        round_start = rs.prior_delivered >= self.next_round_delivered
        if round_start:
            self.next_round_delivered = rs.delivered
            self.round_count += 1
        self.round_start = round_start
        return self.bw_filter.update(self.round_count, rs.delivery_rate_pps, rs.is_app_limited)

    def _update_rtprop(self, now: float, rtt: float | None) -> bool:
        """§4.1.2.3 BBRUpdateRTprop: a sample at or below RTprop (Linux: below), or any once
        it expired, replaces it. Returns BBR.rtprop_expired (before this sample)."""
        expired = now > self.rtprop_stamp + self.min_rtt_window_s
        if rtt is not None and (rtt < self.min_rtt_s or expired
                                or (rtt == self.min_rtt_s and not self.linux)):
            self.min_rtt_s = rtt
            self.rtprop_stamp = now
        return expired

    # -- the state machine (§4.3) ------------------------------------------------------------
    def _check_drain(self, now: float) -> None:
        """§4.3.3 BBRCheckDrain: to Drain once the pipe is full, out at BBRInflight(1.0)."""
        if self.state == STARTUP and self.full_pipe.filled:
            self._enter_drain()
            if self.linux:                                    # Linux bbr_check_drain
                self.flow.ssthresh = self.inflight_pkts(1.0)
        if self.state == DRAIN and self.flow.pipe() <= self.inflight_pkts(1.0):
            self._enter_probe_bw(now)

    def _check_cycle_phase(self, now: float, lost: int) -> None:
        """§4.3.4.3 BBRIsNextCyclePhase: one RTprop per phase; the probing one also waits for a
        loss or BBRInflight(gain) in flight, the draining one ends early at BBRInflight(1.0)."""
        gain = self.pacing_gain
        if now - self.cycle_stamp > self.min_rtt_s:          # is_full_length
            advance = gain <= 1.0 or lost > 0 or self._in_net() >= self.inflight_pkts(gain)
        else:
            advance = gain < 1.0 and self.flow.pipe() <= self.inflight_pkts(1.0)
        if advance:
            self._advance_cycle_phase(now)

    def _check_probe_rtt(self, now: float, rs: RateSample, expired: bool) -> None:
        """§4.3.5 BBRCheckProbeRTT: enter ProbeRTT when RTprop expired, and run it."""
        if expired and self.state != PROBE_RTT:
            self._enter_probe_rtt()               # BBREnterProbeRTT(); BBRSaveCwnd(), in that
            self.prior_cwnd = self._save_cwnd(    # order (Linux bbr_update_min_rtt too): the
                in_recovery=self.flow.state != OPEN)  # larger of the saved and the window
        if self.state == PROBE_RTT:
            self._handle_probe_rtt(now, rs, self.flow.pipe())

    def _in_net(self) -> float:                 # the packets in flight the probing phase sees
        return self.flow.pipe() if self.lx is None else self.lx.in_net()

    # -- the control parameters (§4.2) -------------------------------------------------------
    def _update_control_parameters(self, rs: RateSample, bw: float, lost: int) -> None:
        """§4.2 BBRUpdateControlParameters: the pacing rate, then the window (the send quantum,
        one packet, never changes)."""
        flow = self.flow
        # §4.2.1 BBRSetPacingRate: pacing_gain x BtlBw, on every sample once the pipe is full,
        # before that only when it rises
        rate = self.pacing_gain * bw
        if self.lx is not None:
            self.lx.init_pacing_from_rtt()
        if rate != self.pacing_rate_pps and (self.full_pipe.filled or rate > self.pacing_rate_pps):
            self.pacing_rate_pps = rate
            flow.pacing_rate_bps = self._pacing_bps(rate)
        if self.lx is not None:
            flow.cwnd = self.lx.cwnd(rs, lost)               # Linux bbr_set_cwnd
            return
        # §4.2.3.6 BBRSetCwnd towards the target window, §4.2.3.2 (InitialCwnd without RTprop)
        min_rtt = self.min_rtt_s
        target = (self.initial_cwnd if min_rtt == math.inf
                  else self.cwnd_gain * bw * min_rtt + QUANTA_PKTS)
        flow.cwnd = draft_cwnd(flow.cwnd, target, rs.newly_delivered, rs.delivered,
                               self.initial_cwnd, self.full_pipe.filled, self.state == PROBE_RTT)

    def _save_cwnd(self, in_recovery: bool) -> float:
        """§4.2.3.4 BBRSaveCwnd: the last window unmodulated by loss recovery or ProbeRTT."""
        cwnd = self.flow.cwnd
        if not in_recovery and self.state != PROBE_RTT:
            return cwnd
        return max(self.prior_cwnd, cwnd)

    # -- states ------------------------------------------------------------------------------
    def _enter_startup(self) -> None:
        self.state = STARTUP                          # §4.3.2.1 BBREnterStartup
        self.pacing_gain = self.high_gain
        self.cwnd_gain = self.high_gain

    def _enter_drain(self) -> None:
        self.state = DRAIN                            # §4.3.3 BBREnterDrain
        self.pacing_gain = self.drain_gain
        self.cwnd_gain = self.high_gain

    def _enter_probe_bw(self, now: float) -> None:
        self.state = PROBE_BW                         # §4.3.4.3 BBREnterProbeBW
        self.pacing_gain = 1.0
        self.cwnd_gain = self.probe_bw_cwnd_gain
        n = len(GAIN_CYCLE)
        # §4.3.4.2: start anywhere but the 3/4 phase (index 1)
        self.cycle_index = n - 1 - self.flow.sim.rng.randrange(n - 1)
        self._advance_cycle_phase(now)

    def _advance_cycle_phase(self, now: float) -> None:
        self.cycle_stamp = now                        # §4.3.4.3 BBRAdvanceCyclePhase
        self.cycle_index = (self.cycle_index + 1) % len(GAIN_CYCLE)
        self.pacing_gain = GAIN_CYCLE[self.cycle_index]

    def _enter_probe_rtt(self) -> None:
        self.state = PROBE_RTT                        # §4.3.5 BBREnterProbeRTT
        self.pacing_gain = 1.0
        self.cwnd_gain = 1.0
        self.probe_rtt_done_stamp = None

    def _handle_probe_rtt(self, now: float, rs: RateSample, inflight: int) -> None:
        flow = self.flow                              # §4.3.5 BBRHandleProbeRTT
        flow.app_limited_until = (rs.delivered + inflight) or 1    # ignore its low rates
        if self.probe_rtt_done_stamp is None and inflight <= MIN_PIPE_CWND:
            self.probe_rtt_done_stamp = now + self.probe_rtt_duration_s
            self.probe_rtt_round_done = False
            self.next_round_delivered = rs.delivered
        elif self.probe_rtt_done_stamp is not None:
            if self.round_start:
                self.probe_rtt_round_done = True
            if self.probe_rtt_round_done and now > self.probe_rtt_done_stamp:
                self.rtprop_stamp = now
                flow.cwnd = max(flow.cwnd, self.prior_cwnd)          # BBRRestoreCwnd
                if self.full_pipe.filled:                  # BBRExitProbeRTT
                    self._enter_probe_bw(now)
                else:
                    self._enter_startup()
