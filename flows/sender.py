"""The sending side of a flow: sequence numbers, the window, loss detection and retransmission.

Packets are numbered 0, 1, ...; the window (`cwnd`, packets) bounds the flight size
``snd_nxt - snd_una`` (RFC 5681). Loss is detected by the third duplicate ACK (fast retransmit)
or by the retransmission timer (RFC 6298, with the `RttEstimator`'s RTO). After a timeout, and
after Tahoe's fast retransmit, the sender goes back to the first unacknowledged packet and
resends, skipping packets the receiver reported by selective ACK (the `Scoreboard`). A new loss
reaction happens at most once per loss episode: further timeouts before everything outstanding at
the first one is acknowledged only back off and retransmit. Every retransmission is counted where
it is sent, by one rule whatever the algorithm: a fast retransmit (loss recovery's) in an episode
a third duplicate ACK began, fast recovery or go-back-N, until a timeout takes it over.

Loss recovery after a fast retransmit comes in three modes; the algorithm picks one (its
`recovery` attribute):

* ``"reno"`` (RFC 5681): the first ACK of new data ends recovery.
* ``"newreno"`` (RFC 6582): a partial ACK (one that does not cover everything outstanding when
  recovery began) retransmits the next unacknowledged packet and recovery goes on. The
  retransmission timer is restarted on the first partial ACK only (the "impatient" variant), so a
  window with many losses falls back to a timeout rather than repairing one packet per round trip.
* ``"sack"`` (RFC 6675, conservative SACK-based recovery): while the scoreboard's estimate of the
  packets in flight (``pipe``) is below the window, the sender retransmits the lowest hole not yet
  retransmitted, else sends new data. Every hole is repaired within about one round trip.

The sender decides when a loss episode begins and ends and what to resend; the window meanwhile
(inflation, deflation, the loss window) is its `window` policy's (flows/recovery.py), chosen from
the algorithm's `recovery` mode and `loss_based`. The sender also paces (`Pacer`), feeds
delivery-rate samples to algorithms that want them (`RateSampler`), and runs the algorithm's
hooks (flows/congestion.py); the algorithm sees the sender as its flow.

ECN (RFC 3168 §6.1), for flows with ``ecn``: new data packets are ECN-capable (retransmissions
are not, §6.1.5). Every ACK is shown to the algorithm (`ecn_ack(n, ece)`); an ACK with ECE is a
congestion signal the sender reacts to at most once per window of data -- not while a loss is
being repaired, and not before data sent after the previous reaction (or loss reaction) is
acknowledged -- as to a loss but without retransmission: the window policy sets ssthresh from
the algorithm's `ecn_ssthresh()` and the window to it. The next new data packet carries CWR.

At most `MAX_FLIGHT_PKTS` packets are in flight, whatever the window: an algorithm's window of
1e15 packets (a plugin's slip, or a window doubled on every ACK) would otherwise be sent in one
event and never return. The bound is above any path's bandwidth-delay product (10 GB of 1 kB
packets: 100 Gb/s over 800 ms); a window above it is logged once per flow as a warning.
"""
from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any, Callable

from components.packet import DATA, Packet
from flows.congestion import (  # WindowError: (re-exported: flows.linux_sender, netsim.plugins)
    LOSS,
    OPEN,
    RECOVERY,
    AlgorithmValueError,
    CaEvent,
    CongestionControl,
    WindowError,
    is_count,
    tick_problem,
)
from flows.linux_stack import StackOptions
from flows.pacer import Pacer
from flows.prr import reduction_window
from flows.rate_sampler import RateSampler
from flows.recovery import RecoveryWindow
from flows.rtt import LinuxRttEstimator, RttEstimator
from flows.scoreboard import Scoreboard
from flows.sender_view import SenderView
from simulator.compiled import plain_mypyc_attr
from simulator.engine import Timer

MAX_FLIGHT_PKTS = 10**7        # packets in flight at most, whatever the window (module docstring)
_log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr

    from components.node import Host
    from simulator.engine import Simulator


# (mypyc_attr: simulator/compiled.py, `plain_mypyc_attr`)
globals().setdefault("mypyc_attr", plain_mypyc_attr)


