"""Transport features for rate-based algorithms: pacing, and delivery-rate samples."""
from __future__ import annotations

import pytest

from components.packet import DATA
from flows.congestion import CongestionControl
from flows.transport import RateSample


class Paced(CongestionControl):
    """A fixed window of 50 packets paced at 2 Mb/s (a quarter of the 8 Mb/s link)."""

    name = "paced"
    wants_rate_samples = True
    __slots__ = ("samples",)

    def __init__(self, flow, params=None):
        super().__init__(flow, params)
        self.samples = []

    def init(self):
        self.flow.cwnd = 50.0
        self.flow.pacing_rate_bps = 2e6

    def on_rate_sample(self, rs):
        copy = RateSample(rs.delivery_rate_pps, rs.delivered, rs.prior_delivered, rs.interval_s,
                          rs.rtt_s, rs.is_app_limited, rs.newly_delivered)
        self.samples.append(copy)


class Unpaced(Paced):
    def init(self):
        self.flow.cwnd = 50.0


@pytest.fixture
def send_times(make_flow):
    return lambda algorithm, packets=200: _send_times(make_flow, algorithm, packets)


def _send_times(make_flow, algorithm, packets):
    sim, h1, h2, flow = make_flow(packets=packets, algorithm=algorithm)
    times = []
    send = h1.send

    def spy(packet):
        if packet.kind == DATA:
            times.append(sim.now)
        return send(packet)
    h1.send = spy
    sim.run()
    assert flow.finished and flow.delivered_all()
    return times, flow


def test_pacing_releases_two_packet_quanta_at_the_pacing_rate(send_times):
    # at 2 Mb/s, 1 ms is a quarter packet: quanta of 2 packets, one quantum every 8 ms
    times, flow = send_times(Paced)
    assert times[:6] == pytest.approx([0.0, 0.0, 0.008, 0.008, 0.016, 0.016])
    quanta = times[::2]
    gaps = [b - a for a, b in zip(quanta, quanta[1:])]
    assert all(gap == pytest.approx(2 * 1000 * 8 / 2e6) for gap in gaps)
    assert (len(times) - 1) * 1000 * 8 / (times[-1] - times[0]) == pytest.approx(2e6, rel=0.02)


def test_fast_pacing_uses_one_millisecond_quanta(make_flow):
    class Fast(Paced):
        def init(self):
            self.flow.cwnd = 100.0
            self.flow.pacing_rate_bps = 80e6        # 10 packets per ms (faster than the link)
    sim, h1, h2, flow = make_flow(packets=100, algorithm=Fast)
    sim.run(until=0.0)
    assert flow.snd_nxt == 10                     # one 1 ms quantum leaves at once


def test_without_pacing_the_window_leaves_at_once(send_times):
    times, flow = send_times(Unpaced)
    assert times[:50] == [0.0] * 50


def test_delivery_rate_samples_measure_the_bottleneck(send_times, make_flow):
    # unpaced, the 8 Mb/s link is the bottleneck: samples converge to 1000 packets/s
    _, flow = send_times(Unpaced, packets=2000)
    rates = [rs.delivery_rate_pps for rs in flow.cc.samples[500:1500]]
    assert sum(rates) / len(rates) == pytest.approx(make_flow.RATE_BPS / 8 / 1000, rel=0.02)
    # paced at 2 Mb/s in 2-packet quanta: samples never exceed the pacing rate and their
    # maximum (what BBR's filter keeps) equals it; the first packet of a quantum reads lower
    paced = [rs.delivery_rate_pps for rs in send_times(Paced, packets=1000)[1].cc.samples[200:800]]
    assert max(paced) == pytest.approx(250, rel=0.01)
    assert min(paced) > 0.7 * 250


def test_rate_samples_count_deliveries_and_mark_the_last_window_app_limited(send_times):
    _, flow = send_times(Unpaced, packets=300)
    samples = flow.cc.samples
    assert flow.delivered == 300
    assert [rs.delivered for rs in samples] == sorted(rs.delivered for rs in samples)
    assert samples[-1].delivered == 300
    assert not samples[10].is_app_limited and samples[-1].is_app_limited
    assert all(rs.rtt_s > 0 and rs.interval_s > 0 for rs in samples)
