"""Tests of components.link and components.node on hand-built networks: timing, drop-tail at the
byte boundary, counter conservation, full and half duplex, occupancy integrals, forwarding."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.link import Link
from components.node import Host, Router
from components.packet import ACK, DATA, Packet
from simulator.engine import Simulator

# Binary-exact figures: 8192 bit/s is 2**-10 s per byte, so a 1024-byte packet takes exactly 1 s.
RATE = 8192.0
SIZE = 1024
TX = 1.0
DELAY = 0.5


class Net:
    """Two hosts A and B joined by one link; `arrivals` records (now, packet) at either end."""

    def __init__(self, rate=RATE, delay=DELAY, buffer_bytes=64 * SIZE, duplex="full"):
        self.sim = Simulator()
        self.a, self.b = Host("A"), Host("B")
        self.link = Link(self.sim, "L", self.a, self.b, rate, delay, buffer_bytes, duplex)
        self.ab, self.ba = self.link.directions
        self.arrivals = []

    def deliver(self, packet):
        self.arrivals.append((self.sim.now, packet))

    def packet(self, src, dst, size=SIZE, seq=-1, kind=DATA):
        return Packet(kind, src, dst, size, self.deliver, seq=seq)

    def send(self, src, size=SIZE, seq=-1):
        dst = self.b if src is self.a else self.a
        return src.send(self.packet(src, dst, size, seq))

    def send_at(self, t, src, size=SIZE, seq=-1, results=None):
        def go(_):
            ok = self.send(src, size, seq)
            if results is not None:
                results.append((seq, ok))
        self.sim.schedule_at(t, go)

    def times(self, dst=None):
        return [t for t, p in self.arrivals if dst is None or p.dst is dst]

    def seqs(self, dst=None):
        return [p.seq for t, p in self.arrivals if dst is None or p.dst is dst]


def conserved(d) -> bool:
    d.settle(d.transmitter.sim.now)
    return d.arrived == d.tx_pkts + d.dropped + d.q_pkts


# -- timing -----------------------------------------------------------------------------------
def test_single_packet_arrives_after_transmission_plus_delay():
    size, rate, delay = 1500, 10e6, 0.01
    net = Net(rate=rate, delay=delay)
    assert net.send(net.a, size) is True
    net.sim.run()
    assert net.times() == [pytest.approx(size * 8 / rate + delay, rel=1e-12)]
    assert net.arrivals[0][1].dst is net.b


def test_single_packet_sent_later():
    size, rate, delay = 1000, 1e6, 0.02
    net = Net(rate=rate, delay=delay)
    net.send_at(3.25, net.a, size)
    net.sim.run()
    assert net.times() == [pytest.approx(3.25 + size * 8 / rate + delay, rel=1e-12)]


def test_back_to_back_packets_arrive_one_transmission_time_apart():
    size, rate, delay = 1000, 1e6, 0.015
    net = Net(rate=rate, delay=delay, buffer_bytes=100 * size)
    for k in range(1, 11):
        assert net.send(net.a, size, seq=k)
    net.sim.run()
    assert net.seqs() == list(range(1, 11))
    for k, t in enumerate(net.times(), start=1):
        assert t == pytest.approx(k * size * 8 / rate + delay, rel=1e-12)


def test_exact_binary_timing():
    net = Net()
    for k in range(3):
        net.send(net.a, seq=k)
    net.send_at(10.0, net.a, seq=3)
    net.send_at(10.25, net.a, seq=4)           # waits 0.75 s for seq 3
    net.sim.run()
    assert net.times() == [1.5, 2.5, 3.5, 11.5, 12.5]


def test_zero_delay_link():
    net = Net(delay=0.0)
    net.send(net.a)
    net.send(net.a)
    net.sim.run()
    assert net.times() == [1.0, 2.0]


def test_packet_arriving_when_transmitter_became_idle_starts_at_once():
    net = Net()
    net.send(net.a, seq=0)
    net.send_at(TX, net.a, seq=1)              # exactly when seq 0 finishes transmission
    net.sim.run()
    assert net.times() == [1.5, 2.5]
    assert net.ab.q_pkts == 0
    assert net.ab.area_bytes == 0.0


# -- drop-tail ----------------------------------------------------------------------------------
def test_drop_tail_at_the_exact_byte_boundary():
    capacity = 3000
    net = Net(buffer_bytes=capacity)
    d = net.ab
    accepted = [net.send(net.a, 1500, seq=0)]  # transmitting: occupies no buffer space
    assert (d.tx_pkts, d.q_bytes, d.q_pkts) == (1, 0, 0)
    assert conserved(d)
    for seq in (1, 2, 3):                      # 1000 + 1000 + 1000 == capacity
        accepted.append(net.send(net.a, 1000, seq=seq))
        assert conserved(d)
    assert accepted == [True, True, True, True]
    assert d.q_bytes == capacity and d.q_pkts == 3
    assert net.send(net.a, 1, seq=4) is False  # one byte more does not fit
    assert (d.arrived, d.dropped, d.tx_pkts, d.q_pkts) == (5, 1, 1, 3)
    assert conserved(d)
    net.sim.run()
    assert net.seqs() == [0, 1, 2, 3]
    d.settle(net.sim.now)                      # counters are brought up to date lazily
    assert d.dropped == 1 and d.tx_pkts == 4 and d.q_pkts == 0 and d.q_bytes == 0
    assert d.tx_bytes == 1500 + 3000
    assert conserved(d)


def test_drop_tail_drops_only_what_does_not_fit():
    net = Net(buffer_bytes=2500)
    d = net.ab
    results = [net.send(net.a, 1000, seq=s) for s in range(3)]  # 1 transmitting, 2000 queued
    results.append(net.send(net.a, 501, seq=3))                # 2501 > 2500
    results.append(net.send(net.a, 500, seq=4))                # 2500 == 2500
    results.append(net.send(net.a, 1, seq=5))
    assert results == [True, True, True, False, True, False]
    assert (d.arrived, d.dropped, d.q_bytes, d.q_pkts) == (6, 2, 2500, 3)
    net.sim.run()
    assert net.seqs() == [0, 1, 2, 4]


def test_zero_buffer_keeps_only_the_packet_in_transmission():
    net = Net(buffer_bytes=0)
    assert [net.send(net.a, seq=s) for s in range(3)] == [True, False, False]
    net.send_at(TX, net.a, seq=3)              # transmitter idle again
    net.sim.run()
    assert net.seqs() == [0, 3]
    assert net.ab.dropped == 2


def test_buffer_space_frees_when_the_waiting_packet_starts_transmission():
    # Capacity of one packet: seq 0 transmits during [0, 1), seq 1 waits. At exactly t=1 seq 1
    # leaves the buffer, so seq 2 offered at t=1 fits; seq 3 offered just before t=1 does not.
    net = Net(buffer_bytes=SIZE)
    results = []
    net.send_at(0.0, net.a, seq=0, results=results)
    net.send_at(0.0, net.a, seq=1, results=results)
    net.send_at(TX - 2 ** -20, net.a, seq=3, results=results)
    net.send_at(TX, net.a, seq=2, results=results)
    net.sim.run()
    assert results == [(0, True), (1, True), (3, False), (2, True)]
    assert net.times() == [1.5, 2.5, 3.5]
    assert net.seqs() == [0, 1, 2]


def test_counters_add_up_at_every_step():
    net = Net(buffer_bytes=3 * SIZE)
    d = net.ab
    checks = []

    def check(_):
        ok = conserved(d)                      # settles the counters first
        checks.append((net.sim.now, d.arrived, d.tx_pkts, d.dropped, d.q_pkts, ok))

    for t in (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 2.5, 2.5, 2.5):
        net.send_at(t, net.a)
    for t in (0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 20.0):
        net.sim.schedule_at(t, check)          # after the sends of the same time
    net.sim.run()
    assert all(ok for *_, ok in checks)
    # 6 packets at t=0: #1 transmits during [0,1), #2-#4 wait (3 KB), #5 #6 are dropped.
    # t=1: #2 starts; t=2: #3 starts and #7 arrives (waiting: #4, #7).
    # t=2.5: #8 fits (3 waiting), #9 #10 are dropped. #4 starts at 3, #7 at 4, #8 at 5.
    # (time, arrived, transmission begun, dropped, waiting)
    assert [c[:5] for c in checks] == [
        (0.0, 6, 1, 2, 3),
        (0.5, 6, 1, 2, 3),
        (1.0, 6, 2, 2, 2),
        (2.0, 7, 3, 2, 2),
        (2.5, 10, 3, 4, 3),
        (3.0, 10, 4, 4, 2),
        (4.0, 10, 5, 4, 1),
        (5.0, 10, 6, 4, 0),
        (6.0, 10, 6, 4, 0),
        (20.0, 10, 6, 4, 0),
    ]
    assert d.tx_bytes == 6 * SIZE
    assert net.times() == [1.5, 2.5, 3.5, 4.5, 5.5, 6.5]


# -- full duplex --------------------------------------------------------------------------------
def one_way_times(n, buffer_bytes):
    net = Net(buffer_bytes=buffer_bytes)
    for k in range(n):
        net.send_at(0.25 * k, net.a, seq=k)
    net.sim.run()
    return net.times(), net.ab


def test_full_duplex_directions_do_not_interfere():
    n, buffer_bytes = 12, 4 * SIZE
    alone, alone_d = one_way_times(n, buffer_bytes)
    net = Net(buffer_bytes=buffer_bytes, duplex="full")
    for k in range(n):
        net.send_at(0.25 * k, net.a, seq=k)
        net.send_at(0.25 * k, net.b, seq=k)
    net.sim.run()
    assert len(net.link.transmitters) == 2
    assert net.times(net.b) == alone
    assert net.times(net.a) == alone
    alone_d.settle(net.sim.now)
    for d in (net.ab, net.ba):
        d.settle(net.sim.now)
        assert (d.arrived, d.dropped, d.tx_pkts, d.area_bytes) == (
            alone_d.arrived, alone_d.dropped, alone_d.tx_pkts, alone_d.area_bytes)
    assert alone_d.dropped > 0                  # the burst overflowed the buffer, in each direction


# -- half duplex --------------------------------------------------------------------------------
def test_half_duplex_reverse_packet_waits_for_forward_packet():
    net = Net(duplex="half")
    assert len(net.link.transmitters) == 1
    assert net.ab.transmitter is net.ba.transmitter
    net.send(net.a, seq=1)                     # A->B transmits during [0, 1)
    net.send(net.b, seq=2)                     # B->A waits for it: [1, 2)
    net.sim.run()
    assert net.arrivals[0][0] == TX + DELAY and net.arrivals[0][1].dst is net.b
    assert net.arrivals[1][0] == 2 * TX + DELAY and net.arrivals[1][1].dst is net.a
    full = Net(duplex="full")
    full.send(full.a, seq=1)
    full.send(full.b, seq=2)
    full.sim.run()
    assert full.times() == [TX + DELAY, TX + DELAY]


def test_half_duplex_serves_both_directions_in_one_fifo():
    net = Net(duplex="half")
    net.send(net.a, seq=1)
    net.send(net.b, seq=2)
    net.send(net.a, seq=3)
    net.send_at(0.5, net.b, seq=4)
    net.sim.run()
    assert [(t, p.seq, p.dst.id) for t, p in net.arrivals] == [
        (1.5, 1, "B"), (2.5, 2, "A"), (3.5, 3, "B"), (4.5, 4, "A")]


def test_half_duplex_shares_buffer_capacity():
    net = Net(buffer_bytes=2 * SIZE, duplex="half")
    assert [net.send(net.a, seq=s) for s in range(3)] == [True, True, True]   # 1 sending, 2 wait
    assert net.send(net.b, seq=10) is False                                  # buffer full
    net.sim.run()
    assert net.seqs(net.b) == [0, 1, 2]
    assert net.seqs(net.a) == []
    for d in (net.ab, net.ba):
        assert conserved(d)
    assert (net.ab.arrived, net.ab.dropped, net.ab.tx_pkts) == (3, 0, 3)
    assert (net.ba.arrived, net.ba.dropped, net.ba.tx_pkts) == (1, 1, 0)

    full = Net(buffer_bytes=2 * SIZE, duplex="full")
    assert [full.send(full.a, seq=s) for s in range(3)] == [True, True, True]
    assert full.send(full.b, seq=10) is True


def test_half_duplex_occupancy_split_by_direction():
    # One FIFO: A1 sends during [0,1), A2 waits during [0,1), B1 waits during [0,2).
    net = Net(duplex="half")
    net.send(net.a, seq=1)
    net.send(net.a, seq=2)
    net.send(net.b, seq=3)
    assert net.ab.transmitter.queued_bytes == 2 * SIZE
    net.sim.run()
    for d in (net.ab, net.ba):
        d.settle(10.0)
    assert (net.ab.area_bytes, net.ab.area_pkts) == (1.0 * SIZE, 1.0)
    assert (net.ba.area_bytes, net.ba.area_pkts) == (2.0 * SIZE, 2.0)
    assert net.ab.transmitter.queued_bytes == 0
    assert net.times() == [1.5, 2.5, 3.5]


# -- time-averaged occupancy --------------------------------------------------------------------
def test_occupancy_integral_of_a_burst():
    # 4 packets at t=0: one transmits, 3 wait; the buffer holds 3, 2, 1, 0 packets during
    # [0,1), [1,2), [2,3), [3,...): integral 6 packet-seconds.
    net = Net()
    d = net.ab
    for s in range(4):
        net.send(net.a, seq=s)
    d.settle(0.5)
    assert (d.area_bytes, d.area_pkts, d.q_pkts) == (1.5 * SIZE, 1.5, 3)
    d.settle(1.5)
    assert (d.area_bytes, d.area_pkts, d.q_pkts) == (4.0 * SIZE, 4.0, 2)
    net.sim.run()
    d.settle(100.0)
    assert (d.area_bytes, d.area_pkts, d.q_pkts, d.q_bytes) == (6.0 * SIZE, 6.0, 0, 0)
    assert d.last_s == 100.0


def test_occupancy_integral_with_mixed_sizes_and_late_arrival():
    # t=0: 1024 B transmits [0,1); 512 B waits [0,1) and sends [1,1.5); 256 B waits [0,1.5).
    # t=1.25: 1024 B arrives, waits [1.25, 1.75) behind the 256 B packet (sends [1.5,1.75)).
    net = Net()
    d = net.ab
    net.send(net.a, 1024)
    net.send(net.a, 512)
    net.send(net.a, 256)
    net.send_at(1.25, net.a, 1024)
    net.sim.run()
    d.settle(net.sim.now)
    expected = 512 * 1.0 + 256 * 1.5 + 1024 * 0.5
    assert d.area_bytes == expected
    assert d.area_pkts == 1.0 + 1.5 + 0.5
    assert net.times() == [1.5, 2.0, 2.25, 3.25]


def test_settle_is_idempotent_and_order_independent():
    a, b = Net(), Net()
    for net in (a, b):
        for s in range(4):
            net.send(net.a, seq=s)
        net.sim.run()
    for t in (0.25, 0.75, 1.0, 1.0, 2.9, 3.0):
        a.ab.settle(t)
    b.ab.settle(3.0)
    assert a.ab.area_bytes == b.ab.area_bytes == 6.0 * SIZE
    assert a.ab.waiting() == b.ab.waiting() == 0


# -- against a naive reference model ------------------------------------------------------------
def reference_fifo(offers, capacity, rate, delay):
    """Naive FIFO drop-tail: offers are (time, size, direction) in offer order. Returns per offer
    the arrival time at the far end (None if dropped) and per direction the occupancy integral."""
    accepted = []            # (start, finish, size, arrival time, direction)
    results = []
    area = {}
    for t, size, direction in offers:
        waiting = sum(a[2] for a in accepted if a[0] > t)
        busy_until = accepted[-1][1] if accepted else 0.0
        if busy_until <= t:
            start = t
        elif waiting + size > capacity:
            results.append(None)
            continue
        else:
            start = busy_until
        finish = start + size * 8 / rate
        accepted.append((start, finish, size, t, direction))
        area[direction] = area.get(direction, 0.0) + size * (start - t)
        results.append(finish + delay)
    return results, area


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=40),
                          st.integers(min_value=1, max_value=16),
                          st.booleans()),
                min_size=1, max_size=40),
       st.integers(min_value=0, max_value=40),
       st.sampled_from(["full", "half"]))
def test_link_matches_naive_fifo_model(raw, capacity_units, duplex):
    """Offers at multiples of 1/8 s, sizes multiples of 128 B (1/8 s at 8192 bit/s): all times
    are exact binary fractions, so arrival times, drops and occupancy must match exactly."""
    capacity = 128 * capacity_units
    net = Net(buffer_bytes=capacity, duplex=duplex)
    offers = sorted(((t / 8, 128 * u, reverse) for t, u, reverse in raw), key=lambda o: o[0])
    arrival_of = {}
    for i, (t, size, reverse) in enumerate(offers):
        src = net.b if reverse else net.a
        net.send_at(t, src, size, seq=i)
    net.sim.run()
    for t, p in net.arrivals:
        arrival_of[p.seq] = t

    if duplex == "half":
        expected, area = reference_fifo(offers, capacity, RATE, DELAY)
    else:
        expected = [None] * len(offers)
        area = {}
        for reverse in (False, True):
            idx = [i for i, o in enumerate(offers) if o[2] == reverse]
            res, ar = reference_fifo([offers[i] for i in idx], capacity, RATE, DELAY)
            for i, r in zip(idx, res):
                expected[i] = r
            area.update(ar)
    assert [arrival_of.get(i) for i in range(len(offers))] == expected
    for reverse, d in ((False, net.ab), (True, net.ba)):
        d.settle(1000.0)
        n = sum(1 for o in offers if o[2] == reverse)
        drops = sum(1 for o, e in zip(offers, expected) if o[2] == reverse and e is None)
        assert (d.arrived, d.dropped, d.tx_pkts, d.q_pkts, d.q_bytes) == (n, drops, n - drops, 0, 0)
        assert d.area_bytes == area.get(reverse, 0.0)


# -- nodes ----------------------------------------------------------------------------------------
class Routed:
    """H1 - R1 - H2, and H3 - R1 with no route to H3 installed."""

    def __init__(self):
        self.sim = Simulator()
        self.h1, self.h2, self.h3 = Host("H1"), Host("H2"), Host("H3")
        self.r1 = Router("R1")
        self.l1 = Link(self.sim, "L1", self.h1, self.r1, RATE, DELAY, 64 * SIZE)
        self.l2 = Link(self.sim, "L2", self.r1, self.h2, RATE / 2, 0.25, 64 * SIZE)
        self.l3 = Link(self.sim, "L3", self.h3, self.r1, RATE, DELAY, 64 * SIZE)
        self.r1.routes = {self.h2: self.l2.direction_from(self.r1),
                          self.h1: self.l1.direction_from(self.r1)}
        self.arrivals = []

    def deliver(self, packet):
        self.arrivals.append((self.sim.now, packet.dst.id, packet.seq))

    def packet(self, src, dst, seq=-1, size=SIZE, kind=DATA):
        return Packet(kind, src, dst, size, self.deliver, seq=seq)


def test_router_forwards_by_routes():
    n = Routed()
    assert n.h1.send(n.packet(n.h1, n.h2, seq=1))
    assert n.h1.send(n.packet(n.h1, n.h2, seq=2))
    assert n.h2.send(n.packet(n.h2, n.h1, seq=3, size=64, kind=ACK))
    n.sim.run()
    # L1: 1 s per packet + 0.5 s; L2 at half rate: 2 s per packet + 0.25 s.
    # seq 1 reaches R1 at 1.5, H2 at 3.75; seq 2 reaches R1 at 2.5, waits until 3.5, H2 at 5.75.
    # The 64-byte ACK: 0.125 s on L2 plus 0.25 s, at R1 at 0.375, then 0.0625 + 0.5 on L1.
    assert n.arrivals == [(0.9375, "H1", 3), (3.75, "H2", 1), (5.75, "H2", 2)]
    assert n.r1.no_route_drops == 0
    d = n.l2.direction_from(n.r1)
    d.settle(n.sim.now)
    assert (d.arrived, d.tx_pkts, d.area_bytes) == (2, 2, 1.0 * SIZE)


def test_router_counts_packets_without_route():
    n = Routed()
    n.h1.send(n.packet(n.h1, n.h3, seq=1))
    n.h1.send(n.packet(n.h1, n.h2, seq=2))
    n.h2.send(n.packet(n.h2, n.h3, seq=3))
    n.sim.run()
    assert n.r1.no_route_drops == 2
    assert n.arrivals == [(2.5 + 2.0 + 0.25, "H2", 2)]
    assert n.h3.received_bytes == 0


def test_packet_addressed_to_router_is_delivered_there():
    n = Routed()
    n.h1.send(n.packet(n.h1, n.r1, seq=7))
    n.sim.run()
    assert n.arrivals == [(1.5, "R1", 7)]
    assert n.r1.no_route_drops == 0


def test_host_counts_sent_and_received_bytes():
    net = Net(buffer_bytes=SIZE)
    net.send(net.a, 1000)
    net.send(net.a, 500)
    assert net.send(net.a, 600) is False       # dropped by the buffer: still offered by the host
    net.send(net.b, 64)
    net.sim.run()
    assert net.a.sent_bytes == 2100
    assert net.b.received_bytes == 1500
    assert net.b.sent_bytes == 64
    assert net.a.received_bytes == 64
    assert net.a.misdelivered == net.b.misdelivered == 0


def test_host_counts_misdelivered_packets():
    net = Net()
    other = Host("C")
    net.a.send(Packet(DATA, net.a, other, 100, net.deliver))
    net.sim.run()
    assert net.arrivals == []
    assert net.b.misdelivered == 1
    assert net.b.received_bytes == 100


def test_host_with_two_links_raises():
    sim = Simulator()
    h, r1, r2 = Host("H"), Router("R1"), Router("R2")
    Link(sim, "L1", h, r1, RATE, DELAY, SIZE)
    with pytest.raises(ValueError, match="H"):
        Link(sim, "L2", h, r2, RATE, DELAY, SIZE)


def test_router_with_many_links():
    sim = Simulator()
    r = Router("R")
    links = [Link(sim, f"L{i}", r, Host(f"H{i}"), RATE, DELAY, SIZE) for i in range(4)]
    assert r.links == links
    assert r.out == [l.directions[0] for l in links]


# -- link construction --------------------------------------------------------------------------
def test_link_directions_and_ends():
    net = Net()
    assert net.link.direction_from(net.a) is net.ab
    assert net.link.direction_from(net.b) is net.ba
    assert (net.ab.src, net.ab.dst, net.ab.label) == (net.a, net.b, "A->B")
    assert (net.ba.src, net.ba.dst, net.ba.label) == (net.b, net.a, "B->A")
    assert net.link.other_end(net.a) is net.b and net.link.other_end(net.b) is net.a
    assert net.a.port is net.ab and net.b.port is net.ba
    with pytest.raises(ValueError):
        net.link.direction_from(Host("X"))


@pytest.mark.parametrize("kwargs", [dict(duplex="simplex"), dict(rate_bps=0.0),
                                    dict(rate_bps=-1.0), dict(delay_s=-0.1),
                                    dict(buffer_bytes=-1)])
def test_link_rejects_bad_parameters(kwargs):
    args = dict(rate_bps=RATE, delay_s=DELAY, buffer_bytes=SIZE, duplex="full")
    args.update(kwargs)
    with pytest.raises(ValueError):
        Link(Simulator(), "L", Router("A"), Router("B"), **args)


def test_unfinished_work_integral_counts_the_packet_in_service():
    # 1024 B at 8192 bit/s: 1 s each. Two packets back to back: the second waits 1 s.
    from components.link import Link
    from components.node import Host
    from components.packet import DATA, Packet
    from simulator.engine import Simulator
    sim = Simulator()
    a, b = Host("A"), Host("B")
    link = Link(sim, "L", a, b, 8192.0, 0.0, 10_000)
    d = link.directions[0]
    for seq in range(2):
        d.send(Packet(DATA, a, b, 1024, lambda p: None, seq))
    sim.run()
    d.settle(sim.now)
    assert d.area_bytes == 1024 * 1.0                  # the second packet waited 1 s
    assert d.area_work == 2 * 1024 * 1.0 / 2          # each in service for 1 s, half left on average
    # time-averaged unfinished work over the 2 s busy period: (1024 + 1024) / 2 B
    assert (d.area_bytes + d.area_work) / 2.0 == 1024.0
