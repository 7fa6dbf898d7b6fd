"""A link direction's rate over an interval counts the bits transmitted in it (docs/model.md,
"Link rates"): a packet's bytes spread over its transmission, so no interval's rate, and no run's
utilization, exceeds the capacity (a half-duplex link's two directions together), and the rates
of the intervals add up to the bytes the link finished transmitting."""
from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.direction import unfinished
from netsim.run import simulate
from topologies.loader import load_topology

SLACK = 1e-8         # the CSV's 9 significant digits


def one_link(rate_mbps: float, *, duplex: str = "full", data_bytes: int = 1500,
             flows: int = 1, cwnd_pkts: int = 4, extra: dict | None = None) -> dict:
    """H1 -- H2 on one link (both directions carry data when `flows` is 2)."""
    link = {"id": "M", "ends": ["H1", "H2"], "rate_mbps": rate_mbps, "delay_ms": 50,
            "buffer_kb": 20, "duplex": duplex, **(extra or {})}
    pairs = [("H1", "H2"), ("H2", "H1")][:flows]
    return {"name": "one_link", "units": "si", "hosts": ["H1", "H2"], "links": [link],
            "packet_bytes": {"data": data_bytes, "ack": 40},
            "transport": {"initial_cwnd_pkts": cwnd_pkts},
            "flows": [{"id": f"F{i}", "src": a, "dst": b, "data_mb": 0.05, "start_s": 0,
                       "algorithm": "reno"} for i, (a, b) in enumerate(pairs, 1)]}


def run(topology: dict, **options):
    return simulate(load_topology(topology), **options)


def interval_bits(results, interval_s: float) -> dict:
    """{(link, direction): [(time_s, span_s, bits)]} from the links table (idle intervals have
    no row; the last sample may end a shorter interval)."""
    table = results.links
    out: dict = {}
    for t, link, label, rate in zip(table["time_s"], table["link"], table["direction"],
                                    table["rate_mbps"]):
        t = float(t)
        start = math.floor(t / interval_s + 1e-9) * interval_s
        span = t - start if t - start > 1e-12 else interval_s
        out.setdefault((str(link), str(label)), []).append((t, span, float(rate) * 1e6 * span))
    return out


def test_a_slow_link_busy_throughout_is_used_exactly_once_not_more():
    # 1500-byte packets take 0.214 s at 56 kb/s: the first is still in service at 0.1 and 0.2 s,
    # and four of them keep the link busy to the end of a 0.25 s run
    results = run(one_link(0.056), duration_s=0.25)
    entry = results.summary["links"]["M"]["directions"]["H1->H2"]
    assert entry["utilization"] == pytest.approx(1.0, abs=1e-9)
    assert entry["avg_rate_mbps"] == pytest.approx(0.056, abs=1e-9)
    rates = [float(r) for r, label in zip(results.links["rate_mbps"], results.links["direction"])
             if label == "H1->H2"]
    assert rates == pytest.approx([0.056, 0.056, 0.056], abs=1e-9)
    # the unfinished work: 4 500 bytes waiting, the packet in service going from 1 500 to 800
    # bytes left over the first 0.1 s: 4 500 + 1 150 on average
    assert float(results.links["backlog_kb"][0]) == pytest.approx(5.65, abs=1e-6)


def test_a_packet_in_service_counts_the_bytes_sent_so_far():
    results = run(one_link(0.056), duration_s=0.25)
    d = results.network.links["M"].directions[0]
    end = results.network.sim.now
    d.settle(end)
    # the second packet began at 0.2143 s: 0.0357 s of it sent, 0.1786 s (1 250 bytes) to go
    left, work = unfinished(d, end)
    assert left == pytest.approx(1500 - (end - 1500 * 8 / 56e3) * 56e3 / 8, rel=1e-9)
    assert 0 < left < 1500
    assert work == pytest.approx(left * left * 8 / 56e3 / 2, rel=1e-9)
    assert unfinished(results.network.links["M"].directions[1], end) == (0.0, 0.0)   # (idle)
    bits = sum(b for _, _, b in interval_bits(results, 0.1)[("M", "H1->H2")])
    assert bits == pytest.approx((d.tx_bytes - left) * 8, rel=SLACK)


