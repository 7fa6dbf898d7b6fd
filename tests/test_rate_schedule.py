"""Time-varying links: rate_schedule and delay_schedule (components/link.py Link.set_rate,
set_delay; topologies/loader.py; the utilization denominator in netsim/results.py)."""
from __future__ import annotations

import re

import pytest

from components.link import Link
from components.node import Host
from components.packet import DATA, Packet
from netsim.results import mean_capacity_bps
from netsim.run import simulate
from simulator.engine import Simulator
from topologies.loader import TopologyError, load_topology

RATE = 8192.0        # 1024-byte packets take exactly 1 s
SIZE = 1024


def one_link(delay_s=0.5):
    sim = Simulator()
    a, b = Host("A"), Host("B")
    link = Link(sim, "L", a, b, RATE, delay_s, 64 * SIZE)
    arrivals = []

    def deliver(packet):
        arrivals.append((sim.now, packet.seq))

    def send_at(t, seq):
        sim.schedule_at(t, lambda _: a.send(Packet(DATA, a, b, SIZE, deliver, seq=seq)))
    return sim, link, arrivals, send_at


def test_a_rate_change_re_times_the_packets_waiting():
    """The packet in service finishes at the old rate; those waiting go at the new one behind
    it, as Linux's tbf after `tc change` and ns-3's SetDataRate (before, they kept the old rate:
    1.5, 2.5, 3.5, 4.0)."""
    sim, link, arrivals, send_at = one_link()
    for seq in range(3):                       # accepted at 0: 0 in service until 1 s
        send_at(0.0, seq)
    sim.schedule_at(0.5, lambda _: link.set_rate(2 * RATE))
    send_at(0.6, 3)                            # accepted after: behind them, at the new rate
    sim.run()
    assert arrivals == [(1.5, 0), (2.0, 1), (2.5, 2), (3.0, 3)]
    d = link.directions[0]
    d.settle(sim.now)
    assert d.soj_sum == pytest.approx(1.0 + 1.5 + 1.4)     # waits until each began


@pytest.mark.parametrize("duplex", ["full", "half"])
def test_a_dip_to_a_low_rate_ends_when_the_rate_comes_back(duplex):
    """A full buffer at 1/100 of the rate: when the rate is restored, what waits goes at the
    restored rate (before, the link stayed at the low rate until its old queue had drained:
    here 10 packets of 100 s each)."""
    sim = Simulator()
    a, b = Host("A"), Host("B")
    link = Link(sim, "L", a, b, RATE, 0.5, 64 * SIZE, duplex)
    arrivals = []
    for seq in range(10):
        sim.schedule_at(0.0, lambda _, seq=seq: a.send(Packet(
            DATA, a, b, SIZE, lambda p: arrivals.append((sim.now, p.seq)), seq=seq)))
    sim.schedule_at(0.5, lambda _: link.set_rate(RATE / 100))   # packet 0 still at full rate
    sim.schedule_at(100.5, lambda _: link.set_rate(RATE))       # 1 in service: low rate
    sim.run()
    times = [t for t, _ in arrivals]
    assert [seq for _, seq in arrivals] == list(range(10))
    assert times[:2] == pytest.approx([1.5, 101.5])
    assert times[2:] == pytest.approx([102.5 + k for k in range(8)])
    d = link.directions[0]
    d.settle(sim.now)
    assert d.tx_pkts == 10 and d.q_pkts == 0 and link.transmitters[0].queued_bytes == 0


