"""The extended sender: SACK-based loss recovery for every algorithm, with RACK-TLP, PRR and undo.

`LinuxSender` replaces `flows.sender.Sender` for a flow whose stack options
(flows/linux_stack.py) turn on any of SACK recovery for every algorithm, RACK, TLP, PRR or undo:
all of them on the Linux stack, each alone on the classic one. It follows Linux's ACK
processing (net/ipv4/tcp_input.c tcp_ack, tcp_fastretrans_alert) in the states of `CaState`:

* Sending (tcp_write_xmit, tcp_xmit_retransmit_queue): while the packets in flight
  (`RackScoreboard.pipe`, tcp_packets_in_flight) are below the window (floor(cwnd) with the
  integer window, Linux tcp_cwnd_test), retransmit the lowest packet marked lost, else send new
  data within the receive window. The same rule holds in every state; after a timeout every
  outstanding packet is marked lost, so the sender resends them in order from a window of one.
* Loss detection: RACK or the duplicate-ACK threshold (flows/rack.py) marks packets lost on
  each ACK; a marked loss in OPEN or CWR starts fast recovery (tcp_enter_recovery, counted as a
  SACK recovery): ssthresh from the algorithm, the window then reduced by PRR (flows/prr.py)
  or set to ssthresh (RFC 6675). Recovery ends when snd_una reaches the highest packet sent
  when it began. RACK's reordering window (tcp_rack_reo_wnd): 0 in recovery and once
  `dupack_threshold` packets are sacked while no reordering was seen, else min_rtt / 4 (at
  most SRTT); when packets wait for it, the reorder timer (their deadline + 2 ms,
  TCP_TIMEOUT_MIN) re-runs the detection and may start recovery (tcp_rack_reo_timeout).
* Tail loss probe (RFC 8985 §7, tcp_schedule_loss_probe, tcp_send_loss_probe): in OPEN or
  CWR with packets outstanding, after sending and on each ACK that advances snd_una, the timer
  is set to PTO = 2 SRTT + (200 ms if one packet is out, else 2 ms), 1 s before any RTT
  sample, and no later than the RTO would expire. When it fires, one new packet is sent
  (beyond the window if need be), or else the highest one sent is retransmitted; one probe
  per episode (tlp_high_seq). When the ACK of the probe shows it repaired a loss (it
  acknowledges past the probe, and no D-SACK says the original also arrived), the window is
  reduced as for an ECN echo (a CWR episode ended at once, tcp_process_tlp_ack).
* Timeout (tcp_retransmit_timer, tcp_enter_loss): out of OPEN or CWR (or after the episode's
  end) ssthresh from the algorithm and the LOSS event (`CaEvent.LOSS`); the window is one
  packet, every outstanding packet not sacked is marked lost, the RTO backs off. LOSS ends
  when snd_una passes the packets outstanding at the timeout.
* ECN (RFC 3168 §6.1.2, Linux tcp_enter_cwr): an ECE in OPEN enters CWR: ssthresh from the
  algorithm's `ecn_ssthresh()`, the `ENTER_CWR` event, the window reduced by PRR over the next
  round trip (at once to ssthresh without PRR), and at its end (snd_una past the packets sent
  when it began) cwnd = ssthresh and the `COMPLETE_CWR` event (tcp_end_cwnd_reduction, which
  also ends a fast recovery).
* Undo (flows/undo.py) of spurious fast recoveries and timeouts.
* Window growth (tcp_cong_control): the algorithm's `on_ack` with the packets an ACK delivered
  (cumulatively or selectively), when it advances snd_una outside recovery and CWR.
* `is_cwnd_limited` (tcp_cwnd_validate, tcp_is_cwnd_limited): latched once per window of data:
  whether the window stopped the sender, or, in slow start, whether cwnd < 2 x the most packets
  out in that window.

RTT samples: with ``linux_rto`` every ACK that delivers data gives one from the send time it
echoes (Linux's timestamps), otherwise Karn's rule. An algorithm that is not loss-based (BBR)
keeps its window through recovery as on the classic stack (Linux runs its cong_control instead
of PRR).
"""
from __future__ import annotations

