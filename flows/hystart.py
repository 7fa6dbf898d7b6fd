"""HyStart++ (RFC 9406, "HyStart++: Modified Slow Start for TCP", 2023), the classic stack's
CUBIC slow start, and the 2008 HyStart Linux's tcp_cubic runs (`HyStartLinux`, below).

Slow start doubles the window every round trip until a loss; on a path with a large
bandwidth-delay product and a deep buffer the last doubling overshoots by up to a window and ends
in a burst of losses. HyStart++ watches the minimum RTT of each round: when it has risen by a
threshold over the previous round's, the queue is building, and slow start gives way to
Conservative Slow Start (CSS), which grows four times slower for up to five rounds and then hands
over to congestion avoidance -- before the first loss. Section numbers are RFC 9406's; windows
are in packets.

* §4.2 rounds: a round ends when the cumulative ACK reaches ``window_end``, the next packet to
  send when the round began (everything sent before the round is acknowledged). At the start
  of each round ``lastRoundMinRTT = currentRoundMinRTT``, ``currentRoundMinRTT = inf``,
  ``rttSampleCount = 0``.
* §4.2 in slow start: each RTT sample lowers ``currentRoundMinRTT`` and counts. Once
  ``rttSampleCount >= N_RTT_SAMPLE`` (8) and both minima are known,
  ``RttThresh = clamp(lastRoundMinRTT / 8, 4 ms, 16 ms)``; if ``currentRoundMinRTT >=
  lastRoundMinRTT + RttThresh`` CSS begins, with ``cssBaselineMinRtt = currentRoundMinRTT``.
* §4.2 in CSS: the window grows by the slow-start increase divided by CSS_GROWTH_DIVISOR (4).
  On every ACK, once the round has N_RTT_SAMPLE samples, a minimum RTT below the baseline means
  the exit was spurious: back to slow start at once (not at the round's end). After
  CSS_ROUNDS (5) rounds: congestion avoidance (ssthresh = cwnd).
* §4.3: only the initial slow start (ssthresh still unbounded) uses HyStart++; a loss or an ECN
  reaction sets ssthresh and ends it.

The limit L on the increase per ACK is the transport's (RFC 5681's one packet, RFC 3465's two
with delayed ACKs); the RFC's L = 8 for unpaced senders only matters for stretch ACKs.
"""
from __future__ import annotations

import math

MIN_RTT_THRESH_S = 0.004     # §4.3
MAX_RTT_THRESH_S = 0.016
MIN_RTT_DIVISOR = 8
N_RTT_SAMPLE = 8
CSS_GROWTH_DIVISOR = 4
CSS_ROUNDS = 5


class HyStart:
    """The HyStart++ state of one flow; its owner feeds it RTT samples and ACKs."""

    __slots__ = ("window_end", "last_round_min_rtt", "current_round_min_rtt", "rtt_sample_count",
                 "in_css", "css_baseline_min_rtt", "css_rounds", "exited_s")

    def __init__(self) -> None:
        self.window_end = 0
        self.last_round_min_rtt = math.inf
        self.current_round_min_rtt = math.inf
        self.rtt_sample_count = 0
        self.in_css = False
        self.css_baseline_min_rtt = math.inf
        self.css_rounds = 0
        self.exited_s: float | None = None     # when slow start gave way to CSS (first time)

    def on_rtt(self, rtt_s: float) -> None:
        # §4.2: keep track of the minimum observed RTT of the round
        if rtt_s < self.current_round_min_rtt:
            self.current_round_min_rtt = rtt_s
        self.rtt_sample_count += 1

    def on_ack(self, snd_una: int, snd_nxt: int, now: float) -> bool:
        """Before the window grows on an ACK in the initial slow start: advance rounds, check
        the RTT. Returns True when congestion avoidance should begin now (ssthresh = cwnd)."""
        if snd_una >= self.window_end:
            # §4.2: a new round
            if self.in_css:
                if (self.rtt_sample_count >= N_RTT_SAMPLE
                        and self.current_round_min_rtt < self.css_baseline_min_rtt):
                    self.in_css = False          # §4.2: spurious; resume slow start
                    self.css_baseline_min_rtt = math.inf
                else:
                    self.css_rounds += 1
                    if self.css_rounds >= CSS_ROUNDS:
                        return True              # §4.2: enter congestion avoidance
            self.window_end = snd_nxt
            self.last_round_min_rtt = self.current_round_min_rtt
            self.current_round_min_rtt = math.inf
            self.rtt_sample_count = 0
        elif self.in_css:
            # §4.2, on every ACK in CSS: a round's minimum RTT (over at least N_RTT_SAMPLE
            # samples) below the baseline means the exit was spurious: resume slow start now
            if (self.rtt_sample_count >= N_RTT_SAMPLE
                    and self.current_round_min_rtt < self.css_baseline_min_rtt):
                self.in_css = False
                self.css_baseline_min_rtt = math.inf
        elif (self.rtt_sample_count >= N_RTT_SAMPLE
              and self.current_round_min_rtt != math.inf and self.last_round_min_rtt != math.inf):
            # §4.2: RttThresh = clamp(lastRoundMinRTT / MIN_RTT_DIVISOR, MIN, MAX)
            thresh = min(max(self.last_round_min_rtt / MIN_RTT_DIVISOR, MIN_RTT_THRESH_S),
                         MAX_RTT_THRESH_S)
            if self.current_round_min_rtt >= self.last_round_min_rtt + thresh:
                self.in_css = True               # §4.2: exit slow start, enter CSS
                self.css_baseline_min_rtt = self.current_round_min_rtt
                self.css_rounds = 0
                if self.exited_s is None:
                    self.exited_s = now
        return False

    def growth_divisor(self) -> int:
        """Divide slow start's increase by this (§4.2: CSS_GROWTH_DIVISOR in CSS)."""
        return CSS_GROWTH_DIVISOR if self.in_css else 1


