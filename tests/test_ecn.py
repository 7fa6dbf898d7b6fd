"""ECN in the transport (RFC 3168, RFC 8257 §3.2): the receiver's echo, CWR, the sender's reaction
at most once per window, without retransmission."""
from __future__ import annotations

import pytest
from networks import dumbbell, run

from components.packet import ACK, DATA, Packet
from flows.receiver import EcnDelayedReceiver
from netsim.run import Run
from simulator.engine import Simulator
from topologies.loader import load_topology


class _Host:
    id = "H"

    def __init__(self):
        self.sent = []

    def send(self, packet):
        self.sent.append(packet)


def _receiver(ecn, every=1, timeout_s=0.04):
    sim = Simulator()
    host = _Host()
    receiver = EcnDelayedReceiver(sim, host, _Host(), 1000, 1000, 1000, 40, lambda p: None, 0.0,
                                  ecn=ecn, every=every, timeout_s=timeout_s)
    return sim, host, receiver


def _data(seq, ce=False, cwr=False):
    packet = Packet(DATA, None, None, 1000, None, seq, -1, -1, 0.0, False, None, True)
    packet.ce = ce
    if cwr:
        packet.payload = True
    return packet


def _ece(host):
    return [ack.payload is True for ack in host.sent]


def test_packet_flags_default_off():
    packet = Packet(ACK, None, None, 40, None)
    assert packet.ect is False and packet.ce is False


def test_classic_echo_until_cwr():
    _, host, receiver = _receiver("classic")
    receiver.on_data(_data(0))
    receiver.on_data(_data(1, ce=True))
    receiver.on_data(_data(2))
    receiver.on_data(_data(3))
    receiver.on_data(_data(4, cwr=True))
    receiver.on_data(_data(5))
    assert _ece(host) == [False, True, True, True, False, False]


def test_dctcp_echo_is_the_ce_of_each_packet():
    _, host, receiver = _receiver("dctcp")
    for seq, ce in enumerate([False, True, True, False, True]):
        receiver.on_data(_data(seq, ce=ce))
    assert _ece(host) == [False, True, True, False, True]


def test_dctcp_delayed_acks_ack_at_once_on_a_ce_change():
    sim, host, receiver = _receiver("dctcp", every=2)
    receiver.on_data(_data(0))                  # pending
    receiver.on_data(_data(1, ce=True))         # change: ACK packet 0 unmarked, 1 pending
    assert [(a.ack_seq, a.payload is True) for a in host.sent] == [(1, False)]
    receiver.on_data(_data(2, ce=True))         # second of the run: ACK both, marked
    assert [(a.ack_seq, a.payload is True) for a in host.sent] == [(1, False), (3, True)]
    receiver.on_data(_data(3, ce=True))         # pending, marked; the timer sends it
    sim.run() if hasattr(sim, "run") else None
    assert [(a.ack_seq, a.payload is True) for a in host.sent][-1] == (4, True)


def test_delayed_ack_out_of_order_and_gap_fill_at_once():
    _, host, receiver = _receiver(None, every=2)
    receiver.on_data(_data(0))                  # delayed
    assert host.sent == []
    receiver.on_data(_data(2))                  # out of order: at once
    receiver.on_data(_data(1))                  # fills the gap: at once
    assert [(a.ack_seq, a.sack_seq) for a in host.sent] == [(1, 2), (3, 1)]


def _marked_run(algorithm, ecn, k_pkts=20, n=2, duration_s=4.0, buffer_kb=150.0):
    """A dumbbell whose bottleneck marks with the `step` discipline above k_pkts 1024 B packets
    when `ecn`, else drop-tail; its summary."""
    topology = dumbbell(n, rate_mbps=20.0, delay_ms=5.0, buffer_kb=buffer_kb, algorithm=algorithm,
                        duration_s=duration_s, access_jitter_ms=0.5, name=f"ecn_{algorithm}_{ecn}")
    for flow in topology["flows"]:
        flow["ecn"] = ecn
    if ecn:
        topology["links"][0]["queue"] = {"discipline": "step", "k_kb": k_pkts * 1.024}
    return run(topology).summary


