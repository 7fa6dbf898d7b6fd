"""Unit tests of the queue disciplines (components/queues.py) on hand-made packet sequences, of
the sojourn-time accounting (drop-tail and AQM), and of the topology's "queue" field."""
from __future__ import annotations

import json

import pytest

from components.link import Link, sojourn_quantile
from components.node import Host
from components.packet import DATA, Packet
from components.queues import Pie, Red
from simulator.engine import Simulator
from topologies.loader import TopologyError, load_topology

RATE = 8192.0          # 2**-10 s per byte: a 1024-byte packet takes exactly 1 s
SIZE = 1024


class Net:
    def __init__(self, queue=None, buffer_bytes=200 * SIZE, delay_s=0.5):
        self.sim = Simulator()
        self.a, self.b = Host("A"), Host("B")
        self.link = Link(self.sim, "L", self.a, self.b, RATE, delay_s, buffer_bytes, queue=queue)
        self.ab = self.link.directions[0]
        self.arrivals = []

    def sink(self, packet):
        self.arrivals.append((self.sim.now, packet.seq))

    def other(self, packet):               # a second flow (another destination endpoint)
        self.arrivals.append((self.sim.now, packet.seq))

    def send_at(self, t, seq, ect=False, deliver=None):
        p = Packet(DATA, self.a, self.b, SIZE, deliver or self.sink, seq=seq, ect=ect)
        self.sim.schedule_at(t, lambda _: self.a.send(p))
        return p

    def run(self):
        self.sim.run()
        self.ab.settle(self.sim.now)
        return [s for _, s in self.arrivals]


def codel(**extra):
    return {"discipline": "codel", "target_s": 1.5, "interval_s": 10.0, "ecn": False, **extra}


def test_droptail_sojourn_is_the_wait_before_transmission():
    net = Net()
    for seq in range(3):
        net.send_at(0.0, seq)
    net.run()
    d = net.ab
    assert d.soj_sum == pytest.approx(0 + 1 + 2)
    assert d.soj_sum / d.tx_pkts == pytest.approx(1.0)
    assert sojourn_quantile(d, 0.99) == pytest.approx(2.0, rel=0.07)
    assert sojourn_quantile(d, 0.3) == 0.0


def test_aqm_transmitter_keeps_fifo_timing_when_nothing_is_dropped():
    times = []
    for queue in (None, codel(target_s=100.0)):
        net = Net(queue)
        for i, t in enumerate((0.0, 0.2, 0.4, 3.0, 3.1, 9.0)):
            net.send_at(t, i)
        net.run()
        times.append((net.arrivals, net.ab.soj_sum, net.ab.area_bytes, net.ab.tx_pkts))
    assert times[0][0] == times[1][0]
    assert times[0][1] == pytest.approx(times[1][1])
    assert times[0][2] == pytest.approx(times[1][2])


def test_codel_drops_on_the_control_law_schedule():
    """50 packets at t=0 through a 1 packet/s link, target 1.5 s, interval 10 s: the sojourn is
    above target from the third packet (first_above_time = 2 + 10), so the first drop is at
    t = 12, then at 22, 22 + 10/sqrt(2), + 10/sqrt(3), + 10/2 (RFC 8289 §5)."""
    net = Net(codel())
    for seq in range(50):
        net.send_at(0.0, seq)
    seqs = net.run()
    dropped = sorted(set(range(50)) - set(seqs))
    assert dropped == [12, 23, 32, 38, 44]
    assert net.ab.aqm_drops == 5 and net.ab.dropped == 0 and net.ab.marks == 0
    assert seqs == sorted(seqs)


def test_codel_with_ecn_marks_instead_of_dropping():
    net = Net(codel(ecn=True))
    packets = [net.send_at(0.0, seq, ect=True) for seq in range(50)]
    seqs = net.run()
    assert seqs == list(range(50))
    assert net.ab.aqm_drops == 0 and net.ab.marks > 0
    assert packets[12].ce and not packets[11].ce


