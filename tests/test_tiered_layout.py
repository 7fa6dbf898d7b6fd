"""Tiers recognised from the structure (plot_tool.tiers) and the report's tiered network view."""
from __future__ import annotations

import json
import random
import re

import pytest

from plot_tool.tiers import natural_key, network_tiers, tiered_positions
from topologies.generate import dumbbell, fat_tree, leaf_spine, parking_lot


def summary_of(topology: dict, rename: dict | None = None) -> dict:
    """The parts of summary.json the tiers are read from, for a generated topology dict."""
    rename = rename or {}
    name = lambda n: rename.get(n, n)  # noqa: E731
    return {"hosts": {name(h): {} for h in topology["hosts"]},
            "routers": {name(r): {} for r in topology["routers"]},
            "links": {link["id"]: {"ends": [name(e) for e in link["ends"]]}
                      for link in topology["links"]}}


def test_k4_fat_tree_core_on_top_hosts_at_the_bottom():
    tiers = network_tiers(summary_of(fat_tree(4)))
    assert tiers is not None and tiers.names == ["host", "edge", "aggregation", "core"]
    assert [len(row) for row in tiers.order] == [16, 8, 8, 4]
    assert all(n.startswith("h_") for n in tiers.order[0])
    assert all(n.startswith("e_") for n in tiers.order[1])
    assert all(n.startswith("a_") for n in tiers.order[2])
    assert sorted(tiers.order[3]) == ["c_0_0", "c_0_1", "c_1_0", "c_1_1"]
    pos = tiered_positions(tiers)
    top = max(y for _, y in pos.values())
    assert all(pos[c][1] == top for c in tiers.order[3])
    assert all(pos[h][1] == 0.0 for h in tiers.order[0])
    # pods kept together: pod p's hosts, edge and aggregation switches are the p-th quarter
    for d in (0, 1, 2):
        pods = [int(re.search(r"_p(\d+)", n).group(1)) for n in tiers.order[d]]
        assert pods == sorted(pods)
    assert tiers.link_group("h_p0_e0_0", "e_p0_0") == "host\u2013edge"
    assert tiers.link_group("c_0_0", "a_p1_0") == "aggregation\u2013core"


def test_tiers_come_from_the_structure_not_the_names():
    """Renamed at random (no generated names): the same tiers, and the barycenter ordering keeps
    each pod's edge switches next to each other."""
    topology = fat_tree(4)
    nodes = topology["hosts"] + topology["routers"]
    shuffled = nodes[:]
    random.Random(7).shuffle(shuffled)
    rename = {old: f"n{i}" for i, old in enumerate(shuffled)}
    tiers = network_tiers(summary_of(topology, rename))
    assert tiers is not None
    back = {new: old for old, new in rename.items()}
    assert sorted(back[n][0] for n in tiers.order[3]) == ["c"] * 4
    assert sorted(back[n][0] for n in tiers.order[0]) == ["h"] * 16
    edge_pods = [back[n].split("_")[1] for n in tiers.order[1]]
    assert all(edge_pods[i] == edge_pods[i + 1] for i in (0, 2, 4, 6))   # pods in pairs
    agg_pods = [back[n].split("_")[1] for n in tiers.order[2]]
    assert all(agg_pods[i] == agg_pods[i + 1] for i in (0, 2, 4, 6))


def test_leaf_spine_has_three_tiers():
    tiers = network_tiers(summary_of(leaf_spine(4, 2, 4)))
    assert tiers is not None and tiers.names == ["host", "leaf", "spine"]
    assert [len(row) for row in tiers.order] == [16, 4, 2]
    assert tiers.order[2] == ["s_0", "s_1"]


@pytest.mark.parametrize("topology", [dumbbell(8), parking_lot(6), fat_tree(2)])
def test_not_tiered(topology):
    """Router-to-router links inside a tier (dumbbell, parking lot) or too small (a k=2 fat
    tree, 7 nodes): the spring drawing."""
    assert network_tiers(summary_of(topology)) is None


def test_natural_order():
    assert sorted(["e_p10_0", "e_p2_1", "e_p2_0"], key=natural_key) == \
        ["e_p2_0", "e_p2_1", "e_p10_0"]


