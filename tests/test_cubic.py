"""CUBIC (RFC 9438) on hand-computed sequences without a simulator, and one end-to-end run."""
from __future__ import annotations

import math

import pytest

from components.packet import DATA
from flows.cubic import Cubic
from flows.recovery import recovery_window

C, BETA = 0.4, 0.7
ALPHA = 3 * (1 - BETA) / (1 + BETA)          # 0.5294...


@pytest.fixture
def make(fake_flow):
    """make(cwnd=10.0, srtt=0.1, **params) -> (flow, Cubic on it); by default a full window is
    in flight (the window is the limit)."""
    def make(cwnd=10.0, srtt=0.1, **params):
        flow = fake_flow(cwnd, srtt=srtt)
        return flow, Cubic(flow, params)
    return make


def loss(flow, cc):
    """A fast retransmit: ssthresh, enter recovery, leave it (what the transport does)."""
    window = recovery_window(flow, cc, 3)
    window.loss_reaction()
    window.enter_recovery()
    assert flow.cwnd == flow.ssthresh                 # no inflation
    window.end_episode()


def ack(flow, cc, at, n=1):
    flow.sim.now = at
    cc.on_ack(n)
    return flow.cwnd


def test_defaults_and_transport_mode(make):
    flow, cc = make()
    assert cc.params == {"C": 0.4, "beta": 0.7, "fast_convergence": 1, "hystart": True}
    assert Cubic.name == "cubic" and Cubic.recovery == "sack" and Cubic.fast_recovery
    assert cc.alpha_cubic == pytest.approx(0.9 / 1.7)


def test_k_and_the_shape_of_the_curve(make):
    flow, cc = make(cwnd=100.0)
    loss(flow, cc)
    ack(flow, cc, 5.0)                                # the epoch starts: cwnd_epoch = 70
    k = cc.k_seconds()
    assert k == pytest.approx((100 * 0.3 / 0.4) ** (1 / 3), rel=1e-12)
    assert k == pytest.approx(4.2171633265, rel=1e-10)
    assert cc.w_cubic(k) == 100.0                     # plateau at W_max
    assert cc.w_cubic(0.0) == pytest.approx(100 * 0.7, rel=1e-12)
    # concave before K (growth slows down), convex after (speeds up)
    steps = [cc.w_cubic(k + d) - cc.w_cubic(k + d - 0.5) for d in (-2.0, -1.0, 0.0)]
    assert steps[0] > steps[1] > steps[2] > 0
    steps = [cc.w_cubic(k + d) - cc.w_cubic(k + d - 0.5) for d in (1.0, 2.0, 3.0)]
    assert 0 < steps[0] < steps[1] < steps[2]
    assert cc.w_cubic(k - 1) < 100 < cc.w_cubic(k + 1)


def test_general_k_when_the_epoch_starts_elsewhere(make):
    flow, cc = make(cwnd=100.0)
    loss(flow, cc)
    flow.cwnd = 80.0                                  # the window moved before the epoch began
    ack(flow, cc, 1.0)
    assert cc.cwnd_epoch == 80.0
    assert cc.k_seconds() == pytest.approx((20 / 0.4) ** (1 / 3))
    assert cc.w_cubic(0.0) == pytest.approx(80.0)
    # an epoch starting above W_max has no plateau ahead: K = 0, W_max = cwnd_epoch
    flow, cc = make(cwnd=100.0)
    loss(flow, cc)
    flow.cwnd = 120.0
    ack(flow, cc, 1.0)
    assert cc.k_seconds() == 0.0 and cc.w_max == 120.0


def test_multiplicative_decrease_and_fast_convergence(make):
    flow, cc = make(cwnd=100.0)
    loss(flow, cc)
    assert flow.ssthresh == pytest.approx(70.0) and flow.cwnd == pytest.approx(70.0)
    assert cc.w_max == 100.0 and cc.cwnd_prior == 100.0 and cc.t_epoch is None
    flow.cwnd = 80.0                                  # second loss below the old W_max
    loss(flow, cc)
    assert cc.w_max == pytest.approx(80 * 1.7 / 2) == 68.0
    assert flow.ssthresh == pytest.approx(56.0) and flow.cwnd == pytest.approx(56.0)
    assert cc.cwnd_prior == 80.0


def test_without_fast_convergence_w_max_is_the_window(make):
    flow, cc = make(cwnd=100.0, fast_convergence=0)
    loss(flow, cc)
    flow.cwnd = 80.0
    loss(flow, cc)
    assert cc.w_max == 80.0


