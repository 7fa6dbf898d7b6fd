"""The reliable transport every flow shares; congestion control plugs in through hooks.

A `Flow` composes small parts, each one concept in its own module:

==============================  ================================================================
part                            owns
==============================  ================================================================
`Sender` (flows/sender.py)      sequence numbers, the window (cwnd, ssthresh, state), loss
                                detection, the retransmission timer, retransmission; runs the
                                algorithm's hooks and is the flow the algorithm sees
`RttEstimator` (flows/rtt.py)   SRTT, RTTVAR, RTO, backoff (RFC 6298), RTT statistics
`Scoreboard`                    selectively acknowledged packets, retransmissions in flight,
(flows/scoreboard.py)           RFC 6675's pipe and holes
`Pacer` (flows/pacer.py)        releasing packets no faster than the algorithm's pacing rate
`RateSampler`                   delivery-rate samples (for algorithms that want them)
(flows/rate_sampler.py)
`Receiver` (flows/receiver.py)  in-order delivery to the application, acknowledgements
                                (`LinuxReceiver`: Linux's delayed ACKs and D-SACKs)
`StackOptions`                  the mechanisms of the flow's transport stack, "classic" or
(flows/linux_stack.py)          "linux", from its transport settings
`LinuxSender`                   the sender with SACK recovery for every algorithm, RACK-TLP
(flows/linux_sender.py)         (flows/rack.py, flows/tlp.py), PRR and CWR (flows/prr.py,
                                flows/cwr.py) and undo (flows/undo.py), for flows whose stack
                                turns any of them on
==============================  ================================================================

`Flow` itself holds what identifies the transfer (hosts, data, start time), starts it, reports
its completion (`on_finish`), and exposes the figures the run harness reads.

See docs/model.md for every choice made here.
"""
from __future__ import annotations

import math
from operator import attrgetter
from typing import Callable

from flows.linux_stack import stack_options
from flows.rate_sampler import RateSample
from flows.receiver import EcnDelayedReceiver, LinuxReceiver, Receiver
from flows.sender import Sender

__all__ = ["Flow", "RateSample"]


