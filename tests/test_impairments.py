"""Link impairments: loss, burst loss, duplication, reordering and jitter, after transmission."""
from __future__ import annotations

import pytest

from components.link import Link
from components.node import Host
from components.packet import DATA, Packet
from simulator.engine import Simulator
from topologies.spec import GilbertElliottSpec, ImpairmentSpec

RATE_BPS = 8192.0 * 100        # a 1024-byte packet takes 10 ms
DELAY_S = 0.05


def send_many(spec, n=2000, seed=3, gap_s=0.011):
    """n packets A->B, one every gap_s (no queueing); returns (arrivals, direction, sim)."""
    sim = Simulator(seed)
    a, b = Host("A"), Host("B")
    link = Link(sim, "L", a, b, RATE_BPS, DELAY_S, 10**6)
    d = link.directions[0]
    d.impair(spec)
    got = []
    for seq in range(n):
        sim.schedule_at(seq * gap_s, lambda s: d.send(Packet(DATA, a, b, 1024,
                                                             lambda p: got.append((sim.now, p.seq)), s)), seq)
    sim.run()
    return got, d, sim


def test_no_impairment_keeps_the_plain_receive_path():
    sim = Simulator()
    a, b = Host("A"), Host("B")
    link = Link(sim, "L", a, b, RATE_BPS, DELAY_S, 10**6)
    before = link.directions[0].dst_receive
    link.directions[0].impair(ImpairmentSpec())
    assert link.directions[0].dst_receive == before       # zero cost when nothing is impaired


def test_independent_loss_rate():
    got, d, _ = send_many(ImpairmentSpec(loss_rate=0.1), n=5000)
    lost = 5000 - len(got)
    assert d.impaired_drops == lost
    assert 0.085 < lost / 5000 < 0.115
    assert d.tx_pkts == 5000                       # lost packets used the link


def test_gilbert_elliott_losses_come_in_bursts():
    model = GilbertElliottSpec(p_good_to_bad=0.01, p_bad_to_good=0.2, loss_good=0.0, loss_bad=1.0)
    got, d, _ = send_many(ImpairmentSpec(loss_model=model), n=20000)
    arrived = {seq for _, seq in got}
    lost = [seq for seq in range(20000) if seq not in arrived]
    # stationary share of the bad state: p / (p + q) = 0.01 / 0.21
    assert len(lost) / 20000 == pytest.approx(0.01 / 0.21, rel=0.25)
    runs = sum(1 for i, seq in enumerate(lost) if i == 0 or lost[i - 1] != seq - 1)
    assert len(lost) / runs == pytest.approx(1 / 0.2, rel=0.25)   # mean burst length 1/q


def test_duplication_delivers_extra_copies_without_using_the_link():
    got, d, _ = send_many(ImpairmentSpec(duplicate_rate=0.25), n=4000)
    assert len(got) == 4000 + d.duplicated
    assert 0.22 < d.duplicated / 4000 < 0.28
    assert d.tx_pkts == 4000


def test_reordering_holds_packets_back_by_the_extra_delay():
    got, d, _ = send_many(ImpairmentSpec(reorder_rate=0.2, reorder_delay_s=0.1), n=2000)
    assert len(got) == 2000
    order = [seq for _, seq in got]
    overtaken = sum(1 for x, y in zip(order, order[1:]) if y < x)
    assert overtaken > 200 and d.delayed > 300
    nominal = {seq: seq * 0.011 + 0.01 + DELAY_S for seq in range(2000)}
    extra = sorted(round(t - nominal[seq], 9) for t, seq in got)
    assert set(extra) == {0.0, 0.1}


def test_jitter_without_reordering_keeps_fifo_order():
    got, d, _ = send_many(ImpairmentSpec(jitter_s=0.05), n=2000)
    order = [seq for _, seq in got]
    assert order == list(range(2000))
    delays = [t - (seq * 0.011) for t, seq in got]
    assert min(delays) >= 0.01 + DELAY_S - 1e-9 and max(delays) > 0.01 + DELAY_S + 0.03


def test_jitter_with_reordering_allowed_reorders():
    got, d, _ = send_many(ImpairmentSpec(jitter_s=0.05, jitter_reorder=True), n=2000)
    order = [seq for _, seq in got]
    assert order != sorted(order) and sorted(order) == list(range(2000))


def test_impairments_are_deterministic_for_a_seed():
    spec = ImpairmentSpec(loss_rate=0.05, duplicate_rate=0.1, reorder_rate=0.1, reorder_delay_s=0.02,
                          jitter_s=0.01)
    assert send_many(spec, seed=9)[0] == send_many(spec, seed=9)[0]
    assert send_many(spec, seed=9)[0] != send_many(spec, seed=10)[0]


