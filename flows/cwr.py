"""Window reductions without loss recovery: the CWR state (Linux tcp_enter_cwr,
tcp_end_cwnd_reduction), for the extended sender (flows/linux_sender.py).

A CWR episode begins on an ECN echo in OPEN (RFC 3168 §6.1.2) or when a tail loss probe turns
out to have repaired a loss (RFC 8985 §7.4, Linux tcp_process_tlp_ack). ssthresh comes from the
algorithm (`ecn_ssthresh()` for an echo, `ssthresh()` after a probe), the algorithm is told
`CaEvent.ENTER_CWR`, and the window is reduced by PRR over the next round trip (flows/prr.py;
at once to ssthresh without PRR). The episode ends when snd_una passes the highest packet sent
when it began (the CWR flag has then reached the receiver): cwnd = ssthresh and
`CaEvent.COMPLETE_CWR`. `end_reduction` also ends a fast recovery (cwnd = ssthresh unless it
was undone). Algorithms that are not loss-based (BBR) do not enter CWR.

On an ECN flow every window reduction puts CWR on the next new data packet (Linux
tcp_init_cwnd_reduction and tcp_enter_loss call tcp_ecn_queue_cwr): a CWR episode here, a fast
recovery (`LinuxSender._enter_recovery`) and a timeout (`LinuxSender._retransmit_timeout`), so
the receiver stops echoing ECE for a congestion event the loss already answered.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from flows.congestion import CWR, OPEN, RECOVERY, CaEvent
from flows.prr import PrrWindow

if TYPE_CHECKING:
    from flows.linux_sender import LinuxSender


def enter_cwr(sender: LinuxSender, ecn: bool) -> bool:
    """tcp_enter_cwr (tcp_init_cwnd_reduction): ssthresh from the algorithm, CWR."""
    window = sender.window
    if not sender.cc.loss_based:
        return False
    if sender.undo is not None:
        sender.undo.marker = sender.undo.undone = False
    if isinstance(window, PrrWindow):
        window.begin_reduction()
    if ecn:
        if not window.ecn_reaction():
            return False
        if isinstance(window, PrrWindow):
            sender.cwnd = window.flow.prior_cwnd    # PRR reduces it ACK by ACK
    else:
        window.loss_reaction()
    sender.recover = sender.high_seq
    if sender.tlp is not None:
        sender.tlp.high_seq = 0
    if sender.ecn:
        sender.cwr_pending = True                   # tcp_ecn_queue_cwr
    window._set_state(CWR)
    if sender.cwnd_event_hook is not None:
        sender.cwnd_event_hook(CaEvent.ENTER_CWR)
    return True


def end_reduction(sender: LinuxSender) -> None:
    """tcp_end_cwnd_reduction: cwnd = ssthresh (unless undone), COMPLETE_CWR, OPEN."""
    undone = sender.undo is not None and sender.undo.undone
    if sender.state == RECOVERY and not undone:
        sender.window.end_episode()                 # cwnd = ssthresh (BBR: its own)
    else:
        if sender.state == CWR and sender.cc.loss_based:
            sender.cwnd = sender.ssthresh
        sender.window._set_state(OPEN)
    if sender.cwnd_event_hook is not None:
        sender.cwnd_event_hook(CaEvent.COMPLETE_CWR)


def ecn_ack(sender: LinuxSender, ece: bool, acked: int) -> None:
    """An ACK of an ECN flow (RFC 3168 §6.1.2 as Linux): count the echo, show the ACK to the
    algorithm; an ECE in OPEN enters CWR (tcp_enter_cwr), and the next new packet carries CWR.
    An ECE in CWR, fast recovery or LOSS changes nothing: the window was already reduced in
    this window of data (RFC 3168 §6.1.2; Linux tcp_try_to_open calls tcp_enter_cwr only
    below TCP_CA_CWR, and recovery and LOSS do not call it), and that reduction queued CWR."""
    if ece:
        sender.ecn_echoes += 1
    sender.cc.ecn_ack(max(acked, 0), ece)
    if ece and sender.state == OPEN and enter_cwr(sender, ecn=True):
        sender.ecn_reactions += 1                   # (enter_cwr queued the CWR)