def _marks(summary):
    return summary["links"]["L"]["directions"]["R1->R2"]["marks"]


def test_reno_with_ecn_reacts_without_retransmitting():
    summary = _marked_run("reno", True)
    assert _marks(summary) > 0
    for flow in summary["flows"].values():
        assert flow["ecn_echoes"] > 0 and flow["ecn_reactions"] > 0
        assert flow["retransmissions"] == 0
        # at most one reaction per round trip (base RTT about 12 ms, longer with the queue)
        assert flow["ecn_reactions"] <= 4.0 / 0.012


def test_reno_goodput_as_without_ecn_with_few_retransmissions():
    """Step marking at 20 packets against a 60-packet drop-tail buffer: at least the same
    goodput, a small fraction of the retransmissions (RED with ECN:
    tests/validation/test_red_ecn.py)."""
    with_ecn = _marked_run("reno", True, buffer_kb=60.0, duration_s=8.0)
    drop_tail = _marked_run("reno", False, buffer_kb=60.0, duration_s=8.0)
    goodput = [sum(f["goodput_mbps"] for f in s["flows"].values()) for s in (with_ecn, drop_tail)]
    retx = [sum(f["retransmissions"] for f in s["flows"].values()) for s in (with_ecn, drop_tail)]
    assert goodput[0] >= 0.95 * goodput[1], goodput
    assert retx[0] <= 0.2 * retx[1] and retx[1] > 20, retx


def test_every_loss_based_algorithm_reacts_to_ecn():
    for algorithm in ("newreno", "cubic", "vegas", "fast", "dctcp"):
        summary = _marked_run(algorithm, True, duration_s=2.0)
        for flow in summary["flows"].values():
            assert flow["in_order"], algorithm
            if algorithm != "vegas":            # Vegas may keep the queue below K
                assert flow["ecn_reactions"] > 0, algorithm


def test_summary_counts_zero_without_ecn():
    topology = dumbbell(1, rate_mbps=10.0, delay_ms=5.0, data_mb=0.2)
    flow = run(topology).summary["flows"]["F0"]
    assert flow["ecn_echoes"] == 0 and flow["ecn_reactions"] == 0


def _count_echoes(run_obj):
    """Per sender host: ACKs that arrive carrying ECE, and whether the last one did (wrapping
    the receive callbacks of the directions into the hosts)."""
    seen: dict = {}
    for link in run_obj.network.links.values():
        for d in link.directions:
            inner = d.dst_receive

            def receive(packet, _inner=inner, _node=d.dst.id):
                if packet.kind == ACK:
                    count, _ = seen.get(_node, (0, False))
                    seen[_node] = (count + (packet.payload is True), packet.payload is True)
                _inner(packet)

            d.dst_receive = receive
    return seen


@pytest.mark.parametrize("stack", ["classic", "linux"])
def test_every_ack_carrying_ece_is_counted_the_completing_one_too(stack):
    """`ecn_echoes` counts the ACKs that carried ECE, as a capture of the sender does: the ACK
    that completes the flow too (it was left out: tshark counted one more)."""
    topology = dumbbell(2, rate_mbps=20.0, delay_ms=5.0, buffer_kb=150.0, algorithm="reno",
                        duration_s=10.0, name=f"ece_{stack}")
    # (F0's last ACK echoes CE; Linux: 3 and 3 MB since its receiver acknowledges a new CE
    # mark and a CWR at once, and its sender queues CWR on a loss's reduction too)
    sizes = {"classic": [0.5, 3.0], "linux": [3.0, 3.0]}[stack]
    for flow, size in zip(topology["flows"], sizes):
        flow.update(ecn=True, data_mb=size, transport={"stack": stack})
    topology["links"][0]["queue"] = {"discipline": "step", "k_kb": 5.0}
    run_obj = Run(load_topology(topology))
    seen = _count_echoes(run_obj)
    flows = run_obj.execute().summary["flows"]
    _, last_had_ece = seen["S0"]
    assert flows["F0"]["finish_s"] is not None and last_had_ece
    for i in range(2):
        assert flows[f"F{i}"]["ecn_echoes"] == seen[f"S{i}"][0] > 0
