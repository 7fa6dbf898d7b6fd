"""The Linux stack's ECN sender (flows/linux_sender.py, flows/cwr.py): every window reduction of
an ECN flow queues CWR (tcp_init_cwnd_reduction / tcp_enter_loss -> tcp_ecn_queue_cwr), and
DCTCP keeps ECT on retransmissions and ACKs (tcp_ecn_send: only !tcp_ca_needs_ecn clears it);
classic ECN's retransmissions stay Not-ECT (RFC 3168 §6.1.5)."""
from __future__ import annotations

from components.packet import ACK, DATA
from flows.congestion import RECOVERY
from flows.dctcp import Dctcp
from flows.reno import Reno
from flows.transport import Flow
from topologies.spec import TransportSpec


def _ecn_flow(make_flow, algorithm=Reno, packets=300):
    """make_flow's one-link flow on the Linux stack, with ECN; every data packet H1 sends and
    every ACK H2 sends is recorded (of this flow, F2: make_flow's own F1 runs beside it)."""
    sim, h1, h2, _ = make_flow(packets=packets)
    flow = Flow(sim, "F2", h1, h2, packets * 1000, 0.0, algorithm, None,
                TransportSpec(stack="linux"), 1000, 40, ecn=True)
    sent, acks = [], []
    send1, send2 = h1.send, h2.send

    def record1(packet):
        if packet.kind == DATA and packet.deliver.__self__ is flow.receiver:
            sent.append((sim.now, packet, flow.sender.state))
        return send1(packet)

    def record2(packet):
        if packet.kind == ACK and packet.deliver.__self__ is flow.sender:
            acks.append(packet)
        return send2(packet)

    h1.send, h2.send = record1, record2
    return sim, h1, h2, flow, sent, acks


def _drop_first(drop_at, h2, seq):
    held = {seq}

    def predicate(packet):
        if packet.kind == DATA and packet.seq in held and packet.ect:   # F2's
            held.discard(packet.seq)
            return True
        return False
    return drop_at(h2, predicate)


def test_fast_recovery_puts_cwr_on_the_next_new_packet(make_flow, drop_at):
    """tcp_enter_recovery -> tcp_init_cwnd_reduction -> tcp_ecn_queue_cwr: before, CWR went only
    after an ECE, and the receiver went on echoing a congestion event the loss had answered."""
    sim, _h1, h2, flow, sent, _ = _ecn_flow(make_flow)
    _drop_first(drop_at, h2, 60)
    sim.run()
    first_retx = next(i for i, (_, p, _) in enumerate(sent) if p.retx)
    assert sent[first_retx][2] == RECOVERY
    new_after = next(p for _, p, _ in sent[first_retx:] if not p.retx)
    assert new_after.payload is True                        # CWR
    assert flow.sender.ecn_reactions == 0                   # no ECE: not an ECN reaction


def test_a_timeout_puts_cwr_on_the_next_new_packet(make_flow):
    """tcp_enter_loss queues CWR too."""
    sim, _h1, _h2, flow, sent, _ = _ecn_flow(make_flow)
    sim.schedule_at(0.05, lambda _=None: flow.sender._retransmit_timeout())
    sim.run()
    at = next(i for i, (t, _, _) in enumerate(sent) if t >= 0.05)
    new_after = next(p for _, p, _ in sent[at:] if not p.retx and p.seq >= 0)
    assert new_after.payload is True


def test_classic_ecn_retransmissions_are_not_ect(make_flow, drop_at):
    sim, _h1, h2, _flow, sent, acks = _ecn_flow(make_flow)
    _drop_first(drop_at, h2, 60)
    sim.run()
    retx = [p for _, p, _ in sent if p.retx]
    assert retx and not any(p.ect for p in retx)
    assert all(p.ect for _, p, _ in sent if not p.retx)
    assert not any(a.ect for a in acks)


def test_dctcp_retransmissions_and_acks_stay_ect(make_flow, drop_at):
    """Linux tcp_ecn_send: `else if (!tcp_ca_needs_ecn(sk))` clears ECT on ACKs and
    retransmissions; tcp_dctcp sets TCP_CONG_NEEDS_ECN, so DCTCP's keep ECT(0)."""
    sim, _h1, h2, flow, sent, acks = _ecn_flow(make_flow, algorithm=Dctcp)
    _drop_first(drop_at, h2, 60)
    sim.run()
    retx = [p for _, p, _ in sent if p.retx]
    assert retx and all(p.ect for p in retx)
    assert acks and all(a.ect for a in acks)
    assert flow.sender.retransmissions == len(retx) and flow.finish_s is not None
