"""The bounds of a run (topologies/bounds.py; docs/outputs.md, "Bounds and rules"): time values
stay resolvable, arrival gaps do not vanish, flows alive and trace rows are capped."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from topologies import bounds
from topologies.loader import TopologyError, load_topology

ROOT = Path(__file__).resolve().parent.parent
WEBSEARCH = json.loads((ROOT / "topologies" / "examples" / "websearch.json").read_text())


def one_line(done) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def small(**flow) -> dict:
    return {"hosts": ["H1", "H2"], "duration_s": 2,
            "links": [{"id": "L1", "ends": ["H1", "H2"], "rate_mbps": 10, "delay_ms": 5,
                       "buffer_kb": 100}],
            "flows": [dict({"id": "F1", "src": "H1", "dst": "H2", "data_mb": 0.1}, **flow)]}


def test_the_bounds_keep_the_smallest_delay_resolvable_at_the_largest_time():
    t = bounds.MAX_TIME_S
    assert t + bounds.TIME_RESOLUTION_S / 8 != t         # resolved with margin
    assert bounds.MAX_ARRIVALS_PER_S == 1 / bounds.TIME_RESOLUTION_S


@pytest.mark.parametrize("start_s", [1e15, 1e308, 1e6 + 1])
def test_start_times_beyond_the_bound_are_refused_at_load(tmp_path, run_cli, start_s):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(small(start_s=start_s, algorithm="fast")))
    done = run_cli(path, "--no-plots", "--out", tmp_path / "r")
    assert done.returncode == 2
    assert one_line(done) == (f'error: {path}: flows[0] "F1": field "start_s": expected 0 or a '
                              f"time from 1e-09 s to 1e+06 s, got {start_s!r}")


@pytest.mark.parametrize("change, field", [
    (lambda d: d.update(duration_s=2e6), "duration_s"),
    (lambda d: d["links"][0].update(delay_ms=1e-9), "delay_ms"),
    (lambda d: d["links"][0].update(delay_ms=2e9), "delay_ms"),
    (lambda d: d["links"][0].update(jitter_ms=1e-12), "jitter_ms"),
    (lambda d: d.update(transport={"min_rto_s": 1e-300}), "min_rto_s"),
    (lambda d: d.update(events=[{"at_s": 1e300, "link": "L1", "action": "down"}]), "at_s"),
    (lambda d: d["links"][0].update(rate_schedule=[[5e6, 1]]), "rate_schedule[0][0]"),
    (lambda d: d["links"][0].update(delay_schedule=[[1, 1e-12]]), "delay_schedule[0][1]"),
])
def test_every_time_field_is_bounded(change, field):
    data = small()
    change(data)
    with pytest.raises(TopologyError, match=rf'field "{re.escape(field)}": expected (0 or )?a time from'):
        load_topology(data)


def test_zero_and_the_bounds_themselves_are_accepted():
    data = small(start_s=0)
    data["links"][0].update(delay_ms=bounds.TIME_RESOLUTION_S * 1e3, jitter_ms=0)
    data["duration_s"] = bounds.MAX_TIME_S
    spec = load_topology(data)
    assert spec.duration_s == bounds.MAX_TIME_S and spec.links[0].delay_s == pytest.approx(1e-9)


def test_an_arrival_rate_whose_gap_is_below_the_resolution_is_refused():
    data = json.loads(json.dumps(WEBSEARCH))
    data["workloads"][0]["arrivals_per_s"] = 1e12
    with pytest.raises(TopologyError, match=r'field "arrivals_per_s": expected at most 1e\+09 '
                                            r"arrivals per second \(a mean gap of at least 1e-09 s\), "
                                            r"got 1000000000000\.0"):
        load_topology(data)
    data["workloads"][0]["arrivals_per_s"] = 1e9     # the bound itself (1 / 1e-9 rounds below)
    assert load_topology(data).workloads[0].arrivals_per_s == 1e9


@pytest.mark.parametrize("kind, extra", [("cbr", {}), ("onoff", {"on_s": 0.1, "off_s": 0.1})])
def test_a_rate_source_whose_packet_gap_is_below_the_resolution_is_refused(kind, extra):
    """A cbr or onoff source sends a data packet every packet_bytes * 8 / rate seconds: closer
    than the clock resolves, time would never advance (1e15 Mb/s hung a run)."""
    data = small(kind=kind, rate_mbps=1e15, data_mb=None, **extra)
    data["packet_bytes"] = {"data": 1500, "ack": 40}
    with pytest.raises(TopologyError) as info:
        load_topology(data)
    assert str(info.value) == ('<dict>: flows[0] "F1": field "rate_mbps": expected at most '
                               '1.2e+07 (one 1500-byte packet every 1e-09 s, the clock\'s '
                               'resolution), got 1000000000000000.0')
    data["flows"][0]["rate_mbps"] = 1500 * 8 / bounds.TIME_RESOLUTION_S / 1e6   # the bound itself
    data["units"] = "si"
    spec = load_topology(data)
    assert spec.flows[0].rate_bps == pytest.approx(1.2e13)
    data["flows"][0]["rate_mbps"] *= 1.000001
    with pytest.raises(TopologyError, match=r'field "rate_mbps": expected at most 1\.2e\+07'):
        load_topology(data)


def chain(access_mbps=(10, 10), schedule=()) -> dict:
    """H1 -- R -- H2, si units: H1's and H2's links at `access_mbps`."""
    link = {"delay_ms": 5, "buffer_kb": 100}
    return {"units": "si", "hosts": ["H1", "H2"], "routers": ["R"],
            "links": [dict(link, id="A", ends=["H1", "R"], rate_mbps=access_mbps[0],
                           rate_schedule=[list(step) for step in schedule]),
                      dict(link, id="B", ends=["R", "H2"], rate_mbps=access_mbps[1])],
            "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 1}]}


def test_a_flow_larger_than_its_hosts_links_carry_in_the_longest_run_is_refused():
    """20 MB typed as bytes on a 10 Mb/s link is a 20 TB transfer: 1.6e7 s, beyond the time a
    run may simulate (bounds.MAX_TIME_S). The slower of the two hosts' links sets the bound."""
    data = chain(access_mbps=(100, 10))
    data["flows"][0]["data_mb"] = 20_000_000
    with pytest.raises(TopologyError) as info:
        load_topology(data)
    assert str(info.value) == ('<dict>: flows[0] "F1": field "data_mb": expected at most '
                               '1.25e+06 (what host "H2"\'s link carries at 10 Mbps in 1e+06 s, '
                               'the longest a run may simulate), got 20000000')
    data["flows"][0]["data_mb"] = 10e6 * bounds.MAX_TIME_S / 8 / 1e6     # the bound itself
    assert load_topology(data).flows[0].data_bytes == 1.25e12
    data["flows"][0]["data_mb"] *= 1.000001
    with pytest.raises(TopologyError, match='field "data_mb": expected at most 1.25e'):
        load_topology(data)