def test_a_rate_change_keeps_the_idle_spell_a_shorter_delay_imposed():
    """A delay decrease holds the transmitter idle after the packets it had accepted; a rate
    change then re-times the packets behind the spell, which keeps its length."""
    sim, link, arrivals, send_at = one_link(delay_s=2.0)
    send_at(0.0, 0)                            # 0-1 s, arrives at 3 s
    send_at(0.0, 1)                            # 1-2 s, arrives at 4 s
    sim.schedule_at(0.5, lambda _: link.set_delay(0.5))   # held idle 2-3.5 s
    send_at(0.6, 2)                            # 3.5-4.5 s at the old rate, delay 0.5
    sim.schedule_at(0.7, lambda _: link.set_rate(2 * RATE))
    sim.run()
    # 1 re-timed: 1-1.5 s, arrives at 3.5; the spell 1.5-3 s; 2 from 3 to 3.5 s, arrives at 4
    assert arrivals == [(3.0, 0), (3.5, 1), (4.0, 2)]


def test_a_rate_change_while_held_idle_moves_the_first_event_of_the_line():
    """Nothing in flight, the transmitter held idle by a shorter delay, a packet waiting
    behind: the line's first event is the waiting packet, and its heap entry moves with it."""
    sim, link, arrivals, send_at = one_link(delay_s=2.0)
    send_at(0.0, 0)                            # 0-1 s, arrives at 3 s
    sim.schedule_at(0.5, lambda _: link.set_delay(0.5))   # held idle 1-2.5 s
    send_at(3.2, 1)                            # 3.2 s: idle (the spell is over)
    send_at(1.2, 2)                            # waits behind the spell: 2.5-3.5 s, arrives at 4
    sim.schedule_at(1.5, lambda _: link.set_rate(4 * RATE))   # 2.5-2.75 s, arrives at 3.25
    sim.run()
    assert arrivals == [(3.0, 0), (3.25, 2), (3.2 + 0.25 + 0.5, 1)]


def test_a_delay_decrease_keeps_the_order():
    sim, link, arrivals, send_at = one_link(delay_s=2.0)
    send_at(0.0, 0)                            # transmitted by 1 s, arrives at 3 s
    sim.schedule_at(1.0, lambda _: link.set_delay(0.5))
    send_at(1.0, 1)                            # would arrive at 2.5 s: held until it cannot overtake
    send_at(10.0, 2)                           # long after: the new delay alone
    sim.run()
    assert [seq for _, seq in arrivals] == [0, 1, 2]
    assert arrivals[1][0] == pytest.approx(4.0) and arrivals[2][0] == pytest.approx(11.5)


def topology(algorithm, schedule=((10, 5), (20, 10)), buffer_kb=60, **extra):
    bottleneck = {"id": "L", "ends": ["R1", "R2"], "rate_mbps": 10, "delay_ms": 10,
                  "buffer_kb": buffer_kb, "rate_schedule": [list(s) for s in schedule], **extra}
    return {"hosts": ["H1", "H2"], "routers": ["R1", "R2"],
            "links": [{"id": "A", "ends": ["H1", "R1"], "rate_mbps": 100, "delay_ms": 1,
                       "buffer_kb": 1000}, bottleneck,
                      {"id": "B", "ends": ["R2", "H2"], "rate_mbps": 100, "delay_ms": 1,
                       "buffer_kb": 1000}],
            "flows": [{"id": "F", "src": "H1", "dst": "H2", "algorithm": algorithm}],
            "duration_s": 30}


def mean_between(t, values, a, b):
    chosen = values[(t > a) & (t <= b)]
    return chosen.mean(), chosen.max()


@pytest.mark.parametrize("algorithm", ["reno", "cubic"])
def test_loss_based_flows_fill_the_link_and_its_buffer_at_every_rate(algorithm):
    results = simulate(load_topology(topology(algorithm)))
    t, rate = results.trace("links", "L", "rate_mbps", "R1->R2")
    _, buffer = results.trace("links", "L", "buffer_kb", "R1->R2")
    _, drops = results.trace("links", "L", "drops", "R1->R2")
    for a, b, capacity in ((2, 10, 10), (11, 20, 5), (22, 30, 10)):
        assert mean_between(t, rate, a, b)[0] == pytest.approx(capacity, rel=0.05)  # the step
        assert mean_between(t, buffer, a, b)[1] >= 0.9 * 60                         # buffer full
        assert mean_between(t, drops, a, b)[0] > 0
    link = results.summary["links"]["L"]
    assert link["mean_capacity_mbps"] == pytest.approx((10 * 10 + 5 * 10 + 10 * 10) / 30)
    assert link["rate_schedule_mbps"] == [[10.0, 5.0], [20.0, 10.0]]
    assert 0.9 <= link["directions"]["R1->R2"]["utilization"] <= 1.0