# -- netem jitter (jitter_mode "netem") -------------------------------------------------------
def test_netem_jitter_draws_each_delay_around_the_links_and_reorders():
    # delay 50 ms +- 20 ms per packet (uniform), packets 11 ms apart: many arrive out of order
    got, d, _ = send_many(ImpairmentSpec(jitter_s=0.02, jitter_mode="netem"), n=4000)
    order = [seq for _, seq in got]
    assert sorted(order) == list(range(4000))                       # every packet, once
    overtaken = sum(1 for x, y in zip(order, order[1:]) if y < x)
    assert overtaken > 400
    delays = [t - seq * 0.011 - 0.01 for t, seq in got]           # minus the transmission
    assert DELAY_S - 0.02 - 1e-9 <= min(delays) < DELAY_S - 0.019
    assert DELAY_S + 0.019 < max(delays) < DELAY_S + 0.02
    assert sum(delays) / len(delays) == pytest.approx(DELAY_S, abs=0.001)   # mean: the delay
    below = sum(1 for x in delays if x < DELAY_S) / len(delays)
    assert below == pytest.approx(0.5, abs=0.03)                  # symmetric around it


def test_the_default_jitter_mode_keeps_the_order_of_the_same_jitter():
    for spec in (ImpairmentSpec(jitter_s=0.02), ImpairmentSpec(jitter_s=0.02, jitter_mode="added")):
        got, _, _ = send_many(spec, n=4000)
        assert [seq for _, seq in got] == list(range(4000))


def test_netem_jitter_larger_than_the_delay_is_cut_at_zero():
    # delay 50 ms +- 80 ms: a draw below zero delivers at the end of transmission, as netem
    # sends a packet whose time has passed at once
    got, _, _ = send_many(ImpairmentSpec(jitter_s=0.08, jitter_mode="netem"), n=3000)
    delays = [t - seq * 0.011 - 0.01 for t, seq in got]
    assert min(delays) > -1e-12
    at_once = sum(1 for x in delays if abs(x) < 1e-12)            # delivered at the end of
    assert at_once / len(delays) == pytest.approx(30 / 160, abs=0.03)   # transmission
    assert max(delays) < DELAY_S + 0.08


def test_netem_jitter_follows_a_delay_change():
    sim = Simulator(5)
    a, b = Host("A"), Host("B")
    link = Link(sim, "L", a, b, RATE_BPS, DELAY_S, 10**6)
    d = link.directions[0]
    d.impair(ImpairmentSpec(jitter_s=0.005, jitter_mode="netem"))
    assert link.transmitters[0].delay_s == 0.0 and link.transmitters[1].delay_s == DELAY_S
    got = []
    for seq in range(400):
        sim.schedule_at(seq * 0.011, lambda s: d.send(Packet(DATA, a, b, 1024,
                                                             lambda p: got.append((sim.now, p.seq)), s)), seq)
    sim.schedule_at(2.2, link.set_delay, 0.2)
    sim.run()
    assert link.transmitters[0].delay_s == 0.0 and link.transmitters[1].delay_s == 0.2
    for t, seq in got:
        sent = seq * 0.011 + 0.01                                   # end of transmission
        delay = DELAY_S if sent < 2.2 else 0.2
        assert delay - 0.005 - 1e-9 <= t - sent < delay + 0.005


def test_netem_jitter_on_a_half_duplex_link_is_refused():
    sim = Simulator()
    a, b = Host("A"), Host("B")
    link = Link(sim, "L", a, b, RATE_BPS, DELAY_S, 10**6, "half")
    with pytest.raises(ValueError, match='link L: jitter mode "netem" needs a full-duplex link'):
        link.directions[0].impair(ImpairmentSpec(jitter_s=0.01, jitter_mode="netem"))


def test_the_almost_vegas_example_reorders_with_netem_jitter_and_not_with_added_jitter():
    import copy
    import json
    from pathlib import Path

    from netsim.run import Run
    from topologies.loader import load_topology

    path = Path(__file__).resolve().parent.parent / "topologies" / "examples" / "almost_vegas_jitter.json"
    data = json.loads(path.read_text())
    bottleneck = next(link for link in data["links"] if link["id"] == "LB")
    assert bottleneck["delay_ms"] == 200
    assert bottleneck["impairments"]["R1->R2"] == {"jitter_ms": 20, "jitter_mode": "netem"}

    def arrivals(mode):
        """Sequence numbers of the data packets reaching H2, in arrival order."""
        variant = copy.deepcopy(data)
        variant["duration_s"] = 8
        variant["links"][1]["impairments"]["R1->R2"]["jitter_mode"] = mode
        run = Run(load_topology(variant))
        net = run.network
        last_hop = net.links["LA2"].direction_from(net.routers["R2"])
        seqs, deliver = [], last_hop.dst_receive

        def record(packet):
            if packet.kind == DATA:
                seqs.append(packet.seq)
            deliver(packet)
        last_hop.dst_receive = record
        run.execute()
        assert net.flows["F1"].delivered_bytes > 1e5
        assert net.links["LB"].directions[0].impaired_drops == 0          # nothing lost
        highest, late = -1, 0
        for seq in seqs:
            late += seq < highest
            highest = max(highest, seq)
        return len(seqs), late

    received, late = arrivals("netem")
    assert received > 50 and late > 0.05 * received     # reordered: behind a later-sent packet
    received, late = arrivals("added")
    assert received > 200 and late == 0               # the same jitter keeps the order