def test_ssthresh_is_at_least_two_packets(make):
    flow, cc = make(cwnd=2.0)
    assert cc.ssthresh() == 2.0


def test_per_ack_growth_follows_the_target_one_rtt_ahead(make):
    flow, cc = make(cwnd=100.0, srtt=0.1)
    loss(flow, cc)
    k = (30 / 0.4) ** (1 / 3)
    # first ACK in congestion avoidance, at t = 0 of the epoch
    cwnd = ack(flow, cc, 10.0)
    target = 0.4 * (0.0 + 0.1 - k) ** 3 + 100      # W_cubic(t + RTT) = 72.08...
    assert 70 < target < 1.5 * 70
    expected = 70 + (target - 70) / 70
    assert cwnd == pytest.approx(expected, rel=1e-12)
    assert cc.w_est() == pytest.approx(70 + ALPHA / 70)  # below the cubic window: not Reno-friendly
    assert cwnd > cc.w_est()
    # second ACK, 0.5 s into the epoch, covering 2 packets
    previous = cwnd
    cwnd = ack(flow, cc, 10.5, n=2)
    target = 0.4 * (0.5 + 0.1 - k) ** 3 + 100
    expected = previous + (target - previous) / previous * 2
    assert cwnd == pytest.approx(expected, rel=1e-12)


def test_target_is_clamped_to_one_and_a_half_windows(make):
    flow, cc = make(cwnd=100.0, srtt=0.1)
    loss(flow, cc)
    ack(flow, cc, 0.0)                                # epoch starts
    before = flow.cwnd
    assert cc.w_cubic(10.0 + 0.1) > 1.5 * before      # far past K: W_cubic(10.1) = 181
    cwnd = ack(flow, cc, 10.0)
    assert cwnd == pytest.approx(before + 0.5, rel=1e-12)   # (1.5 cwnd - cwnd) / cwnd


def test_target_is_never_below_the_window(make):
    flow, cc = make(cwnd=100.0, srtt=0.1)
    loss(flow, cc)
    ack(flow, cc, 0.0)
    flow.cwnd = 90.0                                  # above W_cubic(1.1) = 87.9
    assert cc.w_cubic(1.1) < 90 and cc.w_cubic(1.0) > cc.w_est()
    assert ack(flow, cc, 1.0) == 90.0


def test_reno_friendly_region_follows_w_est(make):
    # short RTT, small W_max: the cubic curve is almost flat at the start of the epoch
    flow, cc = make(cwnd=10.0, srtt=0.01)
    loss(flow, cc)                                    # W_max 10, cwnd 7
    k = (3 / 0.4) ** (1 / 3)
    cwnd = ack(flow, cc, 1.0)                         # t = 0
    assert cc.k_seconds() == pytest.approx(k)
    w_est = 7 + ALPHA / 7                             # 7.0756
    cubic_driven = 7 + (0.4 * (0.01 - k) ** 3 + 10 - 7) / 7   # 7.0065
    assert cubic_driven < w_est
    assert cc.w_est() == pytest.approx(w_est) and cwnd == pytest.approx(w_est)
    cwnd = ack(flow, cc, 1.002)                       # t = 2 ms
    w_est = w_est + ALPHA / w_est                     # 7.1505
    assert cc.w_cubic(0.002) < w_est
    assert cwnd == pytest.approx(w_est)


def test_w_est_switches_to_reno_increase_at_cwnd_prior(make):
    flow, cc = make(cwnd=10.0, srtt=0.01)
    loss(flow, cc)
    now = 1.0
    seen_alpha_one = False
    for _ in range(200):
        w_est, cwnd = cc.w_est(), flow.cwnd
        ack(flow, cc, now)
        if w_est is not None:
            alpha = 1.0 if w_est >= 10.0 else ALPHA
            assert cc.w_est() == pytest.approx(w_est + alpha / cwnd)
            seen_alpha_one |= alpha == 1.0
        now += 0.001
    assert seen_alpha_one and cc.w_est() > 10.0


def test_first_epoch_after_a_timeout_has_k_zero(make):
    flow, cc = make(cwnd=50.0, srtt=0.1)
    window = recovery_window(flow, cc, 3)
    window.loss_reaction()                            # first timeout of the episode
    window.enter_loss()
    assert flow.ssthresh == pytest.approx(35.0) and flow.cwnd == 1.0
    while flow.cwnd < flow.ssthresh:                  # RFC 5681 slow start
        before = flow.cwnd
        ack(flow, cc, 2.0)
        assert flow.cwnd == min(before + 1, 35.0)
    assert cc.t_epoch is None
    cwnd = ack(flow, cc, 3.0)                         # first ACK in congestion avoidance
    assert cc.cwnd_epoch == pytest.approx(35.0)
    assert cc.k_seconds() == 0.0 and cc.w_max == pytest.approx(35.0)
    assert cc.w_cubic(2.0) == pytest.approx(0.4 * 8 + 35)
    # W_est starts at cwnd_epoch, grows with alpha_cubic (below cwnd_prior = 50): Reno-friendly
    assert cc.w_est() == pytest.approx(35 + ALPHA / 35)
    assert cwnd == pytest.approx(cc.w_est())


