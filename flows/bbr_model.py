"""Pieces of BBR v1's path model (`flows.bbr.Bbr`), each a small object or function.

* `FullPipe`: Startup's full-pipe detection (draft §4.3.2.2), on both stacks.
* `BandwidthFilter`: BtlBw, the windowed maximum delivery rate (draft §4.1.1.5; Linux's
  minmax_running_max over bbr_bw_rtts rounds), on both stacks.
* `AckAggregation`: Linux's ACK-aggregation estimate (`bbr_update_ack_aggregation`,
  `bbr_extra_acked`, `bbr_ack_aggregation_cwnd` in net/ipv4/tcp_bbr.c), on the Linux stack.
* `quantization_budget` and `tso_segs_goal`: Linux's `bbr_quantization_budget` and
  `bbr_tso_segs_goal`, the packets Linux adds to every BBRInflight and target window.
* `draft_cwnd`: the classic stack's window update (draft §4.2.3.6).
* `linux_gain`: a gain in Linux's fixed point (BBR_UNIT = 256).

Windows in packets, rates in packets per second unless named ``_bps``, times in seconds.
"""
from __future__ import annotations

import math
from collections import deque

BBR_UNIT = 256                        # Linux BBR_SCALE = 8
EXTRA_ACKED_WIN_RTTS = 5              # bbr_extra_acked_win_rtts
EXTRA_ACKED_MAX_S = 0.1               # bbr_extra_acked_max_us
ACK_EPOCH_ACKED_RESET = 1 << 20       # bbr_ack_epoch_acked_reset_thresh
MIN_TSO_RATE_BPS = 1_200_000          # bbr_min_tso_rate
PACING_SHIFT = 10                     # sk_pacing_shift: about 1 ms of data per TSO burst
GSO_MAX_BYTES = 65536 - 1 - 320       # GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER
PACING_MARGIN = 0.99                  # bbr_pacing_margin_percent = 1
MIN_PIPE_CWND = 4.0                   # §4.2.3.3 BBRMinPipeCwnd (Linux bbr_cwnd_min_target), packets
FULL_BW_GROWTH = 1.25                 # §4.3.2.2: BtlBw still growing if up by 25 %
FULL_BW_ROUNDS = 3                    # ... else after this many rounds the pipe is full


def linux_gain(gain: float, round_up: bool = False) -> float:
    """`gain` in Linux's fixed point: floor(gain x 256) / 256, plus 1/256 when `round_up`
    (bbr_high_gain = BBR_UNIT x 2885 / 1000 + 1)."""
    return (math.floor(gain * BBR_UNIT) + (1 if round_up else 0)) / BBR_UNIT


class BandwidthFilter:
    """BtlBw: the maximum delivery rate over the last `rounds` packet-timed rounds.

    A monotonic deque, rounds ascending and rates descending, so its front is the exact maximum
    of the samples from rounds ``round_count - rounds + 1 .. round_count``. Application-limited
    samples enter only if they reach the current maximum (draft §4.1.1.4)."""

    __slots__ = ("window", "rounds")

    def __init__(self, rounds: int):
        self.window: deque[tuple[int, float]] = deque()
        self.rounds = rounds

    def clear(self) -> None:
        self.window.clear()

    def max_pps(self) -> float:
        """The windowed maximum, packets per second (0 before any sample)."""
        return self.window[0][1] if self.window else 0.0

    def update(self, round_count: int, rate: float, app_limited: bool) -> float:
        """Add a sample of round `round_count`; returns the new maximum."""
        window = self.window
        bw = window[0][1] if window else 0.0
        if rate >= bw:                               # app-limited or not
            window.clear()
            window.append((round_count, rate))
            return rate
        if not app_limited:
            while window[-1][1] <= rate:
                window.pop()
            window.append((round_count, rate))
            oldest = round_count - self.rounds
            while window[0][0] <= oldest:
                window.popleft()
            bw = window[0][1]
        return bw


