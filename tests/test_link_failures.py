"""Links that go down and come back up: what is lost, what is counted, what nodes are told."""
from __future__ import annotations

import pytest

from components.link import Link
from components.node import Host, Router
from components.packet import DATA, Packet
from simulator.engine import Simulator

RATE_BPS = 8192.0        # a 1024-byte packet takes exactly 1 s to transmit
DELAY_S = 0.5


class Recorder(Router):
    """A router that records link changes (stands in for a routing agent)."""

    __slots__ = ("changes",)

    def __init__(self, node_id):
        super().__init__(node_id)
        self.changes = []

    def link_changed(self, link):
        self.changes.append((link.id, link.up))


def setup(duplex="full", buffer_bytes=4096):
    sim = Simulator()
    a, b = Recorder("A"), Recorder("B")
    link = Link(sim, "L", a, b, RATE_BPS, DELAY_S, buffer_bytes, duplex)
    link.enable_failures()
    got = []
    return sim, a, b, link, got


def packet(src, dst, got, seq):
    return Packet(DATA, src, dst, 1024, lambda p: got.append((p.seq, p.dst.id)), seq)


def conserved(link):
    for d in link.directions:
        d.settle(link.sim.now)
        assert d.arrived == d.tx_pkts + d.dropped + d.failed + d.q_pkts


@pytest.mark.parametrize("duplex", ["full", "half"])
def test_failure_loses_waiting_transmitting_and_propagating_packets(duplex):
    sim, a, b, link, got = setup(duplex)
    d = link.direction_from(a)
    for seq in range(4):                 # starts at 0, 1, 2, 3; arrivals at 1.5, 2.5, 3.5, 4.5
        d.send(packet(a, b, got, seq))
    sim.run(until=2.2)                   # 0 delivered; 1 propagating; 2 transmitting; 3 waiting
    link.go_down()
    sim.run(until=20.0)
    assert got == [(0, "B")]
    assert d.failed == 1                 # the waiting one, never transmitted
    assert d.lost_in_flight == 2         # the propagating and the transmitting one
    conserved(link)
    assert a.changes == [("L", False)] and b.changes == [("L", False)]


def test_a_down_link_drops_everything_offered_until_repaired():
    sim, a, b, link, got = setup()
    link.go_down()
    d = link.direction_from(a)
    assert d.send(packet(a, b, got, 0)) is False
    sim.run(until=5.0)
    assert got == [] and d.failed == 1
    link.come_up()
    assert d.send(packet(a, b, got, 1)) is True
    sim.run(until=10.0)
    assert got == [(1, "B")]
    assert got and sim.now == 10.0
    conserved(link)
    assert a.changes == [("L", False), ("L", True)]


def test_repair_starts_with_an_idle_transmitter_and_empty_buffer():
    sim, a, b, link, got = setup()
    d = link.direction_from(a)
    for seq in range(4):
        d.send(packet(a, b, got, seq))
    sim.run(until=0.5)
    link.go_down()
    sim.schedule_at(3.0, lambda _: link.come_up())
    sim.schedule_at(3.0, lambda _: d.send(packet(a, b, got, 9)))
    sim.run()
    assert got == [(9, "B")]
    assert d.q_pkts == 0 and link.transmitters[0].queued_bytes == 0
    # sent at 3.0 on an idle link: 1 s transmission + 0.5 s propagation
    assert sim.now == pytest.approx(4.5)


def test_going_down_twice_or_up_while_up_changes_nothing():
    sim, a, b, link, got = setup()
    link.come_up()
    assert a.changes == []
    link.go_down()
    link.go_down()
    assert a.changes == [("L", False)]


def test_failures_need_to_be_enabled_before_use():
    sim = Simulator()
    a, b = Host("A"), Router("B")
    link = Link(sim, "L", a, b, RATE_BPS, DELAY_S, 4096)
    with pytest.raises(RuntimeError, match="not prepared for failures"):
        link.go_down()


