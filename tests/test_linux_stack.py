"""The Linux stack as a whole and its single mechanisms: options, Linux's RTO, the integer
window, Linux's delayed ACKs, undo, the algorithm hooks and the counters
(flows/linux_stack.py, flows/rtt.py, flows/receiver.py, flows/undo.py, flows/linux_sender.py)."""
from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.packet import ACK, DATA, Packet
from flows.congestion import CaEvent, CongestionControl
from flows.linux_sender import LinuxSender
from flows.linux_stack import MECHANISMS, stack_options
from flows.receiver import LinuxReceiver
from flows.rtt import LinuxRttEstimator
from flows.sender import Sender
from flows.sender_view import COUNTERS
from flows.undo import Undo
from topologies.spec import TransportSpec


# -- options -----------------------------------------------------------------------------------
def test_the_linux_stack_turns_every_mechanism_on_and_the_classic_none():
    linux = stack_options(TransportSpec(stack="linux"), 1000)
    classic = stack_options(TransportSpec(), 1000)
    assert all(getattr(linux, name) for name in MECHANISMS)
    assert not any(getattr(classic, name) for name in MECHANISMS)
    assert linux.rwnd_pkts == math.floor(6 * 1024 * 1024 * 0.5 / 1000)     # tcp_rmem[2] / 2
    assert classic.rwnd_pkts == math.inf


def test_explicit_settings_override_the_stack():
    options = stack_options(TransportSpec(stack="linux", rack=False, rwnd_kb=64), 1000)
    assert not options.rack and options.tlp and options.rwnd_pkts == 64
    alone = stack_options(TransportSpec(rack=True), 1500)
    assert alone.rack and alone.sack and not alone.prr and alone.extended
    assert stack_options(TransportSpec(rwnd_kb=3), 1500).rwnd_pkts == 2


def test_linux_numeric_defaults_and_explicit_values():
    linux = TransportSpec(stack="linux")
    assert (linux.initial_cwnd_pkts, linux.initial_rto_s, linux.min_rto_s, linux.max_rto_s) == (
        10.0, 1.0, 0.2, 120.0)
    classic = TransportSpec()
    assert (classic.initial_cwnd_pkts, classic.min_rto_s, classic.max_rto_s) == (1.0, 1.0, 60.0)
    assert TransportSpec(stack="linux", initial_cwnd_pkts=4).initial_cwnd_pkts == 4


def test_the_flow_picks_the_sender_and_receiver_of_its_stack(make_flow):
    _, _, _, linux = make_flow(transport=TransportSpec(stack="linux"))
    _, _, _, classic = make_flow()
    assert type(linux.sender) is LinuxSender and type(linux.receiver) is LinuxReceiver
    assert type(classic.sender) is Sender
    assert linux.sender.stack == "linux" and classic.sender.stack == "classic"
    assert linux.cwnd == 10.0


def test_counters_have_the_same_keys_on_every_stack(make_flow):
    for transport in (None, TransportSpec(stack="linux")):
        sim, _h1, _h2, flow = make_flow(packets=50, transport=transport)
        sim.run()
        counters = flow.sender.counters()
        assert tuple(counters) == COUNTERS
        assert all(isinstance(value, int) and value >= 0 for value in counters.values())


# -- Linux's RTO (tcp_rtt_estimator, tcp_set_rto) ---------------------------------------------
class _Seq:
    snd_una = 0
    snd_nxt = 0


def test_the_first_sample_gives_srtt_plus_max_of_two_rtt_and_the_minimum():
    rtt = LinuxRttEstimator(_Seq(), 1.0, 0.2, 120.0)
    assert rtt.rto == 1.0                            # TCP_TIMEOUT_INIT before any sample
    rtt.sample(0.010)
    assert rtt.rto == pytest.approx(0.010 + 0.2)
    rtt2 = LinuxRttEstimator(_Seq(), 1.0, 0.2, 120.0)
    rtt2.sample(0.5)
    assert rtt2.rto == pytest.approx(0.5 + 2 * 0.5)   # mdev = 2 R above the minimum


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=1e-4, max_value=5.0), min_size=1, max_size=60))
def test_the_rto_is_at_least_srtt_plus_200ms_and_at_most_120s(samples):
    seq = _Seq()
    rtt = LinuxRttEstimator(seq, 1.0, 0.2, 120.0)
    for i, sample in enumerate(samples):
        seq.snd_una, seq.snd_nxt = i, i + 5
        rtt.sample(sample)
        assert rtt.rto >= min(rtt.srtt + 0.2, 120.0) - 1e-12
        assert rtt.rto <= 120.0
    for _ in range(12):
        rtt.back_off()
    assert rtt.rto == 120.0