# Sender's slots: the endpoints; the window and sequence space; the algorithm and the parts;
# the stack (flows/linux_stack.py); ECN (RFC 3168); statistics
SENDER_SLOTS = (
    "sim", "src", "dst", "n_packets", "packet_bytes", "last_packet_bytes", "dupack_threshold",
    "deliver_data", "on_complete", "flow_hash", "cwnd", "ssthresh", "state", "snd_una",
    "snd_nxt", "high_seq", "recover", "dupacks", "partial_acks", "finish_s", "last_acked_s",
    "cc", "on_ack_hook", "on_rtt_hook", "tick_interval_s", "recovery_mode", "window", "rtt",
    "scoreboard", "pacer", "rates", "timer", "plain_transmit", "options", "stack",
    "prior_cwnd", "cwnd_event_hook", "send_checks", "rwnd_pkts", "rwnd_limited", "ecn",
    "ecn_recover", "cwr_pending", "ecn_echoes", "ecn_reactions", "packets_sent", "bytes_sent",
    "retransmissions", "timeouts", "fast_retransmits", "sack_recoveries", "loss_recovery",
    "needs_ecn", "window_bounded")


@mypyc_attr(allow_interpreted_subclasses=True)
class Sender(SenderView):
    """Sends packets 0 .. n_packets - 1 from `src` to `dst` under an algorithm (`cc_class(self,
    params)`) and processes their ACKs (`on_ack`); `options`: the stack's mechanisms it runs
    (flows/linux_stack.py; the others need `flows.linux_sender.LinuxSender`)."""

    __slots__ = SENDER_SLOTS
    cc: CongestionControl            # these nine are set by _attach_algorithm
    on_ack_hook: Callable[[float], None] | None
    on_rtt_hook: Callable[[float], None] | None
    cwnd_event_hook: Callable[[CaEvent], None] | None
    tick_interval_s: float
    recovery_mode: str
    window: RecoveryWindow
    plain_transmit: bool
    send_checks: bool

    def __init__(self, sim: Simulator, src: Host, dst: Host, n_packets: int | float,
                 packet_bytes: int, last_packet_bytes: int, transport,
                 cc_class: type[CongestionControl], params: dict | None,
                 start_s: float, *, ecn: bool = False, abc_limit: float = 1.0,
                 options: StackOptions | None = None):
        self.sim = sim
        self.src = src
        self.dst = dst
        self.n_packets = n_packets
        self.packet_bytes = packet_bytes
        self.last_packet_bytes = last_packet_bytes
        self.deliver_data: Callable[[Packet], None] = _unconnected   # the receiver's on_data
        self.on_complete: Callable[[], None] = _nothing                # called once, at the end
        self.flow_hash = 0         # ECMP hash of the data direction (routing/ecmp.py); 0: none
        self.dupack_threshold = transport.dupack_threshold
        # The window, the threshold and the prior window are whatever the algorithm sets, and
        # the counters the flow probes compare by identity (netsim/probes.py) stay Python
        # objects: `Any`, which compiled code keeps as it is (docs/model.md, "Compiled core").
        self.cwnd: Any = float(transport.initial_cwnd_pkts)
        ssthresh = transport.initial_ssthresh_pkts
        self.ssthresh: Any = math.inf if ssthresh is None else float(ssthresh)
        self.state = OPEN
        self.snd_una = 0
        self.snd_nxt = 0
        self.high_seq = 0          # one past the highest sequence number ever sent
        self.recover = 0           # high_seq when the current loss episode began
        self.dupacks = 0
        self.partial_acks = 0      # NewReno: partial ACKs in the current recovery
        self.finish_s: float | None = None
        self.last_acked_s = start_s  # when new data was last cumulatively acknowledged
        self.packets_sent = 0
        self.bytes_sent: Any = 0
        self.retransmissions = self.timeouts = 0
        self.fast_retransmits = self.sack_recoveries = 0
        # in a loss episode that a third duplicate ACK began (fast recovery, or Tahoe's go-back-N)
        # and no timeout took over: what `_transmit` resends now counts as a fast retransmit
        # (the extended sender's stays False: it counts its own, flows/linux_sender.py)
        self.loss_recovery = False
        options = StackOptions() if options is None else options
        self.options = options
        self.stack = options.stack     # read by the algorithm when it is built, below
        self.prior_cwnd: Any = self.cwnd    # the window before the current reduction
        self.rwnd_pkts: int | float = options.rwnd_pkts    # a count, or math.inf
        self.rwnd_limited = False      # the receive window bounded the last sends
        self.ecn = ecn
        self.ecn_recover = 0       # high_seq at the last ECN reaction
        self.cwr_pending = False   # the next new data packet carries CWR
        self.needs_ecn = False     # retransmissions ECT too (the Linux stack's DCTCP only)
        self.window_bounded = False    # a window above MAX_FLIGHT_PKTS was logged (`flight_window`)
        self.ecn_echoes = 0        # ACKs that carried ECE
        self.ecn_reactions = 0     # window reductions on ECE
        self.rtt = _rtt_estimator(self, transport, options.linux_rto)
        self.scoreboard = Scoreboard(transport.dupack_threshold)
        self.pacer = Pacer(sim, packet_bytes, self._resume)
        self.timer = Timer(sim, self.on_timeout)
        self.rates: RateSampler | None = None
        _attach_algorithm(self, cc_class(self, params), abc_limit, options)

    # -- sending -----------------------------------------------------------------------------
    def start(self) -> None:
        self.cc.init()
        declared: Any = self.cc
        tick = declared.tick_interval_s               # as the class, __init__ or init() left it
        if tick is not None:                          # a clock (0 too: refused, not "no clock")
            problem = tick_problem(tick)              # (the class's is checked when registered)
            if problem is not None:
                raise AlgorithmValueError(self.cc, f"set tick_interval_s to {tick!r}; {problem}")
            self.tick_interval_s = tick
            self.sim.schedule(tick, self._tick)
        else:
            self.tick_interval_s = 0.0                # (no clock)
        self.send_window()

    def _tick(self, _=None) -> None:
        if self.finish_s is not None:
            return
        self.cc.tick()
        self.sim.schedule(self.tick_interval_s, self._tick)
        self.send_window()

    def _resume(self) -> None:
        """The pacer lets packets go again."""
        if self.finish_s is None:
            self.send_window()

    def send_window(self) -> None:
        """Send new or go-back-N packets while the window allows."""
        pacer = self.pacer
        if pacer.rate_bps and pacer.budget <= 0 and pacer.held():
            return                                    # a wake-up resumes sending
        if self.state == RECOVERY and self.recovery_mode == "sack":
            self._send_sack_recovery()
            return
        n_packets = self.n_packets
        sacked = self.scoreboard.sacked
        cwnd = self.cwnd                  # the algorithm's window: a finite number > 0
        if cwnd.__class__ is not float or not 0.0 < cwnd < MAX_FLIGHT_PKTS:   # (a float: checked)
            cwnd = flight_window(self, cwnd)
        if self.send_checks:
            cwnd = _checked_window(self, cwnd)
        # (sending changes neither the window nor snd_una: both read once)
        snd_una = self.snd_una
        seq = self.snd_nxt
        while seq < n_packets and seq - snd_una < cwnd:
            if seq in sacked:           # the receiver has it: skip
                self.snd_nxt = seq = seq + 1
                continue
            if pacer.rate_bps and not pacer.pace(self.last_packet_bytes if seq == n_packets - 1
                                                 else self.packet_bytes):
                return
            self.snd_nxt = seq + 1
            if self.plain_transmit:
                # `_transmit(seq)`, inline for a flow without ECN or rate samples
                retx = seq < self.high_seq
                size = self.last_packet_bytes if seq == n_packets - 1 else self.packet_bytes
                src: Any = self.src     # (a dynamic call: docs/model.md, "Compiled core")
                packet = Packet(DATA, src, self.dst, size, self.deliver_data, seq, -1, -1,
                                self.sim.now, retx, None, False, self.flow_hash)
                self.packets_sent += 1
                self.bytes_sent += size
                if retx:
                    self.retransmissions += 1
                    self.fast_retransmits += self.loss_recovery
                timer = self.timer
                if not timer.active:
                    timer.start(self.rtt.rto)
                src.send(packet)
            else:
                self._transmit(seq)
            seq += 1
            if seq > self.high_seq:
                self.high_seq = seq

    def _send_sack_recovery(self) -> None:
        """RFC 6675 §5 (C): while pipe < cwnd, send what NextSeg gives: (1) the lowest hole,
        else (2) new data, else (4) once per episode the rescue retransmission of the highest
        packet not selectively acknowledged, but only as FreeBSD does, where it is likely lost:
        on a partial ACK (the retransmission of a hole arrived; `rescue_armed`) when every
        packet was sent before the episode began, so the tail's packets, sent before that
        retransmission, had their chance to be reported. Rule (3) is left out
        (docs/model.md)."""
        pacer = self.pacer
        scoreboard = self.scoreboard
        cwnd = flight_window(self, self.cwnd)     # (sending does not change it)
        while cwnd - scoreboard.pipe(self.snd_una, self.snd_nxt) >= 1.0:
            if pacer.rate_bps and not pacer.pace(self.packet_size(self.snd_una)):
                return
            hole = scoreboard.next_hole(self.snd_una)
            if hole is not None:
                scoreboard.retransmitting(hole)
                self._transmit(hole)
            elif self.snd_nxt < self.n_packets and self.snd_nxt - self.snd_una < self.rwnd_pkts:
                seq = self.snd_nxt
                self._transmit(seq)                   # new data: not a retransmission
                self.snd_nxt = self.high_seq = seq + 1
            else:
                if scoreboard.rescue_armed and self.recover >= self.n_packets:   # rule (4)
                    rescued = scoreboard.rescue(self.snd_una, self.snd_nxt, self.recover)
                    if rescued is not None:
                        self._transmit(rescued)
                break
        scoreboard.rescue_armed = False

    def _transmit(self, seq: int) -> None:
        retx = seq < self.high_seq
        size = self.last_packet_bytes if seq == self.n_packets - 1 else self.packet_bytes
        now = self.sim.now
        packet = Packet(DATA, self.src, self.dst, size, self.deliver_data, seq, -1, -1, now, retx,
                        None, False, self.flow_hash)
        self.packets_sent += 1
        self.bytes_sent += size
        if retx:                  # counted here (and inline in send_window) only, one rule for
            self.retransmissions += 1                 # every algorithm: a timeout's or not
            self.fast_retransmits += self.loss_recovery
            if self.needs_ecn:                        # else Not-ECT: RFC 3168 §6.1.5
                packet.ect = True
        elif self.ecn:
            packet.ect = True                         # RFC 3168 §6.1.5: not on retransmissions
            if self.cwr_pending:
                packet.payload = True                 # CWR
                self.cwr_pending = False
        if not self.timer.active:
            self.timer.start(self.rtt.rto)
        rates = self.rates
        if rates is not None:
            rates.on_send(seq, now, self.snd_nxt - self.snd_una, self.snd_nxt >= self.n_packets)
        src: Any = self.src             # (a dynamic call: docs/model.md, "Compiled core")
        src.send(packet)

    # -- acknowledgements --------------------------------------------------------------------
    def on_ack(self, ack: Packet) -> None:
        finish_s = self.finish_s    # (a local: compiled, a test of the attribute would hold below,
        if finish_s is not None:    # after `_finish` set it; docs/model.md, "Compiled core")
            return
        now = self.sim.now
        if not ack.retx:                              # Karn's rule
            rtt_s = now - ack.sent_s
            rtt = self.rtt
            if rtt.backoffs and ack.ack_seq <= self.snd_una:   # nothing new acknowledged:
                rtt.sample_backed_off(rtt_s)                   # the backoff stays (RFC 6298)
            else:
                rtt.sample(rtt_s)
            if self.on_rtt_hook is not None:
                self.on_rtt_hook(rtt_s)
        cum = ack.ack_seq
        snd_una = self.snd_una
        sack = ack.sack_seq
        scoreboard = self.scoreboard
        new_sack = sack >= cum and sack >= snd_una and sack not in scoreboard.sacked
        if new_sack:
            scoreboard.record(sack)
        rates = self.rates
        if rates is not None:
            rs = rates.on_ack(now, snd_una, cum, sack, new_sack, scoreboard.sacked)
            if rs is not None:
                self.cc.on_rate_sample(rs)
        if cum > snd_una:
            self.last_acked_s = now                   # progress (the stall guard, netsim/run.py)
            if self.state == OPEN and not scoreboard.sacked and not scoreboard.retx_out:
                # `_on_new_ack(cum)` in its common case, inline: new data acknowledged, no
                # loss being repaired, nothing selectively acknowledged
                self.snd_una = cum
                if self.snd_nxt < cum:
                    self.snd_nxt = cum
                self.dupacks = 0
                if self.on_ack_hook is not None:
                    self.on_ack_hook(cum - snd_una)
                if cum >= self.n_packets:
                    self._finish()
                elif cum < self.high_seq:
                    self.timer.start(self.rtt.rto)    # RFC 6298 (5.3)
                else:
                    self.timer.cancel()               # RFC 6298 (5.2)
            else:
                self._on_new_ack(cum)
        elif cum == snd_una and self.snd_nxt > snd_una:   # a duplicate ACK
            self.dupacks = dupacks = self.dupacks + 1
            state = self.state
            if state == RECOVERY:
                self.window.on_dupack()
            elif state == OPEN and dupacks == self.dupack_threshold:
                self._fast_retransmit()
        if self.ecn:
            if self.finish_s is None:
                self.window.ecn_ack(ack.payload is True, cum, max(cum - snd_una, 0))
            elif ack.payload is True:             # the completing ACK's echo: counted, as
                self.ecn_echoes += 1              # a capture counts it, but nothing to react to
        if self.finish_s is None:
            self.send_window()

    def _on_new_ack(self, cum: int) -> None:
        snd_una = self.snd_una
        acked = cum - snd_una
        scoreboard = self.scoreboard
        if scoreboard.sacked or scoreboard.retx_out:
            scoreboard.advance(snd_una, cum)
        self.snd_una = cum
        if self.snd_nxt < cum:
            self.snd_nxt = cum
        self.dupacks = 0
        state = self.state
        if state == RECOVERY:
            mode = self.recovery_mode
            if mode == "reno" or cum >= self.recover:
                self.loss_recovery = False
                self.window.end_episode()         # retransmissions still in flight stay counted
            elif mode == "sack":                      # a partial ACK: may rescue
                scoreboard.rescue_armed = True
            elif mode == "newreno":                   # RFC 6582 partial ACK
                self.partial_acks += 1
                self._transmit(cum)
                self.window.on_partial_ack(acked)
                if self.partial_acks > 1:
                    return                            # impatient: the timer keeps running
        else:
            if self.on_ack_hook is not None:
                self.on_ack_hook(acked)
            if state == LOSS and cum >= self.recover:
                self.loss_recovery = False
                self.window.end_episode()
        if cum >= self.n_packets:
            self._finish()
        elif cum < self.high_seq:
            self.timer.start(self.rtt.rto)            # RFC 6298 (5.3)
        else:
            self.timer.cancel()                       # RFC 6298 (5.2)

    def _fast_retransmit(self) -> None:
        """The third duplicate ACK: a loss reaction, then fast recovery or (Tahoe) go-back-N."""
        window = self.window
        self._loss_reaction()
        self.recover = self.high_seq
        self.loss_recovery = True
        cc: Any = self.cc               # (its flag as its class sets it: docs/model.md)
        if cc.fast_recovery:
            una = self.snd_una
            scoreboard = self.scoreboard
            sack = self.recovery_mode == "sack"
            self.sack_recoveries += sack
            scoreboard.rescue_armed = False           # (an episode's partial ACKs arm it)
            if not sack or una not in scoreboard.retx_out:
                self._transmit(una)                   # fast retransmit
            scoreboard.retransmitting(una)
            self.partial_acks = 0
            window.enter_recovery()
        else:
            self.snd_nxt = self.snd_una               # go back N (Tahoe)
            window.enter_loss()

    def on_timeout(self) -> None:
        if self.finish_s is not None or self.snd_una >= self.high_seq:
            return
        self.timeouts += 1
        self.loss_recovery = False                    # a timeout's retransmissions from here
        if self.state == OPEN and self._loss_reaction():   # one reaction per loss episode: a
            if self.cwnd_event_hook is not None:           # timeout in recovery or loss keeps
                self.cwnd_event_hook(CaEvent.LOSS)         # ssthresh (Linux tcp_enter_loss)
        self.recover = self.high_seq
        self.rtt.back_off()                           # RFC 6298 (5.5)
        self.snd_nxt = self.snd_una
        self.dupacks = 0
        self.scoreboard.clear_retransmissions()
        self.window.enter_loss()
        self.timer.start(self.rtt.rto)
        self.send_window()

    def _loss_reaction(self) -> bool:
        """A loss reaction (the window policy's: ssthresh from the algorithm), unless an ECN
        reaction already reduced the lost packet's window (`_reacted_this_window`); returns
        whether it happened. An ECN flow then sends CWR on its next new data packet: RFC 3168
        §6.1.2 asks for it after any reduction, a fast retransmit's or a timeout's too, so the
        receiver stops echoing a mark of the same window, which would otherwise cut the window a
        second time once recovery ends."""
        if self._reacted_this_window():
            return False
        self.window.loss_reaction()
        cc: Any = self.cc               # (its flag as its class sets it: docs/model.md)
        if self.ecn and cc.loss_based:               # (a model's window was not reduced)
            self.cwr_pending = True
        return True

    def _reacted_this_window(self) -> bool:
        """Whether an ECN reaction already reduced the window the lost packet `snd_una` was
        sent in (before the reaction: below `ecn_recover`). RFC 3168 §6.1.2: the window is
        reduced "only once in response to a series of dropped and/or CE packets from a single
        window of data", and ssthresh is not decreased again within that round trip; so such a
        loss is repaired (fast retransmit and recovery, or a timeout's loss window) without a new
        ssthresh. Linux's CWR state does the same (tcp_enter_recovery, tcp_enter_loss)."""
        return self.snd_una < self.ecn_recover

    def _finish(self) -> None:
        self.finish_s = self.sim.now
        self.timer.release()            # (never armed again: nothing is sent once finished)
        self.on_complete()


