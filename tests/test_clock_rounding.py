"""The clock's rounding (components/direction.py CLOCK_ROUNDING; docs/model.md, "Links and
buffers"): times equal in the model but summed along two paths may differ by a few units in the
last place. A transmitter free within that of a packet's arrival takes the packet at once, and a
packet in service that begins or ends at a sampling instant, up to that rounding, counts whole
or not at all: no buffer occupancy, sojourn or rate of the order of 1e-15 comes out of float
noise, and no interval shows a negative rate."""
from __future__ import annotations

import math

import numpy as np
import pytest

from components.direction import CLOCK_ROUNDING, unfinished
from netsim.run import Run, simulate
from topologies.loader import load_topology

COLUMNS = ("rate_mbps", "buffer_kb", "buffer_pkts", "backlog_kb", "sojourn_ms",
           "routing_rate_mbps")
NOISE = 1e-9     # in each column's unit: far below anything a packet can make of it


def chain(routing: str = "static") -> dict:
    """Two hosts behind two routers, every link of the same rate: a packet reaches each router
    just as the previous one leaves it (the arrival = an upstream departure + delay, the
    transmitter's free time = its previous start + the transmission time: equal, up to
    rounding). With Bellman-Ford, routing packets begin at the sampling instants (every 5 s)."""
    link = {"rate_mbps": 10, "buffer_kb": 64}
    return {"hosts": ["H1", "H2"], "routers": ["R1", "R2"], "duration_s": 12,
            "routing": {"protocol": routing}, "packet_bytes": {"data": 1000},
            "links": [dict(link, id="L1", ends=["H1", "R1"], delay_ms=3.3),
                      dict(link, id="L2", ends=["R1", "R2"], delay_ms=7.1),
                      dict(link, id="L3", ends=["R2", "H2"], delay_ms=1.7)],
            "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 4, "start_s": 0.123}]}


@pytest.mark.parametrize("routing", ["static", "bellman-ford"])
def test_no_interval_shows_float_noise_or_a_negative_rate(routing):
    links = simulate(load_topology(chain(routing)), interval_s=0.1).links
    for column in COLUMNS:
        values = np.asarray(links[column], dtype=float)
        values = values[~np.isnan(values)]
        assert values.min() >= 0.0, column
        assert not np.any((values > 0) & (values < NOISE)), (column, values[values < NOISE])


def test_no_summary_figure_is_float_noise():
    summary = simulate(load_topology(chain("bellman-ford")), interval_s=0.1).summary
    for link in summary["links"].values():
        for entry in link["directions"].values():
            for key in ("avg_buffer_kb", "avg_buffer_pkts", "avg_backlog_kb", "avg_sojourn_ms",
                        "avg_rate_mbps", "utilization"):
                value = entry[key] or 0.0
                assert value == 0.0 or value >= NOISE, (key, value)


def test_equal_rates_never_queue_at_the_routers():
    run = Run(load_topology(chain()))
    run.execute()
    for label in ("R1->R2", "R2->H2"):
        (d,) = [d for link in run.network.links.values() for d in link.directions
                if d.label == label]
        assert d.tx_pkts > 3000
        assert d.area_bytes == 0.0 and d.area_pkts == 0.0
        assert d.soj_sum == 0.0 and d.soj_fine is None      # no packet ever waited


def busy_direction():
    """The chain's first direction with a packet in service: (direction, transmitter)."""
    run = Run(load_topology(chain()))
    (d,) = [d for d in run.network.links["L1"].directions if d.label == "H1->R1"]
    t = d.transmitter
    for step in range(1, 1000):                 # (slow start: busy within a few RTTs)
        run.sim.run(until=step * 0.01)
        d.settle(run.sim.now)
        if t.serving is d and t.busy_until > run.sim.now:
            return d, t
    raise AssertionError("H1->R1 never busy at a multiple of 10 ms")


def test_a_packet_in_service_counts_whole_bytes_at_its_ends():
    d, t = busy_direction()
    end = t.queue[0][0] if t.queue else t.busy_until
    size = 1000                                      # data packets of this topology (bytes)
    begin = end - size * t.seconds_per_byte
    for now in (begin, math.nextafter(begin, 0), math.nextafter(begin, 1)):
        left, work = unfinished(d, now)
        assert left == float(size)                   # begins now: all of it is still to send
        assert work == pytest.approx(size * size * t.seconds_per_byte / 2, rel=1e-12)
    for now in (math.nextafter(end, 0), end - 0.9 * end * CLOCK_ROUNDING):
        assert unfinished(d, now) == (0.0, 0.0)      # ends now: nothing left, never negative
    left, _ = unfinished(d, end - 1e-12)             # beyond the rounding: what is left
    assert left == pytest.approx(1e-12 / t.seconds_per_byte, rel=1e-3)
    midway = unfinished(d, begin + 0.25 * size * t.seconds_per_byte)[0]
    assert midway == pytest.approx(0.75 * size, rel=1e-9)
