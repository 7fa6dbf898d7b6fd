"""Vegas predictions are intervals that hold every equilibrium of the fluid model with each flow's
backlog anywhere in [alpha_i, beta_i] (`theory.fluid._extremes`): the extremes over the corners of
that box, all corners up to interchangeable flows when there are at most `CORNER_LIMIT`, else the
corners the directions choose.

The parking lot is the case the old rule (flow k at beta and every other flow at alpha for k's
highest rate) got wrong: a larger backlog of the flow on L2 slows the long flow and so speeds up
the flow on L1 alone. Values by hand (10 Mb/s links, 1500 B packets: 833.3 packets/s, alpha 2,
beta 4, e = 0): backlogs (F0, F1, F2) = (2, 4, 4) give F1 and F2 8 Mb/s and F0 2 Mb/s (queue
delays 6 ms each link: 0.5 p (F0) = 2 / (2 p) ...); (4, 2, 2) give 5 Mb/s each.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from initializer import main
from netsim import load_topology
from theory import fluid
from theory.fluid import predict

MBPS = 1500 * 8 / 1e6      # data packets/s -> Mb/s


def parking_lot_dict(alpha=2, beta=4):
    """F0 over L1 and L2, F1 over L1, F2 over L2; 10 Mb/s, 10 ms links (the tester's lab)."""
    links = [{"id": "L1", "ends": ["R1", "R2"], "rate_mbps": 10, "delay_ms": 10, "buffer_kb": 60},
             {"id": "L2", "ends": ["R2", "R3"], "rate_mbps": 10, "delay_ms": 10, "buffer_kb": 60}]
    for host, router in (("S0", "R1"), ("T0", "R3"), ("S1", "R1"), ("T1", "R2"), ("S2", "R2"),
                         ("T2", "R3")):
        links.append({"id": "L" + host, "ends": [host, router], "rate_mbps": 100, "delay_ms": 1,
                      "buffer_kb": 500})
    flows = [{"id": f"F{i}", "src": f"S{i}", "dst": f"T{i}", "algorithm": "vegas",
              "params": {"alpha": alpha, "beta": beta}} for i in range(3)]
    return {"name": "lab_parking", "units": "si", "duplex": "full",
            "packet_bytes": {"data": 1500, "ack": 40}, "routing": {"protocol": "static"},
            "transport": {"initial_cwnd_pkts": 2, "min_rto_s": 1}, "seed": 1, "duration_s": 30,
            "hosts": ["S0", "T0", "S1", "T1", "S2", "T2"], "routers": ["R1", "R2", "R3"],
            "links": links, "flows": flows}


def parking_lot(alpha=2, beta=4):
    return load_topology(parking_lot_dict(alpha, beta))


def chain(capacities=(10, 5, 20), routes=((0, 3), (0, 1), (1, 2), (2, 3), (0, 2))):
    """Routers R0..R3 joined by links of `capacities` Mb/s; flow i crosses R[a]..R[b]."""
    links = [{"id": f"L{k}", "ends": [f"R{k}", f"R{k + 1}"], "rate_mbps": c, "delay_ms": 5,
              "buffer_kb": 1000} for k, c in enumerate(capacities)]
    hosts, flows = [], []
    for i, (a, b) in enumerate(routes):
        hosts += [f"S{i}", f"D{i}"]
        links += [{"id": f"A{i}", "ends": [f"S{i}", f"R{a}"], "rate_mbps": 1000, "delay_ms": 1 + i,
                   "buffer_kb": 1000},
                  {"id": f"B{i}", "ends": [f"R{b}", f"D{i}"], "rate_mbps": 1000, "delay_ms": 1,
                   "buffer_kb": 1000}]
        flows.append({"id": f"F{i}", "src": f"S{i}", "dst": f"D{i}", "algorithm": "vegas",
                      "params": {"alpha": 2, "beta": 5}})
    return load_topology({"name": "chain", "hosts": hosts, "duration_s": 10,
                          "routers": [f"R{k}" for k in range(len(capacities) + 1)],
                          "links": links, "flows": flows})


def single_link(delays_ms, alpha=2, beta=4, same_hosts=False):
    """Flows over one 10 Mb/s link R1 -> R2; flow i's access links have delays_ms[i] (different
    baseRTTs), or every flow runs between the same two hosts (interchangeable flows)."""
    links = [{"id": "L", "ends": ["R1", "R2"], "rate_mbps": 10, "delay_ms": 10, "buffer_kb": 1000}]
    hosts, flows = [], []
    for i, delay in enumerate(delays_ms):
        src, dst = ("S", "D") if same_hosts else (f"S{i}", f"D{i}")
        if src not in hosts:
            hosts += [src, dst]
            links += [{"id": f"A{i}", "ends": [src, "R1"], "rate_mbps": 100, "delay_ms": delay,
                       "buffer_kb": 1000},
                      {"id": f"B{i}", "ends": ["R2", dst], "rate_mbps": 100, "delay_ms": delay,
                       "buffer_kb": 1000}]
        flows.append({"id": f"F{i}", "src": src, "dst": dst, "algorithm": "vegas",
                      "params": {"alpha": alpha, "beta": beta}})
    return load_topology({"name": "single", "hosts": hosts, "routers": ["R1", "R2"],
                          "links": links, "flows": flows, "duration_s": 10})


def bounds(interval):
    """(lowest, highest) arrays: rates, queue delays (flow order), backlogs (resource order)."""
    ids = interval.flows
    low = [interval.rates_pps[f] for f in ids] + [interval.queue_delay_s[f] for f in ids]
    high = [interval.rates_pps_high[f] for f in ids] + [interval.queue_delay_s_high[f] for f in ids]
    low += list(interval.backlog_bytes.values())
    high += list(interval.backlog_bytes_high.values())
    return np.array(low), np.array(high)


def values(eq):
    return np.concatenate([eq.rates, eq.queue_delays, eq.backlog_bytes])


def test_parking_lot_intervals_hold_the_mixed_corners():
    model = predict(parking_lot())
    (iv,) = model.timeline
    rate = {f: (iv.rates_pps[f] * MBPS, iv.rates_pps_high[f] * MBPS) for f in iv.flows}
    assert rate["F0"] == pytest.approx((2.0, 5.0), rel=1e-6)
    assert rate["F1"] == pytest.approx((5.0, 8.0), rel=1e-6)    # was 6.0..7.5
    assert rate["F2"] == pytest.approx((5.0, 8.0), rel=1e-6)
    delay = {f: (iv.queue_delay_s[f] * 1e3, iv.queue_delay_s_high[f] * 1e3) for f in iv.flows}
    assert delay["F0"] == pytest.approx((7.2, 14.4), rel=1e-6)
    assert delay["F1"] == pytest.approx((3.2, 8.0), rel=1e-6)   # was 3.6..7.2
    backlog = (iv.backlog_bytes["L1 R1->R2"] / 1e3, iv.backlog_bytes_high["L1 R1->R2"] / 1e3)
    assert backlog == pytest.approx((4.0, 10.0), rel=1e-6)       # was 4.5..9.0


@pytest.mark.parametrize("spec", [parking_lot(), chain(), single_link([1, 3, 7, 12])],
                         ids=["parking_lot", "chain", "single_link"])
def test_every_sampled_equilibrium_lies_inside_the_intervals(spec):
    """The corners' extremes bound the equilibria inside the box too (monotone in each flow's
    backlog): 150 random backlogs per topology, none outside."""
    model = predict(spec)
    iv = model.timeline[0]
    active = list(range(len(model.flows)))
    alphas = np.array([f.alpha for f in model.flows])
    betas = np.array([f.beta for f in model.flows])
    low, high = bounds(iv)
    rng = np.random.default_rng(1)
    for _ in range(150):
        targets = alphas + rng.random(len(active)) * (betas - alphas)
        got = values(fluid._solve(model, active, targets, np.zeros(len(active))))
        assert np.all(got >= low - 1e-9 * np.abs(low) - 1e-12), (targets, got - low)
        assert np.all(got <= high + 1e-9 * np.abs(high) + 1e-12), (targets, got - high)


def test_one_bottleneck_keeps_the_old_intervals():
    """On one bottleneck each quantity is monotone with one direction per flow: the old rule (own
    extreme, every other flow at the opposite end; delays and backlogs at all-alpha and all-beta)
    gives the same intervals, here with four different baseRTTs."""
    model = predict(single_link([1, 3, 7, 12]))
    iv = model.timeline[0]
    n = len(model.flows)
    active, e = list(range(n)), np.zeros(n)
    alphas = np.array([f.alpha for f in model.flows])
    betas = np.array([f.beta for f in model.flows])
    all_alpha = fluid._solve(model, active, alphas, e)
    all_beta = fluid._solve(model, active, betas, e)
    for k, fid in enumerate(iv.flows):
        own_low, own_high = betas.copy(), alphas.copy()
        own_low[k], own_high[k] = alphas[k], betas[k]
        assert iv.rates_pps[fid] == pytest.approx(
            fluid._solve(model, active, own_low, e).rates[k], rel=1e-12)
        assert iv.rates_pps_high[fid] == pytest.approx(
            fluid._solve(model, active, own_high, e).rates[k], rel=1e-12)
        assert iv.queue_delay_s[fid] == pytest.approx(all_alpha.queue_delays[k], rel=1e-12)
        assert iv.queue_delay_s_high[fid] == pytest.approx(all_beta.queue_delays[k], rel=1e-12)
    assert list(iv.backlog_bytes.values()) == pytest.approx(list(all_alpha.backlog_bytes))
    assert list(iv.backlog_bytes_high.values()) == pytest.approx(list(all_beta.backlog_bytes))


def counting_solves(monkeypatch):
    calls = []
    solve = fluid._solve

    def counted(model, active, targets, joined):
        calls.append(tuple(targets))
        return solve(model, active, targets, joined)

    monkeypatch.setattr(fluid, "_solve", counted)
    return calls


def test_interchangeable_flows_are_solved_once_per_count(monkeypatch):
    """Twelve Vegas flows between the same hosts: 13 equilibria (0..12 flows at beta), not 2^12;
    flow k's highest rate is C beta / (beta + 11 alpha) = 10 Mb/s x 4 / 26."""
    calls = counting_solves(monkeypatch)
    model = predict(single_link([1] * 12, same_hosts=True))
    assert len(calls) == 13
    iv = model.timeline[0]
    capacity_pps = 10e6 / 8 / 1024                # the loader's default 1024 B data packets
    for fid in iv.flows:
        assert iv.rates_pps_high[fid] == pytest.approx(capacity_pps * 4 / 26, rel=1e-9)
        assert iv.rates_pps[fid] == pytest.approx(capacity_pps * 2 / 46, rel=1e-9)


def test_many_distinct_flows_use_the_directions_with_few_solves(monkeypatch):
    """Seven flows with different baseRTTs: 128 corners > CORNER_LIMIT, so the corners are chosen
    by direction: at most 2 per flow and 2 per quantity (here far fewer: repeated corners are
    solved once), and the same intervals as all 128 corners."""
    spec = single_link([1, 2, 3, 4, 5, 6, 7])
    monkeypatch.setattr(fluid, "CORNER_LIMIT", 10**6)
    exhaustive = bounds(predict(spec).timeline[0])
    monkeypatch.setattr(fluid, "CORNER_LIMIT", 64)
    calls = counting_solves(monkeypatch)
    directed = bounds(predict(spec).timeline[0])
    assert 2 * 7 < len(calls) <= 2 + 2 * 7 + 2 * len(exhaustive[0])
    assert len(calls) < 64
    for got, want in zip(directed, exhaustive):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("spec", [parking_lot(), chain()], ids=["parking_lot", "chain"])
def test_the_direction_rule_finds_the_same_corners_on_several_bottlenecks(monkeypatch, spec):
    monkeypatch.setattr(fluid, "CORNER_LIMIT", 10**6)
    exhaustive = bounds(predict(spec).timeline[0])
    monkeypatch.setattr(fluid, "CORNER_LIMIT", 1)
    directed = bounds(predict(spec).timeline[0])
    for got, want in zip(directed, exhaustive):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_check_on_the_parking_lot_finds_the_run_inside(tmp_path, capsys):
    """The tester's run: F1 and F2 at 7.6 Mb/s, each flow's backlog between 2 and 4 packets, were
    reported 1.34 % off the interval 6.0..7.5; now inside 5.0..8.0."""
    path = tmp_path / "parking.json"
    path.write_text(json.dumps(parking_lot_dict()))
    code = main([str(path), "--check", "--check-tolerance", "0.5", "-l", "L1", "L2",
                 "--out", str(tmp_path / "out"), "--no-plots"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "flow  F1                rate_mbps             5.000..8.000       7.600   0.00 %" in out
    assert "largest error 0.00 % — within the 0.5 % tolerance" in out
