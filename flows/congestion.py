"""The congestion-control interface: the small set of hooks an algorithm overrides.

The transport (`flows.transport.Flow`, its `flows.sender.Sender`) owns sequence numbers, ACK
processing, loss detection, the retransmission timer and retransmission, and the window during
loss recovery (`flows.recovery`: inflation, deflation, the loss window). It keeps the window
state (`flow.cwnd`, `flow.ssthresh`, both in packets) and calls these hooks, in the spirit of
Linux's `tcp_congestion_ops`:

==================  ==============================================================================
hook                when the transport calls it
==================  ==============================================================================
``init()``          once, when the flow starts (after the transport set the initial window)
``ssthresh()``      on a loss reaction (fast retransmit or first timeout of an episode), if
                    ``loss_based``: returns the new slow-start threshold
``on_ack(n)``       an ACK advanced the cumulative ACK by ``n`` packets while not in fast
                    recovery: grow the window
``on_rtt(rtt_s)``   a valid RTT sample (Karn's rule applied)
``on_state(old,     the transport moved between OPEN, RECOVERY and LOSS; told before the
new)``              transport sets the window of the new state (a notification: the window
                    during recovery is the transport's)
``restore_cwnd()``  a loss episode ended, if not ``loss_based``: returns the window to go on with
``tick()``          every ``tick_interval_s`` seconds, if the algorithm sets it
``on_rate_sample``  an ACK delivered packets and the algorithm set ``wants_rate_samples``: a
``(rs)``            delivery-rate sample (BBR's input)
``ecn_ack(n, ece)`` (ECN flows only) every ACK: it acknowledged ``n`` new packets, carried ECE or not
``ecn_ssthresh()``  (ECN flows only) an ECE to react to, at most once per window, if ``loss_based``:
                    returns the new ssthresh; the transport sets the window to it (default: as on
                    a loss, ``ssthresh()``)
``cwnd_event(ev)``  a `CaEvent` (Linux's ``tcp_ca_event``): ``TX_START`` first send after idle,
                    ``CWND_RESTART``, ``ENTER_CWR`` / ``COMPLETE_CWR`` (an ECN reduction began /
                    ended), ``LOSS`` (a retransmission timeout)
``undo_cwnd()``     the transport found a reduction spurious and undoes it: returns the window to
                    go back to (default: Linux's ``tcp_reno_undo_cwnd``, max(cwnd, prior_cwnd))
``report()``        named internal state for the outputs (flows.csv, summary.json), e.g. DCTCP's
                    ``{"alpha": ...}``; default ``{}``. Asked also before ``init()``: the same
                    names every time, NaN for a value not known yet
==================  ==============================================================================

Algorithms may also pace: setting ``flow.pacing_rate_bps`` makes the transport release packets
no faster than that rate.

Facts an algorithm declares (class attributes; the transport, the loader and `theory` read them):

* ``name``; ``PARAMETERS`` (parameter -> default): the algorithm's constants live there and
  nowhere else (``theory`` reads e.g. ``Cubic.PARAMETERS["C"]``, ``Cubic.PARAMETERS["beta"]``,
  ``Bbr.PARAMETERS["cwnd_gain"]``, ``Bbr.PARAMETERS["high_gain"]``, ``Bbr.GAIN_CYCLE``,
  ``Dctcp.PARAMETERS["g"]``, ``Vegas.PARAMETERS["alpha"]`` / ``["beta"]``,
  ``Fast.PARAMETERS["alpha"]``; a flow's own values are its merged ``params``);
* ``theory_model``: which model ``--check`` applies to the flow: ``"loss"`` (Padhye's Reno
  response), ``"cubic"`` (RFC 9438's), ``"delay"`` (the fluid model of delay-based flows),
  ``"rate"`` (BBR's), ``"dctcp"``, or None (not checked);
* ``recovery``: a `RecoveryMode`, the transport's loss recovery (``RENO`` RFC 5681, ``NEWRENO``
  RFC 6582, ``SACK`` RFC 6675); ``fast_recovery`` (False: a third duplicate ACK is a timeout,
  Tahoe); ``loss_based``; ``wants_rate_samples``;
* ``ecn_echo``: an `EcnEcho`, how the receiver echoes CE marks when the flow uses ECN
  (``CLASSIC``: RFC 3168, ECE until CWR; ``DCTCP``: RFC 8257 §3.2, the marks of the packets each
  ACK covers); ``requires_ecn``: the algorithm cannot run without ECN (the loader refuses a flow
  without ``"ecn": true``; Linux's ``TCP_CONG_NEEDS_ECN``). These two replace the former
  ``ecn_mode``, which meant both (a class that still sets ``ecn_mode = "dctcp"`` gets both).

States are `CaState` members (Linux's ``tcp_ca_state`` without Disorder); they are ``str``
enums, so ``flow.state == "recovery"`` keeps working, and the names OPEN, CWR, RECOVERY and LOSS
below are the members.

``flow.stack`` is ``"classic"`` or ``"linux"`` (flows/linux_stack.py): the base class reads it
once, when the algorithm is built (``self.linux``; the transport sets it before), and the
built-ins run Linux's variant on the Linux stack (Linux's integer window arithmetic, tcp_cubic's
HyStart and Reno-friendly rule, tcp_bbr's extra_acked and quantization budget, tcp_dctcp's alpha
and CWR reductions).

Registration (`check_algorithm_class`, used by ``flows.register_algorithm``) refuses a class
that overrides none of the growth hooks (`GROWTH_HOOKS`: its window would never grow) and a
public name that is a near miss of the interface's (``on_acks``: "did you mean on_ack?"), as
Linux's ``tcp_validate_congestion_control`` refuses an incomplete ops table. Subclasses need not
declare ``__slots__``: without them instances keep a ``__dict__`` and any attribute works.

What an algorithm may read and set on its flow is the `FlowView` protocol below: the transport's
`flows.sender.Sender` implements it, and the built-in algorithms are type-checked against it
(mypy). It is the interface documented for plugin authors (docs/algorithms.md, "The algorithm
interface").
"""
from __future__ import annotations