def flight_window(sender: Sender, cwnd) -> float:
    """The algorithm's window `cwnd` as the sender uses it: refused (`WindowError`) unless a
    finite number of packets > 0, and at most `MAX_FLIGHT_PKTS` (logged once per flow)."""
    if not is_count(cwnd):                            # (an int is a window; a bool is not)
        raise WindowError(sender.cc, cwnd)
    if cwnd < MAX_FLIGHT_PKTS:
        return cwnd
    if not sender.window_bounded:
        sender.window_bounded = True
        _log.warning("algorithm %r of the flow %s -> %s set a window of %.4g packets: at most "
                     "%.4g are sent and not yet acknowledged, whatever the window (docs/model.md, "
                     "\"Transport\")", getattr(sender.cc, "name", "?"), sender.src.id,
                     sender.dst.id, cwnd, MAX_FLIGHT_PKTS)
    return float(MAX_FLIGHT_PKTS)


def _checked_window(sender: Sender, cwnd: float) -> float:
    """send_window's window with the stack's bounds (integer window, Linux tcp_cwnd_test;
    the receive window), after telling the algorithm of a send after idle (TX_START, Linux
    __tcp_transmit_skb with nothing in flight)."""
    if sender.cwnd_event_hook is not None and sender.snd_nxt == sender.snd_una \
            and sender.snd_nxt < sender.n_packets:
        sender.cwnd_event_hook(CaEvent.TX_START)
        cwnd = flight_window(sender, sender.cwnd)     # (the hook may set it: checked again)
    options = sender.options
    if options.integer_window:
        cwnd = float(max(math.floor(cwnd), 1))
    sender.rwnd_limited = sender.rwnd_pkts <= cwnd
    return sender.rwnd_pkts if sender.rwnd_limited else cwnd


