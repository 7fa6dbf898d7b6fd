"""routes.csv at t = 0 (topologies.build.initial_route_entries): with static routing only the
entries on the flows' data and ACK paths (a workload's pairs when it first draws them), with
Bellman-Ford every router's entry towards the flows' hosts; then every change."""
from __future__ import annotations

from netsim import load_topology, simulate
from routing.ecmp import members


def link(lid, a, b, delay_ms=1):
    return {"id": lid, "ends": [a, b], "rate_mbps": 10, "delay_ms": delay_ms, "buffer_kb": 64}


def ring(protocol="static", flows=None, workloads=None):
    """Routers R0..R5 in a ring, host Hi on Ri; a flow H0 -> H2 (over R0, R1, R2)."""
    routers = [f"R{i}" for i in range(6)]
    links = [link(f"L{i}", routers[i], routers[(i + 1) % 6]) for i in range(6)]
    links += [link(f"A{i}", f"H{i}", routers[i]) for i in range(6)]
    data = {"name": "ring", "routing": {"protocol": protocol}, "hosts": [f"H{i}" for i in range(6)],
            "routers": routers, "links": links, "duration_s": 1.0,
            "flows": flows if flows is not None else
            [{"id": "F1", "src": "H0", "dst": "H2", "data_mb": 0.05, "start_s": 0.1}]}
    if workloads:
        data["workloads"] = workloads
    return data


def initial_rows(results):
    routes = results.routes
    return sorted((str(r), str(d), str(h)) for t, r, d, h in zip(
        routes["time_s"], routes["router"], routes["destination"], routes["next_hop"]) if t == 0)


def test_static_logs_the_entries_on_the_data_and_ack_paths_only():
    results = simulate(load_topology(ring()))
    assert initial_rows(results) == sorted([
        ("R0", "H2", "R1"), ("R1", "H2", "R2"), ("R2", "H2", "H2"),      # data path
        ("R2", "H0", "R1"), ("R1", "H0", "R0"), ("R0", "H0", "H0")])     # ACK path
    assert results.summary["routing"]["route_changes"] == len(results.routes["time_s"]) == 6


def rows_of(results):
    routes = results.routes
    return [(float(t), str(r), str(d), str(h), str(k), float(c)) for t, r, d, h, k, c in zip(
        routes["time_s"], routes["router"], routes["destination"], routes["next_hop"],
        routes["link"], routes["cost_ms"])]