import math
import sys
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    import random

    from flows.rate_sampler import RateSample


class _StrEnum(str, Enum):
    """A str-valued enum that prints, formats and compares as its value (so traces, outputs and
    plain string comparisons are unchanged)."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, format_spec: str) -> str:
        return str.__format__(self, format_spec)


class CaState(_StrEnum):
    """The transport's congestion state (Linux's ``tcp_ca_state``, without Disorder)."""

    OPEN = "open"            # no loss being repaired
    CWR = "cwr"              # reducing the window after an ECN echo (Linux's TCP_CA_CWR)
    RECOVERY = "recovery"    # fast recovery after a fast retransmit
    LOSS = "loss"            # after a retransmission timeout (or Tahoe's fast retransmit)


OPEN = CaState.OPEN
CWR = CaState.CWR
RECOVERY = CaState.RECOVERY
LOSS = CaState.LOSS


class CaEvent(_StrEnum):
    """What `CongestionControl.cwnd_event` is told (Linux's ``tcp_ca_event``)."""

    TX_START = "tx_start"            # the first send after an idle period
    CWND_RESTART = "cwnd_restart"    # the window restarts after idle (RFC 5681 §4.1)
    ENTER_CWR = "enter_cwr"          # an ECN-triggered reduction begins (CaState.CWR)
    COMPLETE_CWR = "complete_cwr"    # ... and ends
    LOSS = "loss"                    # a retransmission timeout


class RecoveryMode(_StrEnum):
    """The transport's loss recovery an algorithm asks for (`CongestionControl.recovery`)."""

    RENO = "reno"            # RFC 5681 fast recovery (window inflation)
    NEWRENO = "newreno"      # RFC 6582 (partial ACKs)
    SACK = "sack"            # RFC 6675 conservative SACK recovery


class EcnEcho(_StrEnum):
    """How the receiver echoes CE marks to an ECN flow (`CongestionControl.ecn_echo`)."""

    CLASSIC = "classic"      # RFC 3168 §6.1.3: ECE on every ACK until the sender's CWR
    DCTCP = "dctcp"          # RFC 8257 §3.2: each ACK echoes the marks of the packets it covers


# Hooks that move the window or the rate: an algorithm must override at least one
# (`check_algorithm_class`).
GROWTH_HOOKS = ("on_ack", "on_rate_sample", "on_rtt", "tick")


class Clock(Protocol):
    """The simulator as an algorithm sees it: the time and the run's random generator."""

    @property
    def now(self) -> float: ...              # simulated time, s

    @property
    def rng(self) -> random.Random: ...      # the run's generator (draw only from it)


class FlowView(Protocol):
    """What a congestion-control algorithm may read and set on its flow (``self.flow``).

    Windows are in packets (floats), times in seconds. Set by the algorithm: `cwnd`, `ssthresh`
    (outside loss recovery; during it the transport owns the window), `pacing_rate_bps` (None:
    no pacing), `app_limited_until` (rate samples of packets sent before this many were delivered
    are marked application-limited). Everything else is read-only.
    """

    cwnd: float                      # congestion window, packets
    ssthresh: float                  # slow-start threshold, packets (inf: none)
    pacing_rate_bps: float | None
    app_limited_until: int

    @property
    def sim(self) -> Clock: ...
    @property
    def state(self) -> str: ...      # a CaState: OPEN, CWR, RECOVERY or LOSS
    @property
    def packet_bytes(self) -> int: ...   # the data packet size (the model's MSS), bytes
    @property
    def snd_una(self) -> int: ...    # first unacknowledged packet
    @property
    def snd_nxt(self) -> int: ...    # next packet to send
    @property
    def srtt_s(self) -> float | None: ...   # smoothed RTT (RFC 6298), s, None before a sample
    @property
    def min_rtt_s(self) -> float: ...  # smallest valid RTT sample, s (inf before one)
    @property
    def srtt(self) -> float | None: ...   # srtt_s's older name (plugins written before it)
    @property
    def min_rtt(self) -> float: ...  # min_rtt_s's older name
    @property
    def delivered(self) -> int: ...  # packets delivered (counted with wants_rate_samples)
    @property
    def retransmissions(self) -> int: ...    # packets resent so far
    @property
    def is_cwnd_limited(self) -> bool: ...   # the window, not the application or the pacer,
                                             # limited the last sends (Linux tcp_is_cwnd_limited)
    @property
    def prior_cwnd(self) -> float: ...       # the window before the current reduction began
                                             # (Linux tp->prior_cwnd), what undo goes back to
    @property
    def stack(self) -> str: ...              # the transport stack: "classic" or "linux"

    def flight_size(self) -> int:
        """Packets sent and not yet cumulatively acknowledged (RFC 5681 FlightSize)."""
        ...

    def pipe(self) -> int:
        """RFC 6675 estimate of the packets in flight (SACK recovery's pipe)."""
        ...


class CongestionControl:
    """Base class of every congestion-control algorithm.

    Subclasses set `name`, `PARAMETERS` (parameter name -> default) and override hooks. The
    defaults do nothing, except `ssthresh()`: half the flight size (at most the window), at least
    two packets.
    """

    name: ClassVar[str] = "base"
    PARAMETERS: ClassVar[dict[str, float]] = {}
    theory_model: ClassVar[str | None] = None   # --check's model: "loss", "cubic", "delay",
                                                   # "rate", "dctcp"; None: not checked
    has_slow_start: ClassVar[bool] = True   # --check: a flow must leave slow start before a
                                            # steady state exists (FAST: False, no slow start)
    fast_recovery: ClassVar[bool] = True   # third duplicate ACK: RECOVERY (False: LOSS, Tahoe)
    recovery: ClassVar[RecoveryMode] = RecoveryMode.RENO   # the transport's loss recovery
    loss_based: ClassVar[bool] = True      # False: losses lower neither ssthresh nor the window
    wants_rate_samples: ClassVar[bool] = False   # True: on_rate_sample(rs) on delivering ACKs
    tick_interval_s: float | None = None      # period of tick(), or None
    ecn_echo: ClassVar[EcnEcho] = EcnEcho.CLASSIC   # the receiver's echo when the flow uses ECN
    requires_ecn: ClassVar[bool] = False   # True: the flow must use ECN (TCP_CONG_NEEDS_ECN)
    min_window_pkts: ClassVar[float] = 1.0   # the window once ACKs come back is at least this
                                             # (BBR: BBRMinPipeCwnd); a workload's empty-network
                                             # FCT grows its slow start from it

    __slots__ = ("abc_limit", "flow", "linux", "params", "cwnd_cnt", "cnt_cwnd")
    # whether the class keeps the base class's slow_start and congestion_avoidance, which
    # standard_growth then runs inline (set for every subclass by __init_subclass__)
    _standard_steps: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._standard_steps = (cls.slow_start is CongestionControl.slow_start
                               and cls.congestion_avoidance is CongestionControl.congestion_avoidance)
        # the former single field ecn_mode meant both: a class body that still sets it to
        # "dctcp" (an older plugin) gets the DCTCP echo and requires ECN
        if cls.__dict__.get("ecn_mode") == "dctcp" and "ecn_echo" not in cls.__dict__:
            cls.ecn_echo = EcnEcho.DCTCP
            cls.requires_ecn = True

    def __init__(self, flow: FlowView, params: dict | None = None):
        self.flow = flow
        self.abc_limit = 1.0     # RFC 3465 L, packets (the transport sets 2 with delayed ACKs)
        # the flow's stack, read once: the Sender sets `stack` before it builds its algorithm
        self.linux = getattr(flow, "stack", "classic") == "linux"
        self.cwnd_cnt = 0        # Linux tp->snd_cwnd_cnt: ACKed packets towards the next +1
        self.cnt_cwnd = 0        # the window cwnd_cnt was counted at (a smaller one resets it)
        merged = dict(self.PARAMETERS)
        if params:
            merged.update(params)
        self.params = merged

    @classmethod
    def param_problem(cls, name: str, value) -> str | None:
        """Why `value` is not acceptable for parameter `name` (None if it is)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return "expected a number"
        if value <= 0:
            return "expected a positive number"
        return None

    @classmethod
    def params_problem(cls, params: dict) -> str | None:
        """Why a complete, merged parameter set is not acceptable (None if it is); for rules
        that tie parameters together."""
        return None

    # -- hooks -------------------------------------------------------------------------------
    def init(self) -> None:
        pass

    def ssthresh(self) -> float:
        """The slow-start threshold after a loss: FlightSize / 2, at least 2 (RFC 5681 (4)),
        where FlightSize counts at most the packets the window lets out (cwnd rounded up). The
        RFC's value is a bound ("no more than"); 4.3BSD-Reno and Fall and Floyd's Reno halve
        the window. The two differ only when more is in flight than the window allows, after
        a reduction: Reno's exit at a partial ACK leaves the inflated window's packets in
        flight, and a second loss then halves the window again instead of raising ssthresh
        above it. On the Linux stack tcp_reno_ssthresh: max(cwnd >> 1, 2), of the integer
        window."""
        flow = self.flow
        if self.linux:
            return float(max(int(flow.cwnd) >> 1, 2))
        flight = flow.flight_size()
        window = math.ceil(flow.cwnd)      # (the most a window of cwnd keeps in flight)
        return max((flight if flight <= window else window) / 2.0, 2.0)

    def on_ack(self, acked_pkts: float) -> None:
        pass

    def on_rtt(self, rtt_s: float) -> None:
        pass

    def on_state(self, old: str, new: str) -> None:
        pass

    def restore_cwnd(self) -> float:
        """The window when a loss episode ends (asked only if not `loss_based`)."""
        return self.flow.cwnd

    def tick(self) -> None:
        pass

    def on_rate_sample(self, rs: RateSample) -> None:
        """A delivery-rate sample (`flows.transport.RateSample`); only if wants_rate_samples."""

    def ecn_ack(self, acked_pkts: int, ece: bool) -> None:
        """An ACK of an ECN flow: `acked_pkts` newly acknowledged, `ece` its echo."""

    def ecn_ssthresh(self) -> float:
        """The slow-start threshold on an ECN reaction (RFC 3168 §6.1.2: as on a loss)."""
        return self.ssthresh()

    def cwnd_event(self, event: CaEvent) -> None:
        """A congestion event (`CaEvent`; Linux's ``cwnd_event``)."""

    def undo_cwnd(self) -> float:
        """The window to go back to when the transport undoes a spurious reduction (Linux's
        ``tcp_reno_undo_cwnd``: the larger of the window and the one before the reduction)."""
        flow = self.flow
        return max(flow.cwnd, flow.prior_cwnd)

    def report(self) -> dict[str, float]:
        """Named internal state for the outputs (one flows.csv column per name, an object in
        summary.json): the same names on every call, also before `init()`; NaN for a value not
        known yet. The base class has none."""
        return {}

    # -- helpers for window-based algorithms ------------------------------------------------
    def slow_start(self, acked_pkts: float) -> float:
        """Grow the window by one packet per ACK, at most by the packets it acknowledged
        (RFC 5681 eq. 2: cwnd += min(N, SMSS)), up to ssthresh; return the ACKed packets left
        for congestion avoidance once ssthresh is reached. With delayed ACKs the transport sets
        `abc_limit` to 2 (RFC 3465 appropriate byte counting, L = 2 SMSS)."""
        flow = self.flow
        before = flow.cwnd
        grown = min(before + min(acked_pkts, self.abc_limit), flow.ssthresh)
        if grown <= before:
            return acked_pkts
        flow.cwnd = grown
        return acked_pkts - (grown - before) if grown >= flow.ssthresh else 0.0

    def congestion_avoidance(self, acked_pkts: float) -> None:
        """Additive increase: one packet per window's worth of ACKs."""
        flow = self.flow
        flow.cwnd += acked_pkts / flow.cwnd

    # -- Linux's integer window arithmetic (net/ipv4/tcp_cong.c) ---------------------------
    def linux_slow_start(self, acked: int) -> int:
        """Linux tcp_slow_start: cwnd = min(cwnd + acked, ssthresh) on the integer window (no
        per-ACK limit: a delayed ACK of two packets adds two); returns the ACKed packets left
        for congestion avoidance."""
        flow = self.flow
        before = int(flow.cwnd)
        grown = min(before + acked, flow.ssthresh)
        grown = int(grown) if grown > before else before
        flow.cwnd = float(grown)
        return acked - (grown - before)

    def linux_cong_avoid_ai(self, w: int, acked: int) -> None:
        """Linux tcp_cong_avoid_ai: one packet more per `w` ACKed packets, counted in
        `cwnd_cnt` (Linux's snd_cwnd_cnt, which a window reduction resets: here, a window
        smaller than the one it was counted at)."""
        flow = self.flow
        cwnd = int(flow.cwnd)
        if cwnd < self.cnt_cwnd:
            self.cwnd_cnt = 0                 # tcp_init_cwnd_reduction, tcp_enter_loss
        if self.cwnd_cnt >= w:                # credits accumulated at a higher w
            self.cwnd_cnt = 0
            cwnd += 1
        self.cwnd_cnt += acked
        if self.cwnd_cnt >= w:
            delta = self.cwnd_cnt // w
            self.cwnd_cnt -= delta * w
            cwnd += delta
        self.cnt_cwnd = cwnd
        flow.cwnd = float(cwnd)

    def linux_reno_growth(self, acked_pkts: float) -> None:
        """Linux tcp_reno_cong_avoid: nothing unless the window limited the sender
        (tcp_is_cwnd_limited), slow start below ssthresh (tcp_in_slow_start), then one packet
        per window of ACKed packets (tcp_cong_avoid_ai with w = cwnd)."""
        flow = self.flow
        if not flow.is_cwnd_limited:
            return
        acked = int(acked_pkts)
        if flow.cwnd < flow.ssthresh:
            acked = self.linux_slow_start(acked)
            if acked <= 0:
                return
        self.linux_cong_avoid_ai(int(flow.cwnd), acked)

    def standard_growth(self, acked_pkts: float) -> None:
        """RFC 5681 window growth: slow start below ssthresh, then congestion avoidance with what
        is left of the ACK. Algorithms whose growth is standard use it as their `on_ack`. On the
        Linux stack it is Linux's `linux_reno_growth`."""
        if self.linux:
            self.linux_reno_growth(acked_pkts)
            return
        flow = self.flow
        if not self._standard_steps:          # a subclass redefined a step: call the steps
            if flow.cwnd < flow.ssthresh:
                acked_pkts = self.slow_start(acked_pkts)
                if acked_pkts <= 0:
                    return
            self.congestion_avoidance(acked_pkts)
            return
        # The steps inline (once per ACK; the same operations in the same order):
        cwnd = flow.cwnd
        ssthresh = flow.ssthresh
        if cwnd < ssthresh:
            # slow_start(acked_pkts): grown = min(cwnd + min(acked_pkts, abc_limit), ssthresh)
            abc_limit = self.abc_limit
            grown = cwnd + (abc_limit if abc_limit < acked_pkts else acked_pkts)
            if ssthresh < grown:
                grown = ssthresh
            if grown > cwnd:
                flow.cwnd = grown
                if grown < ssthresh:
                    return                    # all of the ACK spent in slow start
                acked_pkts = acked_pkts - (grown - cwnd)
                if acked_pkts <= 0:
                    return
                cwnd = grown
            elif acked_pkts <= 0:
                return
        # congestion_avoidance(acked_pkts): one packet per window's worth of ACKs
        flow.cwnd = cwnd + acked_pkts / cwnd


# -- the values an algorithm hands the transport ------------------------------------------------
# The transport takes numbers from the algorithm: the window and the slow-start threshold it sets
# on its flow, the pacing rate, the numbers its hooks return (`ssthresh()`, `ecn_ssthresh()`,
# `restore_cwnd()`, `undo_cwnd()`) and its `report()`. Where the transport uses one, it checks
# that it is a float in range (one class test and one comparison, nothing more for a value that
# is fine) and otherwise asks the functions below, which accept the other numbers the interface
# allows (an int) and raise `AlgorithmValueError` for the rest: one line naming the algorithm and
# what it gave, which the command line reports as the plugin's failure (netsim/plugins.py).
class AlgorithmValueError(ValueError):
    """An algorithm gave the transport a value it cannot use. `algorithm` is its class, `hook`
    the hook that returned the value (None for a value set on the flow), `sender` the flow's
    sender (`cc.flow`)."""

    def __init__(self, cc, message: str, hook=None):
        self.algorithm = type(cc)
        self.hook = hook
        self.sender = getattr(cc, "flow", None)   # (the flow's sender: which flow, in messages)
        name = getattr(cc, "name", None)      # (None: an algorithm still in its constructor)
        super().__init__(f"algorithm {name!r} {message}" if name is not None else
                         f"the algorithm {message}")


WINDOW_RULE = "a window is a finite number of packets > 0"
THRESHOLD_RULE = "a slow-start threshold is a finite number of packets > 0"
PACING_RULE = "a pacing rate is a finite number of bit/s > 0, or None (no pacing)"
REPORT_RULE = "report() returns {name: number} (NaN or None: not known yet)"


class WindowError(AlgorithmValueError):
    """An algorithm set the window (`cwnd`) to something that is not a finite number > 0."""

    def __init__(self, cc, value):
        super().__init__(cc, f"set cwnd to {_shown(value)}; {WINDOW_RULE}")


def _shown(value) -> str:
    if isinstance(value, int) and not -10**20 < value < 10**20:   # (str() of 5 000 digits fails)
        return f"an int of {value.bit_length()} bits"
    return f"{value!r} ({type(value).__name__})"


# The shortest period of an algorithm's tick(): one timer event per flow each, so 10 us (shorter
# than a data-center RTT) still allows a tick per RTT there, and a plugin's 1e-12 s cannot make a
# run of seconds last hours. FAST's update_interval_s has the same floor (flows/fast.py).
MIN_TICK_INTERVAL_S = 1e-5


MAX_MIN_WINDOW_PKTS = 10**6   # `min_window_pkts` above this is no minimum a flow could keep


def tick_problem(value) -> str | None:
    """Why `value` cannot be a tick_interval_s (None if it can)."""
    if not is_count(value):
        return "expected None (no tick) or a finite number of seconds > 0"
    if value < MIN_TICK_INTERVAL_S:
        return (f"expected None (no tick) or at least {MIN_TICK_INTERVAL_S:g} s between ticks "
                f"(one timer event per flow each)")
    return None


_FLOAT_MAX = sys.float_info.max


def is_count(value, inf_ok: bool = False) -> bool:
    """Whether `value` is a number of packets the transport can use: an int or a float (not a
    bool), > 0 and finite (or infinite, with `inf_ok`); an int only within a float's range
    (10**400 is finite, but no float: the statistics could not read it)."""
    if value.__class__ is bool or not isinstance(value, (int, float)):
        return False
    if isinstance(value, int):
        return 0 < value <= _FLOAT_MAX
    return 0.0 < value <= math.inf if inf_ok else 0.0 < value < math.inf


def returned_count(cc: CongestionControl, hook: str, value):
    """`value`, returned by the hook `hook` (ssthresh, ecn_ssthresh: a threshold; restore_cwnd,
    undo_cwnd: a window), if it is a finite number > 0; else `AlgorithmValueError`."""
    if is_count(value):
        return value
    if hook == "ecn_ssthresh" and type(cc).ecn_ssthresh is CongestionControl.ecn_ssthresh:
        hook = "ssthresh"                     # (the default ecn_ssthresh returns ssthresh())
    rule = THRESHOLD_RULE if hook.endswith("ssthresh") else WINDOW_RULE
    raise AlgorithmValueError(cc, f"returned {_shown(value)} from {hook}(); {rule}",
                              getattr(cc, hook, None))


def checked_ssthresh(cc: CongestionControl, value):
    """The flow's ssthresh as the algorithm set it, if a number > 0 (inf: none); else
    `AlgorithmValueError`."""
    if is_count(value, inf_ok=True):
        return value
    raise AlgorithmValueError(cc, f"set ssthresh to {_shown(value)}; a slow-start threshold is "
                                  f"a number of packets > 0 (inf: none)")


def checked_pacing_rate(cc: CongestionControl | None, value):
    """A pacing rate the algorithm sets, if None or a finite number > 0; else
    `AlgorithmValueError` (`cc` None: set in the algorithm's constructor)."""
    if value is None or is_count(value):
        return value
    raise AlgorithmValueError(cc, f"set pacing_rate_bps to {_shown(value)}; {PACING_RULE}")


def checked_report(cc: CongestionControl, values, names=None) -> dict:
    """What `report()` returned, if a dict of names (str) to numbers (an int or a float, None
    for not known) and, when `names` (a tuple) is given, with just those names; else
    `AlgorithmValueError`."""
    hook = getattr(cc, "report", None)
    if not isinstance(values, dict):
        raise AlgorithmValueError(cc, f"returned {_shown(values)} from report(); {REPORT_RULE}",
                                  hook)
    for name, value in values.items():
        if name.__class__ is not str or (value is not None and value.__class__ is not float and (
                value.__class__ is bool or not isinstance(value, (int, float)))):
            raise AlgorithmValueError(cc, f"returned {{{name!r}: {_shown(value)}}} from "
                                          f"report(); {REPORT_RULE}", hook)
    if names is not None and (len(values) != len(names) or any(n not in values for n in names)):
        raise AlgorithmValueError(cc, f"returned the names {sorted(values)} from report(), "
                                      f"earlier {sorted(names)}; report() returns the same "
                                      f"names every time", hook)
    return values


def _public_names(cls: type) -> set:
    """Public names the class bodies of `cls` and its bases up to CongestionControl define."""
    names: set = set()
    for klass in cls.__mro__:
        if klass is CongestionControl or not issubclass(klass, CongestionControl):
            continue
        names.update(n for n in vars(klass) if not n.startswith("_"))
    return names


def check_algorithm_class(cls: type) -> str | None:
    """Why the CongestionControl subclass `cls` cannot be registered (None if it can): it
    overrides none of `GROWTH_HOOKS`, a public name of it is a near miss of the interface's
    (a misspelt hook would never be called), a class attribute the transport reads has a
    value it cannot use (`class_attribute_problem`), or a method it replaces cannot take the
    arguments the transport passes (`hook_signature_problem`). One line, naming the class."""
    import difflib  # (only plugins are checked: not at every start-up)

    problem = class_attribute_problem(cls) or hook_signature_problem(cls)
    if problem is not None:
        return f"class {cls.__name__}: {problem}"

    interface = {n for n in dir(CongestionControl) if not n.startswith("_")}
    for name in sorted(_public_names(cls) - interface):
        close = difflib.get_close_matches(name, sorted(interface), n=1, cutoff=0.8)
        if close:
            return (f"class {cls.__name__}: {name} is not part of the algorithm interface and "
                    f"would never be used; did you mean {close[0]}?")
    if not any(getattr(cls, hook) is not getattr(CongestionControl, hook)
               for hook in GROWTH_HOOKS):
        return (f"class {cls.__name__} overrides none of the hooks that move the window "
                f"({', '.join(GROWTH_HOOKS)}): its window would never change")
    return None


def hook_signature_problem(cls: type) -> str | None:
    """Why a method of `cls` that replaces one of CongestionControl's (a hook, a helper such as
    `standard_growth`, `param_problem`, or `__init__`) cannot be called the way the transport
    calls the one it replaces, with as many positional arguments (None if every one can): e.g.
    ``on_ack(self)`` for ``on_ack(self, acked_pkts)``, or ``on_ack = None``; nor one written as
    ``async def`` or as a generator (calling it runs none of its body). A callable object other
    than a function is not looked into."""
    import inspect

    for name in ("__init__", *sorted(n for n in vars(CongestionControl) if n[0] != "_")):
        base = inspect.getattr_static(CongestionControl, name)
        if not isinstance(base, (classmethod, staticmethod)) and not inspect.isfunction(base):
            continue                                  # (an attribute, not a method)
        mine = inspect.getattr_static(cls, name)
        if mine is base:
            continue
        base_function: Any = getattr(base, "__func__", base)
        wanted = list(inspect.signature(base_function).parameters)
        shown = f"{name}({', '.join(wanted)})"
        if isinstance(mine, staticmethod):
            function, count = mine.__func__, len(wanted) - 1       # (no self or cls)
        elif isinstance(mine, classmethod) or inspect.isfunction(mine):
            function, count = mine.__func__ if isinstance(mine, classmethod) else mine, len(wanted)
        elif callable(mine):
            continue
        else:
            return f"{name} = {mine!r} is not a method; the transport calls {shown}"
        kind = ("a coroutine function (async def)" if inspect.iscoroutinefunction(function)
                else "an asynchronous generator" if inspect.isasyncgenfunction(function)
                else "a generator (it contains yield)" if inspect.isgeneratorfunction(function)
                else None)
        if kind is not None:
            return (f"{name} is {kind}: calling it runs none of its body; the transport calls "
                    f"{shown} and uses what it returns at once, so write it as a plain def")
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):               # (no signature to read: not checked)
            continue
        try:
            signature.bind(*range(count))
        except TypeError as exc:
            return (f"{name}{signature} cannot be called as the transport calls {shown}: "
                    f"{exc}")
    return None


def class_attribute_problem(cls: type) -> str | None:
    """Why a class attribute of `cls` that the transport or the loader reads cannot be used
    (None if every one can): `recovery` must be a `RecoveryMode`, `ecn_echo` an `EcnEcho`,
    `tick_interval_s` None or a finite number of seconds > 0, `min_window_pkts` a number of
    packets > 0, and each `PARAMETERS` default a value the class's `param_problem` accepts (as
    the same value in a topology must be)."""
    recovery = getattr(cls, "recovery", None)
    if recovery not in tuple(mode.value for mode in RecoveryMode):
        return (f"recovery = {recovery!r} is not a recovery mode; expected one of "
                f"{', '.join(mode.value for mode in RecoveryMode)} (flows.congestion.RecoveryMode)")
    echo = getattr(cls, "ecn_echo", None)
    if echo not in tuple(mode.value for mode in EcnEcho):
        return (f"ecn_echo = {echo!r} is not an ECN echo; expected one of "
                f"{', '.join(mode.value for mode in EcnEcho)} (flows.congestion.EcnEcho)")
    tick = getattr(cls, "tick_interval_s", None)
    if hasattr(type(tick), "__get__"):
        tick = None                           # a slot or a property: the instance's (`Sender.start`)
    problem = None if tick is None else tick_problem(tick)
    if problem is not None:
        return f"tick_interval_s = {tick!r}: {problem}"
    floor = getattr(cls, "min_window_pkts", 1.0)
    if not is_count(floor) or floor > MAX_MIN_WINDOW_PKTS:
        return (f"min_window_pkts = {floor!r}: expected a number of packets > 0 and at most "
                f"{MAX_MIN_WINDOW_PKTS}")
    parameters = getattr(cls, "PARAMETERS", None)
    if not isinstance(parameters, dict):
        return f"PARAMETERS = {parameters!r}: expected a dict, parameter name -> default"
    for name, default in parameters.items():
        if not isinstance(name, str):
            return f"PARAMETERS: parameter name {name!r} is not a string"
        problem = cls.param_problem(name, default)   # type: ignore[attr-defined]
        if problem is not None:
            shown = f'"{default}"' if isinstance(default, str) else repr(default)
            return f"PARAMETERS[{name!r}]: {problem}, got {shown}"
    return None