def _rtt_estimator(sender: Sender, transport, linux: bool) -> RttEstimator:
    """The RTT estimator: RFC 6298's, or Linux's (flows/rtt.py)."""
    if linux:
        return LinuxRttEstimator(sender, transport.initial_rto_s, transport.min_rto_s,
                                 transport.max_rto_s)
    return RttEstimator(transport.initial_rto_s, transport.min_rto_s, transport.max_rto_s)


def _overrides(cc: CongestionControl, hook: str) -> bool:
    """Whether the algorithm defines `hook` (the base class's hooks do nothing)."""
    return getattr(type(cc), hook) is not getattr(CongestionControl, hook)


def _unconnected(packet: Packet) -> None:
    raise RuntimeError("the sender's packets have no receiver")


def _nothing() -> None:
    pass


def _attach_algorithm(sender: Sender, cc: CongestionControl, abc_limit: float,
                      options: StackOptions) -> None:
    """Give `sender` its algorithm `cc`, the hooks it overrides, its loss-recovery window and
    the sending shortcuts they allow (the end of `Sender.__init__`)."""
    cc.abc_limit = abc_limit   # RFC 3465 L: packets one ACK may add in slow start
    sender.cc = cc
    # per-ACK hooks the algorithm leaves as they are (no-ops) are not called
    sender.on_ack_hook = cc.on_ack if _overrides(cc, "on_ack") else None
    sender.on_rtt_hook = cc.on_rtt if _overrides(cc, "on_rtt") else None
    sender.cwnd_event_hook = cc.cwnd_event if _overrides(cc, "cwnd_event") else None
    declared: Any = cc     # its class's flags as written (`recovery = "sack"`: docs/model.md)
    sender.tick_interval_s = 0.0     # the algorithm's clock: set when the flow starts (`start`)
    sender.recovery_mode = "sack" if options.sack else declared.recovery
    sender.window = reduction_window(sender, cc, sender.dupack_threshold, sender.recovery_mode,
                                     options.prr)
    if declared.wants_rate_samples:
        sender.rates = RateSampler()
    sender.plain_transmit = not sender.ecn and sender.rates is None   # send_window's inline _transmit
    # send_window's extra checks: TX_START, an integer or receive-window bound
    sender.send_checks = sender.cwnd_event_hook is not None or options.window_bounded