def test_bbr_tracks_a_step_down_and_up_within_a_few_probe_cycles():
    results = simulate(load_topology(topology("bbr")), interval_s=0.02)
    t, rate = results.trace("links", "L", "rate_mbps", "R1->R2")
    _, buffer = results.trace("links", "L", "buffer_kb", "R1->R2")
    # up: 90 % of the new 10 Mb/s within 1 s (a ProbeBW cycle is 8 RTTs of about 25 ms: 0.2 s)
    assert t[(t > 20) & (rate >= 9.0)][0] < 21.0
    assert mean_between(t, rate, 21, 30)[0] == pytest.approx(10, rel=0.03)
    # down: the queue the old estimate built drains within 2 s (the max filter forgets the old
    # bandwidth after 10 rounds, each inflated by that queue), then the flow keeps the new rate
    after = (t > 10) & (t < 20)
    peak = t[after][buffer[after].argmax()]
    assert t[after & (t > peak) & (buffer < 10)][0] < 12.0
    assert mean_between(t, rate, 12, 20)[0] == pytest.approx(5, rel=0.03)
    assert mean_between(t, buffer, 13, 20)[0] < 10


def test_delay_schedule_changes_the_rtt():
    spec = load_topology(topology("bbr", schedule=(), buffer_kb=1000,
                                  delay_schedule=[[10, 40], [20, 10]]))
    results = simulate(spec)
    t, rtt = results.trace("flows", "F", "rtt_ms")
    base = 2 * (1 + 10 + 1)
    low = rtt[(t > 5) & (t <= 10)].min()
    high = rtt[(t > 15) & (t <= 20)].min()
    assert high - low == pytest.approx(2 * 30, abs=5)     # one way 10 -> 40 ms
    assert low >= base
    assert results.summary["flows"]["F"]["in_order"]


def test_mean_capacity_is_the_time_average():
    spec = load_topology(topology("reno"))
    ls = spec.link("L")
    assert mean_capacity_bps(ls, 30) == pytest.approx((10 * 10 + 5 * 10 + 10 * 10) / 30 * 1e6)
    assert mean_capacity_bps(ls, 5) == pytest.approx(10e6)
    assert mean_capacity_bps(ls, 15) == pytest.approx((10 * 10 + 5 * 5) / 15 * 1e6)


@pytest.mark.parametrize("schedule, message", [
    ([[10, 5], [5, 10]], 'field "rate_schedule[1][0]": times must increase: 5 s after 10 s'),
    ([[10, 0]], 'field "rate_schedule[0][1]": expected a positive number, got 0'),
    ([[-5, 1]], 'field "rate_schedule[0][0]": expected a number >= 0, got -5'),
    ([[10]], 'field "rate_schedule[0]": expected a [time_s, value] pair, got a list of 1 item'),
    ([[10, 5, 2]],
     'field "rate_schedule[0]": expected a [time_s, value] pair, got a list of 3 items'),
    ("fast", "list"),
])
def test_bad_schedules_are_errors(schedule, message):
    """Each names the pair's time ([i][0]) or its rate ([i][1]), and a pair of the wrong length
    by its length (both read "rate_schedule[0]", and "got a list")."""
    data = topology("reno")
    data["links"][1]["rate_schedule"] = schedule
    with pytest.raises(TopologyError, match=re.escape(message)):
        load_topology(data)


# -- a change at (or just after) time 0, before the link's first packet ---------------------------
# A delay decrease holds a transmitter idle only if a packet may still be in flight: one that never
# began a packet is not held (it has no buffer yet: the first packet opens it).