# -- Linux's HyStart (Ha and Rhee, 2008; net/ipv4/tcp_cubic.c) ---------------------------------
LINUX_LOW_WINDOW = 16              # hystart_low_window: no detection below this window
LINUX_ACK_DELTA_S = 0.002          # hystart_ack_delta_us: ACKs closer than this form a train
LINUX_MIN_SAMPLES = 8              # HYSTART_MIN_SAMPLES
LINUX_GSO_MAX_BYTES = 65536        # sk_gso_max_size (GSO_LEGACY_MAX_SIZE), for the ACK delay


class HyStartLinux:
    """The 2008 HyStart as Linux's tcp_cubic runs it (`hystart_update`, `bictcp_hystart_reset`).

    Each round starts when the cumulative ACK passes ``end_seq`` (the next packet to send when
    the previous round started). From a window of `LINUX_LOW_WINDOW` packets on, either signal
    ends slow start at once (ssthresh = cwnd: straight to congestion avoidance, no conservative
    phase):

    * ACK train: ACKs arriving within 2 ms of each other (hystart_ack_delta_us) extend the
      train; once it spans more than half of (delay_min + the ACK delay allowance)
      (hystart_ack_delay: min(1 ms, 4 x 64 kB / pacing rate), Linux's internal pacing rate
      being 2 cwnd MSS / SRTT in slow start; halved because the flow is not paced);
    * delay increase: after `LINUX_MIN_SAMPLES` RTT samples of the round, their minimum exceeds
      delay_min + clamp(delay_min / 8, 4 ms, 16 ms) (HYSTART_DELAY_THRESH).

    delay_min is CUBIC's minimum RTT (`LinuxCubic.delay_min_s`), passed in."""

    __slots__ = ("round_start_s", "last_ack_s", "end_seq", "curr_rtt_s", "sample_cnt", "found",
                 "exit_reason")

    def __init__(self) -> None:
        self.round_start_s = 0.0
        self.last_ack_s = 0.0
        self.end_seq = 0
        self.curr_rtt_s = math.inf
        self.sample_cnt = 0
        self.found = False
        self.exit_reason: str | None = None    # "ack_train" or "delay" once found

    def reset(self, now: float, snd_nxt: int) -> None:
        """bictcp_hystart_reset: a new round."""
        self.round_start_s = self.last_ack_s = now
        self.end_seq = snd_nxt
        self.curr_rtt_s = math.inf
        self.sample_cnt = 0

    def update(self, now: float, delay_s: float, delay_min_s: float, cwnd: float, snd_una: int,
               snd_nxt: int, srtt_s: float | None, packet_bytes: int) -> bool:
        """hystart_update with an RTT sample: True when slow start should end now."""
        if snd_una > self.end_seq:                   # after(snd_una, end_seq): a new round
            self.reset(now, snd_nxt)
        if cwnd < LINUX_LOW_WINDOW:
            return False
        if now - self.last_ack_s <= LINUX_ACK_DELTA_S:        # HYSTART_ACK_TRAIN
            self.last_ack_s = now
            ack_delay = 0.0
            if srtt_s:
                rate_bytes_s = 2.0 * cwnd * packet_bytes / srtt_s   # tcp_update_pacing_rate
                ack_delay = min(0.001, LINUX_GSO_MAX_BYTES * 4 / rate_bytes_s)
            threshold = (delay_min_s + ack_delay) / 2.0    # SK_PACING_NONE: halved
            if now - self.round_start_s > threshold:
                self.found = True
                self.exit_reason = "ack_train"
                return True
        if delay_s < self.curr_rtt_s:                # HYSTART_DELAY
            self.curr_rtt_s = delay_s
        if self.sample_cnt < LINUX_MIN_SAMPLES:
            self.sample_cnt += 1
        elif self.curr_rtt_s > delay_min_s + min(max(delay_min_s / 8.0, MIN_RTT_THRESH_S),
                                                 MAX_RTT_THRESH_S):
            self.found = True
            self.exit_reason = "delay"
            return True
        return False