def fq(**extra):
    return {"discipline": "fq_codel", "target_s": 100.0, "interval_s": 1000.0,
            "quantum_bytes": None, "ecn": False, **extra}


def test_fq_codel_round_robin_between_flows():
    net = Net(fq())
    for seq in range(10):
        net.send_at(0.0, seq)
    for seq in range(100, 110):
        net.send_at(0.0, seq, deliver=net.other)
    seqs = net.run()
    assert seqs[:8] == [0, 1, 100, 2, 101, 3, 102, 4]


def test_fq_codel_new_flow_goes_first():
    net = Net(fq())
    for seq in range(20):
        net.send_at(0.0, seq)
    net.send_at(0.5, 100, deliver=net.other)
    seqs = net.run()
    assert seqs.index(100) <= 2          # behind the packet in service and at most one more
    assert net.ab.soj_sum > 0


def test_fq_codel_overflow_drops_from_the_fattest_queue():
    net = Net(fq(), buffer_bytes=5 * SIZE)
    for seq in range(8):
        net.send_at(0.0, seq)
    net.send_at(0.1, 100, deliver=net.other)
    seqs = net.run()
    assert 100 in seqs                    # the thin flow's packet got in
    assert net.ab.dropped == 3 and net.ab.aqm_drops == 0
    assert sorted(set(range(8)) - set(seqs)) == [1, 2, 3]   # heads of the fat queue


def test_fq_codel_overflow_drops_half_the_fattest_queue_with_the_arrival_in_it():
    """Linux fq_codel_enqueue adds the arrival first; fq_codel_drop then takes the queue with the
    most bytes, the arrival's counted, drops half its bytes from its head (at most 64 packets)
    and raises its CoDel count by as many (RFC 8290 §4.1). netsim chose the fattest before the
    arrival joined and dropped one packet at a time: here it dropped the other flow's head
    (acceptance test Z11)."""
    net = Net(fq(), buffer_bytes=6 * SIZE)
    for seq in range(4):
        net.send_at(0.0, seq)                    # 0 in service, 1-3 waiting
    for seq in range(100, 103):
        net.send_at(0.0, seq, deliver=net.other)  # 100-102 waiting: the buffer is full
    net.send_at(0.1, 103, deliver=net.other)     # the other flow's 4th: its queue the fattest
    seqs = net.run()
    assert sorted((set(range(4)) | set(range(100, 104))) - set(seqs)) == [100, 101]
    assert net.ab.dropped == 2
    other = next(q for key, q in net.link.transmitters[0].flows.items() if key == net.other)
    assert other.count >= 2                      # (CoDel's count grew by the two dropped)


def test_fq_codel_a_flow_idle_after_emptying_returns_as_a_new_flow():
    """The scheduler dequeues once more when the buffer has emptied, which takes the emptied
    flows off the lists (Linux dequeues until NULL; RFC 8290 §4.2): X, back after an idle spell,
    is a new flow again, listed before Y. Netsim kept X on the new list with its spent deficit,
    so Y went first (acceptance test Z11)."""
    net = Net(fq(quantum_bytes=SIZE))
    net.send_at(0.0, 0)                          # in service at once
    net.send_at(0.0, 1)                          # waits: X listed, its deficit spent on it
    net.send_at(10.0, 2)                         # the link idle: in service at once
    net.send_at(10.0, 3)
    net.send_at(10.0, 200, deliver=net.other)    # Y, new
    assert net.run() == [0, 1, 2, 3, 200]
    fq_state = net.link.transmitters[0]
    assert not fq_state.new_flows and not fq_state.old_flows