def test_report_draws_a_generated_fat_tree_in_tiers(tmp_path):
    pytest.importorskip("networkx")
    from netsim.cli import main
    from plot_tool.report import run_data
    from plot_tool.results import read_results

    topology = tmp_path / "ft.json"
    assert main(["generate", "fat-tree", "--k", "4", "-o", str(topology)]) == 0
    out = tmp_path / "ft"
    assert main([str(topology), "--out", str(out), "--no-plots", "--quiet",
                 "--duration", "0.05"]) == 0
    data = run_data(read_results(out))
    assert data["tiers"] == ["host", "edge", "aggregation", "core"]
    y = {n["id"]: n["y"] for n in data["nodes"]}
    assert {n["tier"] for n in data["nodes"] if n["id"].startswith("c_")} == {3}
    assert min(y.values()) == 0.0 and all(y[h] == 0.0 for h in y if h.startswith("h_"))
    assert all(y[c] == max(y.values()) for c in y if c.startswith("c_"))


def test_report_keeps_the_spring_drawing_of_test_case_2(tmp_path, root):
    from netsim.cli import main
    from plot_tool.report import run_data
    from plot_tool.results import read_results

    out = tmp_path / "tc2"
    assert main([str(root / "topologies" / "test_case_2.json"), "--out", str(out), "--no-plots",
                 "--quiet", "--duration", "1"]) == 0
    data = run_data(read_results(out))
    assert data["tiers"] is None and all("tier" not in n for n in data["nodes"])


@pytest.mark.parametrize("ecmp, links", [("flow", 6), ("packet", 14), ("none", 6)])
def test_report_routes_of_an_inter_pod_flow(tmp_path, ecmp, links):
    """With flow hashing the route drawn is the one path the flow's hash picks (summary.json
    `path_links`); with packet spraying which member a packet took is not in the results, so
    it is every link of the equal-cost paths (k=4, inter-pod: 1 + 2 + 4 + 4 + 2 + 1 links, all
    four cores); without ECMP the single path of 6 links."""
    from netsim.cli import main
    from plot_tool.report import run_data
    from plot_tool.results import read_results

    topology = tmp_path / "ft.json"
    assert main(["generate", "fat-tree", "--k", "4", "--ecmp", ecmp, "-o", str(topology)]) == 0
    out = tmp_path / "ft"
    assert main([str(topology), "--out", str(out), "--no-plots", "--quiet",
                 "--duration", "0.05"]) == 0
    rs = read_results(out)
    data = run_data(rs)
    flows = {f["id"]: f for f in data["flows"]}
    inter = next(fid for fid, f in flows.items() if f["src"][:4] != f["dst"][:4])
    path = data["routes"][0]["paths"][inter]
    assert len(path) == links and path[0].startswith(flows[inter]["src"] + "-")
    cores = {end for lid in path for end in lid.split("-") if end.startswith("c_")}
    assert len(cores) == (4 if ecmp == "packet" else 1)
    assert (inter in data["routes"][0]["ecmp"]) == (ecmp == "packet")
    if ecmp == "flow":
        assert path == rs.summary["flows"][inter]["path_links"]
    assert not data["routes"][0]["broken"]


def test_a_damaged_path_links_is_not_drawn(tmp_path):
    """A summary.json whose `path_links` names no link of the run (edited, damaged) is not
    trusted: the routes are walked through routes.csv's tables instead."""
    from netsim.cli import main
    from plot_tool.report import run_data
    from plot_tool.results import read_results

    topology = tmp_path / "ft.json"
    assert main(["generate", "fat-tree", "--k", "4", "--ecmp", "flow", "-o", str(topology)]) == 0
    out = tmp_path / "ft"
    assert main([str(topology), "--out", str(out), "--no-plots", "--quiet",
                 "--duration", "0.05"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    fid = next(iter(summary["flows"]))
    summary["flows"][fid]["path_links"] = ["no-such-link"]
    (out / "summary.json").write_text(json.dumps(summary))
    routes = run_data(read_results(out))["routes"]
    assert all("no-such-link" not in path for change in routes
               for path in change["paths"].values())
    assert routes[0]["paths"][fid][0].startswith(summary["flows"][fid]["src"] + "-")


def test_with_flow_hashing_the_report_does_not_read_routes_csv(tmp_path):
    """Static routing with flow hashing: the flows' paths are summary.json's `path_links`, so
    the page is the same with routes.csv cut to its header (reading it cost 0.41 GB at k = 48)."""
    from netsim.cli import main
    from plot_tool.report import run_data
    from plot_tool.results import read_results

    topology = tmp_path / "ft.json"
    assert main(["generate", "fat-tree", "--k", "4", "--ecmp", "flow", "-o", str(topology)]) == 0
    out = tmp_path / "ft"
    assert main([str(topology), "--out", str(out), "--no-plots", "--quiet",
                 "--duration", "0.02"]) == 0
    whole = run_data(read_results(out))
    routes = out / "routes.csv"
    assert len(routes.read_text().splitlines()) > 20
    routes.write_text(routes.read_text().splitlines()[0] + "\n")
    assert run_data(read_results(out)) == whole
