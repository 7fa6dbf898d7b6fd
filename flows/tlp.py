"""Tail loss probes (RFC 8985 §7), for the extended sender (flows/linux_sender.py).

As Linux (net/ipv4/tcp_output.c tcp_schedule_loss_probe, tcp_send_loss_probe; tcp_input.c
tcp_process_tlp_ack):

* scheduling: in OPEN or CWR with packets outstanding, after sending new data and on each ACK
  that advances snd_una, the sender's one timer is set to the probe timeout
  PTO = 2 SRTT + (200 ms, tcp_rto_min, when one packet is out: the peer may delay its ACK;
  else 2 ms, TCP_TIMEOUT_MIN), 1 s (TCP_TIMEOUT_INIT) before any RTT sample, and no later than
  the RTO would expire (measured from the first outstanding packet's send time, or from now
  on an ACK);
* the probe: one new packet if the receive window allows (beyond the congestion window if need
  be), else the highest packet sent, again; one probe per episode (`high_seq`, snd_nxt after the
  probe); then the RTO from now;
* the end of the episode: an ACK at or past `high_seq`. A probe of new data ends it; a
  retransmitted probe whose original also arrived (a D-SACK for it) ends it; otherwise, when
  the ACK goes past `high_seq` (or everything is acknowledged), the probe repaired a loss and
  the sender reduces its window once, as a CWR episode ended at once.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from flows.congestion import CWR, OPEN
from flows.linux_stack import LINUX_INITIAL_RTO_S, LINUX_MIN_RTO_S

if TYPE_CHECKING:
    from flows.linux_sender import LinuxSender

TCP_TIMEOUT_MIN_S = 0.002              # TCP_TIMEOUT_MIN (2 jiffies at HZ = 1000)
# before an RTT sample the probe timeout is TCP_TIMEOUT_INIT (LINUX_INITIAL_RTO_S); a lone
# packet's delayed-ACK allowance is tcp_rto_min (LINUX_MIN_RTO_S): flows/linux_stack.py


class TailLossProbe:
    """The loss-probe state of one sender."""

    __slots__ = ("high_seq", "probes", "retrans")

    def __init__(self) -> None:
        self.high_seq = 0              # snd_nxt after the outstanding probe (0: none)
        self.retrans = False           # the probe was a retransmission
        self.probes = 0

    def timeout(self, sender: LinuxSender, advancing: bool) -> float | None:
        """tcp_schedule_loss_probe: the probe timeout, or None if no probe may be scheduled."""
        state = sender.state
        if (state != OPEN and state != CWR) or sender.snd_una >= sender.high_seq:
            return None
        rtt = sender.rtt
        if rtt.srtt is None:
            pto = LINUX_INITIAL_RTO_S                  # TCP_TIMEOUT_INIT
        else:
            one = sender.high_seq - sender.snd_una == 1
            pto = 2.0 * rtt.srtt + (LINUX_MIN_RTO_S if one else TCP_TIMEOUT_MIN_S)
        rto_left = rtt.rto
        if not advancing:
            head = sender.board.xmit.get(sender.snd_una)
            if head is not None:
                rto_left = head[0] + rtt.rto - sender.sim.now
        if rto_left > 0.0:
            pto = min(pto, rto_left)
        return pto

    def probe(self, sender: LinuxSender) -> bool:
        """tcp_send_loss_probe: send the probe; False if one is outstanding already."""
        if self.high_seq:
            return False
        seq = sender.snd_nxt
        if seq < sender.n_packets and seq - sender.snd_una < sender.rwnd_pkts:
            self.retrans = False
        else:
            seq = sender.high_seq - 1
            self.retrans = True
        sender.transmit_one(seq)
        self.high_seq = sender.snd_nxt
        self.probes += 1
        return True

    def on_dsack(self, seq: int) -> None:
        if self.high_seq and self.retrans and seq == self.high_seq - 1:
            self.high_seq = 0                 # the probe and the original both arrived

    def repaired(self, cum: int, high_seq: int) -> bool:
        """tcp_process_tlp_ack, for an ACK of `cum` (>= the probe's high_seq): whether the probe
        repaired a loss (the sender then reduces its window)."""
        retrans = self.retrans
        if not retrans:
            self.high_seq = 0
            return False
        if cum > self.high_seq or high_seq == self.high_seq:
            self.high_seq = 0
            return True
        return False


RTO, PROBE, REORDER = 0, 1, 2          # what a Linux sender's one retransmission timer is armed for


def schedule_probe(sender, advancing: bool) -> bool:
    """tcp_schedule_loss_probe: arm `sender`'s timer for a loss probe (True), or leave it (False)
    when none may be scheduled."""
    tlp = sender.tlp
    assert tlp is not None
    pto = tlp.timeout(sender, advancing)
    if pto is None:
        return False
    sender.timer_kind = PROBE
    sender.timer.start(pto)
    return True


def send_probe(sender) -> None:
    """tcp_send_loss_probe, then the RTO from now (or from the first outstanding packet when no
    probe could be sent: tcp_rearm_rto)."""
    tlp = sender.tlp
    assert tlp is not None
    if tlp.probe(sender):
        sender.timer_kind = RTO
        sender.timer.start(sender.rtt.rto)
    else:
        sender._rearm_rto()

