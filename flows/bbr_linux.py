"""What Linux's tcp_bbr adds to BBR v1's window (net/ipv4/tcp_bbr.c), for flows on the Linux
stack: `flows.bbr.Bbr` hands these steps to a `LinuxBbr` when ``flow.stack == "linux"``.

* `init_pacing_from_rtt`: bbr_init_pacing_rate_from_rtt at the first RTT sample;
* `window`: bbr_inflight / the target of bbr_set_cwnd: ceil(gain x BtlBw x RTprop) (bbr_bdp,
  InitialCwnd without an RTT sample), plus the ACK-aggregation estimate for the target, then
  bbr_quantization_budget (flows/bbr_model.py);
* `on_sample`: bbr_update_ack_aggregation on every delivering ACK;
* `in_net`: bbr_packets_in_net_at_edt for the probing phase (the packets in flight and, while
  the pacing gain is above 1, the TSO burst about to leave);
* `cwnd`: bbr_set_cwnd with bbr_set_cwnd_to_recover_or_restore.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from flows.bbr_model import (
    EXTRA_ACKED_MAX_S,
    MIN_PIPE_CWND,
    PACING_MARGIN,
    AckAggregation,
    quantization_budget,
    tso_segs_goal,
)
from flows.congestion import LOSS, OPEN, RECOVERY

if TYPE_CHECKING:
    from flows.bbr import Bbr
    from flows.rate_sampler import RateSample

MIN_CWND_TARGET = int(MIN_PIPE_CWND)     # bbr_cwnd_min_target, as the integer window here counts


class LinuxBbr:
    """Linux tcp_bbr's window steps for one `Bbr` (see the module docstring)."""

    __slots__ = ("bbr", "aggregation", "prev_state", "conservation", "has_seen_rtt",
                 "goal_rate_bps", "goal_segs")

    def __init__(self, bbr: Bbr):
        self.bbr = bbr
        self.aggregation = AckAggregation()
        self.prev_state: str = OPEN          # bbr->prev_ca_state
        self.conservation = False            # bbr->packet_conservation
        self.has_seen_rtt = False            # bbr->has_seen_rtt
        self.goal_rate_bps: float | None = -1.0   # the pacing rate `goal_segs` was computed at
        self.goal_segs = 0

    def reset(self, now: float) -> None:
        """bbr_init's ACK-aggregation epoch."""
        self.aggregation = AckAggregation(now)
        self.has_seen_rtt = bool(self.bbr.flow.srtt)

    def init_pacing_from_rtt(self) -> None:
        """bbr_set_pacing_rate's first step: at the first sample with an SRTT (Linux knows one
        from the handshake; here the flow starts without), the pacing rate starts again from
        high_gain x cwnd / SRTT (bbr_init_pacing_rate_from_rtt)."""
        bbr = self.bbr
        flow = bbr.flow
        if self.has_seen_rtt or not flow.srtt:
            return
        self.has_seen_rtt = True
        bbr.pacing_rate_pps = bbr.high_gain * int(flow.cwnd) / flow.srtt
        flow.pacing_rate_bps = bbr.pacing_rate_pps * flow.packet_bytes * 8.0 * PACING_MARGIN

    def tso_goal(self) -> int:
        """bbr_tso_segs_goal at the flow's pacing rate (recomputed when the rate changes)."""
        flow = self.bbr.flow
        rate_bps = flow.pacing_rate_bps
        if rate_bps != self.goal_rate_bps:
            self.goal_rate_bps = rate_bps
            self.goal_segs = tso_segs_goal(rate_bps, flow.packet_bytes)
        return self.goal_segs

    def window(self, bw: float, gain: float, extra_pkts: int = 0) -> float:
        """bbr_bdp(bw, gain) + `extra_pkts`, then bbr_quantization_budget, packets."""
        bbr = self.bbr
        if bbr.min_rtt_s == math.inf:
            bdp = int(bbr.initial_cwnd)                  # TCP_INIT_CWND: no RTT sample yet
        else:
            bdp = math.ceil(gain * bw * bbr.min_rtt_s - 1e-9)
        probing = bbr.state == "probe_bw" and bbr.cycle_index == 0
        return float(quantization_budget(bdp + extra_pkts, self.tso_goal(), probing))

    def target(self) -> float:
        """bbr_set_cwnd's target: the window at cwnd_gain with extra_acked
        (bbr_ack_aggregation_cwnd: once the pipe is full, at most BtlBw x 100 ms). The steps of
        `window`, `AckAggregation.cwnd_pkts` and `quantization_budget` in one function: it runs
        on every ACK."""
        bbr = self.bbr
        filt = bbr.bw_filter.window
        bw = filt[0][1] if filt else 0.0             # BandwidthFilter.max_pps
        extra = 0
        if bbr.full_pipe.filled:                     # AckAggregation.cwnd_pkts
            first, second = self.aggregation.extra_acked     # max(extra_acked)
            extra = second if second > first else first
            cap = int(bw * EXTRA_ACKED_MAX_S)
            if extra > cap:
                extra = cap
        min_rtt = bbr.min_rtt_s
        if min_rtt == math.inf:
            bdp = int(bbr.initial_cwnd)              # TCP_INIT_CWND: no RTT sample yet
        else:
            bdp = math.ceil(bbr.cwnd_gain * bw * min_rtt - 1e-9)
        rate_bps = bbr.flow.pacing_rate_bps
        goal = self.goal_segs if rate_bps == self.goal_rate_bps else self.tso_goal()
        cwnd = (bdp + extra + 3 * goal + 1) & ~1     # quantization_budget
        if bbr.state == "probe_bw" and bbr.cycle_index == 0:
            cwnd += 2
        return float(cwnd)

    def on_sample(self, now: float, bw: float, acked: int, round_start: bool) -> None:
        """bbr_update_bw's round start ends packet conservation; bbr_update_ack_aggregation."""
        if round_start:
            self.conservation = False
        self.aggregation.update(now, bw, acked, self.bbr.flow.cwnd, round_start)

    def in_net(self) -> float:
        """bbr_packets_in_net_at_edt while probing (pacing_gain > 1)."""
        return self.bbr.flow.pipe() + self.tso_goal()

    def cwnd(self, rs: RateSample, lost: int) -> float:
        """bbr_set_cwnd: the newly lost packets come off the window; the first round of fast
        recovery keeps packet conservation (at least the packets in flight + those ACKed) and
        starts a round; leaving recovery restores the saved window; else the window moves
        towards `target` by the packets ACKed (cut to it once the pipe is full), at least 4;
        at most 4 in ProbeRTT."""
        bbr = self.bbr
        flow = bbr.flow
        cwnd = int(flow.cwnd)
        acked = rs.newly_delivered
        if acked > 0:
            if lost > 0:
                cwnd -= lost                         # max(cwnd - lost, 1)
                if cwnd < 1:
                    cwnd = 1
            state, prev = flow.state, self.prev_state
            if state == RECOVERY and prev != RECOVERY:
                self.conservation = True
                bbr.next_round_delivered = rs.delivered   # the round starts now
                cwnd = flow.pipe() + acked
            elif prev in (RECOVERY, LOSS) and state not in (RECOVERY, LOSS):
                cwnd = max(cwnd, int(bbr.prior_cwnd))
                self.conservation = False
            self.prev_state = state
            if self.conservation:
                cwnd = max(cwnd, flow.pipe() + acked)
            else:
                target = self.target()
                if bbr.full_pipe.filled:
                    cwnd += acked                    # int(min(cwnd + acked, target))
                    if target < cwnd:
                        cwnd = int(target)
                elif cwnd < target or rs.delivered < bbr.initial_cwnd:
                    cwnd += acked
                if cwnd < MIN_CWND_TARGET:           # max(cwnd, MIN_CWND_TARGET)
                    cwnd = MIN_CWND_TARGET
        if bbr.state == "probe_rtt":
            cwnd = min(cwnd, MIN_CWND_TARGET)
        return float(cwnd)
