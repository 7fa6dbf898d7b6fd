"""Delayed ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2) and appropriate byte counting (RFC 3465).

With ``"delayed_ack": true`` the receiver acknowledges every second packet or after 40 ms, at once
for out-of-order data, gap fills and the last packet; slow start counts the packets an ACK
covers (L = 2), so the window still doubles every round trip.
"""
from __future__ import annotations

import itertools

import pytest
from networks import run, two_hosts

from topologies import load_topology
from topologies.loader import TopologyError


def _topology(delayed_ack, **kw):
    topology = two_hosts(rate_mbps=kw.pop("rate_mbps", 10.0), delay_ms=kw.pop("delay_ms", 5.0),
                         buffer_kb=kw.pop("buffer_kb", 1000.0), algorithm=kw.pop("algorithm", "reno"),
                         data_mb=kw.pop("data_mb", 1.0), **kw)
    if delayed_ack is not None:
        topology["flows"][0]["delayed_ack"] = delayed_ack
    return topology


def _acks_and_data(results):
    d = results.summary["links"]["L"]["directions"]
    return d["H2->H1"]["packets_transmitted"], d["H1->H2"]["packets_transmitted"]


def test_about_one_ack_per_two_data_packets():
    results = run(_topology(True))
    acks, data = _acks_and_data(results)
    flow = results.summary["flows"]["F1"]
    assert flow["completed"] and flow["in_order"]
    assert 0.48 <= acks / data <= 0.56, (acks, data)


def test_without_delayed_acks_every_packet_is_acknowledged():
    acks, data = _acks_and_data(run(_topology(None)))
    assert acks == data


def test_every_three():
    acks, data = _acks_and_data(run(_topology({"every": 3, "timeout_ms": 40})))
    assert 0.32 <= acks / data <= 0.40, (acks, data)


def _window_growth_per_rtt(delayed_ack, abc=True, monkeypatch=None):
    """Windows at the start of successive round trips in slow start (100 ms RTT, no queue)."""
    topology = _topology(delayed_ack, rate_mbps=100.0, delay_ms=50.0, buffer_kb=10_000.0,
                         data_mb=None, duration_s=0.75)
    spec = load_topology(topology)
    from netsim import simulate
    if not abc:
        import flows.sender as sender
        original = sender.Sender.__init__

        def init(self, *args, **kwargs):
            original(self, *args, **kwargs)
            self.cc.abc_limit = 1.0

        monkeypatch.setattr(sender.Sender, "__init__", init)
    results = simulate(spec, interval_s=0.1002)
    _times, windows = results.trace("flows", "F1", "window_pkts")
    return [float(w) for w in windows[1:7]]


def test_slow_start_doubles_per_rtt_with_delayed_acks():
    plain = _window_growth_per_rtt(None)
    delayed = _window_growth_per_rtt(True)
    ratios = [b / a for a, b in itertools.pairwise(delayed[2:])]
    assert all(1.8 <= r <= 2.2 for r in ratios), delayed
    # as fast as with an ACK per packet (whose sampled window grows about 1.8x per interval)
    assert delayed[-1] >= 0.7 * plain[-1], (plain, delayed)


def test_without_byte_counting_delayed_acks_slow_slow_start(monkeypatch):
    series = _window_growth_per_rtt(True, abc=False, monkeypatch=monkeypatch)
    ratios = [b / a for a, b in itertools.pairwise(series[2:])]
    assert all(r <= 1.65 for r in ratios), series


@pytest.mark.parametrize("value, message", [
    ("yes", 'field "delayed_ack": expected true, false or an object'),
    ({"every": 0}, 'field "delayed_ack.every": expected a positive integer'),
    ({"timeout_ms": -1}, 'field "delayed_ack.timeout_ms": expected a positive number'),
    ({"evry": 2}, 'unknown field "evry"'),
])
def test_bad_delayed_ack_values(value, message):
    topology = _topology(value)
    with pytest.raises(TopologyError, match=message):
        load_topology(topology)


def test_delayed_ack_spec():
    assert load_topology(_topology(True)).flows[0].delayed_ack == (2, 0.04)
    assert load_topology(_topology(False)).flows[0].delayed_ack is None
    assert load_topology(_topology({"every": 3})).flows[0].delayed_ack == (3, 0.04)
    assert load_topology(_topology(None)).flows[0].delayed_ack is None