def first_draws(results):
    """{(src, dst): start of the first workload flow between them} from fct.csv (every flow
    of these tests finishes)."""
    import csv
    with open(results.directory / "fct.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    first: dict = {}
    for row in rows:
        first.setdefault((row["src"], row["dst"]), float(row["start_s"]))
        first[(row["src"], row["dst"])] = min(first[(row["src"], row["dst"])],
                                              float(row["start_s"]))
    return first


WORKLOAD = [{"id": "W", "src": ["H0"], "dst": ["H2", "H3"], "arrivals_per_s": 20,
             "sizes": [[1000, 1.0]], "start_s": 0.5}]


def test_static_without_flows_logs_nothing_and_a_workload_that_draws_nothing_neither():
    assert initial_rows(simulate(load_topology(ring(flows=[])))) == []
    late = [dict(WORKLOAD[0], start_s=5.0)]          # after the run's end
    results = simulate(load_topology(ring(flows=[], workloads=late)))
    assert rows_of(results) == [] and results.summary["routing"]["route_changes"] == 0


def test_a_workload_logs_a_pair_when_it_first_draws_it_as_a_flow_between_them_would():
    results = simulate(load_topology(ring(flows=[], workloads=WORKLOAD)))
    rows = rows_of(results)
    first = first_draws(results)
    assert set(first) == {("H0", "H2"), ("H0", "H3")}
    # every row at the time its pair was first drawn, each entry once, none at t = 0
    keys = [(r, d) for _, r, d, *_ in rows]
    assert len(keys) == len(set(keys)) == results.summary["routing"]["route_changes"]
    times = sorted(first.values())
    assert sorted({t for t, *_ in rows}) == times and min(times) > 0.5
    # the entries are those a listed flow between the same hosts logs at t = 0: the first
    # pair's data and ACK paths, then of the second pair's only what the first did not give
    expected: list = []
    for pair in sorted(first, key=first.get):
        flow = [{"id": "F", "src": pair[0], "dst": pair[1], "data_mb": 0.01, "start_s": 0.1}]
        listed = {(r, d): (h, k, c) for _, r, d, h, k, c in rows_of(
            simulate(load_topology(ring(flows=flow))))}
        expected += [(first[pair], r, d, *listed[(r, d)]) for r, d in listed
                     if (r, d) not in {(e[1], e[2]) for e in expected}]
    assert sorted(rows) == sorted(expected)


def test_a_pair_a_listed_flow_logged_at_t0_is_not_logged_again():
    flow = [{"id": "F", "src": "H0", "dst": "H2", "data_mb": 0.01, "start_s": 0.1}]
    workload = [dict(WORKLOAD[0], dst=["H2"])]
    results = simulate(load_topology(ring(flows=flow, workloads=workload)))
    assert all(t == 0 for t, *_ in rows_of(results)) and len(rows_of(results)) == 6


def fat_tree_k4(workloads, flows=()):
    from topologies.generate import Common, fat_tree
    data = fat_tree(4, common=Common(flows=0, ecmp="flow"))
    data["flows"] = list(flows)
    data["workloads"] = workloads
    data["duration_s"] = 0.05
    return data


def test_with_flow_hashing_each_drawn_flow_logs_the_routers_of_its_own_paths():
    """Flow hashing: a workload's flow logs, at its start, the entries of the routers on the
    paths its data and ACK hashes pick that no earlier row gave (data path first, each path's
    routers in file order), every member of each set; two flows of one pair may add rows."""
    from netsim.run import Run
    from routing.ecmp import direction_paths, flow_hash
    hosts = ["h_p0_e0_0", "h_p1_e0_0", "h_p2_e1_1", "h_p3_e1_0"]
    workload = [{"id": "W", "src": hosts, "dst": hosts, "arrivals_per_s": 400,
                 "sizes": [[2000, 1.0]], "start_s": 0.0}]
    runs = [Run(load_topology(fat_tree_k4(workload))) for _ in "ab"]
    results = [run.execute() for run in runs]
    assert (results[0].directory / "routes.csv").read_bytes() == \
        (results[1].directory / "routes.csv").read_bytes()
    import csv
    with open(results[0].directory / "fct.csv", encoding="utf-8") as fh:
        flows = sorted(csv.DictReader(fh), key=lambda r: float(r["start_s"]))
    assert len(flows) >= 5
    net = runs[0].network
    order = {r: i for i, r in enumerate(net.routers)}
    expected: list = []
    for row in flows:
        start = float(row["start_s"])
        for src, dst in ((row["src"], row["dst"]), (row["dst"], row["src"])):
            hashed = flow_hash(row["flow"], src, dst, net.seed)
            (path,), _ = direction_paths(net.hosts[src].port, net.hosts[dst], hashed)
            routers = [d.dst.id for d in path[:-1]]
            new = sorted({r for r in routers} - {e[1] for e in expected if e[2] == dst},
                         key=order.__getitem__)
            for router in new:
                for member in members(net.routers[router].routes[net.hosts[dst]]):
                    expected.append((start, router, dst, member.dst.id, member.link.id))
    rows = [row[:5] for row in rows_of(results[0])]
    assert rows == expected
    assert results[0].summary["routing"]["route_changes"] == len(rows)


def test_bellman_ford_logs_every_router_towards_the_flows_hosts():
    results = simulate(load_topology(ring("bellman-ford")))
    rows = initial_rows(results)
    assert {(r, d) for r, d, _ in rows} == {(f"R{i}", h) for i in range(6) for h in ("H0", "H2")}
    later = [t for t in results.routes["time_s"] if t > 0]
    assert results.summary["routing"]["route_changes"] == len(rows) + len(later)


def test_a_large_table_at_one_time_is_written_as_it_comes_with_the_same_bytes(tmp_path):
    # routes.csv at t = 0 can have millions of rows (every member of every equal-cost set of a
    # large fabric): rows given as text reach the file every TEXT_CHUNK_ROWS rows instead of all
    # at the end of their time, and read exactly as if written at once
    from netsim.traces import TEXT_CHUNK_ROWS, RouteLog
    log = RouteLog(tmp_path / "routes.csv")
    n = 2 * TEXT_CHUNK_ROWS + 5
    for i in range(n):
        log.append((0.0, f"r{i}", "h1", "r0", f"l{i}", 0.001))
    log.file._fh.flush()
    assert len((tmp_path / "routes.csv").read_text().splitlines()) == 1 + 2 * TEXT_CHUNK_ROWS
    log.append((0.5, "r0", "h1", "r1", "l0", 0.002))
    log.close()
    rows = (tmp_path / "routes.csv").read_text().splitlines()
    assert rows[0] == "time_s,router,destination,next_hop,link,cost_ms"
    assert rows[1:n + 1] == [f"0,r{i},h1,r0,l{i},1" for i in range(n)]
    assert rows[n + 1:] == ["0.5,r0,h1,r1,l0,2"] and len(log) == n + 1


def bellman_ford_ring():
    """The ring with Bellman-Ford rounds every 0.1 s for 3 s and two 2 MB flows: their queues
    move the costs, and routes.csv grows to about 400 rows."""
    data = ring("bellman-ford")
    data["routing"].update(update_interval_s=0.1, settle_s=0.02)
    data["duration_s"] = 3.0
    data["flows"][0]["data_mb"] = 2.0
    data["flows"].append({"id": "F2", "src": "H3", "dst": "H1", "data_mb": 2.0, "start_s": 0.2})
    return data


def test_routes_csv_stops_the_run_at_the_trace_row_bound(monkeypatch):
    """routes.csv is bounded as the other traces are: the run stops, with stop reason "limit",
    once the events of the instant it reached the bound are done; what was logged is whole."""
    import netsim.run
    free = simulate(load_topology(bellman_ford_ring()))
    rows = free.summary["routing"]["route_changes"]
    assert rows > 300 and free.summary["stop_reason"] == "duration"
    monkeypatch.setattr(netsim.run, "MAX_TRACE_ROWS", 200)
    # (sampled every second, the other traces stay far below 200 rows)
    results = simulate(load_topology(bellman_ford_ring()), interval_s=1.0)
    summary = results.summary
    assert summary["stop_reason"] == "limit"
    assert summary["stop_detail"].startswith(
        "stopped at a bound: routes.csv reached its limit of 200 rows (")
    logged = summary["routing"]["route_changes"]
    assert 200 <= logged < rows
    assert len(results.routes["time_s"]) == logged
    # the same rows as the free run's first ones: nothing cut inside an installation
    assert rows_of(results) == rows_of(free)[:logged]
    assert summary["end_time_s"] == max(rows_of(results))[0]


def test_tables_at_t0_past_the_bound_end_the_run_at_t0(monkeypatch):
    import netsim.run
    monkeypatch.setattr(netsim.run, "MAX_TRACE_ROWS", 5)
    results = simulate(load_topology(bellman_ford_ring()))
    assert results.summary["stop_reason"] == "limit" and results.summary["end_time_s"] == 0
    # every router towards H0, H1, H2 and H3
    assert len(initial_rows(results)) == 24 == results.summary["routing"]["route_changes"]


def test_a_run_stopped_at_t0_writes_its_results_and_empty_figures(tmp_path, monkeypatch, capsys):
    """The command line: the t = 0 tables past the bound end the run at t = 0, exit 0, with
    its results, figures with nothing drawn on a time axis from 0 (the layout took the
    minimum of no data and failed, exit 3), and a warning for each."""
    import json

    import netsim.run
    from netsim.cli import main
    monkeypatch.setattr(netsim.run, "MAX_TRACE_ROWS", 5)
    topology = tmp_path / "ring.json"
    topology.write_text(json.dumps(bellman_ford_ring()))
    out = tmp_path / "out"
    assert main([str(topology), "--out", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert ("routes.csv reached its limit of 5 rows (24 forwarding entries logged); log fewer"
            in err)
    assert "the run stopped at t = 0 s, before anything was sampled: its figures are empty" in err
    assert all((out / name).stat().st_size for name in ("links.png", "flows.png", "hosts.png"))
