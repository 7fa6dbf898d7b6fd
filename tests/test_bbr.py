"""BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00): the hooks on hand-computed rate
samples without a simulator, then end-to-end runs (completion, random loss, queueing delay)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from networks import dumbbell

import flows
from components.packet import DATA
from flows.bbr import GAIN_CYCLE, Bbr
from flows.congestion import LOSS, OPEN, RECOVERY
from flows.recovery import ModelWindow, recovery_window
from flows.transport import RateSample
from netsim.run import simulate
from topologies.loader import load_topology

HIGH_GAIN = 2.885
PACKET_BYTES = 1000


# -- hook level ---------------------------------------------------------------------------------
class Driver:
    """Feeds rate samples the way the transport does: on_rtt, then on_rate_sample. `flow` is a
    stand-in flow (the `fake_flow` fixture; its `inflight` is what pipe() reports)."""

    def __init__(self, flow, **params):
        self.flow = flow
        self.cc = Bbr(self.flow, params)
        self.cc.init()
        self.delivered = 0

    def ack(self, at, rate, rtt=0.1, n=1, new_round=False, app_limited=False, inflight=None):
        flow, cc = self.flow, self.cc
        flow.sim.now = at
        if inflight is not None:
            flow.inflight = inflight
        # prior_delivered >= next_round_delivered starts a round (packet-timed rounds)
        prior = cc.next_round_delivered if new_round else cc.next_round_delivered - 1
        self.delivered += n
        if rtt is not None:
            cc.on_rtt(rtt)
        cc.on_rate_sample(RateSample(rate, self.delivered, prior, 0.01, rtt or 0.0,
                                     app_limited, n))
        return cc


@pytest.fixture
def driver(fake_flow):
    """driver(cwnd=10.0, seed=1, **params): a Driver on a fresh stand-in flow."""
    return lambda cwnd=10.0, seed=1, **params: Driver(fake_flow(cwnd, seed=seed), **params)


@pytest.fixture
def to_probe_bw(driver):
    """to_probe_bw(seed=1, rtt=0.1): a Driver brought to ProbeBW (see `_to_probe_bw`)."""
    return lambda seed=1, rtt=0.1: _to_probe_bw(driver, seed, rtt)


def _to_probe_bw(driver, seed, rtt):
    """Startup with a plateau at 950 pkt/s, Drain, then ProbeBW at t = 1.0 (BDP = 95 packets
    with an RTT of 0.1 s)."""
    d = driver(seed=seed)
    t = 0.0
    for rate in (100, 200, 400, 800, 850, 900, 950):
        t += 0.1
        d.ack(t, rate, rtt, new_round=True, inflight=200)
    assert d.cc.state == "drain"
    d.ack(1.0, 950, rtt, inflight=98)                  # BDP + 3 quanta: drained
    assert d.cc.state == "probe_bw"
    return d


def test_defaults_and_transport_modes(driver):
    d = driver()
    cc = d.cc
    assert Bbr.name == "bbr" and cc.wants_rate_samples and cc.recovery == "sack"
    assert cc.params == {"high_gain": 2.885, "cwnd_gain": 2.0, "btlbw_rounds": 10,
                         "min_rtt_window_s": 10.0, "probe_rtt_duration_s": 0.2}
    assert cc.state == "startup"
    assert cc.pacing_gain == cc.cwnd_gain == HIGH_GAIN
    assert cc.min_rtt_s == math.inf and cc.bdp_pkts() is None and cc.btl_bw_pps() == 0.0


def test_parameter_validation():
    assert Bbr.param_problem("btlbw_rounds", 2.5)
    assert Bbr.param_problem("btlbw_rounds", 0)
    assert Bbr.param_problem("high_gain", 1.0)
    assert Bbr.param_problem("cwnd_gain", -2)
    assert Bbr.param_problem("min_rtt_window_s", True)
    assert Bbr.param_problem("probe_rtt_duration_s", 0.1) is None
    assert Bbr.param_problem("btlbw_rounds", 6) is None


def test_initial_pacing_rate_from_the_initial_window(driver, fake_flow):
    # §4.2.1: high_gain x InitialCwnd / 1 ms without an RTT sample, / SRTT with one.
    d = driver(cwnd=10.0)
    assert d.flow.pacing_rate_bps == pytest.approx(HIGH_GAIN * 10 / 0.001 * PACKET_BYTES * 8)
    flow = fake_flow(cwnd=10.0)
    flow.srtt = 0.05
    cc = Bbr(flow)
    cc.init()
    assert cc.min_rtt_s == 0.05
    assert flow.pacing_rate_bps == pytest.approx(HIGH_GAIN * 10 / 0.05 * PACKET_BYTES * 8)


def test_rounds_are_packet_timed(driver):
    d = driver()
    d.ack(0.1, 100, new_round=True)
    d.ack(0.11, 100)
    d.ack(0.12, 100)
    assert d.cc.round_count == 1
    d.ack(0.2, 100, new_round=True)
    assert d.cc.round_count == 2 and d.cc.next_round_delivered == d.delivered


def test_max_filter_keeps_the_max_of_the_last_ten_rounds(driver):
    d = driver()
    d.ack(0.1, 500, new_round=True)                    # round 1
    d.ack(0.2, 400, new_round=True)                    # round 2
    d.ack(0.21, 450)                                   # still round 2: the round's max counts
    for r in range(3, 11):                             # rounds 3..10
        d.ack(0.1 * r, 100, new_round=True)
        assert d.cc.btl_bw_pps() == 500
    assert d.cc.round_count == 10
    d.ack(1.1, 100, new_round=True)                    # round 11: round 1 is forgotten
    assert d.cc.btl_bw_pps() == 450
    d.ack(1.2, 100, new_round=True)                    # round 12: so is round 2
    assert d.cc.btl_bw_pps() == 100
    d.ack(1.25, 700)                                   # a new maximum at once
    assert d.cc.btl_bw_pps() == 700


def test_app_limited_samples_count_only_if_they_raise_the_max(driver):
    d = driver()
    d.ack(0.1, 500, new_round=True)
    for r in range(2, 11):
        d.ack(0.1 * r, 300, new_round=True, app_limited=(r == 10))
    d.ack(1.1, 200, new_round=True)                    # round 11 forgets round 1
    assert d.cc.btl_bw_pps() == 300                    # rounds 2..9, not the app-limited one
    d.ack(1.15, 900, app_limited=True)                 # app-limited but above BtlBw: taken
    assert d.cc.btl_bw_pps() == 900
    d = driver()
    d.ack(0.1, 500, new_round=True)
    d.ack(0.2, 100, new_round=True, app_limited=True)
    for r in range(3, 12):
        d.ack(0.1 * r, 50, new_round=True)
    assert d.cc.btl_bw_pps() == 50                     # the app-limited 100 never entered


def test_startup_drain_probe_bw(driver):
    d = driver()
    cc = d.cc
    t = 0.0
    # BtlBw doubles: no plateau
    for rate in (100, 200, 400, 800):
        t += 0.1
        d.ack(t, rate, new_round=True, inflight=200)
        assert cc.state == "startup" and cc.full_pipe.full_bw == rate and cc.full_pipe.count == 0
    # three rounds below +25 % (850, 900, 950 < 1000): the pipe is full
    for count, rate in enumerate((850, 900), start=1):
        t += 0.1
        d.ack(t, rate, new_round=True, inflight=200)
        d.ack(t + 0.01, rate)                          # not a round start: not counted
        d.ack(t + 0.02, rate, new_round=True, app_limited=True)   # app-limited: not counted
        assert cc.state == "startup" and cc.full_pipe.count == count
    t += 0.1
    d.ack(t, 950, new_round=True, inflight=200)
    assert cc.full_pipe.filled and cc.state == "drain"
    assert cc.pacing_gain == pytest.approx(1 / HIGH_GAIN) and cc.cwnd_gain == HIGH_GAIN
    assert cc.bdp_pkts() == pytest.approx(95.0)
    # Drain lasts while more than BBRInflight(1.0) = BDP + 3 = 98 packets are in flight
    d.ack(t + 0.01, 950, inflight=99)
    assert cc.state == "drain"
    d.ack(t + 0.02, 950, inflight=98)
    assert cc.state == "probe_bw" and cc.cwnd_gain == 2.0
    assert cc.pacing_gain != 0.75


def test_growth_of_25_percent_restarts_the_plateau_count(driver):
    d = driver()
    for t, rate in ((0.1, 800), (0.2, 850), (0.3, 900), (0.4, 1000)):
        d.ack(t, rate, new_round=True, inflight=200)
    assert d.cc.full_pipe.full_bw == 1000 and d.cc.full_pipe.count == 0 and d.cc.state == "startup"


def test_random_start_phase_is_never_the_draining_one(to_probe_bw):
    starts = set()
    for seed in range(60):
        starts.add(to_probe_bw(seed=seed).cc.cycle_index)
    assert starts == {0, 2, 3, 4, 5, 6, 7}


def test_the_start_phase_comes_from_the_run_generator(to_probe_bw):
    a, b = to_probe_bw(seed=7), to_probe_bw(seed=7)
    assert a.cc.cycle_index == b.cc.cycle_index


def test_gain_cycle_order_and_one_phase_per_min_rtt(to_probe_bw):
    d = to_probe_bw(seed=3)
    cc = d.cc
    start = cc.cycle_index
    gains = [cc.pacing_gain]
    stamps = [cc.cycle_stamp]
    t = 1.0
    # Far more than 5/4 BDP in flight: every phase, 5/4 and 3/4 too, lasts one min_rtt.
    while len(gains) < 17:
        t += 0.025
        before = cc.cycle_index
        d.ack(t, 950, inflight=1000)
        if cc.cycle_index != before:
            gains.append(cc.pacing_gain)
            stamps.append(cc.cycle_stamp)
    expected = [GAIN_CYCLE[(start + i) % 8] for i in range(17)]
    assert gains == expected
    # each phase ends at the first ACK more than min_rtt (0.1 s) after it began
    assert np.diff(stamps) == pytest.approx(0.125)


def _to_phase(d, index):
    cc = d.cc
    t = d.flow.sim.now
    while cc.cycle_index != index:
        t += 0.025
        d.ack(t, 950, inflight=1000)
    return t


def test_probing_phase_waits_for_inflight_or_loss(to_probe_bw):
    d = to_probe_bw(seed=3)
    cc = d.cc
    t = _to_phase(d, 0)
    assert cc.pacing_gain == 1.25
    # after min_rtt, still below 5/4 BDP + 3 = 121.75 packets in flight and no loss: stay
    d.ack(t + 0.15, 950, inflight=121)
    d.ack(t + 0.3, 950, inflight=121)
    assert cc.pacing_gain == 1.25
    d.ack(t + 0.31, 950, inflight=122)                 # reached: next phase
    assert cc.pacing_gain == 0.75
    t = _to_phase(d, 0)
    d.ack(t + 0.05, 950, inflight=50)
    d.flow.retransmissions += 1                        # a loss, but before min_rtt elapsed
    d.ack(t + 0.06, 950, inflight=50)
    assert cc.pacing_gain == 1.25
    d.flow.retransmissions += 1
    d.ack(t + 0.11, 950, inflight=50)                  # a loss after min_rtt: next phase
    assert cc.pacing_gain == 0.75


def test_draining_phase_ends_early_once_inflight_is_down_to_the_bdp(to_probe_bw):
    d = to_probe_bw(seed=3)
    cc = d.cc
    t = _to_phase(d, 1)
    assert cc.pacing_gain == 0.75
    d.ack(t + 0.01, 950, inflight=99)
    assert cc.pacing_gain == 0.75
    d.ack(t + 0.02, 950, inflight=98)                  # BDP + 3: drained before min_rtt
    assert cc.pacing_gain == 1.0 and cc.cycle_index == 2


def test_pacing_rate_and_window_formulas(to_probe_bw):
    d = to_probe_bw(seed=3)
    cc, flow = d.cc, d.flow
    t = _to_phase(d, 2)
    assert cc.pacing_gain == 1.0
    assert cc.btl_bw_pps() == 950 and cc.min_rtt_s == 0.1 and cc.bdp_pkts() == pytest.approx(95)
    # pacing rate = gain x BtlBw, in bit/s: 950 pkt/s x 1000 B x 8
    assert flow.pacing_rate_bps == pytest.approx(7.6e6)
    # target = cwnd_gain x BDP + 3 quanta = 2 x 95 + 3 = 193; grows by the packets delivered
    flow.cwnd = 150.0
    d.ack(t + 0.01, 950, n=2)
    assert flow.cwnd == pytest.approx(152.0)
    flow.cwnd = 500.0
    d.ack(t + 0.02, 950)
    assert flow.cwnd == pytest.approx(193.0)           # cut to the target at once
    # A lower RTT sample lowers the BDP: 950 x 0.08 = 76, target 155
    d.ack(t + 0.03, 950, rtt=0.08)
    assert cc.min_rtt_s == 0.08 and flow.cwnd == pytest.approx(155.0)
    # 5/4 phase: 1.25 x 950 pkt/s
    t = _to_phase(d, 0)
    assert flow.pacing_rate_bps == pytest.approx(1.25 * 950 * 8000)
    # never below 4 packets
    d2 = to_probe_bw(seed=3)
    d2.ack(1.01, 10, rtt=0.0005)
    d2.ack(1.02, 10, rtt=0.0005)                       # BtlBw still 950: BDP 0.475
    assert d2.cc.target_cwnd() == pytest.approx(2 * 0.475 + 3)
    assert d2.flow.cwnd == 4.0


def test_startup_window_and_pacing_only_grow(driver):
    d = driver(cwnd=10.0)
    flow = d.flow
    initial_rate = flow.pacing_rate_bps
    d.ack(0.1, 100, rtt=0.1, n=1, new_round=True, inflight=10)
    # BtlBw 100 pkt/s: 2.885 x 100 pkt/s is below the initial rate, which stays
    assert flow.pacing_rate_bps == initial_rate
    # target = 2.885 x 100 x 0.1 + 3 = 31.85 > cwnd: the window grows by the packets delivered
    assert flow.cwnd == 11.0
    d.ack(0.11, 100, n=3)
    assert flow.cwnd == 14.0
    d.ack(0.2, 20000, new_round=True)                  # 2.885 x 20000 pkt/s > initial rate
    assert flow.pacing_rate_bps == pytest.approx(HIGH_GAIN * 20000 * 8000)
    # target now 2.885 x 20000 x 0.1 + 3 = 5773: above it, Startup neither grows nor cuts
    flow.cwnd = 6000.0
    d.ack(0.21, 100, n=5)
    assert flow.cwnd == 6000.0
    assert flow.pacing_rate_bps == pytest.approx(HIGH_GAIN * 20000 * 8000)


def test_drain_paces_below_the_bottleneck(driver):
    d = driver()
    t = 0.0
    for rate in (100, 200, 400, 800, 850, 900, 950):
        t += 0.1
        d.ack(t, rate, new_round=True, inflight=200)
    assert d.cc.state == "drain"
    assert d.flow.pacing_rate_bps == pytest.approx(950 / HIGH_GAIN * 8000)
    assert d.flow.cwnd <= HIGH_GAIN * 95 + 3 + 1e-9


def test_min_rtt_expiry_enters_probe_rtt_with_four_packets(to_probe_bw):
    d = to_probe_bw(seed=3)
    cc, flow = d.cc, d.flow
    stamp = cc.rtprop_stamp
    assert stamp == pytest.approx(1.0)                 # the last RTT sample <= 0.1 s
    t = 1.0
    while t < stamp + 9.9:                             # higher RTTs do not refresh it
        t += 0.05
        d.ack(t, 950, rtt=0.12, inflight=150)
    assert cc.state == "probe_bw" and cc.min_rtt_s == 0.1
    cwnd_before = flow.cwnd
    assert cwnd_before > 100
    d.ack(stamp + 10.05, 950, rtt=0.12, inflight=150)  # more than 10 s old: expired
    assert cc.state == "probe_rtt"
    assert flow.cwnd == 4.0 and cc.pacing_gain == 1.0 and cc.cwnd_gain == 1.0
    assert cc.min_rtt_s == 0.12                        # the expired filter took the sample
    assert flow.app_limited_until == d.delivered + 150  # its low rates are app-limited
    t = stamp + 10.05
    d.ack(t + 0.01, 950, inflight=30)                  # still draining to 4 packets
    assert cc.probe_rtt_done_stamp is None and flow.cwnd == 4.0
    d.ack(t + 0.05, 950, inflight=4)                   # 4 in flight: hold for 200 ms
    assert cc.probe_rtt_done_stamp == pytest.approx(t + 0.25)
    d.ack(t + 0.10, 950, new_round=True, inflight=4)   # a round has passed, 200 ms not yet
    d.ack(t + 0.25, 950, inflight=4)
    assert cc.state == "probe_rtt" and flow.cwnd == 4.0
    d.ack(t + 0.26, 950, inflight=4)                   # both: back to ProbeBW
    assert cc.state == "probe_bw" and cc.cwnd_gain == 2.0
    assert cc.rtprop_stamp == pytest.approx(t + 0.26)
    # the window is restored (then bounded by the model: 2 x 950 x 0.12 + 3)
    assert flow.cwnd == pytest.approx(min(cwnd_before, 2 * 950 * 0.12 + 3))


def test_probe_rtt_needs_a_full_round_too(to_probe_bw):
    d = to_probe_bw(seed=3)
    cc = d.cc
    d.ack(11.1, 950, rtt=0.12, inflight=4)             # RTprop from t = 1.0 expired
    assert cc.state == "probe_rtt" and cc.probe_rtt_done_stamp is not None
    d.ack(11.4, 950, inflight=4)                       # 300 ms, but no round yet
    assert cc.state == "probe_rtt"
    d.ack(11.5, 950, new_round=True, inflight=4)
    assert cc.state == "probe_bw"


def test_equal_rtt_samples_refresh_the_min_rtt(to_probe_bw):
    d = to_probe_bw(seed=3)
    t = 1.0
    while t < 25.0:
        t += 0.05
        d.ack(t, 950, rtt=0.1, inflight=150)
    assert d.cc.state == "probe_bw" and d.cc.rtprop_stamp == pytest.approx(t)


def test_loss_does_not_halve_the_window(to_probe_bw):
    d = to_probe_bw(seed=3)
    cc, flow = d.cc, d.flow
    _to_phase(d, 2)
    cwnd, ssthresh = flow.cwnd, flow.ssthresh
    window = recovery_window(flow, cc, 3)              # the transport's window in recovery
    assert not cc.loss_based and isinstance(window, ModelWindow)
    window.loss_reaction()
    assert flow.ssthresh == ssthresh                   # ssthresh left alone
    window.enter_recovery()
    assert flow.cwnd == cwnd and flow.state == RECOVERY
    cc.on_ack(5)
    window.on_dupack()
    assert flow.cwnd == cwnd
    window.end_episode()
    assert flow.cwnd == cwnd and flow.state == OPEN


def test_timeout_window_is_one_then_grows_and_is_restored(to_probe_bw):
    d = to_probe_bw(seed=3)
    cc, flow = d.cc, d.flow
    t = _to_phase(d, 2)
    cwnd = flow.cwnd
    window = recovery_window(flow, cc, 3)
    window.enter_loss()                                # a timeout: the loss window
    assert flow.cwnd == 1.0 and flow.state == LOSS
    window.enter_loss()                                # a further timeout of the episode
    assert flow.cwnd == 1.0 and cc.prior_cwnd == cwnd
    d.ack(t + 0.01, 950)
    assert flow.cwnd == 4.0                            # the pipelining floor
    d.ack(t + 0.02, 950, n=3)
    assert flow.cwnd == 7.0                            # + packets delivered
    window.end_episode()
    assert flow.cwnd == cwnd and flow.state == OPEN    # BBRRestoreCwnd


def test_restored_window_is_capped_during_probe_rtt(to_probe_bw):
    d = to_probe_bw(seed=3)
    cc, flow = d.cc, d.flow
    window = recovery_window(flow, cc, 3)
    window.enter_loss()
    cc.state = "probe_rtt"
    window.end_episode()
    assert flow.cwnd == 4.0


# -- end to end ---------------------------------------------------------------------------------
def test_transfer_completes_in_order_at_the_link_rate(make_flow):
    sim, h1, h2, flow = make_flow(packets=2000, algorithm=Bbr)
    sim.run()
    assert flow.finished and flow.delivered_all()
    assert flow.retransmissions == 0 and flow.timeouts == 0
    cc = flow.cc
    assert cc.state == "probe_bw"
    assert cc.btl_bw_pps() == pytest.approx(1000.0, rel=0.01)      # 8 Mbit/s, 1000 B packets
    # base RTT: 2 x 5 ms propagation + 1 ms data + 0.04 ms ACK transmission
    assert cc.min_rtt_s == pytest.approx(0.01104, rel=1e-6)
    assert flow.finish_s < 2000 / 1000.0 * 1.05


def test_forced_and_random_losses_are_repaired(make_flow, drop_at):
    sim, h1, h2, flow = make_flow(packets=1500, algorithm=Bbr)
    lost = [0, 5, 6, 7, 40, 300, 301, 302, 303, 1000, 1499]
    seen = set()

    def first_copy(packet):
        if packet.kind == DATA and packet.seq in lost and packet.seq not in seen:
            seen.add(packet.seq)
            return True
        return False
    dropped = drop_at(h2, first_copy)
    sim.run()
    assert len(dropped) == len(lost)
    assert flow.finished and flow.delivered_all()

    sim, h1, h2, flow = make_flow(packets=3000, algorithm=Bbr)
    rng = sim.rng
    dropped = drop_at(h2, lambda p: p.kind == DATA and rng.random() < 0.02)
    sim.run()
    assert len(dropped) > 30
    assert flow.finished and flow.delivered_all()


def _dumbbell(buffer_kb, loss_rate=0.0, duration_s=30.0):
    """One BBR flow F0 (S0 -> D0) over the shared dumbbell (tests/networks.py): a 10 Mb/s, 20 ms
    bottleneck L with `loss_rate` in both directions, 1 Gb/s access links of 10 us."""
    return dumbbell(1, rate_mbps=10.0, delay_ms=20.0, buffer_kb=buffer_kb, loss_rate=loss_rate,
                    loss_on="both", access_delay_ms=0.01, access_rate_mbps=1000.0,
                    algorithm="bbr", duration_s=duration_s, name="bbr_dumbbell")


# propagation both ways, plus the data packet's and the ACK's transmission on each link
BASE_RTT_S = 2 * (0.02 + 0.00001 + 0.00001) + (1024 + 64) * 8 * (1 / 10e6 + 2 / 1e9)


def test_high_goodput_under_one_percent_random_loss(monkeypatch):
    # 1 % loss in each direction of the 10 Mb/s, 40 ms bottleneck: loss-based algorithms
    # collapse (Reno gets about 2 Mb/s here); BBR's model ignores it.
    monkeypatch.setitem(flows.ALGORITHMS, "bbr", Bbr)
    results = simulate(load_topology(_dumbbell(buffer_kb=1000, loss_rate=0.01)))
    flow = results.network.flows["F0"]
    assert flow.retransmissions > 100                  # the losses did happen
    times, rates = results.trace("flows", "F0", "recv_rate_mbps")
    goodput = rates[times > 5.0].mean()
    assert goodput >= 0.8 * 10.0
    assert flow.in_order


def test_queueing_delay_stays_below_one_min_rtt_in_a_deep_buffer(monkeypatch):
    monkeypatch.setitem(flows.ALGORITHMS, "bbr", Bbr)
    bdp_kb = 10e6 / 8 * BASE_RTT_S / 1000
    results = simulate(load_topology(_dumbbell(buffer_kb=5 * bdp_kb, duration_s=20.0)))
    flow = results.network.flows["F0"]
    assert flow.retransmissions == 0
    min_rtt = flow.cc.min_rtt_s
    assert min_rtt == pytest.approx(BASE_RTT_S, rel=1e-6)
    times, rtt_ms = results.trace("flows", "F0", "rtt_ms")
    steady = times > 2.0                                # after Startup and Drain
    queueing_s = np.nanmean(rtt_ms[steady]) / 1e3 - min_rtt
    assert 0.0 <= queueing_s < min_rtt
    # the same from the bottleneck's unfinished work
    times, backlog_kb = results.trace("links", "L", "backlog_kb", "R1->R2")
    backlog_s = backlog_kb[times > 2.0].mean() * 1000 * 8 / 10e6
    assert backlog_s < min_rtt
    # and the link stays busy
    times, rates = results.trace("flows", "F0", "recv_rate_mbps")
    assert rates[times > 2.0].mean() > 9.0


def test_shipped_test_case_0_runs_deterministically(monkeypatch, root):
    monkeypatch.setitem(flows.ALGORITHMS, "bbr", Bbr)
    summaries = []
    for _ in range(2):
        results = simulate(load_topology(root / "topologies" / "test_case_0.json", algorithm="bbr"))
        summary = results.summary
        flow = summary["flows"]["F1"]
        assert summary["stop_reason"] == "completed"
        assert flow["algorithm"] == "bbr" and flow["in_order"] and flow["retransmissions"] == 0
        summary.pop("wall_time_s")
        summaries.append(summary)
    assert summaries[0] == summaries[1]


def test_entering_probe_rtt_keeps_a_larger_saved_window(to_probe_bw):
    """BBRCheckProbeRTT enters ProbeRTT, then saves the window (draft-cardwell-iccrg-bbr-
    congestion-control-00 §4.3.5; Linux bbr_update_min_rtt sets the mode, then calls
    bbr_save_cwnd): in ProbeRTT, BBRSaveCwnd keeps max(prior_cwnd, cwnd). netsim saved before
    entering, so a larger window saved earlier was forgotten (acceptance test Z8)."""
    d = to_probe_bw(seed=3)
    cc, flow = d.cc, d.flow
    cc.prior_cwnd = flow.cwnd + 500.0                  # saved earlier (a recovery), larger
    saved = cc.prior_cwnd
    d.ack(cc.rtprop_stamp + 10.05, 950, rtt=0.12, inflight=150)   # RTprop expired
    assert cc.state == "probe_rtt"
    assert cc.prior_cwnd == saved