def test_fq_codel_forgets_flows_that_left_and_keeps_those_that_dropped_lately():
    """The table of flows held every flow ever seen through the link (86 states at the end of
    the websearch workload through FQ-CoDel, one live): a flow taken off the lists is
    forgotten when a return would not use its state, i.e. unless CoDel's count re-use (RFC 8289
    §5.6) could apply; the oldest state is checked too."""
    net = Net(fq(quantum_bytes=SIZE))
    for i in range(50):                          # 50 flows, one after the other
        deliver = (lambda packet, net=net: net.sink(packet))
        net.send_at(10.0 * i, 2 * i, deliver=deliver)
        net.send_at(10.0 * i, 2 * i + 1, deliver=deliver)
    assert len(net.run()) == 100
    fq_state = net.link.transmitters[0]
    assert len(fq_state.flows) <= 1
    from components.queues import CodelState
    recent = CodelState("x")
    recent.count, recent.lastcount, recent.drop_next = 5, 1, 100.0
    assert not fq_state._spent(recent, 100.0 + 15 * fq_state.interval)   # may re-use its count
    assert fq_state._spent(recent, 100.0 + 16 * fq_state.interval)
    recent.lastcount = 4
    assert fq_state._spent(recent, 100.0)        # count - lastcount <= 1: a new state's count


def test_step_marks_ect_packets_above_k():
    net = Net({"discipline": "step", "k_bytes": 2 * SIZE, "ecn": False})
    packets = [net.send_at(0.0, seq, ect=seq % 2 == 0) for seq in range(8)]
    seqs = net.run()
    assert seqs == list(range(8))
    # packet 0 is transmitted at once; packet k >= 1 joins a queue of k - 1 packets
    assert [p.ce for p in packets] == [False, False, False, False, True, False, True, False]
    assert net.ab.marks == 2


def red_transmitter(gentle=True):
    sim = Simulator()
    cfg = {"discipline": "red", "min_bytes": 10_000.0, "max_bytes": 30_000.0, "max_p": 0.1,
           "weight": 0.002, "gentle": gentle, "ecn": False}
    return Red(sim, 1e6, 0.0, 10**6, cfg)


def test_red_probability_profile():
    red = red_transmitter()
    assert red.probability(9_999) == 0.0
    assert red.probability(20_000) == pytest.approx(0.05)
    assert red.probability(30_000) == pytest.approx(0.1)
    assert red.probability(45_000) == pytest.approx(0.55)
    assert red.probability(60_000) == 1.0
    assert red_transmitter(gentle=False).probability(30_000) == 1.0


@pytest.mark.parametrize("avg", [15_000.0, 25_000.0, 33_000.0])
def test_red_drop_rate_follows_the_profile(avg):
    """With the average held, count-spread drops (pa = pb / (1 - count pb), count = 1 for the
    first packet after a drop) make the gaps uniform on 1..1/pb - 1 (Floyd & Jacobson §7), so the
    drop fraction is 2 pb (for pb <= 1/2; 33 KB is in the gentle region, pb = 0.19)."""
    red = red_transmitter()
    red.weight = 0.0
    red.avg = avg
    red.queued_pkts = 1
    d = Net().ab
    n = 40_000
    p = Packet(DATA, None, None, 1000, None)
    accepted = sum(red.decide(p, d, 1.0) for _ in range(n))
    pb = red.probability(avg)
    assert (n - accepted) / n == pytest.approx(2 * pb, rel=0.06)


def test_pie_probability_update():
    sim = Simulator()
    cfg = {"discipline": "pie", "target_s": 0.015, "tupdate_s": 0.015, "alpha": 0.125,
           "beta": 1.25, "max_burst_s": 0.15, "ecn": False}
    pie = Pie(sim, 8e6, 0.0, 10**7, cfg)      # 1 us per byte
    pie.queued_bytes, pie.queued_pkts = 30_000, 20   # 30 ms of queue
    pie._update(pie.epoch)
    p = (0.125 * (0.030 - 0.015) + 1.25 * 0.030) / 2048   # RFC 8033 §4.2 and §5.1 scaling
    assert pie.drop_prob == pytest.approx(p)
    assert pie.burst_allowance == pytest.approx(0.15 - 0.015)
    pie.drop_prob = 0.2
    pie._update(pie.epoch)                     # qdelay unchanged: p = alpha * 15 ms, capped at 2 %
    assert pie.drop_prob == pytest.approx(0.2 + 0.125 * 0.015)