def test_the_data_bound_follows_the_fastest_rate_of_a_rate_schedule():
    data = chain(access_mbps=(10, 1000), schedule=[(5, 100), (10, 10)])
    data["flows"][0]["data_mb"] = 2e6          # above 10 Mb/s x 1e6 s, below 100 Mb/s x 1e6 s
    assert load_topology(data).flows[0].data_bytes == 2e12
    data["flows"][0]["data_mb"] = 2e7
    with pytest.raises(TopologyError, match=r'carries at 100 Mbps in 1e\+06 s'):
        load_topology(data)


@pytest.mark.parametrize("kind, extra", [("bulk", {}), ("cbr", {"rate_mbps": 1})])
def test_absurd_data_sizes_are_refused_whatever_the_links(kind, extra):
    data = chain(access_mbps=(1e12, 1e12))          # (the fastest links accepted)
    data["flows"][0].update(kind=kind, data_mb=1e300, **extra)
    with pytest.raises(TopologyError, match=r'field "data_mb": expected at most 1e\+12 \(1e\+18 '
                                            r'bytes, the largest flow\), got 1e\+300'):
        load_topology(data)


def test_a_workload_size_beyond_the_data_bound_is_refused():
    data = json.loads(json.dumps(WEBSEARCH))
    data["workloads"][0]["sizes"] = [[1000, 0.5], [1e300, 1]]
    with pytest.raises(TopologyError, match=r'field "sizes\[1\]": expected a size of at most '
                                            r'1e\+18 bytes, got 1e\+300'):
        load_topology(data)