def test_a_drop_in_rtt_moves_the_variation_with_the_finer_gain():
    seq = _Seq()
    rtt = LinuxRttEstimator(seq, 1.0, 0.01, 120.0)
    rtt.sample(0.100)
    mdev = rtt.mdev
    rtt.sample(0.020)                                # error -0.08 below srtt: gain 1/32
    error = 0.080 - mdev / 4.0
    expected = mdev + (error / 8.0 if error > 0 else error)
    assert rtt.mdev == pytest.approx(expected)


# -- the integer window --------------------------------------------------------------------------
class _FixedWindow(CongestionControl):
    """Keeps the window at a fraction."""

    name = "fixed"

    def init(self):
        self.flow.cwnd = 6.5

    def on_ack(self, acked_pkts):
        self.flow.cwnd = 6.5


def _max_flight(make_flow, transport):
    sim, h1, _h2, flow = make_flow(packets=200, algorithm=_FixedWindow, transport=transport)
    flights = []
    send = h1.send

    def spy(packet):
        if packet.kind == DATA and not packet.retx:   # packets out, this one included
            flights.append(packet.seq + 1 - flow.sender.snd_una)
        return send(packet)
    h1.send = spy
    sim.run()
    assert flow.finished
    return max(flights)


def test_the_integer_window_sends_floor_cwnd_packets(make_flow):
    assert _max_flight(make_flow, TransportSpec(integer_window=True)) == 6
    assert _max_flight(make_flow, TransportSpec()) == 7      # classic: while flight < 6.5
    assert _max_flight(make_flow, TransportSpec(stack="linux")) == 6


# -- Linux's delayed ACKs ------------------------------------------------------------------------
def _acks_per_data(make_flow, packets, **fields):
    sim, _h1, h2, flow = make_flow(packets=packets, transport=TransportSpec(**fields))
    acks = []
    send = h2.send

    def spy(packet):
        if packet.kind == ACK:
            acks.append((sim.now, packet.ack_seq))
        return send(packet)
    h2.send = spy
    sim.run()
    assert flow.finished and flow.delivered_all()
    return acks


def test_quick_acks_at_start_then_one_ack_per_two_packets(make_flow):
    acks = _acks_per_data(make_flow, 200, stack="linux")
    cums = [cum for _, cum in acks]
    assert cums[:16] == list(range(1, 17))           # 16 quick ACKs, one per packet
    steps = [b - a for a, b in itertools.pairwise(cums[16:])]
    assert steps.count(2) >= 0.95 * len(steps)       # then every second full packet
    assert len(acks) == pytest.approx(16 + (200 - 16) / 2, abs=3)


class _Collector:
    """A host that keeps what it sends."""

    def __init__(self, sim):
        self.sim = sim
        self.sent = []

    def send(self, packet):
        self.sent.append((self.sim.now, packet))


def test_a_lone_packet_is_acknowledged_by_the_delayed_ack_timer():
    from components.packet import Packet
    from simulator.engine import Simulator
    sim = Simulator(1)
    host = _Collector(sim)
    receiver = LinuxReceiver(sim, host, host, math.inf, 1000, 1000, 40, lambda p: None, 0.0,
                             ecn=None)
    for seq in range(17):                            # 1 ms apart; the 17th is alone
        sim.schedule_at(0.001 * seq, lambda _, seq=seq: receiver.on_data(
            Packet(DATA, host, host, 1000, None, seq, -1, -1, 0.0, False)))
    sim.run()
    acks = [(t, p.ack_seq) for t, p in host.sent]
    assert [cum for _, cum in acks[:16]] == list(range(1, 17))   # quick ACKs
    # packet 16 arrives at 16 ms; ato is back at TCP_ATO_MIN (40 ms) after quick-ACK mode
    assert acks[16] == (pytest.approx(0.016 + 0.040), 17)
    assert len(acks) == 17


