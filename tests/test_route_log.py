"""routes.csv at t = 0 (topologies.build.initial_route_entries): with static routing only the
entries on the flows' data and ACK paths, with Bellman-Ford every router's entry towards the
flows' hosts; then every change."""
from __future__ import annotations

from netsim import load_topology, simulate


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


def test_static_without_flows_logs_nothing_and_a_workload_logs_its_pairs():
    assert initial_rows(simulate(load_topology(ring(flows=[])))) == []
    workload = [{"id": "W", "src": ["H0"], "dst": ["H2", "H3"], "arrivals_per_s": 1,
                 "sizes": [[1000, 1.0]], "start_s": 0.5}]
    rows = initial_rows(simulate(load_topology(ring(flows=[], workloads=workload))))
    destinations = {(r, d) for r, d, _ in rows}
    # H0 -> H2 over R0 R1 R2, H0 -> H3 over R0 then R1 or R5 (a tie, first link in the file), back
    assert {("R0", "H2"), ("R1", "H2"), ("R2", "H2"), ("R0", "H3"), ("R3", "H3"),
            ("R0", "H0"), ("R2", "H0"), ("R3", "H0")} <= destinations
    assert all(d in {"H0", "H2", "H3"} for _, d in destinations)
    assert ("R4", "H2") not in destinations


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