@pytest.mark.slow   # a whole simulation of several seconds: CI runs it with -m slow
def test_an_overloaded_workload_stops_cleanly_at_the_flow_limit_and_keeps_its_results(
        tmp_path, run_cli):
    data = json.loads(json.dumps(WEBSEARCH))
    data["workloads"][0]["arrivals_per_s"] = 1e6
    data["duration_s"] = 10          # (1e7 flows: within the rows fct.csv may have, 2e7)
    path = tmp_path / "overload.json"
    path.write_text(json.dumps(data))
    done = run_cli(path, "--no-plots", "--quiet", "--out", tmp_path / "r", timeout=120)
    assert done.returncode == 0, done.stderr
    line = one_line(done)
    assert line.startswith("warning: stopped at a bound: workload W")
    assert f"{bounds.MAX_FLOWS_ALIVE} workload flows in progress at once" in line
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["stop_reason"] == "limit" and summary["end_time_s"] < 1
    workload = summary["workloads"]["W"]
    assert workload["flows_started"] - workload["flows_completed"] == bounds.MAX_FLOWS_ALIVE
    assert (tmp_path / "r" / "fct.csv").exists()


def test_a_workload_whose_flows_would_pass_the_row_limit_is_refused_before_it_runs():
    """1e6 one-byte flows a second for 1e6 s: 1e12 rows of fct.csv, accepted and stopped by
    nothing (its flows finish in nanoseconds, so the flow limit never fires)."""
    from netsim.run import run_problem
    data = json.loads(json.dumps(WEBSEARCH))
    data["workloads"][0]["arrivals_per_s"] = 1e6
    data["duration_s"] = 1e6
    spec = load_topology(data)
    assert run_problem(spec, spec.duration_s, 1.0, "cli") == (
        '<dict>: workloads[0] "W": about 1e+12 flows in the run\'s 1e+06 s (1e+06 per s), a '
        "row of fct.csv each: with the other trace files more than the 2e+07 rows a run "
        "writes; use fewer arrivals_per_s or a shorter --duration")
    data["duration_s"] = 10                             # 1e7 flows: within the limit
    spec = load_topology(data)
    assert run_problem(spec, spec.duration_s, 1.0, "cli") is None
    # an interval too fine for the traces alone is the interval's problem, not the workload's
    assert run_problem(spec, spec.duration_s, 1e-6, "cli").startswith("--interval: 1e-06 s over")


def test_a_workload_stops_cleanly_when_fct_csv_reaches_the_row_limit(monkeypatch):
    """What arrives beyond the mean (or past the check) is stopped at the limit, its results
    kept, as at the limit of flows in progress."""
    import netsim.workloads
    from netsim import simulate
    monkeypatch.setattr(netsim.workloads, "MAX_TRACE_ROWS", 40)
    data = json.loads(json.dumps(WEBSEARCH))
    data["workloads"][0]["arrivals_per_s"] = 200          # about 400 flows in 2 s
    data["duration_s"] = 2
    results = simulate(load_topology(data))
    assert results.summary["stop_reason"] == "limit"
    assert results.summary["stop_detail"].startswith(
        "stopped at a bound: workload W: fct.csv would pass its limit of 40 rows (")
    workload = results.summary["workloads"]["W"]
    assert workload["flows_started"] == 40 and workload["flows_completed"] <= 40


def test_an_interval_writing_too_many_rows_is_refused_with_the_smallest_that_fits(tmp_path,
                                                                                   run_cli):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(small(data_mb=None)))     # endless: the duration is its length
    done = run_cli(path, "--interval", "1e-9", "--duration", "3", "--no-plots",
                   "--out", tmp_path / "r")
    assert done.returncode == 2
    line = one_line(done)
    assert line.startswith("error: --interval: 1e-09 s over a 3 s run whose 5 busiest traced "
                           "entities (its flows, the hosts of its flows and workloads, and the "
                           "directions of their links) write 1.5e+10 trace rows")
    assert line.endswith("at most 2e+07 are written: use an interval of at least 7.5e-07 s")
    assert not (tmp_path / "r").exists()
    done = run_cli(path, "--interval", "7.5e-7", "--duration", "3e-4", "--no-plots", "--quiet",
                   "--out", tmp_path / "r")
    assert done.returncode == 0, done.stderr


