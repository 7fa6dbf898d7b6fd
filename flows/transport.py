"""The reliable transport every flow shares; congestion control plugs in through hooks.

Sender: packets are numbered 0, 1, ...; the window (`cwnd`, packets) bounds the flight size
``snd_nxt - snd_una`` (RFC 5681). Loss is detected by the third duplicate ACK (fast retransmit)
or by the retransmission timer (RFC 6298: SRTT/RTTVAR, Karn's rule, exponential backoff, a
minimum RTO). After a timeout, and after Tahoe's fast retransmit, the sender goes back to the first
unacknowledged packet and resends, skipping packets the receiver reported by selective ACK. A new
loss reaction (ssthresh reduction) happens at most once per loss episode: further timeouts before
everything outstanding at the first one is acknowledged only back off and retransmit.

Loss recovery after a fast retransmit comes in three modes; the algorithm picks one (its
`recovery` attribute), since it is transport machinery rather than congestion control:

* ``"reno"`` (RFC 5681): the first ACK of new data ends recovery; the window is inflated by one
  packet per duplicate ACK meanwhile (the algorithm's hooks do that).
* ``"newreno"`` (RFC 6582): a partial ACK (one that does not cover everything outstanding when
  recovery began) retransmits the next unacknowledged packet and recovery goes on; the window is
  deflated by the packets acknowledged and grows by one. The retransmission timer is restarted on
  the first partial ACK only (the "impatient" variant), so a window with many losses falls back
  to a timeout rather than repairing one packet per round trip.
* ``"sack"`` (RFC 6675, conservative SACK-based recovery): the sender estimates the packets in
  flight (``pipe``: outstanding, minus those selectively acknowledged, minus those deemed lost —
  a hole with at least `dupack_threshold` selectively acknowledged packets above it — plus the
  retransmissions in flight) and, while pipe < cwnd, retransmits the lowest lost hole not yet
  retransmitted, else sends new data. Every hole is repaired within about one round trip.

Pacing: when the algorithm sets `pacing_rate_bps`, packets leave at that average rate, in quanta
of max(2 packets, 1 ms at the pacing rate) as Linux sizes its pacing bursts; a scheduled wake-up
resumes sending when the next quantum may go. Without pacing the window is sent as fast as the
link takes it.

Delivery-rate samples (for algorithms that set `wants_rate_samples`, e.g. BBR), after Cheng et
al., "Delivery Rate Estimation" (IETF draft): each transmission records how many packets had been
delivered (cumulatively or selectively acknowledged) and when; each ACK that delivers packets
yields a `RateSample` from the most recently sent of them: packets delivered since that
transmission divided by the longer of its send interval and its ACK interval.

Receiver: ACKs every data packet it receives, duplicates included, with the cumulative ACK (next
packet expected in order) and the sequence number of the packet that triggered the ACK (selective
ACK). Because every ACK is cumulative, a lost ACK is repaired by the next one and never stalls the
flow. The receiver delivers bytes to the application strictly in order and checks that each
delivered packet starts exactly at the next expected byte.

See docs/model.md for every choice made here.
"""
from __future__ import annotations

import math

from components.packet import ACK, DATA, Packet
from flows.congestion import LOSS, OPEN, RECOVERY
from simulator.engine import Timer

RTO_ALPHA = 1.0 / 8.0   # RFC 6298 (2.3)
RTO_BETA = 1.0 / 4.0
RTO_K = 4.0
PACING_QUANTUM_S = 0.001   # pacing releases max(2 packets, this much at the pacing rate) at once