@pytest.mark.parametrize("spec, fail_s", [
    ({"reorder_rate": 1.0, "reorder_delay_s": 3.0}, 1.6),           # every packet held back
    ({"jitter_s": 0.4, "jitter_mode": "netem"}, 1.05),              # its delay drawn: 0.1-0.9 s
    ({"jitter_s": 5.0}, 1.6),                                       # jitter on top of the delay
    ({"reorder_rate": 1.0, "reorder_delay_s": 3.0, "duplicate_rate": 1.0}, 1.6),  # and a copy
])
def test_a_packet_an_impairment_holds_is_still_on_the_link_when_it_fails(spec, fail_s):
    """Held back by reordering or jitter, or delayed by netem's draw, a packet is propagating:
    a failure before its release loses it, even once the link is up again, and it counts as a
    failure drop (lost in flight), not as delivered. A copy an impairment made is not counted
    (it was never transmitted) but is lost with it."""
    from topologies.spec import ImpairmentSpec
    sim = Simulator(5)
    a, b = Host("A"), Host("B")
    link = Link(sim, "L", a, b, RATE_BPS, DELAY_S, 4096)
    d = link.directions[0]
    d.impair(ImpairmentSpec(**spec))
    link.enable_failures()
    got = []
    d.send(packet(a, b, got, 0))          # transmitted by 1.0 s; reaches the far end's
    sim.run(until=fail_s)                 # impairment at 1.5 s (netem: at 1.0 s), held there
    assert got == [] and d.tx_pkts == 1 and sim.pending
    link.go_down()
    sim.run(until=fail_s + 0.1)
    link.come_up()                        # up again before the release: still lost
    sim.run(until=30.0)
    assert got == []
    assert d.lost_in_flight == 1 and d.failed == 0
    d.send(packet(a, b, got, 1))          # the repaired link delivers what it is given later
    sim.run(until=60.0)
    assert [seq for seq, _ in got] == ([1, 1] if spec.get("duplicate_rate") else [1])
    # `duplicated` counts the copies delivered: packet 1's, not packet 0's the failure cut
    assert d.duplicated == (1 if spec.get("duplicate_rate") else 0)
    link.go_down()                        # nothing held now: nothing more lost
    assert d.lost_in_flight == 1
    conserved(link)


def test_a_held_packet_released_before_any_failure_is_delivered_and_counted():
    from topologies.spec import ImpairmentSpec
    sim = Simulator(5)
    a, b = Host("A"), Host("B")
    link = Link(sim, "L", a, b, RATE_BPS, DELAY_S, 4096)
    d = link.directions[0]
    d.impair(ImpairmentSpec(reorder_rate=1.0, reorder_delay_s=3.0))
    link.enable_failures()
    got = []
    d.send(packet(a, b, got, 0))
    sim.run(until=10.0)                   # released at 4.5 s
    assert got == [(0, "B")] and d.guard.delivered == 1
    link.go_down()
    assert d.lost_in_flight == 0


def test_a_delay_decrease_during_an_outage_does_not_hold_the_repaired_link():
    """The failure cut every packet in flight, so a shorter delay set while the link is down has
    nothing to keep in order: the first packet after the repair is transmitted at once (it
    waited 0.2 s on the idle link, holding the order of packets that no longer existed)."""
    sim, a, b, link, got = setup()
    d = link.direction_from(a)
    arrivals = []
    for seq in range(2):                  # 0 propagates until 1.5 s, 1 is in service at 1.2 s
        d.send(Packet(DATA, a, b, 1024, lambda p: arrivals.append(sim.now), seq))
    sim.run(until=1.2)
    link.go_down()
    sim.schedule_at(1.3, lambda _: link.set_delay(0.1))
    sim.schedule_at(1.4, lambda _: link.come_up())
    sim.schedule_at(1.4, lambda _: d.send(Packet(DATA, a, b, 1024,
                                                 lambda p: arrivals.append(sim.now), 9)))
    sim.run()
    assert arrivals == [pytest.approx(1.4 + 1.0 + 0.1)]   # transmission + the new delay
    conserved(link)