class AckAggregation:
    """Linux's estimate of ACK aggregation, extra_acked (`bbr_update_ack_aggregation`).

    An epoch starts whenever the ACKed packets fall behind what BtlBw would have delivered since
    the epoch's start; extra_acked is how far they run ahead of it (at most the window), kept as
    the maximum over two slots of `EXTRA_ACKED_WIN_RTTS` rounds each (5 to 10 round trips).
    `cwnd_pkts` is what Linux adds to the target window once the pipe is full
    (`bbr_ack_aggregation_cwnd`): extra_acked, at most BtlBw x 100 ms."""

    __slots__ = ("epoch_start_s", "epoch_acked", "extra_acked", "win_rtts", "win_idx")

    def __init__(self, now: float = 0.0):
        self.extra_acked = [0, 0]
        self.win_rtts = 0
        self.win_idx = 0
        self.epoch_start_s = now
        self.epoch_acked = 0

    def reset_epoch(self, now: float) -> None:
        """A new sampling epoch (bbr_init; CA_EVENT_TX_START after idle)."""
        self.epoch_start_s = now
        self.epoch_acked = 0

    def update(self, now: float, bw_pps: float, acked: int, cwnd: float,
               round_start: bool) -> None:
        """One ACK that (S)ACKed `acked` packets."""
        if acked <= 0:
            return
        if round_start:
            win_rtts = self.win_rtts + 1                 # min(0x1F, win_rtts + 1)
            self.win_rtts = win_rtts if win_rtts < 0x1F else 0x1F
            if self.win_rtts >= EXTRA_ACKED_WIN_RTTS:
                self.win_rtts = 0
                self.win_idx = 1 - self.win_idx
                self.extra_acked[self.win_idx] = 0
        epoch_us = round((now - self.epoch_start_s) * 1e6)      # Linux's clock: microseconds
        expected = int(bw_pps * epoch_us / 1e6)
        if self.epoch_acked <= expected or self.epoch_acked + acked >= ACK_EPOCH_ACKED_RESET:
            self.epoch_acked = 0                     # ACKs not ahead of BtlBw: a new epoch
            self.epoch_start_s = now
            expected = 0
        epoch_acked = self.epoch_acked + acked           # min(0xFFFFF, ...)
        if epoch_acked > 0xFFFFF:
            epoch_acked = 0xFFFFF
        self.epoch_acked = epoch_acked
        extra = epoch_acked - expected                   # min(extra, int(cwnd))
        window = int(cwnd)
        if window < extra:
            extra = window
        if extra > self.extra_acked[self.win_idx]:
            self.extra_acked[self.win_idx] = extra

    def extra_acked_pkts(self) -> int:
        """bbr_extra_acked: the larger of the two slots."""
        return max(self.extra_acked)

    def cwnd_pkts(self, bw_pps: float, full_bw_reached: bool) -> int:
        """bbr_ack_aggregation_cwnd (bbr_extra_acked_gain = 1)."""
        if not full_bw_reached:
            return 0
        return min(self.extra_acked_pkts(), int(bw_pps * EXTRA_ACKED_MAX_S))


def tso_segs_goal(pacing_rate_bps: float | None, packet_bytes: int) -> int:
    """bbr_tso_segs_goal: the packets of one TSO burst at the pacing rate (about 1 ms of data,
    sk_pacing_shift = 10), at least bbr_min_tso_segs (1 below 1.2 Mbit/s, else 2), at most
    127. The transport sends single packets; Linux's window provisions for the bursts anyway."""
    rate_bytes_s = (pacing_rate_bps or 0.0) / 8.0
    min_segs = 1 if pacing_rate_bps is None or pacing_rate_bps < MIN_TSO_RATE_BPS else 2
    burst_bytes = min(int(rate_bytes_s) >> PACING_SHIFT, GSO_MAX_BYTES)
    return min(max(burst_bytes // packet_bytes, min_segs), 0x7F)


def quantization_budget(cwnd: int, tso_goal: int, probing: bool) -> int:
    """bbr_quantization_budget: room for three TSO bursts (sender qdisc, TSO engine, receiver
    GRO/delayed ACK), rounded up to an even number, plus 2 in ProbeBW's probing phase (cycle
    index 0) so that even a small BDP is exceeded."""
    cwnd += 3 * tso_goal
    cwnd = (cwnd + 1) & ~1
    if probing:
        cwnd += 2
    return cwnd


class FullPipe:
    """Whether Startup filled the pipe (draft §4.3.2.2 BBRCheckFullPipe, Linux
    bbr_check_full_bw_reached): at the start of `FULL_BW_ROUNDS` rounds in a row (samples not
    application-limited) BtlBw grew less than 25 % over the baseline `full_bw`."""

    __slots__ = ("full_bw", "count", "filled")

    def __init__(self) -> None:
        self.full_bw = 0.0       # the baseline BtlBw, packets per second
        self.count = 0           # rounds in a row without 25 % growth
        self.filled = False

    def check(self, bw: float, round_start: bool, app_limited: bool) -> None:
        if self.filled or not round_start or app_limited:
            return
        if bw >= self.full_bw * FULL_BW_GROWTH:
            self.full_bw = bw
            self.count = 0
            return
        self.count += 1
        if self.count >= FULL_BW_ROUNDS:
            self.filled = True


def draft_cwnd(cwnd: float, target: float, newly_delivered: int, delivered: int,
               initial_cwnd: float, filled_pipe: bool, probe_rtt: bool) -> float:
    """The classic stack's window (draft §4.2.3.6 BBRSetCwnd, without the optional recovery
    modulation): once the pipe is full min(cwnd + packets delivered, target), before that
    + packets delivered while below the target (or while fewer than InitialCwnd were
    delivered); at least BBRMinPipeCwnd (§4.2.3.3), exactly that in ProbeRTT (§4.2.3.5)."""
    if filled_pipe:
        cwnd += newly_delivered
        if cwnd > target:
            cwnd = target
    elif cwnd < target or delivered < initial_cwnd:
        cwnd += newly_delivered
    if cwnd < MIN_PIPE_CWND or probe_rtt:
        cwnd = MIN_PIPE_CWND
    return cwnd