class RateSample:
    """One delivery-rate sample, handed to `CongestionControl.on_rate_sample`.

    A flow reuses one object for all its samples (like Linux's on-stack ``rate_sample``): read
    it during the call, copy what must be kept."""

    __slots__ = ("delivery_rate_pps", "delivered", "prior_delivered", "interval_s", "rtt_s",
                 "is_app_limited", "newly_delivered")

    def __init__(self, delivery_rate_pps, delivered, prior_delivered, interval_s, rtt_s,
                 is_app_limited, newly_delivered):
        self.delivery_rate_pps = delivery_rate_pps
        self.delivered = delivered
        self.prior_delivered = prior_delivered
        self.interval_s = interval_s
        self.rtt_s = rtt_s
        self.is_app_limited = is_app_limited
        self.newly_delivered = newly_delivered


class Flow:
    """A reliable transfer from host `src` to host `dst` driven by a congestion-control class.

    `data_bytes` None means the flow sends until the simulation ends. Window state (`cwnd`,
    `ssthresh`, in packets) lives here and is changed by the algorithm's hooks.
    """

    __slots__ = (
        "sim", "id", "src", "dst", "data_bytes", "start_s", "cc", "transport",
        "packet_bytes", "ack_bytes", "n_packets", "last_packet_bytes", "dupack_threshold",
        # sender
        "cwnd", "ssthresh", "state", "snd_una", "snd_nxt", "high_seq", "recover", "dupacks",
        "sacked", "sack_top", "retx_out", "retx_next", "recovery_mode", "partial_acks",
        "srtt", "rttvar", "rto", "timer", "tick_interval_s",
        "pacing_rate_bps", "next_send_s", "pacing_at", "pacing_budget",
        "rate_samples", "delivered", "delivered_time_s", "first_sent_s", "app_limited_until",
        "tx_records", "sample",
        "started", "finish_s", "on_finish",
        # receiver
        "rcv_nxt", "out_of_order", "delivered_bytes", "arrived_bytes", "in_order",
        # statistics
        "packets_sent", "bytes_sent", "retransmissions", "timeouts", "rtt_sum", "rtt_count",
        "last_progress_s",
    )

    def __init__(self, sim, flow_id: str, src, dst, data_bytes, start_s: float, cc_class,
                 params: dict | None, transport, packet_bytes: int, ack_bytes: int):
        if data_bytes is not None and data_bytes <= 0:
            raise ValueError(f"flow {flow_id}: data must be positive, got {data_bytes} bytes")
        self.sim = sim
        self.id = flow_id
        self.src = src
        self.dst = dst
        self.data_bytes = data_bytes
        self.start_s = start_s
        self.transport = transport
        self.packet_bytes = packet_bytes
        self.ack_bytes = ack_bytes
        if data_bytes is None:
            self.n_packets = math.inf
            self.last_packet_bytes = packet_bytes
        else:
            self.n_packets = -(-data_bytes // packet_bytes)
            self.last_packet_bytes = data_bytes - (self.n_packets - 1) * packet_bytes
        self.dupack_threshold = transport.dupack_threshold
        self.cwnd = float(transport.initial_cwnd_pkts)
        ssthresh = transport.initial_ssthresh_pkts
        self.ssthresh = math.inf if ssthresh is None else float(ssthresh)
        self.state = OPEN
        self.snd_una = 0
        self.snd_nxt = 0
        self.high_seq = 0          # one past the highest sequence number ever sent
        self.recover = 0           # high_seq when the current loss episode began
        self.dupacks = 0
        self.sacked = set()        # sequence numbers above snd_una the receiver reported
        self.sack_top = []         # the (up to) dupack_threshold highest of them, ascending
        self.retx_out = set()      # SACK recovery: retransmissions of this episode in flight
        self.retx_next = 0         # SACK recovery: where the search for the next hole resumes
        self.partial_acks = 0      # NewReno: partial ACKs in the current recovery
        self.pacing_rate_bps = None   # set by the algorithm to pace; None: no pacing
        self.next_send_s = 0.0
        self.pacing_at = None         # time of the pending pacing wake-up, if any
        self.pacing_budget = 0        # packets the current pacing quantum may still send
        self.delivered = 0            # packets delivered (cumulatively or selectively ACKed)
        self.delivered_time_s = 0.0
        self.first_sent_s = 0.0
        self.app_limited_until = 0    # samples of packets below this delivered count: app-limited
        self.tx_records = {}          # seq -> (delivered, delivered_time, first_sent, sent, app)
        self.sample = RateSample(0.0, 0, 0, 0.0, 0.0, False, 0)
        self.srtt = None
        self.rttvar = None
        self.rto = transport.initial_rto_s
        self.timer = Timer(sim, self._on_timeout)
        self.started = False
        self.finish_s = None
        self.on_finish = None      # callable(flow), set by whoever runs the simulation
        self.rcv_nxt = 0
        self.out_of_order = set()
        self.delivered_bytes = 0
        self.arrived_bytes = 0      # data bytes that reached the receiver, in order or not
        self.in_order = True
        self.packets_sent = 0
        self.bytes_sent = 0
        self.retransmissions = 0
        self.timeouts = 0
        self.rtt_sum = 0.0
        self.rtt_count = 0
        self.last_progress_s = start_s
        self.cc = cc_class(self, params)
        self.tick_interval_s = self.cc.tick_interval_s
        self.recovery_mode = self.cc.recovery
        self.rate_samples = self.cc.wants_rate_samples
        sim.schedule_at(start_s, self._start)

    # -- queries ---------------------------------------------------------------------------
    @property
    def algorithm(self) -> str:
        return self.cc.name

    @property
    def finished(self) -> bool:
        return self.finish_s is not None

    def flight_size(self) -> int:
        """Packets sent and not yet cumulatively acknowledged (RFC 5681 FlightSize)."""
        return self.snd_nxt - self.snd_una

    def packet_size(self, seq: int) -> int:
        return self.last_packet_bytes if seq == self.n_packets - 1 else self.packet_bytes

    # -- sender ----------------------------------------------------------------------------
    def _start(self, _=None) -> None:
        self.started = True
        self.last_progress_s = self.sim.now
        self.cc.init()
        if self.tick_interval_s:
            self.sim.schedule(self.tick_interval_s, self._tick)
        self._send_window()

    def _tick(self, _=None) -> None:
        if self.finish_s is not None:
            return
        self.cc.tick()
        self.sim.schedule(self.tick_interval_s, self._tick)
        self._send_window()

    def _send_window(self) -> None:
        """Send new or go-back-N packets while the window allows."""
        if self.pacing_rate_bps and self.pacing_budget <= 0 and self.sim.now < self.next_send_s:
            self._wake_for_pacing()
            return
        if self.state == RECOVERY and self.recovery_mode == "sack":
            self._send_sack_recovery()
            return
        n_packets = self.n_packets
        sacked = self.sacked
        while self.snd_nxt < n_packets and self.snd_nxt - self.snd_una < self.cwnd:
            seq = self.snd_nxt
            if seq in sacked:           # the receiver has it: skip
                self.snd_nxt = seq + 1
                continue
            if self.pacing_rate_bps and not self._pace(seq):
                return
            self.snd_nxt = seq + 1
            self._transmit(seq)
            if self.snd_nxt > self.high_seq:
                self.high_seq = self.snd_nxt

    def _transmit(self, seq: int) -> None:
        retx = seq < self.high_seq
        size = self.last_packet_bytes if seq == self.n_packets - 1 else self.packet_bytes
        now = self.sim.now
        packet = Packet(DATA, self.src, self.dst, size, self._on_data, seq, -1, -1, now, retx)
        self.packets_sent += 1
        self.bytes_sent += size
        if retx:
            self.retransmissions += 1
        if not self.timer.active:
            self.timer.start(self.rto)
        if self.rate_samples:                         # delivery-rate bookkeeping, inlined
            records = self.tx_records
            if not records and self.snd_nxt <= self.snd_una + 1:
                self.first_sent_s = self.delivered_time_s = now    # nothing in flight: restart
            delivered = self.delivered
            if self.snd_nxt >= self.n_packets:
                self.app_limited_until = delivered + (self.snd_nxt - self.snd_una) or 1
            records[seq] = (delivered, self.delivered_time_s, self.first_sent_s, now,
                            delivered < self.app_limited_until)
        self.src.send(packet)

    def _rate_sample_one(self, seq: int) -> None:
        """`_rate_sample` for the common ACK that delivers exactly packet `seq`."""
        latest = self.tx_records.pop(seq, None)
        self.delivered += 1
        if latest is not None:
            self._emit_rate_sample(latest, 1)

    def _rate_sample(self, newly: list) -> None:
        """Delivery-rate sample from the packets `newly` delivered by one ACK."""
        records = self.tx_records
        latest = None
        for seq in newly:
            record = records.pop(seq, None)
            if record is not None and (latest is None or record[3] > latest[3]):
                latest = record
        self.delivered += len(newly)
        if latest is not None:
            self._emit_rate_sample(latest, len(newly))

    def _emit_rate_sample(self, latest: tuple, newly_delivered: int) -> None:
        now = self.sim.now
        prior_delivered, prior_time, first_sent, sent, app_limited = latest
        self.first_sent_s = sent
        self.delivered_time_s = now
        interval = max(sent - first_sent, now - prior_time)
        if interval <= 0.0:
            return
        rs = self.sample
        rs.delivery_rate_pps = (self.delivered - prior_delivered) / interval
        rs.delivered = self.delivered
        rs.prior_delivered = prior_delivered
        rs.interval_s = interval
        rs.rtt_s = now - sent
        rs.is_app_limited = app_limited
        rs.newly_delivered = newly_delivered
        self.cc.on_rate_sample(rs)

    def _on_ack(self, ack: Packet) -> None:
        if self.finish_s is not None:
            return
        self.last_progress_s = self.sim.now
        if not ack.retx:                              # Karn's rule
            self._sample_rtt(self.sim.now - ack.sent_s)
        cum = ack.ack_seq
        snd_una = self.snd_una
        sack = ack.sack_seq
        new_sack = sack >= cum and sack >= snd_una and sack not in self.sacked
        if new_sack:
            self._record_sack(sack)
        if self.rate_samples:
            if cum == snd_una + 1 and sack == snd_una:    # the common case: one packet in order
                self._rate_sample_one(snd_una)
            else:                                     # cumulatively ACKed (not sacked before)
                newly = [seq for seq in range(snd_una, cum) if seq not in self.sacked]
                if new_sack:                          # ... and the one this ACK reports
                    newly.append(sack)
                if newly:
                    self._rate_sample(newly)
        if cum > snd_una:
            self._on_new_ack(cum)
        elif cum == snd_una and self.snd_nxt > snd_una:
            self._on_dupack()
        if self.finish_s is None:
            self._send_window()

    def _record_sack(self, seq: int) -> None:
        self.sacked.add(seq)
        self.retx_out.discard(seq)
        top = self.sack_top
        if len(top) < self.dupack_threshold or seq > top[0]:
            top.append(seq)
            top.sort()
            if len(top) > self.dupack_threshold:
                del top[0]

    def _on_new_ack(self, cum: int) -> None:
        acked = cum - self.snd_una
        sacked = self.sacked
        if sacked or self.retx_out:
            for seq in range(self.snd_una, cum):
                sacked.discard(seq)
                self.retx_out.discard(seq)
            top = self.sack_top
            if top and top[0] < cum:
                top[:] = sorted(sacked)[-self.dupack_threshold:] if sacked else []
        self.snd_una = cum
        if self.snd_nxt < cum:
            self.snd_nxt = cum
        self.dupacks = 0
        self.last_progress_s = self.sim.now
        state = self.state
        if state == RECOVERY:
            mode = self.recovery_mode
            if mode == "reno" or cum >= self.recover:
                self._set_state(OPEN)             # retransmissions still in flight stay counted
            elif mode == "newreno":                   # RFC 6582 partial ACK
                self.partial_acks += 1
                self._transmit(cum)
                self.cwnd = max(self.cwnd - acked + 1.0, 1.0)
                if self.partial_acks > 1:
                    return                            # impatient: the timer keeps running
        else:
            self.cc.on_ack(acked)
            if state == LOSS and cum >= self.recover:
                self._set_state(OPEN)
        if cum >= self.n_packets:
            self._finish()
        elif cum < self.high_seq:
            self.timer.start(self.rto)                # RFC 6298 (5.3)
        else:
            self.timer.cancel()                       # RFC 6298 (5.2)

    def _on_dupack(self) -> None:
        self.dupacks += 1
        state = self.state
        if state == RECOVERY:
            if self.recovery_mode != "sack":
                self.cc.on_dupack()
        elif state == OPEN and self.dupacks == self.dupack_threshold:
            self.ssthresh = self.cc.ssthresh()
            self.recover = self.high_seq
            if self.cc.fast_recovery:
                if self.recovery_mode != "sack" or self.snd_una not in self.retx_out:
                    self._transmit(self.snd_una)      # fast retransmit
                    self.retx_out.add(self.snd_una)
                self.partial_acks = 0
                self.retx_next = self.snd_una + 1
                self._set_state(RECOVERY)
            else:
                self.snd_nxt = self.snd_una           # go back N (Tahoe)
                self._set_state(LOSS)

    def _on_timeout(self) -> None:
        if self.finish_s is not None or self.snd_una >= self.high_seq:
            return
        self.timeouts += 1
        if self.state == OPEN:                        # one reaction per loss episode: a timeout
            self.ssthresh = self.cc.ssthresh()        # in recovery or loss keeps ssthresh
        self.recover = self.high_seq
        self.rto = min(self.rto * 2.0, self.transport.max_rto_s)   # RFC 6298 (5.5)
        self.snd_nxt = self.snd_una
        self.dupacks = 0
        self.retx_out.clear()
        self._set_state(LOSS)
        self.timer.start(self.rto)
        self._send_window()

    def pipe(self) -> int:
        """RFC 6675 estimate of the packets in flight: outstanding, minus those selectively
        acknowledged, minus those deemed lost, plus the retransmissions in flight."""
        outstanding = self.snd_nxt - self.snd_una
        n_sacked = len(self.sacked)
        return outstanding - n_sacked - self._lost_count(n_sacked) + len(self.retx_out)

    def _lost_count(self, n_sacked: int) -> int:
        # Unsacked packets below the dupack_threshold-th highest sacked one are deemed lost;
        # exactly dupack_threshold sacked packets lie at or above it.
        threshold = self.dupack_threshold
        if n_sacked < threshold:
            return 0
        limit = self.sack_top[0]
        return (limit - self.snd_una) - (n_sacked - threshold)

    def _next_hole(self):
        """The lowest packet deemed lost and not yet retransmitted in this recovery, or None."""
        if len(self.sacked) < self.dupack_threshold:
            return None
        limit = self.sack_top[0]
        seq = max(self.retx_next, self.snd_una)
        sacked, retx_out = self.sacked, self.retx_out
        while seq < limit and (seq in sacked or seq in retx_out):
            seq += 1
        self.retx_next = seq
        return seq if seq < limit else None

    def _pace(self, seq: int) -> bool:
        """Whether packet `seq` may leave now under pacing; if not, wake up when it may.

        Packets leave in quanta of max(2 packets, 1 ms at the pacing rate), as Linux sizes its
        pacing bursts; each packet pushes the next quantum's start back by its size at the
        pacing rate, so the average rate is the pacing rate."""
        now = self.sim.now
        rate = self.pacing_rate_bps
        if self.pacing_budget <= 0:
            if now < self.next_send_s:
                self._wake_for_pacing()
                return False
            self.pacing_budget = max(2, int(rate * PACING_QUANTUM_S / (8.0 * self.packet_bytes)))
        self.pacing_budget -= 1
        start = self.next_send_s if self.next_send_s > now else now
        self.next_send_s = start + self.packet_size(seq) * 8.0 / rate
        return True

    def _wake_for_pacing(self) -> None:
        at = self.next_send_s
        if self.pacing_at is None or self.pacing_at > at:
            self.pacing_at = at
            self.sim.schedule_at(at, self._pacing_wakeup, at)

    def _pacing_wakeup(self, at: float) -> None:
        if at != self.pacing_at:
            return                                    # superseded by an earlier wake-up
        self.pacing_at = None
        if self.finish_s is None:
            self._send_window()

    def _send_sack_recovery(self) -> None:
        while self.cwnd - self.pipe() >= 1.0:
            if self.pacing_rate_bps and not self._pace(self.snd_una):
                return
            hole = self._next_hole()
            if hole is not None:
                self.retx_out.add(hole)
                self.retx_next = hole + 1
                self._transmit(hole)
            elif self.snd_nxt < self.n_packets:
                seq = self.snd_nxt
                self._transmit(seq)                   # new data: not a retransmission
                self.snd_nxt = self.high_seq = seq + 1
            else:
                break

    def _set_state(self, new: str) -> None:
        old = self.state
        self.state = new
        self.cc.on_state(old, new)

    def _sample_rtt(self, rtt_s: float) -> None:
        transport = self.transport
        if self.srtt is None:                         # RFC 6298 (2.2)
            self.srtt = rtt_s
            self.rttvar = rtt_s / 2.0
        else:                                         # RFC 6298 (2.3)
            self.rttvar = (1.0 - RTO_BETA) * self.rttvar + RTO_BETA * abs(self.srtt - rtt_s)
            self.srtt = (1.0 - RTO_ALPHA) * self.srtt + RTO_ALPHA * rtt_s
        rto = self.srtt + RTO_K * self.rttvar
        self.rto = min(max(rto, transport.min_rto_s), transport.max_rto_s)
        self.rtt_sum += rtt_s
        self.rtt_count += 1
        self.cc.on_rtt(rtt_s)

    def _finish(self) -> None:
        self.finish_s = self.sim.now
        self.timer.cancel()
        if self.on_finish is not None:
            self.on_finish(self)

    # -- receiver --------------------------------------------------------------------------
    def _on_data(self, packet: Packet) -> None:
        self.last_progress_s = self.sim.now           # something of the flow got through
        self.arrived_bytes += packet.size_bytes
        seq = packet.seq
        rcv_nxt = self.rcv_nxt
        if seq == rcv_nxt:
            self._deliver(packet.size_bytes, seq)
            rcv_nxt += 1
            out_of_order = self.out_of_order
            while rcv_nxt in out_of_order:
                out_of_order.remove(rcv_nxt)
                self._deliver(self.packet_size(rcv_nxt), rcv_nxt)
                rcv_nxt += 1
            self.rcv_nxt = rcv_nxt
        elif seq > rcv_nxt:
            self.out_of_order.add(seq)
        ack = Packet(ACK, self.dst, self.src, self.ack_bytes, self._on_ack, -1, self.rcv_nxt, seq,
                     packet.sent_s, packet.retx)
        self.dst.send(ack)

    def _deliver(self, size: int, seq: int) -> None:
        if seq * self.packet_bytes != self.delivered_bytes or size != self.packet_size(seq):
            self.in_order = False
        self.delivered_bytes += size

    def delivered_all(self) -> bool:
        """True when the receiver delivered exactly the flow's data, in order."""
        return self.in_order and self.data_bytes is not None and self.delivered_bytes == self.data_bytes

    def __repr__(self) -> str:
        return f"Flow({self.id}, {self.src.id}->{self.dst.id}, {self.cc.name})"