from components.packet import DATA, Packet
from flows.congestion import CWR, LOSS, OPEN, RECOVERY, CaEvent, EcnEcho
from flows.cwr import ecn_ack, end_reduction, enter_cwr
from flows.linux_stack import LINUX_INITIAL_RTO_S, LINUX_MIN_RTO_S
from flows.prr import PrrWindow
from flows.rack import RackScoreboard
from flows.sender import MAX_FLIGHT_PKTS, Sender, flight_window
from flows.sender_view import CwndUsage
from flows.tlp import (
    PROBE,
    REORDER,
    RTO,
    TCP_TIMEOUT_MIN_S,
    TailLossProbe,
    schedule_probe,
    send_probe,
)
from flows.undo import Undo, on_dsack, undo_episode


class LinuxSender(Sender):
    """A `Sender` with SACK recovery for every algorithm and the RACK-TLP, PRR and undo of
    its `options` (see the module docstring)."""

    __slots__ = ("board", "integer_window", "linux_rto", "timer_kind", "tlp", "undo", "usage")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        options = self.options
        sim = self.sim
        self.board = RackScoreboard(self.dupack_threshold, options.rack, lambda: sim.now)
        self.scoreboard = self.board
        self.undo = Undo() if options.undo else None
        self.timer_kind = RTO
        self.tlp = TailLossProbe() if options.tlp else None
        self.usage = CwndUsage()
        self.plain_transmit = False
        self.integer_window = options.integer_window
        self.linux_rto = options.linux_rto
        # tcp_ecn_send: a retransmission is Not-ECT (RFC 3168 §6.1.5) unless the algorithm
        # needs ECN (tcp_ca_needs_ecn, TCP_CONG_NEEDS_ECN: dctcp, RFC 8257 §3.1), which keeps
        # ECT on it as on its ACKs (flows/receiver.py); `Sender._transmit` reads it
        self.needs_ecn = bool(self.ecn) and self.cc.ecn_echo == EcnEcho.DCTCP

    @property
    def is_cwnd_limited(self) -> bool:
        usage = self.usage                # `usage.is_cwnd_limited(cwnd, ssthresh)`, inline
        if usage.latched:
            return True
        cwnd = self.cwnd
        return cwnd < self.ssthresh and cwnd < 2 * usage.max_packets_out

    # -- sending -----------------------------------------------------------------------------
    def send_window(self) -> None:
        """Retransmit lost packets, then send new data, while pipe < cwnd; then the loss probe
        (tcp_write_xmit)."""
        self._send_packets(schedule=True)

    def _send_packets(self, schedule: bool) -> bool:
        """Retransmit lost packets, then send new data, while pipe < cwnd (see the module
        docstring); returns whether new data was sent. `schedule`: then set the loss probe
        (on an ACK the caller sets the timer once)."""
        pacer = self.pacer
        if pacer.rate_bps and pacer.budget <= 0 and pacer.held():
            return False
        cwnd = self.cwnd
        if cwnd.__class__ is not float or not 0.0 < cwnd < MAX_FLIGHT_PKTS:   # (a float: checked)
            cwnd = flight_window(self, cwnd)
        limit: float = cwnd
        if self.integer_window:
            limit = int(cwnd) or 1                    # floor (cwnd > 0), at least 1
        board = self.board
        sent_new = 0
        cwnd_limited = False
        while True:
            snd_una = self.snd_una
            if board.lost or board.sacked or board.retx_out:
                # `board.pipe(snd_una, self.snd_nxt)`, inline
                in_flight = (self.snd_nxt - snd_una) - len(board.sacked) - len(board.lost) \
                    + len(board.retx_out)
                seq = board.next_hole(snd_una) if in_flight < limit else None
            else:                                     # nothing sacked or lost: the flight
                in_flight = self.snd_nxt - snd_una
                seq = None
            if in_flight >= limit:
                cwnd_limited = True
                break
            if seq is None:
                seq = self.snd_nxt
                if seq >= self.n_packets:
                    break
                if seq - snd_una >= self.rwnd_pkts:
                    self.rwnd_limited = True
                    break
            if pacer.rate_bps and not pacer.pace(self.last_packet_bytes if seq == self.n_packets - 1
                                                 else self.packet_bytes):
                return sent_new > 0
            if in_flight == 0 and self.cwnd_event_hook is not None:
                self.cwnd_event_hook(CaEvent.TX_START)
            sent_new += self.transmit_one(seq)
        # `self.usage.validate(self.snd_una, self.snd_nxt, cwnd_limited)`, inline
        usage = self.usage
        snd_nxt = self.snd_nxt
        packets_out = snd_nxt - self.snd_una
        if (self.snd_una >= usage.usage_seq or cwnd_limited
                or (not usage.latched and packets_out > usage.max_packets_out)):
            usage.latched = cwnd_limited
            usage.max_packets_out = packets_out
            usage.usage_seq = snd_nxt
        if schedule and sent_new and self.tlp is not None \
                and not (self.timer_kind == REORDER and self.timer.active):
            schedule_probe(self, advancing=False)
        return sent_new > 0

    def _reordering_pending(self) -> bool:
        return self.timer_kind == REORDER and self.timer.active

    def transmit_one(self, seq: int) -> bool:
        """Transmit packet `seq` (a retransmission if sent before); returns whether it is new."""
        if seq < self.high_seq:
            self._retransmit_one(seq)
            return False
        # new data (the common case)
        state = self.state
        if state == RECOVERY or state == CWR:
            window = self.window
            if isinstance(window, PrrWindow):
                window.on_sent(1)
        now = self.sim.now
        board = self.board
        board.xmit[seq] = (now, False)                # `board.on_send(seq, now, False)`, inline
        board.waiting[seq] = now
        self.snd_nxt = seq + 1                        # counted in flight by the rate sampler
        timer = self.timer
        if not timer.active:
            self.timer_kind = RTO                     # the RTO starts below
        if self.ecn:
            self._transmit(seq)
        else:
            # `_transmit(seq)`, inline for new data of a flow without ECN
            n_packets = self.n_packets
            size = self.last_packet_bytes if seq == n_packets - 1 else self.packet_bytes
            src = self.src
            packet = Packet(DATA, src, self.dst, size, self.deliver_data, seq, -1, -1, now,
                            False, None, False, self.flow_hash)
            self.packets_sent += 1
            self.bytes_sent += size
            if not timer.active:
                timer.start(self.rtt.rto)
            rates = self.rates
            if rates is not None:
                rates.on_send(seq, now, seq + 1 - self.snd_una, seq + 1 >= n_packets)
            src.send(packet)
        self.high_seq = seq + 1
        return True

    def _retransmit_one(self, seq: int) -> None:
        """Retransmit packet `seq` (`transmit_one` of a packet sent before)."""
        state = self.state
        if self.undo is not None:
            self.undo.on_retransmit(seq, self.sim.now)
        self.fast_retransmits += state == RECOVERY
        if state == RECOVERY or state == CWR:
            window = self.window
            if isinstance(window, PrrWindow):
                window.on_sent(1)
        self.board.on_send(seq, self.sim.now, True)
        if seq == self.snd_una and not self._reordering_pending():
            self.timer_kind = RTO                     # the head resent: the RTO from now
            self.timer.start(self.rtt.rto)            # (tcp_xmit_retransmit_queue's rearm)
        if not self.timer.active:
            self.timer_kind = RTO                     # _transmit starts the RTO
        self._transmit(seq)                           # (ECT only if `needs_ecn`)

    # -- acknowledgements --------------------------------------------------------------------
    def on_ack(self, ack: Packet) -> None:
        if self.finish_s is not None:
            return
        now = self.sim.now
        board = self.board
        cum, sack, snd_una = ack.ack_seq, ack.sack_seq, self.snd_una
        if cum < snd_una:
            return                                    # an old ACK, overtaken
        min_rtt = self.rtt.min_rtt
        new_sack = sack >= cum and sack >= snd_una and sack not in board.sacked \
            and sack < self.high_seq
        delivered = 0
        if new_sack:
            board.sack(sack, min_rtt)
            delivered = 1
        rates = self.rates
        if rates is not None:
            rs = rates.on_ack(now, snd_una, cum, sack, new_sack, board.sacked)
            if rs is not None:
                self.cc.on_rate_sample(rs)
        if cum > snd_una:
            self.last_acked_s = now                   # progress (the stall guard, netsim/run.py)
            delivered += board.acked(snd_una, cum, min_rtt)
            self.snd_una = cum
            if self.snd_nxt < cum:
                self.snd_nxt = cum
        # the RTT sample (`_rtt_sample`, inline)
        if self.linux_rto:
            valid = delivered > 0 and ack.seq < 0     # timestamps: every delivering ACK
        else:
            valid = not ack.retx                      # Karn's rule
        if valid:
            rtt_s = now - ack.sent_s
            rtt = self.rtt
            if rtt.backoffs and cum <= snd_una:       # nothing new acknowledged: RFC 6298's
                rtt.sample_backed_off(rtt_s)          # estimator keeps its backoff, Linux's not
            else:
                rtt.sample(rtt_s)
            if self.on_rtt_hook is not None:
                self.on_rtt_hook(rtt_s)
        if ack.seq >= 0:
            on_dsack(self, ack.seq)
        if cum >= self.n_packets:
            self._finish()
            if self.ecn and ack.payload is True:      # the completing ACK's echo: counted, as
                self.ecn_echoes += 1                  # a capture counts it (`Sender.on_ack`)
            return
        # `board.nothing_to_mark()`, inline: no packet waiting for RACK was sent before the
        # most recently delivered one
        nothing = False
        if board.rack:
            rack_ts = board.rack_ts
            waiting = board.waiting
            if rack_ts < 0.0 or not waiting:
                nothing = True
            else:
                first = next(iter(waiting))
                sent_first = waiting[first]
                nothing = sent_first > rack_ts or (sent_first == rack_ts
                                                   and first >= board.rack_seq)
        if nothing:                                   # `_detect_losses` in its common case
            newly_lost = 0
            if self.timer_kind == REORDER and self.timer.active:
                self._rearm_rto()                     # nothing waits any more
        else:
            newly_lost = self._detect_losses()
        if self.state == OPEN and not board.lost:
            # `_fastretrans_alert` in OPEN with nothing marked lost: the window grows
            if cum > snd_una and self.on_ack_hook is not None:
                self.on_ack_hook(delivered)
        else:
            self._fastretrans_alert(ack, cum > snd_una, delivered, newly_lost)
        if self.ecn and self.finish_s is None:
            ecn_ack(self, ack.payload is True, cum - snd_una)
        tlp = self.tlp
        if tlp is not None and tlp.high_seq and cum >= tlp.high_seq \
                and tlp.repaired(cum, self.high_seq) and self.state == OPEN \
                and enter_cwr(self, ecn=False):
            end_reduction(self)                     # a loss repaired by the probe
        sent_new = self._send_packets(schedule=False)
        if cum > snd_una or sent_new:
            self._set_xmit_timer(cum > snd_una, sent_new)

    def _detect_losses(self) -> int:
        """tcp_rack_mark_lost (or the duplicate-ACK threshold): mark, arm the reorder timer."""
        state = self.state
        marked, wait_s = self.board.detect(state == RECOVERY or state == LOSS,
                                           self.rtt.srtt or 0.0, self.rtt.min_rtt, self.snd_una)
        if wait_s > 0.0:
            self.timer_kind = REORDER
            self.timer.start(wait_s + TCP_TIMEOUT_MIN_S)
        elif self._reordering_pending():
            self._rearm_rto()                         # nothing waits any more
        return marked

    def _fastretrans_alert(self, ack: Packet, advanced: bool, delivered: int,
                           newly_lost: int) -> None:
        """The state machine of one ACK (tcp_fastretrans_alert, then tcp_cong_control)."""
        state = self.state
        cum = self.snd_una
        undo = self.undo
        if state == RECOVERY and cum >= self.recover:
            if undo is not None and undo.may_undo(ack.sent_s if advanced else None):
                undo_episode(self)
            else:
                end_reduction(self)
            state = OPEN
        elif state == LOSS:
            if advanced and undo is not None and undo.may_undo(ack.sent_s):
                undo_episode(self)
                state = OPEN
            elif cum >= self.recover:
                self.window.end_episode()
                state = OPEN
        elif state == CWR and cum > self.recover:
            end_reduction(self)
            state = OPEN
        if (state == OPEN or state == CWR) and self.board.lost:
            self._enter_recovery()                    # from CWR: its reduction goes on
            state = RECOVERY
        if state == RECOVERY or state == CWR:
            window = self.window
            if isinstance(window, PrrWindow) and not (undo is not None and undo.undone):
                window.on_delivery(delivered, newly_lost, advanced)
        elif advanced and self.on_ack_hook is not None:
            self.on_ack_hook(delivered)

    # -- episodes ------------------------------------------------------------------------------
    def _begin_undo(self, after_ecn: bool = False) -> None:
        if self.undo is not None:
            self.undo.begin(self.cwnd, self.ssthresh, after_ecn)

    def _enter_recovery(self) -> None:
        """tcp_enter_recovery: fast recovery after a marked loss."""
        self.sack_recoveries += 1
        self.recover = self.high_seq
        if self.tlp is not None:
            self.tlp.high_seq = 0
        window = self.window
        if self.state != CWR:
            # not already reducing (tcp_in_cwnd_reduction): tcp_init_cwnd_reduction
            self._begin_undo()
            if isinstance(window, PrrWindow):
                window.begin_reduction()
            window.loss_reaction()
            if self.ecn:
                self.cwr_pending = True               # tcp_ecn_queue_cwr
        window.enter_recovery()

    # -- timers --------------------------------------------------------------------------------
    def _set_xmit_timer(self, advanced: bool, sent_new: bool) -> None:
        """tcp_set_xmit_timer after an ACK that `advanced` snd_una and/or `sent_new` data: the
        loss probe if one may be scheduled (its RTO bound from now, or after new data from the
        first outstanding packet's send time, as tcp_schedule_loss_probe), else the RTO
        restarted (RFC 6298 (5.3), tcp_rearm_rto)."""
        timer = self.timer
        snd_una = self.snd_una
        high_seq = self.high_seq
        if snd_una >= high_seq:
            timer.cancel()
            return
        if self.timer_kind == REORDER and timer.active:
            return                                    # the reorder timer decides first
        if self.tlp is not None:
            state = self.state
            if state == OPEN or state == CWR:
                # `schedule_probe(self, advancing=not sent_new)`, inline: the arithmetic of
                # TailLossProbe.timeout (snd_una < high_seq: a probe may be scheduled)
                rtt = self.rtt
                srtt = rtt.srtt
                if srtt is None:
                    pto = LINUX_INITIAL_RTO_S             # TCP_TIMEOUT_INIT
                else:
                    pto = 2.0 * srtt + (LINUX_MIN_RTO_S if high_seq - snd_una == 1
                                        else TCP_TIMEOUT_MIN_S)
                rto_left = rtt.rto
                if sent_new:                          # not advancing: from the head's send
                    head = self.board.xmit.get(snd_una)
                    if head is not None:
                        rto_left = head[0] + rtt.rto - self.sim.now
                if rto_left > 0.0 and rto_left < pto:     # min(pto, rto_left)
                    pto = rto_left
                self.timer_kind = PROBE
                timer.start(pto)
                return
        if advanced or self.timer_kind == PROBE or not timer.active:
            self.timer_kind = RTO
            timer.start(self.rtt.rto)

    def on_timeout(self) -> None:
        if self.finish_s is not None or self.snd_una >= self.high_seq:
            return
        kind = self.timer_kind
        self.timer_kind = RTO
        if kind == PROBE:
            send_probe(self)
        elif kind == REORDER:
            self._reorder_timeout()
        else:
            self._retransmit_timeout()

    def _rearm_rto(self) -> None:
        """tcp_rearm_rto: the RTO of the first outstanding packet."""
        head = self.board.xmit.get(self.snd_una)
        delay = self.rtt.rto if head is None else head[0] + self.rtt.rto - self.sim.now
        self.timer_kind = RTO
        self.timer.start(max(delay, 1e-6))

    def _reorder_timeout(self) -> None:
        """tcp_rack_reo_timeout."""
        prior = self.board.pipe(self.snd_una, self.snd_nxt)
        state = self.state
        self.board.detect(state == RECOVERY or state == LOSS, self.rtt.srtt or 0.0,
                          self.rtt.min_rtt, self.snd_una)
        if self.board.pipe(self.snd_una, self.snd_nxt) != prior:
            if self.state == OPEN or self.state == CWR:
                self._enter_recovery()
                window = self.window
                if isinstance(window, PrrWindow):
                    window.on_delivery(1, 1, False)
            self.send_window()
        if self.timer_kind != RTO or not self.timer.active:
            self._rearm_rto()

    def _retransmit_timeout(self) -> None:
        """tcp_retransmit_timer, tcp_enter_loss."""
        self.timeouts += 1
        state = self.state
        if state == OPEN or self.snd_una >= self.recover:   # (in CWR only once its reduction's
                                                            # window is acknowledged, as Linux)
            self._begin_undo()
            self.window.loss_reaction()
            if self.cwnd_event_hook is not None:
                self.cwnd_event_hook(CaEvent.LOSS)
        self.recover = self.high_seq
        if self.tlp is not None:
            self.tlp.high_seq = 0
        self.rtt.back_off()
        self.board.mark_all_lost(self.snd_una, self.snd_nxt)
        if self.ecn:
            self.cwr_pending = True                   # tcp_enter_loss: tcp_ecn_queue_cwr
        self.window.enter_loss()
        self.timer_kind = RTO
        self.timer.start(self.rtt.rto)
        self.send_window()