def mostly_idle(idle: int) -> dict:
    """One endless flow H1 -> P0 -> ... -> P9 -> H2, and a chain of `idle` idle routers off P0."""
    path = [f"P{i}" for i in range(10)]
    chain = ["P0"] + [f"I{i}" for i in range(idle)]
    link = {"rate_mbps": 10, "delay_ms": 1, "buffer_kb": 100}
    links = [dict(link, id="A", ends=["H1", "P0"]), dict(link, id="B", ends=["P9", "H2"])]
    links += [dict(link, id=f"{kind}{i}", ends=[a, b])
              for kind, nodes in (("P", path), ("I", chain))
              for i, (a, b) in enumerate(zip(nodes, nodes[1:]))]
    return {"hosts": ["H1", "H2"], "routers": path + chain[1:], "links": links, "duration_s": 10,
            "flows": [{"id": "F1", "src": "H1", "dst": "H2"}]}


def test_idle_links_do_not_make_an_interval_too_fine(monkeypatch):
    """The bound counts what surely writes every interval (the flows, their hosts and their
    links' directions: 7 here), not the idle links, which write no rows (500 idle routers and
    1 000 sampling instants: 1e6 rows at most, 25 000 written). Past what was counted, the run
    checks its rows and stops cleanly at the limit."""
    from netsim import run as run_module
    spec = load_topology(mostly_idle(500))
    assert run_module.run_problem(spec, 10, 0.01) is None
    assert run_module.run_problem(spec, 10, 1e-6).startswith(
        "interval_s: 1e-06 s over a 10 s run whose 7 busiest traced entities")
    monkeypatch.setattr(run_module, "MAX_TRACE_ROWS", 20_000)      # 7 000 counted: runs
    summary = run_module.simulate(spec, interval_s=0.01).summary
    assert summary["stop_reason"] == "limit"
    assert 16_000 < sum(summary["trace_rows"][name] for name in ("links", "flows", "hosts")) <= 20_000