def test_a_half_duplex_link_shares_its_capacity_in_every_interval():
    results = run(one_link(0.5, duplex="half", flows=2, cwnd_pkts=8), duration_s=3.0)
    by_time: dict = {}
    for (_, _), rows in interval_bits(results, 0.1).items():
        for t, span, bits in rows:
            by_time[t] = by_time.get(t, 0.0) + bits / span
    assert max(by_time.values()) <= 0.5e6 * (1 + SLACK)
    assert max(by_time.values()) >= 0.5e6 * (1 - 1e-6)        # (it was busy throughout)
    total = sum(entry["utilization"]
                for entry in results.summary["links"]["M"]["directions"].values())
    assert total <= 1 + 1e-9


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_test_case_2_half_duplex_links_never_pass_their_rate(root):
    spec = load_topology(root / "topologies" / "test_case_2.json")
    results = simulate(spec)
    capacity = {link_id: entry["rate_mbps"] for link_id, entry in results.summary["links"].items()}
    sums: dict = {}
    for t, link, rate in zip(results.links["time_s"], results.links["link"],
                             results.links["rate_mbps"]):
        sums[(float(t), str(link))] = sums.get((float(t), str(link)), 0.0) + float(rate)
    assert all(total <= capacity[link] * (1 + SLACK) for (_, link), total in sums.items())


@pytest.mark.parametrize("extra", [
    {"rate_schedule": [[0.13, 0.2], [0.41, 0.05]]},            # faster, then slower
    {"delay_schedule": [[0.07, 5], [0.33, 0]]},                # shorter: the link held idle
    {"queue": {"discipline": "codel"}},
    {"queue": {"discipline": "red", "min_kb": 2, "max_kb": 10}},
], ids=["rate-schedule", "delay-schedule", "codel", "red"])
def test_the_intervals_add_up_to_what_was_transmitted(extra):
    results = run(one_link(0.1, extra=extra, cwnd_pkts=10), duration_s=0.9)
    end = results.network.sim.now
    for d in results.network.links["M"].directions:
        d.settle(end)
        rows = interval_bits(results, 0.1).get(("M", d.label), [])
        sent_bits = (d.tx_bytes - unfinished(d, end)[0]) * 8
        assert sum(bits for _, _, bits in rows) == pytest.approx(sent_bits, rel=SLACK, abs=1e-3)
        summary = results.summary["links"]["M"]["directions"][d.label]
        assert summary["avg_rate_mbps"] * 1e6 * end == pytest.approx(sent_bits, rel=1e-8)


def test_a_shorter_delay_idle_spell_is_not_counted_as_transmission():
    # one packet at a time, 0.12 s each at 100 kb/s; at 0.07 s the delay drops from 50 to 0 ms
    # while the first is in service: the transmitter stays idle for 50 ms after it (0.12 to
    # 0.17 s), so at the 0.1 s sample 0.02 s of it, 250 bytes, are left, not 0.07 s
    results = run(one_link(0.1, extra={"delay_schedule": [[0.07, 0]]}, cwnd_pkts=1),
                  duration_s=0.6)
    rows = interval_bits(results, 0.1)[("M", "H1->H2")]
    assert rows[0][0] == pytest.approx(0.1)
    assert rows[0][2] / rows[0][1] == pytest.approx(0.1e6, rel=1e-9)     # busy throughout
    assert all(bits / span <= 0.1e6 * (1 + SLACK) for _, span, bits in rows)


def test_a_packet_in_service_keeps_the_rate_it_was_accepted_at():
    # 1500 bytes at 100 kb/s take 0.12 s; the rate rises tenfold at 0.05 s, in its service:
    # it still ends at 0.12 s, so 250 bytes are left at the 0.1 s sample (not 2 500)
    results = run(one_link(0.1, extra={"rate_schedule": [[0.05, 1.0]]}, cwnd_pkts=1),
                  duration_s=0.5)
    rows = interval_bits(results, 0.1)[("M", "H1->H2")]
    assert rows[0][2] / rows[0][1] == pytest.approx(0.1e6, rel=1e-9)
    assert all(bits >= 0 for _, _, bits in rows)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rate_kbps=st.integers(min_value=20, max_value=2000),
       data_bytes=st.sampled_from([200, 576, 1500, 9000]),
       duplex=st.sampled_from(["full", "half"]),
       interval_s=st.sampled_from([0.01, 0.05, 0.1, 0.3]),
       cwnd_pkts=st.integers(min_value=1, max_value=12))
def test_no_interval_exceeds_the_capacity(rate_kbps, data_bytes, duplex, interval_s, cwnd_pkts):
    rate_mbps = rate_kbps / 1000
    results = run(one_link(rate_mbps, duplex=duplex, data_bytes=data_bytes, flows=2,
                           cwnd_pkts=cwnd_pkts), duration_s=1.0, interval_s=interval_s)
    per_time: dict = {}
    for (_, _), rows in interval_bits(results, interval_s).items():
        for t, span, bits in rows:
            assert bits / span <= rate_mbps * 1e6 * (1 + SLACK)
            per_time[t] = per_time.get(t, 0.0) + bits / span
    if duplex == "half":
        assert all(total <= rate_mbps * 1e6 * (1 + SLACK) for total in per_time.values())
    for entry in results.summary["links"]["M"]["directions"].values():
        assert entry["utilization"] <= 1 + 1e-9