def test_first_slow_start_ending_without_loss(make):
    flow, cc = make(cwnd=1.0)
    flow.ssthresh = 4.0                               # configured initial ssthresh
    for now in (0.1, 0.2, 0.3):
        ack(flow, cc, now)
    assert flow.cwnd == 4.0 and cc.t_epoch is None
    ack(flow, cc, 0.4)
    assert cc.w_max == 4.0 and cc.k_seconds() == 0.0 and cc.cwnd_prior == 4.0
    assert flow.cwnd == pytest.approx(4.0 + 1.0 / 4.0)      # W_est >= cwnd_prior: Reno's 1/cwnd


def test_no_growth_when_the_window_is_not_the_limit(make):
    flow, cc = make(cwnd=20.0)
    flow.flight = 5                                   # the application ran out of data
    ack(flow, cc, 1.0)
    assert flow.cwnd == 20.0
    flow.flight = 19                                  # 19 + 1 acknowledged = a full window
    ack(flow, cc, 1.1)
    assert flow.cwnd == 21.0


def test_recovery_then_timeout(make):
    flow, cc = make(cwnd=100.0)
    window = recovery_window(flow, cc, 3)
    window.loss_reaction()
    window.enter_recovery()
    assert flow.cwnd == pytest.approx(70.0)
    window.loss_reaction()                            # the retransmission timed out
    window.enter_loss()
    assert flow.cwnd == 1.0 and flow.ssthresh == pytest.approx(49.0)
    assert cc.w_max == pytest.approx(70 * 1.7 / 2) and cc.after_timeout


@pytest.mark.parametrize("name, value, ok", [
    ("C", 0.4, True), ("C", 4, True), ("C", 0, False), ("C", -1, False), ("C", "x", False),
    ("beta", 0.5, True), ("beta", 0.99, True), ("beta", 0, False), ("beta", 1, False),
    ("beta", 1.2, False), ("beta", math.nan, False),
    ("fast_convergence", 0, True), ("fast_convergence", 1, True), ("fast_convergence", 1.0, True),
    ("fast_convergence", 0.5, False), ("fast_convergence", 2, False),
    ("fast_convergence", True, False), ("fast_convergence", "on", False),
])
def test_param_checks(name, value, ok):
    assert (Cubic.param_problem(name, value) is None) == ok


def test_end_to_end_under_random_data_loss(make_flow, drop_at):
    sim, h1, h2, flow = make_flow(packets=3000, algorithm=Cubic)
    rng = sim.rng
    dropped = drop_at(h2, lambda p: p.kind == DATA and rng.random() < 0.01)
    sim.run()
    assert len(dropped) > 10
    assert flow.finished and flow.delivered_all()
    assert flow.retransmissions >= len(dropped)
    assert flow.cc.w_max is not None and flow.cc.t_epoch is not None   # CUBIC epochs ran


def test_registered_by_name_in_a_topology(monkeypatch):
    import flows
    from topologies.loader import load_topology
    from netsim.run import simulate

    monkeypatch.setitem(flows.ALGORITHMS, "cubic", Cubic)
    spec = load_topology({
        "hosts": ["H1", "H2"], "routers": ["R1"],
        "links": [{"id": "L1", "ends": ["H1", "R1"], "rate_mbps": 100, "delay_ms": 5,
                   "buffer_kb": 256},
                  {"id": "L2", "ends": ["R1", "H2"], "rate_mbps": 10, "delay_ms": 10,
                   "buffer_kb": 32, "loss_rate": 0.001}],
        "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 5, "start_s": 0,
                   "algorithm": "cubic", "params": {"fast_convergence": 0, "C": 0.4}},
                  {"id": "F2", "src": "H1", "dst": "H2", "data_mb": 3, "start_s": 1,
                   "algorithm": "cubic"}],
    })
    summary = simulate(spec).summary
    assert summary["stop_reason"] == "completed"
    for flow in ("F1", "F2"):
        assert summary["flows"][flow]["completed"] and summary["flows"][flow]["in_order"]
        assert summary["flows"][flow]["retransmissions"] > 0
