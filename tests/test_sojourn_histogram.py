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
