"""The sojourn-time histogram of a link direction (components/link.py): its quantiles agree with
the exact quantile of the waits within the stated resolution, for drop-tail FIFOs (fine linear
buckets) and for waits beyond them (log buckets)."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.link import (SOJOURN_FINE_BUCKETS_MAX, Link, record_sojourn, sojourn_bucket_bytes,
                             sojourn_quantile)
from components.node import Host
from components.packet import DATA, Packet
from simulator.engine import Simulator


def exact_quantile(waits, q):
    """Nearest-rank quantile: the ceil(q n)-th smallest wait."""
    ordered = sorted(waits)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


def droptail_waits(sends, rate_bps=1e6, buffer_bytes=20_000, delay_s=0.01):
    """Send packets of (time, size) through a drop-tail link; the direction and each accepted
    packet's wait (from the arrival time: start = arrival - delay - transmission)."""
    sim = Simulator()
    a, b = Host("A"), Host("B")
    link = Link(sim, "L", a, b, rate_bps, delay_s, buffer_bytes)
    d = link.directions[0]
    sent, arrived = {}, {}

    def deliver(packet):
        arrived[packet.seq] = sim.now

    for seq, (t, size) in enumerate(sorted(sends)):
        packet = Packet(DATA, a, b, size, deliver, seq=seq)

        def offer(p, t=t):
            if a.send(p):
                sent[p.seq] = (t, p.size_bytes)
        sim.schedule_at(t, offer, packet)
    sim.run()
    d.settle(sim.now)
    waits = [arrived[s] - delay_s - size * 8 / rate_bps - t for s, (t, size) in sent.items()]
    return d, [w if w > 1e-12 else 0.0 for w in waits]   # (float noise of the reconstruction)


def test_bucket_width_is_64_bytes_up_to_256_kb_then_a_4096th_of_the_buffer():
    assert sojourn_bucket_bytes(64_000) == 64
    assert sojourn_bucket_bytes(128 * 1024) == 64
    assert sojourn_bucket_bytes(1_000_000) == math.ceil(1_003_000 / SOJOURN_FINE_BUCKETS_MAX)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 2.0), st.sampled_from([40, 576, 1000, 1500])),
                min_size=1, max_size=120),
       st.sampled_from([0.5, 0.9, 0.99]))
def test_droptail_quantile_is_within_half_a_bucket_of_the_exact_one(sends, q):
    d, waits = droptail_waits(sends)
    assert d.tx_pkts == len(waits)
    assert d.soj_sum == pytest.approx(sum(waits), abs=1e-9)
    half_bucket_s = sojourn_bucket_bytes(20_000) * 8 / 1e6 / 2
    exact = exact_quantile(waits, q)
    measured = sojourn_quantile(d, q)
    if exact == 0.0:
        assert measured == 0.0
    else:
        assert measured == pytest.approx(exact, abs=half_bucket_s + 1e-9)


def test_a_full_buffer_stays_in_the_fine_buckets():
    # 30 packets of 1500 B at once into a 20 KB buffer: 13 wait, up to 13 transmission times
    d, waits = droptail_waits([(0.0, 1500)] * 30)
    assert d.soj_hist is None
    assert max(waits) == pytest.approx(13 * 1500 * 8 / 1e6)
    assert sojourn_quantile(d, 1.0) == pytest.approx(max(waits), abs=32 * 8 / 1e6 + 1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(1e-6, 100.0), min_size=1, max_size=200), st.floats(0.01, 1.0))
def test_waits_beyond_the_fine_buckets_are_within_6_3_percent(waits, q):
    sim = Simulator()
    a, b = Host("A"), Host("B")
    d = Link(sim, "L", a, b, 1e9, 0.0, 10_000).directions[0]    # fine buckets cover 0.1 ms
    for w in waits:
        record_sojourn(d, w)
    d.tx_pkts = len(waits)
    exact = exact_quantile(waits, q)
    measured = sojourn_quantile(d, q)
    fine_top_s = d.soj_fine_count / d.soj_scale
    if exact < fine_top_s:
        assert measured == pytest.approx(exact, abs=0.5 / d.soj_scale + 1e-12)
    else:
        assert measured == pytest.approx(exact, rel=0.063)


def test_packets_that_did_not_wait_count_as_zero():
    d, waits = droptail_waits([(0.0, 1000), (1.0, 1000), (2.0, 1000), (2.0, 1000)])
    assert waits[:3] == [0.0, 0.0, 0.0]
    assert sojourn_quantile(d, 0.75) == 0.0
    assert sojourn_quantile(d, 1.0) == pytest.approx(0.008, abs=32 * 8 / 1e6)


def test_fine_buckets_are_allocated_when_needed_and_only_as_far_as_the_longest_wait():
    sim = Simulator()
    a, b = Host("A"), Host("B")
    d = Link(sim, "L", a, b, 1e9, 0.0, 1_000_000).directions[0]   # 4096 fine buckets of 245 B
    assert d.soj_fine is None and d.soj_hist is None
    bucket_s = 1.0 / d.soj_scale
    record_sojourn(d, 3.5 * bucket_s)
    assert d.soj_fine.typecode == "I" and len(d.soj_fine) == 256 and d.soj_fine[3] == 1
    record_sojourn(d, 700.5 * bucket_s)                              # grows by doubling
    assert len(d.soj_fine) == 1024 and d.soj_fine[700] == 1 and d.soj_fine[3] == 1
    record_sojourn(d, 5000 * bucket_s)                               # beyond the fine buckets
    assert len(d.soj_fine) == 1024 and sum(d.soj_hist) == 1
    top = d.soj_fine_count - 1                                       # 4093: the last fine bucket
    record_sojourn(d, (top + 0.5) * bucket_s)
    assert len(d.soj_fine) == d.soj_fine_count and d.soj_fine[top] == 1
    d.tx_pkts = 4
    assert sojourn_quantile(d, 0.25) == pytest.approx(3.5 * bucket_s)
    assert sojourn_quantile(d, 0.5) == pytest.approx(700.5 * bucket_s)


def test_a_bucket_that_reaches_2_to_the_32_keeps_counting():
    sim = Simulator()
    a, b = Host("A"), Host("B")
    d = Link(sim, "L", a, b, 1e9, 0.0, 10_000).directions[0]
    wait = 2.5 / d.soj_scale
    record_sojourn(d, wait)
    d.soj_fine[2] = 2 ** 32 - 1
    record_sojourn(d, wait)
    assert d.soj_fine.typecode == "Q" and d.soj_fine[2] == 2 ** 32
    record_sojourn(d, 1e3)                                           # the coarse part too
    d.soj_hist[-1] = 2 ** 32 - 1
    record_sojourn(d, 1e3)
    assert d.soj_hist.typecode == "Q" and d.soj_hist[-1] == 2 ** 32


def test_the_histogram_of_a_direction_costs_at_most_16_kb():
    sim = Simulator()
    a, b = Host("A"), Host("B")
    d = Link(sim, "L", a, b, 1e9, 0.0, 50_000_000).directions[0]
    for k in range(d.soj_fine_count):
        record_sojourn(d, (k + 0.5) / d.soj_scale)
    assert d.soj_fine.itemsize * len(d.soj_fine) <= 4 * SOJOURN_FINE_BUCKETS_MAX
    assert sum(d.soj_fine) == d.soj_fine_count