@pytest.mark.parametrize("duplex", ["full", "half"])
@pytest.mark.parametrize("at", [0.0, 1e-9])
def test_a_delay_decrease_before_the_first_packet_applies_at_once(duplex, at):
    sim = Simulator()
    a, b = Host("A"), Host("B")
    link = Link(sim, "L", a, b, RATE, 0.5, 64 * SIZE, duplex)
    arrivals = []

    def send(seq):
        a.send(Packet(DATA, a, b, SIZE, lambda p: arrivals.append((sim.now, p.seq)), seq=seq))
    sim.schedule_at(at, lambda _: link.set_delay(0.2))
    sim.schedule_at(at, lambda _: send(0))      # right after the change: idle, no hold
    sim.schedule_at(at, lambda _: send(1))      # behind it in the buffer
    sim.run()
    assert arrivals == [(pytest.approx(at + 1.2), 0), (pytest.approx(at + 2.2), 1)]


def first_rtt_ms(results) -> float:
    _, rtt = results.trace("flows", "F", "rtt_ms")
    return float(rtt[rtt == rtt][0])                 # the first sample (NaN: none yet)


# one data packet (1024 B) and one ACK (64 B) across 100, 10 (or 5) and 100 Mb/s
SERIALIZATION_MS = (1024 + 64) * 8 / 1e7 * 1e3 * (1 + 2 * 0.1)


@pytest.mark.parametrize("duplex", ["full", "half"])
@pytest.mark.parametrize("at", [0, 1e-9])
def test_a_delay_schedule_at_the_flows_start_gives_its_first_rtt(duplex, at):
    data = topology("reno", schedule=(), delay_schedule=[[at, 5]], duplex=duplex)
    data["duration_s"] = 2
    results = simulate(load_topology(data), interval_s=0.01)
    assert results.summary["stop_reason"] == "duration"
    assert first_rtt_ms(results) == pytest.approx(2 * (1 + 5 + 1) + SERIALIZATION_MS)
    assert results.summary["flows"]["F"]["in_order"]


@pytest.mark.parametrize("duplex", ["full", "half"])
def test_a_rate_schedule_at_the_flows_start_gives_its_first_rtt(duplex):
    data = topology("reno", schedule=((0, 5),), duplex=duplex)
    data["duration_s"] = 2
    results = simulate(load_topology(data), interval_s=0.01)
    assert results.summary["stop_reason"] == "duration"
    bottleneck_ms = (1024 + 64) * 8 / 5e6 * 1e3                  # at 5 Mb/s from the start
    assert first_rtt_ms(results) == pytest.approx(2 * (1 + 10 + 1) + bottleneck_ms +
                                                  (1024 + 64) * 8 / 1e8 * 1e3 * 2)
    link = results.summary["links"]["L"]      # the entry at 0 is the link's rate (the loader)
    assert link["rate_mbps"] == pytest.approx(5.0) and "rate_schedule_mbps" not in link


def test_a_rate_change_after_a_failure_re_times_the_packets_accepted_since():
    """The packets a failure cut keep their events on the line they were on; those accepted
    after the repair go on a new one, which a later rate change re-times (before, it moved the
    dead packets' events instead: packet 200 overtook 102 and 103, found in review)."""
    sim, link, arrivals, send_at = one_link()
    link.enable_failures()
    for seq in range(10):
        send_at(0.0, seq)
    sim.schedule_at(2.2, lambda _: link.go_down())
    sim.schedule_at(2.3, lambda _: link.come_up())
    for seq in range(100, 104):
        send_at(3.0, seq)                      # 100 in service 3-4 s at the old rate
    sim.schedule_at(3.5, lambda _: link.set_rate(4 * RATE))
    send_at(3.6, 200)
    sim.run()
    assert arrivals == [(1.5, 0), (4.5, 100), (4.75, 101), (5.0, 102), (5.25, 103), (5.5, 200)]