def test_a_duration_that_only_caps_flows_which_complete_is_not_their_length(tmp_path, run_cli):
    """--duration 1e6 on a flow of 0.1 MB: the run ends when the flow completes, with a few rows;
    the duration does not force a coarser interval (the rows are counted as written)."""
    path = tmp_path / "t.json"
    path.write_text(json.dumps(small()))
    done = run_cli(path, "--duration", "1e6", "--no-plots", "--quiet", "--out", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["stop_reason"] == "completed" and summary["end_time_s"] < 1
    assert sum(summary["trace_rows"].values()) < 100


def test_a_capped_run_that_does_not_complete_stops_at_the_row_limit(monkeypatch):
    from netsim import run as run_module
    monkeypatch.setattr(run_module, "MAX_TRACE_ROWS", 1000)
    data = small(data_mb=1e5)                           # would take 80 000 s
    data["duration_s"] = 1e5
    results = run_module.simulate(load_topology(data), interval_s=0.01)
    summary = results.summary
    assert summary["stop_reason"] == "limit"
    assert 800 < sum(summary["trace_rows"][name] for name in ("links", "flows", "hosts")) <= 1000


def test_a_run_of_unknown_length_stops_at_the_row_limit(monkeypatch):
    from netsim import run as run_module
    monkeypatch.setattr(run_module, "MAX_TRACE_ROWS", 1000)
    data = small(data_mb=1e6)                           # would take 800 000 s
    data.pop("duration_s")
    results = run_module.simulate(load_topology(data), interval_s=0.01)
    summary = results.summary
    assert summary["stop_reason"] == "limit"
    assert 1.5 < summary["end_time_s"] < 10
    assert "trace files would pass their limit" in summary["stop_detail"]
    assert 800 < sum(summary["trace_rows"][name] for name in ("links", "flows", "hosts")) <= 1000


def test_sweep_durations_and_intervals_are_bounded(tmp_path):
    from netsim.sweep_file import SweepError, load_sweep
    for key, value in (("interval_s", 1e-12), ("duration_s", 1e7)):
        path = tmp_path / "s.json"
        path.write_text(json.dumps({"topology": "lossy_link",
                                    "parameters": {"flows.F1.data_mb": [1]}, key: value}))
        with pytest.raises(SweepError, match=rf'field "{key}": expected a time from 1e-09 s '
                                             rf"to 1e\+06 s, got {value!r}"):
            load_sweep(path)


# -- a transport's receive window (MAX_RWND_KB) ----------------------------------------------------
@pytest.mark.parametrize("where, entry", [("file", "transport"), ("flow", 'flows[0] "F1"')])
def test_a_receive_window_beyond_the_largest_flow_is_refused_in_one_line(tmp_path, run_cli,
                                                                          where, entry):
    """1e308 kB overflowed the window's packet count (a traceback in flows/linux_stack.py)."""
    data = small()
    block = {"rwnd_kb": 1e308, "stack": "linux"}
    if where == "file":
        data["transport"] = block
    else:
        data["flows"][0]["transport"] = block
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    done = run_cli(path, "--no-plots", "--out", tmp_path / "r")
    assert done.returncode == 2
    field = "rwnd_kb" if where == "file" else "transport.rwnd_kb"
    assert one_line(done) == (f'error: {path}: {entry}: field "{field}": expected a positive '
                              f"number of at most 1e+15 (1e+18 bytes, the largest flow), got 1e+308")


def test_the_receive_window_bound_itself_is_accepted():
    data = small(transport={"rwnd_kb": bounds.MAX_RWND_KB})
    assert load_topology(data).flows[0].transport.rwnd_kb == 1e15
    assert bounds.MAX_RWND_KB * 1000 == bounds.MAX_DATA_BYTES


# -- link rates (min_rate_bps) -----------------------------------------------------------------------
def slow_link(**link) -> dict:
    """H1 -- R1 -- R2 -- H2 whose middle link L2 (a router's: no flow's data bound reads it) has
    the given fields."""
    common = {"delay_ms": 5, "buffer_kb": 100}
    return {"hosts": ["H1", "H2"], "routers": ["R1", "R2"], "duration_s": 1,
            "links": [dict(common, id="L1", ends=["H1", "R1"], rate_mbps=10),
                      dict(common, id="L2", ends=["R1", "R2"], **dict({"rate_mbps": 10}, **link)),
                      dict(common, id="L3", ends=["R2", "H2"], rate_mbps=10)],
            "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 0.1}]}


@pytest.mark.parametrize("link, field, got", [
    ({"rate_mbps": 1e-320}, "rate_mbps", "1e-320"),
    ({"rate_mbps": 1e-300}, "rate_mbps", "1e-300"),
    ({"rate_mbps": 1e-320, "duplex": "half"}, "rate_mbps", "1e-320"),
    ({"rate_mbps": 1e-320, "queue": {"discipline": "pie"}}, "rate_mbps", "1e-320"),
    ({"rate_schedule": [[0.5, 1e-320]]}, "rate_schedule[0][1]", "1e-320"),
])
def test_a_link_too_slow_to_send_one_packet_in_the_longest_run_is_refused(tmp_path, run_cli, link,
                                                                           field, got):
    """A subnormal rate made transmission times infinite, then NaN (a traceback in
    components/direction.py); the bound is one largest packet within MAX_TIME_S."""
    path = tmp_path / "t.json"
    path.write_text(json.dumps(slow_link(**link)))
    done = run_cli(path, "--no-plots", "--out", tmp_path / "r")
    assert done.returncode == 2
    assert one_line(done) == (f'error: {path}: links[1] "L2": field "{field}": expected at least '
                              f"8.192e-09 (one 1024-byte packet within 1e+06 s, the longest a run "
                              f"may simulate), got {got}")


def test_the_rate_bound_follows_the_largest_packet_and_the_units():
    data = slow_link(rate_mbps=1e-9)
    data.update(units="binary", packet_bytes={"data": 1500, "ack": 40})
    with pytest.raises(TopologyError) as info:
        load_topology(data)
    floor_mbps = 1500 * 8 / bounds.MAX_TIME_S / 2 ** 20
    assert str(info.value) == (f'<dict>: links[1] "L2": field "rate_mbps": expected at least '
                               f"{floor_mbps:g} (one 1500-byte packet within 1e+06 s, the longest "
                               f"a run may simulate), got 1e-09")
    data["routing"] = {"protocol": "bellman-ford"}
    data["packet_bytes"]["routing"] = 3000           # routing packets cross links too
    data["links"][1]["rate_mbps"] = 1.5 * floor_mbps
    with pytest.raises(TopologyError, match="one 3000-byte packet"):
        load_topology(data)
    data["links"][1]["rate_mbps"] = 2 * 2 * floor_mbps   # (binary units: exact powers of two)
    assert load_topology(data).links[1].rate_bps == pytest.approx(2 * 3000 * 8 / 1e6)
    assert bounds.min_rate_bps(1024) == 1024 * 8 / bounds.MAX_TIME_S


def test_the_slowest_link_runs():
    data = slow_link(rate_mbps=bounds.min_rate_bps(1024) / 1e6 * 1.01)
    data["duration_s"] = 10
    from netsim.run import simulate
    assert simulate(load_topology(data)).summary["stop_reason"] == "duration"


@pytest.mark.parametrize("kind, extra", [("cbr", {}), ("onoff", {"on_s": 1, "off_s": 1})])
def test_a_rate_source_slower_than_the_stall_timeout_stops_as_stalled_in_one_line(
        tmp_path, run_cli, kind, extra):
    """A cbr or onoff source whose next packet is further than the stall guard's timeout: the
    guard's report named the fields of a bulk flow (a traceback); it now says what the source
    did."""
    data = small(kind=kind, rate_mbps=1e-12, **extra)
    del data["duration_s"]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    done = run_cli(path, "--no-plots", "--quiet", "--out", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    assert one_line(done) == (f"warning: stall guard: F1 made no progress since t=0.006 s (it "
                              f"sent no packet and none of it arrived): the {kind} source sends "
                              f"at 1e-06 bit/s (1 packets sent, 1 arrived)")


# -- periodic timers (MIN_TIMER_INTERVAL_S) -------------------------------------------------------
def test_the_timer_floor_is_one_constant():
    from flows.fast import MIN_UPDATE_INTERVAL_S
    assert bounds.MIN_TIMER_INTERVAL_S == MIN_UPDATE_INTERVAL_S == 1e-5


@pytest.mark.parametrize("change, field, message", [
    (lambda d: d["flows"][0].update(algorithm="fast", params={"update_interval_s": 1e-9}),
     'flows[0] "F1": field "params.update_interval_s"',
     "expected at least 1e-05 s between window updates (one timer event per flow each), got 1e-09"),
    (lambda d: d["links"][0].update(queue={"discipline": "pie", "tupdate_ms": 0.001}),
     'links[0] "L1": field "queue.tupdate_ms"',
     "expected at least 0.01 ms between updates of the drop probability (a timer event each "
     "while the queue is busy), got 0.001"),
    (lambda d: d["flows"][0].update(algorithm="bbr", params={"min_rtt_window_s": 1e-320}),
     'flows[0] "F1": field "params.min_rtt_window_s"',
     "expected a time from 1e-09 s to 1e+06 s, got 1e-320"),
    (lambda d: d["flows"][0].update(algorithm="fast", params={"update_interval_s": 1e308}),
     'flows[0] "F1": field "params.update_interval_s"',
     "expected a time from 1e-09 s to 1e+06 s, got 1e+308"),
])
def test_a_periodic_timer_below_the_floor_is_refused_in_one_line(tmp_path, run_cli, change, field,
                                                                  message):
    """FAST's update every 1e-9 s made a 2 s run take more than 30 s of wall time."""
    data = small()
    change(data)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    done = run_cli(path, "--no-plots", "--out", tmp_path / "r")
    assert done.returncode == 2
    assert one_line(done) == f"error: {path}: {field}: {message}"


def test_the_timer_floors_themselves_are_accepted():
    data = small(algorithm="fast", params={"update_interval_s": 1e-5})
    data["links"][0]["queue"] = {"discipline": "pie", "tupdate_ms": 0.01}
    spec = load_topology(data)
    assert spec.flows[0].params["update_interval_s"] == 1e-5
    assert spec.links[0].queue["tupdate_s"] == pytest.approx(1e-5)


@pytest.mark.parametrize("value, unit, ok", [
    (1e-6, "ms", True),          # 1e-9 s * 1e3 rounds to 1.0000000000000002e-06: at the bound
    (1e9, "ms", True),
    (1e-9, "s", True),
    (1e6, "s", True),
    (9.999e-7, "ms", False),
    (1.0001e9, "ms", False),
    (0.9999e-9, "s", False),
])
def test_a_time_exactly_at_a_printed_bound_is_accepted(value, unit, ok):
    problem = bounds.time_problem(value, unit=unit)
    assert (problem is None) == ok, problem
    if not ok:
        assert problem == (f"expected 0 or a time from {1e-6 if unit == 'ms' else 1e-9:g} {unit} "
                           f"to {1e9 if unit == 'ms' else 1e6:g} {unit}")


@pytest.mark.parametrize("field, value, expected", [
    ("buffer_kb", 1e21, "expected at most 1e+15 (an exabyte), got 1e+21"),
    ("rate_mbps", 1e21, "expected at most 1e+12 (1e18 bit/s), got 1e+21"),
])
def test_link_rates_and_buffers_stay_within_what_the_results_readers_take(field, value,
                                                                         expected):
    """A buffer of 1e21 kB ran, then its summary.json (magnitudes at most 1e20) was refused by
    the figures: a traceback after the run, and the run lost."""
    data = small()
    data["links"][0][field] = value
    with pytest.raises(TopologyError) as caught:
        load_topology(data)
    assert str(caught.value).endswith(f'links[0] "L1": field "{field}": {expected}')


def test_an_initial_window_is_bounded():
    """1e9 packets sent in the flow's first event: an event that never ended, deaf to Ctrl-C."""
    with pytest.raises(TopologyError, match=r'field "transport.initial_cwnd_pkts": expected at '
                                            r'most 100000 packets \(sent at once when the flow '
                                            r'starts\), got 1000000000.0$'):
        load_topology(small(transport={"initial_cwnd_pkts": 1e9}))
    assert load_topology(small(transport={"initial_cwnd_pkts": 1e5}))


def test_a_run_idle_for_more_sampling_intervals_than_the_readers_take_stops_at_the_limit(
        monkeypatch, tmp_path):
    """Idle entities write no rows, so the row count never reached the limit: a 0.5 s run at
    1e-9 s ran to its end and its summary (5e8 intervals) was refused by the figures."""
    from netsim import run as run_module
    from plot_tool.results import read_results
    monkeypatch.setattr(run_module, "MAX_TRACE_ROWS", 1000)
    monkeypatch.setattr(bounds, "MAX_TRACE_ROWS", 1000)
    data = small(start_s=1.0)                           # nothing happens before 1 s
    data["duration_s"] = 0.5
    results = run_module.simulate(load_topology(data), interval_s=1e-4)
    summary = results.summary
    assert summary["stop_reason"] == "limit"
    assert "the run reached its limit of 1e+03 sampling intervals" in summary["stop_detail"]
    assert summary["end_time_s"] == pytest.approx(999 * 1e-4)
    results.write(tmp_path / "out")
    assert read_results(tmp_path / "out").summary["stop_reason"] == "limit"


def test_a_workload_of_large_initial_windows_keeps_fewer_flows_in_progress():
    """A flow's first window goes out at once and its sender keeps it until it is acknowledged:
    the flows in progress are at most MAX_WINDOW_PACKETS_ALIVE / the initial window (50 here),
    or a fuzzed workload grew 6 GB per simulated second."""
    from netsim import simulate
    data = json.loads(json.dumps(WEBSEARCH))
    workload = data["workloads"][0]
    workload["arrivals_per_s"] = 50_000
    workload["transport"] = {"initial_cwnd_pkts": 100_000}
    data["duration_s"] = 0.1
    summary = simulate(load_topology(data)).summary
    assert summary["stop_reason"] == "limit"
    assert ("50 workload flows in progress at once, the limit (MAX_WINDOW_PACKETS_ALIVE / its "
            "initial window of 100000 packets)") in summary["stop_detail"]
    assert summary["workloads"]["W"]["flows_started"] == 50
