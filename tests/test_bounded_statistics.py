"""Statistics with bounded memory: traces stream to files, idle entities cost nothing, and a run's
memory does not grow with simulated time or with the number of samples."""
from __future__ import annotations

import csv
import tracemalloc

import numpy as np
import pytest

from netsim import load_topology, simulate

ONE_LINK = {"name": "one_link", "hosts": ["H1", "H2"],
            "links": [{"id": "L1", "ends": ["H1", "H2"], "rate_mbps": 10, "delay_ms": 10,
                       "buffer_kb": 64}],
            "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 1, "start_s": 0}]}


def test_a_flow_in_the_far_future_costs_no_sampling_work():
    data = dict(ONE_LINK, flows=[dict(ONE_LINK["flows"][0], start_s=1e6)])
    results = simulate(load_topology(data))
    summary = results.summary
    assert summary["stop_reason"] == "completed"
    assert summary["flows"]["F1"]["completed"] and summary["flows"]["F1"]["in_order"]
    # about 2000 events of the transfer itself; not 1e7 sampling ticks nor 1e6 stall checks
    assert summary["events"] < 5_000
    assert sum(summary["trace_rows"].values()) < 2_000


def peak_bytes(spec, interval_s: float) -> int:
    tracemalloc.start()
    try:
        results = simulate(spec, interval_s=interval_s)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert results.summary["stop_reason"] == "completed"
    return peak


@pytest.mark.slow   # a whole simulation of several seconds: CI runs it with -m slow
def test_memory_does_not_grow_with_the_number_of_samples(dumbbell):
    spec = load_topology(dumbbell(48, total_mb=6.0))
    fine = peak_bytes(spec, 0.01)          # ~100x the samples of the coarse run
    coarse = peak_bytes(spec, 1.0)
    assert fine < coarse * 1.25 + 512 * 1024, (fine, coarse)


def test_idle_links_and_hosts_write_no_rows_but_their_traces_are_complete(dumbbell):
    data = dumbbell(4, total_mb=0.4)
    data["flows"][3]["start_s"] = 5.05     # S3's access link is idle until then
    results = simulate(load_topology(data))
    summary = results.summary
    end_s, interval = summary["end_time_s"], summary["interval_s"]
    ticks = int(end_s / interval) + 1
    rows = list(csv.DictReader(open(results.directory / "links.csv")))
    assert len(rows) == summary["trace_rows"]["links"]
    assert len(rows) < 0.5 * ticks * 2 * len(data["links"])     # far fewer than a dense table
    idle_access = sorted((float(r["time_s"]), float(r["rate_mbps"])) for r in rows
                 if r["link"] == "A3" and r["direction"] == "S3->R1")
    # first interval, then nothing until the idle row that ends the last idle interval before 5 s
    assert idle_access[0] == (0.1, 0.0)
    assert idle_access[1][0] == pytest.approx(5.0) and idle_access[1][1] == 0.0
    assert idle_access[2][0] == pytest.approx(5.1) and idle_access[2][1] > 0
    # the trace fills the gap with zeros, on the same sampling instants as every other entity
    t, rate = results.trace("links", "A3", "rate_mbps", direction="S3->R1")
    t_b, _ = results.trace("links", "L", "rate_mbps", direction="R1->R2")
    assert np.array_equal(t, t_b)
    assert np.all(rate[(t > 0.1) & (t <= 5.0 + 1e-9)] == 0.0)
    assert rate[np.isclose(t, 5.1)][0] > 0


def test_sparse_traces_carry_the_same_values_as_dense_ones(dumbbell):
    """Every row written equals what a dense sampler writes; the rows left out are all zero."""
    from simulator.sampling import Sampler
    from netsim.run import Run

    spec = load_topology(dumbbell(3, total_mb=0.3))
    sparse = Run(spec).execute()

    class Dense(Sampler):          # a sampler whose probes never sleep: the reference
        def register(self, table, key, probe, *, wake=None, idle_row=None, **arming):
            def dense(now, span, probe=probe, idle_row=idle_row):
                row = probe(now, span)
                return idle_row if row is None and idle_row is not None else row
            super().register(table, key, dense)

        def register_group(self, table, group, *, idle_row, lazy=True):
            super().register_group(table, group, idle_row=idle_row, lazy=False)   # each, dense

    import netsim.run as run_module
    original = run_module.Sampler
    run_module.Sampler = Dense
    try:
        dense = Run(spec).execute()
    finally:
        run_module.Sampler = original
    assert dense.summary["trace_rows"]["links"] > sparse.summary["trace_rows"]["links"]
    for name, keys in (("links", ("link", "direction")), ("hosts", ("host",)), ("flows", ("flow",))):
        def rows(results):
            with open(results.directory / f"{name}.csv") as fh:
                return {(r["time_s"],) + tuple(r[k] for k in keys): r for r in csv.DictReader(fh)}
        a, b = rows(dense), rows(sparse)
        assert set(b) <= set(a)
        for key, row in a.items():
            if key in b:
                assert b[key] == row
            else:
                # a row of no traffic: zeros, and no sojourn time (empty)
                assert all(float(v) == 0.0 if v else c == "sojourn_ms"
                           for c, v in row.items() if c not in keys + ("time_s",))


def test_results_tables_are_read_back_from_the_trace_files():
    results = simulate(load_topology(ONE_LINK))
    flows = results.flows
    assert list(flows) == ["time_s", "flow", "send_rate_mbps", "recv_rate_mbps",
                           "arrival_rate_mbps", "window_pkts", "rtt_ms", "rto", "tlp",
                           "rack_lost", "lost_retrans", "spurious_undo", "sack_recoveries",
                           "fast_retransmits", *results.summary["flows"]["F1"]["algorithm_state"]]
    assert len(flows["time_s"]) == results.summary["trace_rows"]["flows"]
    assert results.summary["flows"]["F1"]["avg_window_pkts"] == pytest.approx(
        flows["window_pkts"].mean(), rel=1e-6)
    data = (results.directory / "links.csv").read_bytes()
    assert b"\r\n" not in data