# -- the topology's "queue" field -------------------------------------------------------------

def topology(queue):
    return {"name": "q", "hosts": ["H1", "H2"],
            "links": [{"id": "L1", "ends": ["H1", "H2"], "rate_mbps": 10, "delay_ms": 10,
                       "buffer_kb": 100, "queue": queue}],
            "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 1}]}


def test_queue_defaults_are_resolved():
    spec = load_topology(topology({"discipline": "codel"}))
    assert spec.links[0].queue == {"discipline": "codel", "ecn": False, "target_s": 0.005,
                                   "interval_s": 0.1}
    assert load_topology(topology({"discipline": "droptail"})).links[0].queue is None
    red = load_topology(topology({"discipline": "red", "min_kb": 10, "max_kb": 30})).links[0].queue
    assert red["min_bytes"] == 10_000 and red["max_p"] == 0.1 and red["gentle"] is True
    # max_kb may exceed the buffer: the gentle profile is then cut off by overflow
    above = {"discipline": "red", "min_kb": 50, "max_kb": 300}
    assert load_topology(topology(above)).links[0].queue["max_bytes"] == 300_000


@pytest.mark.parametrize("queue, message", [
    ({"discipline": "codle"}, 'field "queue.discipline": expected "droptail", "red", "codel", '
                              '"fq_codel", "pie" or "step", got "codle" (did you mean "codel"?)'),
    ({"discipline": "red", "min_kb": 10}, 'field "queue": missing field "max_kb"'),
    ({"discipline": "red", "min_kb": 30, "max_kb": 10}, 'field "queue.max_kb": expected a number > min_kb'),
    ({"discipline": "codel", "target": 5}, 'field "queue": unknown field "target" (did you mean "target_ms"?)'),
    ({"discipline": "pie", "ecn": 1}, 'field "queue.ecn": expected true or false, got 1'),
    ({"target_ms": 5}, 'field "queue": missing field "discipline"'),
    ("codel", 'field "queue": expected an object, got "codel"'),
    ({"discipline": "red", "min_kb": 100, "max_kb": 300},
     'field "queue.min_kb": expected a number < the link\'s buffer_kb (100): the queue never '
     'reaches it, got 100'),
    ({"discipline": "step", "k_kb": 120}, 'field "queue.k_kb": expected a number < the link\'s '
                                          'buffer_kb (100): the queue never reaches it, got 120'),
])
def test_queue_errors_are_one_line(queue, message):
    with pytest.raises(TopologyError) as info:
        load_topology(topology(queue))
    text = str(info.value)
    assert "\n" not in text and 'links[0] "L1"' in text and message in text, text


def test_a_run_through_every_discipline_reports_the_new_fields(tmp_path):
    from netsim import simulate
    for queue in ({"discipline": "red", "min_kb": 5, "max_kb": 15}, {"discipline": "codel"},
                  {"discipline": "fq_codel"}, {"discipline": "pie"},
                  {"discipline": "step", "k_kb": 20}):
        results = simulate(load_topology(topology(queue)))
        d = results.summary["links"]["L1"]["directions"]["H1->H2"]
        assert results.summary["flows"]["F1"]["in_order"]
        assert d["avg_sojourn_ms"] is not None and d["p99_sojourn_ms"] >= d["avg_sojourn_ms"] * 0
        assert {"marks", "aqm_drops"} <= set(d)
        results.write(tmp_path / queue["discipline"])
        header = (tmp_path / queue["discipline"] / "links.csv").read_text().splitlines()[0]
        assert header.endswith("marks,aqm_drops,sojourn_ms")
    json.dumps(results.summary)


def test_sweep_paths_reach_the_nested_queue_field():
    from netsim.sweep_file import set_path
    data = topology({"discipline": "droptail"})
    del data["links"][0]["queue"]
    set_path(data, "links.L1.queue.discipline", "codel")
    set_path(data, "links.L1.queue.target_ms", 10)
    link = load_topology(data).links[0]
    assert link.queue == {"discipline": "codel", "ecn": False, "target_s": 0.01, "interval_s": 0.1}
    hash(link)                            # LinkSpec stays hashable (theory.paths uses it)


def test_a_shorter_delay_keeps_the_order_through_a_discipline():
    net = Net(codel(target_s=100.0), delay_s=5.0)
    for seq in range(6):
        net.send_at(0.0, seq)
    net.sim.schedule_at(1.5, lambda _: net.link.set_delay(0.0))   # 5 s -> 0: no overtaking
    seqs = net.run()
    assert seqs == list(range(6))
    times = [t for t, _ in net.arrivals]
    assert times == sorted(times)


def test_fq_codel_judges_a_flow_by_the_whole_backlog_as_linux_does():
    """20 flows, each with two packets waiting at t = 0 and one more every 20 s, as fast as the
    link (1 packet/s) serves them all: a flow's own queue holds one packet after each dequeue,
    the link's about 39, so each packet waits about 40 s (target 1.5 s, interval 10 s). Linux's
    fq_codel gives CoDel the qdisc's backlog and drops; judged by the flow's own backlog (as
    netsim did) nothing was ever dropped."""
    net = Net(fq(target_s=1.5, interval_s=10.0), buffer_bytes=100 * SIZE)
    sinks = [(lambda packet: None) for _ in range(20)]
    for k, sink in enumerate(sinks):
        net.send_at(0.0, 1000 * k, deliver=sink)
        net.send_at(0.0, 1000 * k + 1, deliver=sink)
        for j in range(1, 10):
            net.send_at(20.0 * j + k, 1000 * k + 1 + j, deliver=sink)
    net.run()
    assert net.ab.aqm_drops > 0 and net.ab.dropped == 0


def test_pie_restores_the_burst_allowance_when_it_goes_idle():
    """RFC 8033 §4.4: the allowance comes back once both delays are under half the target with
    the probability 0. A queue that empties as the probability reaches 0, with the old delay
    still above half the target, stops the timer: the allowance is restored then, as the
    next update on the idle queue would."""
    sim = Simulator()
    cfg = {"discipline": "pie", "target_s": 0.015, "tupdate_s": 0.015, "alpha": 0.125,
           "beta": 1.25, "max_burst_s": 0.15, "ecn": False}
    pie = Pie(sim, 8e6, 0.0, 10**7, cfg)
    pie.drop_prob, pie.qdelay_old, pie.burst_allowance, pie.timer = 2e-4, 0.010, 0.0, True
    pie._update(pie.epoch)                      # the queue is empty: qdelay 0
    assert pie.drop_prob == 0.0 and not pie.timer
    assert pie.burst_allowance == pytest.approx(0.15)


def test_red_averages_the_arrivals_the_full_buffer_drops():
    """Floyd and Jacobson §4 and Linux's red_enqueue average every arrival: ten arrivals to a
    full buffer move the average ten steps towards the 3 000 bytes waiting."""
    sim = Simulator()
    cfg = {"discipline": "red", "min_bytes": 10_000.0, "max_bytes": 30_000.0, "max_p": 0.1,
           "weight": 0.002, "gentle": True, "ecn": False}
    red = Red(sim, 1e6, 0.0, 3000, cfg)
    red.queued_bytes, red.queued_pkts, red.idle_since = 3000, 3, None
    d = Net().ab
    expected = 0.0
    for _ in range(10):
        assert not red.admit(Packet(DATA, None, None, 1000, None), d, 1.0)
        expected += 0.002 * (3000 - expected)
    assert d.dropped == 10 and red.avg == pytest.approx(expected)


def test_red_decays_the_average_over_an_idle_spell_by_one_minus_w_to_the_m():
    red = red_transmitter()                     # 1 Mb/s: a 1 000-byte packet takes 8 ms
    red.max_packet = 1000
    red.avg, red.idle_since, red.busy_until = 20_000.0, 0.0, 0.0
    assert red._average(0.8) == pytest.approx(20_000.0 * 0.998 ** 100)    # m = 100


# -- a failure resets the discipline's state, as Linux's qdisc reset does when the carrier drops --

def failing_link(queue):
    net = Net(queue=queue)
    net.link.enable_failures()
    return net


def test_red_starts_again_after_a_failure():
    """red_reset (red_restart): the average and the count from before a failure are forgotten."""
    net = failing_link({"discipline": "red", "min_bytes": 2 * SIZE, "max_bytes": 6 * SIZE,
                        "max_p": 0.1, "weight": 0.5, "gentle": True, "ecn": False})
    for seq in range(12):
        net.send_at(0.0, seq)
    red = net.link.directions[0].transmitter
    net.sim.run(until=3.0)
    assert red.avg > 2 * SIZE and red.count >= 0
    net.link.go_down()
    assert red.avg == 0.0 and red.count == -1 and red.queued_bytes == 0
    net.link.come_up()
    net.send_at(net.sim.now + 1.0, 100)
    net.sim.run()
    assert net.arrivals[-1][1] == 100               # below min: admitted


def test_pie_starts_again_after_a_failure():
    """pie_reset (pie_vars_init): probability 0, no old delay, the whole burst allowance."""
    net = failing_link({"discipline": "pie", "target_s": 0.5, "tupdate_s": 1.0, "alpha": 0.125,
                        "beta": 1.25, "max_burst_s": 1.0, "ecn": False})
    for seq in range(30):
        net.send_at(0.0, seq)
    pie = net.link.directions[0].transmitter
    net.sim.run(until=10.5)
    assert pie.drop_prob > 0.0 and pie.qdelay_old > 0.0 and pie.burst_allowance == 0.0
    net.link.go_down()
    assert (pie.drop_prob, pie.qdelay_old, pie.burst_allowance, pie.timer) == (0.0, 0.0, 1.0,
                                                                                False)


def test_pie_keeps_one_update_timer_through_a_flap_shorter_than_tupdate(monkeypatch):
    """The chain of updates from before a failure ends when it next fires; it must not stop the
    chain a packet began after the repair, or the next packet starts a second one."""
    from components.queues import Pie
    net = failing_link({"discipline": "pie", "target_s": 0.5, "tupdate_s": 1.0, "alpha": 0.125,
                        "beta": 1.25, "max_burst_s": 1.0, "ecn": False})
    pie = net.link.directions[0].transmitter
    updates = []
    update = Pie._update                 # (on the class: a PIE transmitter has no __dict__)

    def counted(self, epoch):
        updates.append((net.sim.now, epoch == self.epoch))
        update(self, epoch)
    monkeypatch.setattr(Pie, "_update", counted)
    for seq in range(6):
        net.send_at(0.0, seq)
    net.sim.schedule_at(2.25, lambda _: net.link.go_down())
    net.sim.schedule_at(2.5, lambda _: net.link.come_up())
    for seq in range(6, 30):                     # after the stale update at 3 s, too
        net.send_at(2.75 + 0.25 * (seq - 6), seq)
    net.sim.run(until=12.0)
    live = [t for t, current in updates if current and t > 2.75]
    assert len(live) > 3                         # one chain (the first packet that waits
    assert live == pytest.approx([live[0] + k for k in range(len(live))])   # began it): 1 s apart