class Flow:
    """A reliable transfer from host `src` to host `dst` driven by a congestion-control class.

    `data_bytes` None means the flow sends until the simulation ends. `ecn`: RFC 3168 ECN;
    `delayed_ack`: (every, timeout_s) for delayed ACKs (None: every packet is ACKed at once, or
    as Linux does on the Linux stack). `transport`'s stack and mechanisms (flows/linux_stack.py)
    choose the sender (`Sender`, or `flows.linux_sender.LinuxSender`) and the receiver.
    The window state (`cwnd`, `ssthresh`, in packets) lives in the sender (`flow.sender`),
    which the algorithm's hooks read and change; the attributes below read the parts.
    """

    __slots__ = ("ack_bytes", "data_bytes", "dst", "id", "last_packet_bytes", "n_packets",
                 "on_finish", "packet_bytes", "receiver", "sender", "sim", "src", "start_s",
                 "started", "transport")

    def __init__(self, sim, flow_id: str, src, dst, data_bytes, start_s: float, cc_class,
                 params: dict | None, transport, packet_bytes: int, ack_bytes: int, *,
                 ecn: bool = False, delayed_ack: tuple[int, float] | None = None):
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
            self.n_packets: float = math.inf
            self.last_packet_bytes = packet_bytes
        else:
            self.n_packets = -(-data_bytes // packet_bytes)
            self.last_packet_bytes = data_bytes - (self.n_packets - 1) * packet_bytes
        self.started = False
        self.on_finish: Callable[[Flow], None] | None = None   # set by whoever runs the simulation
        options = stack_options(transport, packet_bytes)
        linux_acks = options.linux_acks and delayed_ack is None   # the flow's own setting wins
        sender_class = Sender
        if options.extended:
            from flows.linux_sender import LinuxSender
            sender_class = LinuxSender
        delayed = delayed_ack is not None or linux_acks
        self.sender = sender_class(sim, src, dst, self.n_packets, packet_bytes,
                                   self.last_packet_bytes, transport, cc_class, params, start_s,
                                   ecn=ecn, abc_limit=2.0 if delayed else 1.0, options=options)
        if linux_acks:
            self.receiver: Receiver = LinuxReceiver(
                sim, dst, src, self.n_packets, packet_bytes, self.last_packet_bytes, ack_bytes,
                self.sender.on_ack, start_s, ecn=cc_class.ecn_echo if ecn else None)
        elif ecn or delayed_ack is not None:
            every, timeout_s = delayed_ack if delayed_ack is not None else (1, 0.0)
            self.receiver = EcnDelayedReceiver(
                sim, dst, src, self.n_packets, packet_bytes, self.last_packet_bytes, ack_bytes,
                self.sender.on_ack, start_s, ecn=cc_class.ecn_echo if ecn else None,
                every=every, timeout_s=timeout_s)
        else:
            self.receiver = Receiver(sim, dst, src, self.n_packets, packet_bytes,
                                     self.last_packet_bytes, ack_bytes, self.sender.on_ack,
                                     start_s)
        self.sender.deliver_data = self.receiver.on_data
        self.sender.on_complete = self._completed
        sim.schedule_ahead(start_s, self._start)   # (parked until its slot: simulator/engine.py)

    def _start(self, _=None) -> None:
        self.started = True
        self.sender.start()

    def _completed(self) -> None:
        if self.on_finish is not None:
            self.on_finish(self)

    # -- what the run harness, routing, theory and tests read ------------------------------
    cc = property(attrgetter("sender.cc"), doc="The congestion-control algorithm.")
    algorithm = property(attrgetter("sender.cc.name"), doc="The algorithm's name.")
    rtt = property(attrgetter("sender.rtt"), doc="The RTT estimator (`RttEstimator`).")
    cwnd = property(attrgetter("sender.cwnd"), doc="Congestion window, packets.")
    ssthresh = property(attrgetter("sender.ssthresh"), doc="Slow-start threshold, packets.")
    state = property(attrgetter("sender.state"), doc="OPEN, RECOVERY or LOSS.")
    snd_una = property(attrgetter("sender.snd_una"), doc="First unacknowledged packet.")
    snd_nxt = property(attrgetter("sender.snd_nxt"), doc="Next packet to send.")
    finish_s = property(attrgetter("sender.finish_s"), doc="Completion time, or None.")
    bytes_sent = property(attrgetter("sender.bytes_sent"), doc="Data bytes sent, retransmissions included.")
    packets_sent = property(attrgetter("sender.packets_sent"), doc="Data packets sent.")
    retransmissions = property(attrgetter("sender.retransmissions"), doc="Packets resent.")
    timeouts = property(attrgetter("sender.timeouts"), doc="Retransmission timeouts.")
    ecn_echoes = property(attrgetter("sender.ecn_echoes"), doc="ACKs that carried ECE.")
    ecn_reactions = property(attrgetter("sender.ecn_reactions"),
                             doc="Window reductions on ECE (RFC 3168).")
    delivered = property(attrgetter("sender.delivered"),
                         doc="Packets delivered (only counted with delivery-rate samples).")
    srtt = property(attrgetter("sender.rtt.srtt"), doc="Smoothed RTT, s (None before a sample).")
    rto = property(attrgetter("sender.rtt.rto"), doc="Retransmission timeout, s.")
    rtt_sum = property(attrgetter("sender.rtt.rtt_sum"), doc="Sum of the RTT samples, s.")
    rtt_count = property(attrgetter("sender.rtt.rtt_count"), doc="Number of RTT samples.")
    delivered_bytes = property(attrgetter("receiver.delivered_bytes"),
                               doc="Bytes delivered to the application, in order.")
    arrived_bytes = property(attrgetter("receiver.arrived_bytes"),
                             doc="Data bytes that reached the receiver, in order or not.")
    in_order = property(attrgetter("receiver.in_order"),
                        doc="Whether every delivered packet started at the next expected byte.")

    @property
    def finished(self) -> bool:
        return self.sender.finish_s is not None

    @property
    def last_progress_s(self) -> float:
        """When the flow last made progress (its start before it did): data the receiver did
        not have arrived there, or new data was acknowledged at the sender. Retransmissions of
        data already received, and duplicate ACKs, are not progress: a flow whose ACKs cannot
        come back resends the same packet forever, and that is a stall."""
        return max(self.sender.last_acked_s, self.receiver.last_new_s)

    def flight_size(self) -> int:
        """Packets sent and not yet cumulatively acknowledged (RFC 5681 FlightSize)."""
        return self.sender.flight_size()

    def delivered_all(self) -> bool:
        """True when the receiver delivered exactly the flow's data, in order."""
        receiver = self.receiver
        return receiver.in_order and self.data_bytes is not None \
            and receiver.delivered_bytes == self.data_bytes

    def __repr__(self) -> str:
        return f"Flow({self.id}, {self.src.id}->{self.dst.id}, {self.sender.cc.name})"