def test_the_ack_timeout_adapts_to_arrival_gaps():
    class _Host:
        def send(self, packet):
            pass

    from simulator.engine import Simulator
    sim = Simulator(1)
    receiver = LinuxReceiver(sim, _Host(), _Host(), math.inf, 1000, 1000, 40, lambda p: None,
                             0.0, ecn=None)

    def arrive(seq, at_s):
        sim.now = at_s
        receiver.on_data(Packet(DATA, None, None, 1000, None, seq, sent_s=at_s))

    arrive(0, 0.0)              # the first packet: quick-ACK mode (16, one ACK sent at once)
    assert receiver.ato_s == 0.040 and receiver.quick == 15
    arrive(1, 0.001)                                  # back to back: ato/2 + 20 ms
    assert receiver.ato_s == pytest.approx(0.040)
    arrive(2, 0.031)                                  # a 30 ms gap, below ato: ato/2 + gap
    assert receiver.ato_s == pytest.approx(0.020 + 0.030)
    receiver.quick = 0
    arrive(3, 1.5)              # a gap over RECEIVER_RTO (1 s): quick-ACK mode again
    assert receiver.quick == 15 and receiver.ato_s == pytest.approx(0.050)


# -- undo ----------------------------------------------------------------------------------------
def _delay_at(sim, host, seq, delay_s):
    """Hold the first copy of data packet `seq` arriving at `host` for `delay_s` more."""
    direction = next(d for d in host.links[0].directions if d.dst is host)
    receive = direction.dst_receive
    held = set()

    def filtered(packet):
        if packet.kind == DATA and packet.seq == seq and seq not in held:
            held.add(seq)
            sim.schedule(delay_s, lambda _=None: receive(packet))
            return
        receive(packet)
    direction.dst_receive = filtered


def _reordered(make_flow, **fields):
    transport = TransportSpec(stack="linux", initial_ssthresh_pkts=30, **fields)
    sim, _h1, h2, flow = make_flow(packets=300, transport=transport, buffer_bytes=10**7)
    windows = []
    on_ack = flow.receiver.on_ack

    def spy(ack):
        before = (flow.state, flow.cwnd)
        on_ack(ack)
        windows.append((before, (flow.state, flow.cwnd)))
    flow.receiver.on_ack = spy
    _delay_at(sim, h2, 100, 0.006)                   # reordered by 6 ms: not lost
    sim.run()
    assert flow.finished and flow.delivered_all()
    return flow, windows


def test_undo_restores_the_window_after_a_spurious_fast_retransmit(make_flow):
    flow, windows = _reordered(make_flow)
    assert flow.sender.counters()["spurious_undo"] == 1
    assert flow.retransmissions == 1 and flow.timeouts == 0
    entered = next(i for i, (before, after) in enumerate(windows)
                   if before[0] == "open" and after[0] == "recovery")
    prior = windows[entered][0][1]
    assert flow.sender.prior_cwnd == pytest.approx(prior) or flow.sender.prior_cwnd >= prior
    undone = next(after for before, after in windows[entered:] if after[1] >= prior)
    assert undone[1] >= prior                        # back to the window before the reduction
    without, _ = _reordered(make_flow, undo=False)
    assert without.sender.counters()["spurious_undo"] == 0
    assert flow.cwnd > without.cwnd


def test_undo_record_rules():
    undo = Undo()
    assert not undo.may_undo(0.0)
    undo.begin(cwnd=20.0, ssthresh=30.0, after_ecn=False)
    assert undo.prior_ssthresh == 30.0
    undo.begin(cwnd=40.0, ssthresh=10.0, after_ecn=False)
    assert undo.prior_ssthresh == 30.0               # max(ssthresh, 3/4 cwnd)
    assert not undo.may_undo(None) and not undo.may_undo(0.0)   # nothing retransmitted yet
    undo.on_retransmit(7, now=1.0)
    undo.on_retransmit(8, now=1.1)
    assert undo.may_undo(0.9) and not undo.may_undo(1.0)   # echo before the first retransmission
    undo.on_dsack(7)
    assert not undo.may_undo(None)
    undo.on_dsack(8)
    assert undo.may_undo(None)                       # every retransmission D-SACKed


# -- hooks ---------------------------------------------------------------------------------------
class _Events(CongestionControl):
    """Records the events the transport reports."""

    name = "events"
    __slots__ = ("events",)

    def __init__(self, flow, params=None):
        super().__init__(flow, params)
        self.events = []

    def cwnd_event(self, event):
        self.events.append(event)

    on_ack = CongestionControl.standard_growth


def test_tx_start_at_the_first_send_and_loss_on_a_timeout(make_flow, drop_at, drop_first_copy):
    for transport in (TransportSpec(min_rto_s=0.2), TransportSpec(stack="linux", tlp=False)):
        sim, _h1, h2, flow = make_flow(packets=40, algorithm=_Events, transport=transport)
        drop_at(h2, drop_first_copy([39]))
        sim.run()
        events = flow.cc.events
        assert events[0] == CaEvent.TX_START
        assert CaEvent.LOSS in events and flow.timeouts == 1


