"""summary.json's entries of idle link directions (netsim/results.py): a direction no packet was
offered to gets a copy of IDLE_DIRECTION, which is exactly the entry computed from its counters,
and a direction that carried packets never does."""
from __future__ import annotations

import json

import netsim.results as results
from netsim.results import (
    IDLE_DIRECTION,
    SUMMARY_COUNTERS,
    _direction_summary,
    is_idle,
    mean_capacity_bps,
)
from netsim.run import simulate
from topologies.loader import load_topology


def network_with_idle_links() -> dict:
    """H1 -> R1 -> R2 -> H2 carrying one flow, and a spare path R1 -> R3 -> R2 that nothing
    uses (longer, so static routes avoid it), and a host H3 that never sends."""
    def link(link_id, a, b, delay_ms=1):
        return {"id": link_id, "ends": [a, b], "rate_mbps": 10, "delay_ms": delay_ms,
                "buffer_kb": 50}
    return {"hosts": ["H1", "H2", "H3"], "routers": ["R1", "R2", "R3"],
            "links": [link("A", "H1", "R1"), link("L", "R1", "R2"), link("B", "R2", "H2"),
                      link("S1", "R1", "R3", 5), link("S2", "R3", "R2", 5),
                      link("C", "H3", "R3")],
            "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 0.2,
                       "algorithm": "reno"}]}


def test_idle_entries_are_the_computed_ones_and_only_idle_directions_get_them():
    spec = load_topology(network_with_idle_links())
    results = simulate(spec)
    summary, net = results.summary, results.network
    end_s = net.sim.now
    units = spec.units
    idle = busy = 0
    for link in net.links.values():
        capacity_bps = mean_capacity_bps(spec.link(link.id), end_s)
        for d in link.directions:
            entry = summary["links"][link.id]["directions"][d.label]
            computed = _direction_summary(d, end_s, capacity_bps, units.bits_per_mbit,
                                          units.bytes_per_kb)
            assert json.dumps(entry) == json.dumps(computed)     # the values and their types
            if is_idle(d):
                idle += 1
                assert entry == IDLE_DIRECTION and entry is not IDLE_DIRECTION
                assert all(entry[key] is value for key, value in IDLE_DIRECTION.items())
            else:
                busy += 1
                assert entry["packets_transmitted"] > 0
    assert idle >= 6 and busy >= 4          # the spare path, H3's link, and the flow's path


def test_a_direction_offered_only_a_failure_drop_is_not_idle():
    spec = load_topology(network_with_idle_links())
    from netsim.run import Run
    run = Run(spec)
    d = run.network.links["S1"].directions[0]
    assert is_idle(d)
    d.arrived += 1
    d.failed += 1
    assert not is_idle(d)


class ReadRecorder:
    """A stand-in link direction that records which attributes are read (every counter 1, no
    sojourn histogram)."""

    def __init__(self):
        self.read: set = set()

    def __getattr__(self, name):
        self.read.add(name)
        return None if name in ("soj_fine", "soj_hist") else 1


def test_a_summary_reads_only_the_counters_its_sharing_key_holds(monkeypatch):
    # directions whose packets never waited share an entry by SUMMARY_COUNTERS (and capacity):
    # a counter the summary reads beyond them would make unequal directions share one. The
    # p99's `sojourn_quantile` is stood in for by what it reads of a direction without a
    # histogram (the next test holds it to that); compiled, it takes a real LinkDirection only.
    def quantile_without_histogram(d, q):
        _ = (d.tx_pkts, d.soj_fine, d.soj_hist)      # its reads: the count, the histograms
        return 0.0

    monkeypatch.setattr(results, "sojourn_quantile", quantile_without_histogram)
    d = ReadRecorder()
    _direction_summary(d, 1.0, 1e6, 1e6, 1e3)
    assert "tx_pkts" in d.read
    assert d.read <= {*SUMMARY_COUNTERS, "soj_fine", "soj_hist"}


def test_the_p99_of_a_direction_without_a_histogram_depends_only_on_its_sharing_key():
    # two real directions with the same SUMMARY_COUNTERS and no sojourn histogram, differing in
    # everything else the quantile could read (its bucket scale, the other counters), have the
    # same p99, and the same summary entry
    spec = load_topology(network_with_idle_links())
    from netsim.run import Run
    run = Run(spec)
    a, b = run.network.links["S1"].directions
    for d, scale, arrived in ((a, 1e3, 5), (b, 7e5, 9)):
        d.tx_pkts, d.tx_bytes, d.arrived, d.soj_scale = 4, 4000, arrived, scale
    assert a.soj_fine is None and b.soj_hist is None
    assert results.sojourn_quantile(a, 0.99) == results.sojourn_quantile(b, 0.99) == 0.0
    assert _direction_summary(a, 1.0, 1e7, 1e6, 1e3) == _direction_summary(b, 1.0, 1e7, 1e6, 1e3)
