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