def test_is_cwnd_limited_follows_linux_in_slow_start_and_with_a_receive_window(make_flow):
    sim, _h1, _h2, flow = make_flow(packets=2000, transport=TransportSpec(stack="linux",
                                                                         rwnd_kb=5))
    seen = []
    on_ack = flow.receiver.on_ack

    def spy(ack):
        on_ack(ack)
        seen.append(flow.sender.is_cwnd_limited)
    flow.receiver.on_ack = spy
    sim.run()
    assert flow.finished
    assert not seen[-100:].count(True)               # the receive window limits, not cwnd
    assert flow.cwnd <= 2 * 5                        # growth stops at twice what is out


# -- the topology fields and --stack -------------------------------------------------------------
def test_a_file_level_stack_gives_its_flows_linux_defaults_unless_set():
    from networks import two_hosts

    from topologies import load_topology
    topology = two_hosts(rate_mbps=10.0, delay_ms=5.0, data_mb=1.0,
                         transport={"stack": "linux", "min_rto_s": 0.3, "rack": False})
    topology["flows"].append({"id": "F2", "src": "H1", "dst": "H2", "data_mb": 1.0,
                              "transport": {"stack": "classic"}})
    spec = load_topology(topology)
    f1, f2 = spec.flow("F1").transport, spec.flow("F2").transport
    assert (f1.stack, f1.initial_cwnd_pkts, f1.min_rto_s, f1.max_rto_s, f1.rack) == (
        "linux", 10.0, 0.3, 120.0, False)
    # F2 goes back to classic: the defaults follow, the file's explicit values stay
    assert (f2.stack, f2.initial_cwnd_pkts, f2.min_rto_s, f2.max_rto_s, f2.rack) == (
        "classic", 1.0, 0.3, 60.0, False)


def test_the_command_line_stack_overrides_every_flow():
    from networks import two_hosts

    from topologies import load_topology
    topology = two_hosts(rate_mbps=10.0, delay_ms=5.0, data_mb=1.0)
    topology["flows"][0]["transport"] = {"stack": "classic", "initial_cwnd_pkts": 4}
    spec = load_topology(topology, stack="linux")
    transport = spec.flow("F1").transport
    assert transport.stack == "linux" and transport.initial_cwnd_pkts == 4
    assert transport.min_rto_s == 0.2


@pytest.mark.parametrize(("block", "message"), [
    ({"stack": "bsd"}, 'transport: field "stack": expected "classic" or "linux", got "bsd"'),
    ({"rack": 1}, 'transport: field "rack": expected true or false, got 1'),
    ({"rwnd_kb": 0}, 'transport: field "rwnd_kb": expected a positive number of at most 1e+15 '
                     '(1e+18 bytes, the largest flow), got 0'),
    ({"rwnd_kb": 1}, 'transport: field "rwnd_kb": expected a receive window of at least one '
                     '1024-byte data packet (1.024 kB of 1000 bytes), got 1'),   # (was a traceback)
])
def test_bad_transport_fields_get_one_line(block, message):
    from networks import two_hosts

    from topologies import load_topology
    from topologies.loader import TopologyError
    with pytest.raises(TopologyError) as error:
        load_topology(two_hosts(rate_mbps=10.0, delay_ms=5.0, data_mb=1.0, transport=block))
    assert message in str(error.value) and "\n" not in str(error.value)


def test_a_linux_run_reports_its_counters_and_no_timeout():
    from networks import run, two_hosts
    results = run(two_hosts(rate_mbps=10.0, delay_ms=10.0, buffer_kb=25.0, data_mb=None,
                            duration_s=10.0, transport={"stack": "linux"},
                            impairment={"loss_rate": 0.01}))
    counters = results.network.flows["F1"].sender.counters()
    assert counters["rto"] == 0
    assert counters["rack_lost"] > 0 and counters["sack_recoveries"] > 0


def test_the_rto_without_backoff_is_reported_by_each_estimator():
    from flows.rtt import RttEstimator
    classic = RttEstimator(1.0, 0.2, 60.0)
    assert classic.base_rto_s() is None
    classic.sample(0.1)
    classic.back_off()
    assert classic.base_rto_s() == pytest.approx(0.3) and classic.rto == pytest.approx(0.6)
    linux = LinuxRttEstimator(_Seq(), 1.0, 0.2, 120.0)
    linux.sample(0.1)
    linux.back_off()
    assert linux.base_rto_s() == pytest.approx(0.1 + 0.2) and linux.rto == pytest.approx(0.6)
