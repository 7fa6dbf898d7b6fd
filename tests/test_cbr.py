"""Traffic sources (flows/cbr.py): constant bit rate and on-off flows beside reliable ones."""
from __future__ import annotations

import pytest

from netsim.run import simulate
from topologies.loader import TopologyError, load_topology


def topology(*flows, duration_s=30.0, rate_mbps=10) -> dict:
    """Two pairs over a `rate_mbps`, 10 ms bottleneck R1-R2, 100 Mb/s access links."""
    links = [{"id": "L", "ends": ["R1", "R2"], "rate_mbps": rate_mbps, "delay_ms": 10,
              "buffer_kb": 100}]
    for i, (a, b) in enumerate((("H1", "H3"), ("H2", "H4"))):
        links.append({"id": f"A{i}", "ends": [a, "R1"], "rate_mbps": 100, "delay_ms": 1,
                      "buffer_kb": 1000})
        links.append({"id": f"B{i}", "ends": ["R2", b], "rate_mbps": 100, "delay_ms": 1,
                      "buffer_kb": 1000})
    return {"hosts": ["H1", "H2", "H3", "H4"], "routers": ["R1", "R2"], "links": links,
            "flows": list(flows), "duration_s": duration_s}


RENO = {"id": "R", "src": "H1", "dst": "H3", "algorithm": "reno"}
CBR4 = {"id": "C", "src": "H2", "dst": "H4", "kind": "cbr", "rate_mbps": 4}


def test_cbr_beside_reno_leaves_reno_the_rest():
    summary = simulate(load_topology(topology(RENO, CBR4))).summary
    reno, cbr = summary["flows"]["R"], summary["flows"]["C"]
    assert cbr["algorithm"] == "cbr" and cbr["retransmissions"] == 0
    # the source sends at exactly 4 Mb/s: 30 s * 4e6 / 8 / 1024 B per packet
    assert abs(cbr["packets_sent"] - 30 * 4e6 / 8 / 1024) <= 1
    assert cbr["packets_sent"] == cbr["packets_received"] + cbr["packets_lost"]
    assert cbr["packets_lost"] > 0                       # it shares a drop-tail queue with Reno
    assert 3.8 <= cbr["goodput_mbps"] <= 4.0
    assert 5.0 <= reno["goodput_mbps"] <= 6.1            # about the 6 Mb/s CBR leaves
    assert reno["goodput_mbps"] + cbr["goodput_mbps"] >= 9.0
    assert cbr["avg_window_pkts"] is None and cbr["avg_rtt_ms"] is None


def test_cbr_with_data_finishes_and_ends_the_run():
    flow = dict(CBR4, data_mb=1)
    summary = simulate(load_topology(topology(flow, duration_s=None))).summary
    c = summary["flows"]["C"]
    assert c["completed"] and summary["stop_reason"] == "completed"
    assert c["finish_s"] == pytest.approx(1e6 * 8 / 4e6 + 0.012, abs=0.005)   # + path delay
    assert c["packets_lost"] == 0 and c["delivered_bytes"] == 10**6


@pytest.mark.parametrize("periods", ["fixed", "exponential"])
def test_onoff_sends_its_duty_cycle(periods):
    flow = {"id": "O", "src": "H2", "dst": "H4", "kind": "onoff", "rate_mbps": 4, "on_s": 1,
            "off_s": 1, "periods": periods}
    results = simulate(load_topology(topology(flow, duration_s=200.0)))
    o = results.summary["flows"]["O"]
    assert o["packets_lost"] <= 2                        # alone: nothing lost but in flight
    assert o["goodput_mbps"] == pytest.approx(2.0, rel=0.02 if periods == "fixed" else 0.15)
    time_s, rate = results.trace("flows", "O", "send_rate_mbps")
    if periods == "fixed":                               # on in [0,1), off in [1,2), ...
        assert rate[(time_s > 0.15) & (time_s <= 0.95)].min() == pytest.approx(4, rel=0.05)
        assert rate[(time_s > 1.15) & (time_s <= 1.95)].max() == 0


def test_onoff_draws_from_the_run_generator():
    flow = {"id": "O", "src": "H2", "dst": "H4", "kind": "onoff", "rate_mbps": 4, "on_s": 0.5,
            "off_s": 0.5, "periods": "exponential"}
    spec = load_topology(topology(flow, duration_s=20.0))
    a = simulate(spec, seed=1).summary["flows"]["O"]["packets_sent"]
    b = simulate(spec, seed=1).summary["flows"]["O"]["packets_sent"]
    c = simulate(spec, seed=2).summary["flows"]["O"]["packets_sent"]
    assert a == b != c


@pytest.mark.parametrize("flow, message", [
    (dict(CBR4, algorithm="reno"), 'algorithm'),
    ({"id": "C", "src": "H2", "dst": "H4", "kind": "cbr"}, 'rate_mbps'),
    (dict(CBR4, on_s=1), 'on_s'),
    ({"id": "O", "src": "H2", "dst": "H4", "kind": "onoff", "rate_mbps": 1, "on_s": 1}, 'off_s'),
    (dict(RENO, rate_mbps=1), 'rate_mbps'),
    (dict(CBR4, kind="udp"), 'kind'),
])
def test_bad_source_fields_are_errors(flow, message):
    with pytest.raises(TopologyError, match=message):
        load_topology(topology(flow))


def test_a_duplicated_packet_is_received_once():
    """A link that duplicates half the packets (and reorders some): the receiver counts each
    packet once, so nothing is lost and the goodput is the source's."""
    data = topology(CBR4, duration_s=5.0)
    bottleneck = data["links"][0]
    bottleneck.update({"duplicate_rate": 0.5, "reorder_rate": 0.2, "reorder_delay_ms": 30})
    summary = simulate(load_topology(data)).summary
    c = summary["flows"]["C"]
    assert summary["links"]["L"]["directions"]["R1->R2"]["duplicated"] > 500
    assert 0 <= c["packets_lost"] <= 10                       # the packets in flight at the end
    assert c["packets_received"] + c["packets_lost"] == c["packets_sent"]
    assert 3.9 <= c["goodput_mbps"] <= 4.0


@pytest.mark.parametrize("size", [16, 1024])
def test_the_seen_window_remembers_its_newest_numbers(size):
    from hypothesis import given, settings, strategies as st

    from flows.cbr import SeenWindow

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.integers(-40, 5), min_size=1, max_size=400))
    def check(steps):
        window, seen = SeenWindow(size), set()
        for step in steps:
            seq = max(0, window.top + step)
            expected = seq not in seen or seq <= window.top - size
            assert window.first_time(seq) == expected
            seen.add(seq)

    check()
