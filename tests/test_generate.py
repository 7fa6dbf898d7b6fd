"""Topology generators (topologies/generate.py) and `initializer.py generate` (netsim/generate_cli.py):
structure and names, the loader accepts every generated file, options reach the file, random
choices are reproducible from the seed, bad arguments are one line with exit status 2, and the
output file is never written over something that is not ours."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter, deque

import pytest

from netsim.generate_cli import generate_main
from topologies.generate import (
    Common,
    GenerateError,
    dumbbell,
    dumps,
    fat_tree,
    leaf_spine,
    parking_lot,
    random_graph,
)
from topologies.loader import load_topology


def degrees(topology: dict) -> Counter:
    return Counter(end for link in topology["links"] for end in link["ends"])


def neighbours(topology: dict) -> dict:
    out: dict = {}
    for link in topology["links"]:
        a, b = link["ends"]
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return out


def connected(topology: dict) -> bool:
    adjacency = neighbours(topology)
    start = topology["routers"][0]
    seen, queue = {start}, deque([start])
    while queue:
        for other in adjacency[queue.popleft()]:
            if other not in seen:
                seen.add(other)
                queue.append(other)
    return seen == set(topology["hosts"]) | set(topology["routers"])


def generate(capsys, *args):
    """(exit status, stdout, stderr lines) of `initializer.py generate ARGS` run in-process."""
    code = generate_main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err.splitlines()


# -- structure ------------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [2, 4, 6, 8])
def test_a_k_ary_fat_tree_has_the_counts_of_al_fares_et_al(k):
    t = fat_tree(k, common=Common(flows=0))
    routers = t["routers"]
    assert len(t["hosts"]) == k ** 3 // 4
    assert len([r for r in routers if r.startswith("e_")]) == k * k // 2
    assert len([r for r in routers if r.startswith("a_")]) == k * k // 2
    assert len([r for r in routers if r.startswith("c_")]) == k * k // 4
    assert len(routers) == 5 * k * k // 4
    assert len(t["links"]) == 3 * k ** 3 // 4
    degree = degrees(t)
    assert all(degree[h] == 1 for h in t["hosts"])
    assert all(degree[r] == k for r in routers)      # every switch uses its k ports
    assert connected(t)
    assert len({link["id"] for link in t["links"]}) == len(t["links"])


def test_fat_tree_names_show_pod_switch_and_host():
    t = fat_tree(4, common=Common(flows=0))
    adjacency = neighbours(t)
    assert adjacency["h_p3_e1_0"] == {"e_p3_1"}
    assert adjacency["e_p3_1"] == {"h_p3_e1_0", "h_p3_e1_1", "a_p3_0", "a_p3_1"}
    # core c_{a}_{j} joins aggregation switch a of every pod
    assert adjacency["c_1_0"] == {f"a_p{p}_1" for p in range(4)}
    assert adjacency["a_p2_0"] == {"e_p2_0", "e_p2_1", "c_0_0", "c_0_1"}
    ids = [link["id"] for link in t["links"]]
    assert ids[0] == "h_p0_e0_0-e_p0_0" and "e_p0_1-a_p0_0" in ids and "a_p0_1-c_1_0" in ids
    assert t["name"] == "fat_tree_k4"
    assert "k=4 fat tree" in t["description"] and "4 core switches" in t["description"]


def test_leaf_spine_is_a_full_mesh_with_the_oversubscription_of_its_rates():
    t = leaf_spine(4, 2, 16, host_rate_mbps=10_000, fabric_rate_mbps=40_000,
                   common=Common(flows=0))
    assert len(t["hosts"]) == 64 and t["routers"] == ["l_0", "l_1", "l_2", "l_3", "s_0", "s_1"]
    adjacency = neighbours(t)
    assert all(adjacency[f"s_{s}"] == {f"l_{i}" for i in range(4)} for s in range(2))
    assert adjacency["h_l2_15"] == {"l_2"}
    assert len(t["links"]) == 64 + 8
    rates = {link["id"]: link["rate_mbps"] for link in t["links"]}
    assert rates["h_l0_0-l_0"] == 10_000 and rates["l_3-s_1"] == 40_000
    assert "oversubscription 2:1" in t["description"]          # 16 x 10 / (2 x 40)
    assert "oversubscription 1:1" in leaf_spine(common=Common(flows=0))["description"]


@pytest.mark.parametrize("shipped, topology", [
    ("dumbbell", dumbbell()), ("parking_lot", parking_lot())])
def test_the_defaults_of_dumbbell_and_parking_lot_give_the_shipped_files(root, shipped, topology):
    data = json.loads((root / "topologies" / f"{shipped}.json").read_text())
    for key in ("units", "duplex", "packet_bytes", "routing", "transport", "seed", "duration_s",
                "hosts", "routers", "links", "flows"):
        assert topology[key] == data[key], key


def test_dumbbell_and_parking_lot_spread_extra_flows_over_their_paths():
    t = dumbbell(3, common=Common(flows=7, data_mb=1.0))
    assert [(f["id"], f["src"], f["dst"]) for f in t["flows"]][::3] == [
        ("F1", "S1", "T1"), ("F4", "S1", "T1"), ("F7", "S1", "T1")]
    assert Counter(f["src"] for f in t["flows"]) == {"S1": 3, "S2": 2, "S3": 2}
    t = parking_lot(2, common=Common(flows=4, data_mb=1.0))
    assert [(f["id"], f["src"], f["dst"]) for f in t["flows"]] == [
        ("F0", "S0", "T0"), ("F1", "S1", "T1"), ("F2", "S2", "T2"), ("F3", "S0", "T0")]
    assert neighbours(t)["R2"] == {"R1", "R3", "T1", "S2"}


def test_dumbbell_buffer_defaults_to_one_bandwidth_delay_product():
    t = dumbbell(2, rate_mbps=100, delay_ms=10, access_delay_ms=0.5)
    assert t["links"][0]["buffer_kb"] == 100 * 22 / 8        # 100 Mb/s x 22 ms RTT = 275 kB


def test_random_graph_is_connected_with_the_mean_degree_asked():
    t = random_graph(300, degree=4, hosts=30, common=Common(flows=5))
    router_links = [link for link in t["links"] if not link["ends"][0].startswith("h")]
    assert len(router_links) == 600
    pairs = {frozenset(link["ends"]) for link in router_links}
    assert len(pairs) == 600 and all(len(p) == 2 for p in pairs)   # no parallel links, no loops
    assert connected(t)
    assert all(degrees(t)[h] == 1 for h in t["hosts"])
    assert t == random_graph(300, degree=4, hosts=30, common=Common(flows=5))
    assert t["links"] != random_graph(300, degree=4, hosts=30, common=Common(flows=5, seed=2))["links"]


# -- flows ----------------------------------------------------------------------------------------

def test_random_flows_are_reproducible_from_the_seed_and_join_distinct_hosts():
    one = fat_tree(8, common=Common(flows=64, seed=7, start_spread_s=0.5))
    assert dumps(one) == dumps(fat_tree(8, common=Common(flows=64, seed=7, start_spread_s=0.5)))
    other = fat_tree(8, common=Common(flows=64, seed=8, start_spread_s=0.5))
    assert [(f["src"], f["dst"]) for f in one["flows"]] != [(f["src"], f["dst"]) for f in other["flows"]]
    assert all(f["src"] != f["dst"] for f in one["flows"])
    assert all(0 <= f["start_s"] < 0.5 for f in one["flows"])
    assert len({f["start_s"] for f in one["flows"]}) == 64
    assert len({f["src"] for f in one["flows"]}) > 32          # drawn over the hosts, not a few


def test_a_permutation_sends_from_and_to_every_host_once():
    t = leaf_spine(3, 2, 4, common=Common(pattern="permutation", flows=12))
    assert sorted(f["src"] for f in t["flows"]) == sorted(t["hosts"])
    assert sorted(f["dst"] for f in t["flows"]) == sorted(t["hosts"])
    assert all(f["src"] != f["dst"] for f in t["flows"])


def test_flow_options_reach_every_flow():
    t = fat_tree(4, common=Common(flows=3, data_mb=None, duration_s=2, algorithm="dctcp",
                                  start_s=1.5, routing="bellman-ford", min_rto_ms=10,
                                  mark_k_kb=30))
    assert all("data_mb" not in f and f["ecn"] is True and f["algorithm"] == "dctcp"
               and f["start_s"] == 1.5 for f in t["flows"])
    assert t["duration_s"] == 2 and t["routing"] == {"protocol": "bellman-ford"}
    assert t["transport"] == {"initial_cwnd_pkts": 10, "min_rto_s": 0.01}
    assert all(link["queue"] == {"discipline": "step", "k_kb": 30} for link in t["links"])
    spec = load_topology(t)
    assert all(flow.ecn for flow in spec.flows)
    assert fat_tree(4, common=Common(flows=0))["flows"] == []
    assert len(fat_tree(4)["flows"]) == 8                       # default: hosts / 2


@pytest.mark.parametrize("build", [
    lambda: fat_tree(4), lambda: fat_tree(6, common=Common(pattern="permutation")),
    lambda: leaf_spine(), lambda: leaf_spine(2, 3, 5, common=Common(routing="bellman-ford")),
    lambda: dumbbell(16, common=Common(flows=40)), lambda: parking_lot(5),
    lambda: random_graph(50, degree=3, hosts=6, common=Common(flows=4, start_spread_s=2)),
], ids=["fat-tree-4", "fat-tree-6", "leaf-spine", "leaf-spine-bf", "dumbbell", "parking-lot",
        "random"])
def test_every_generated_file_loads(tmp_path, build):
    topology = build()
    path = tmp_path / "t.json"
    path.write_text(dumps(topology))
    spec = load_topology(path)
    assert json.loads(path.read_text()) == topology
    assert len(spec.links) == len(topology["links"]) and len(spec.flows) == len(topology["flows"])
    lines = path.read_text().splitlines()
    assert max(len(line) for line in lines if '"description"' not in line) < 200   # readable


# -- the command line ---------------------------------------------------------------------------

def test_the_command_writes_a_file_that_runs(tmp_path, capsys, run_cli):
    target = tmp_path / "ft.json"
    code, out, err = generate(capsys, "fat-tree", "--k", 4, "--flows", 3, "--flow-mb", 0.05,
                              "--host-rate-mbps", 100, "--seed", 3, "-o", target)
    assert (code, err) == (0, [])
    assert out == f"{target}: 16 hosts, 20 routers, 48 links, 3 flows\n"
    data = json.loads(target.read_text())
    assert data["name"] == "ft"                                 # the file's name
    assert data["links"][0]["rate_mbps"] == 100 and data["links"][-1]["rate_mbps"] == 1000
    assert data["description"].endswith("Generated by: python initializer.py generate fat-tree "
                                        "--k 4 --flows 3 --flow-mb 0.05 --host-rate-mbps 100 "
                                        "--seed 3")
    done = run_cli(target, "--no-plots", "--quiet", "--out", tmp_path / "results")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "results" / "summary.json").read_text())
    assert all(flow["completed"] for flow in summary["flows"].values())


def test_without_o_the_topology_goes_to_standard_output(capsys):
    code, out, err = generate(capsys, "parking-lot", "--hops", 2, "--name", "pl")
    assert (code, err) == (0, [])
    data = json.loads(out)
    assert data["name"] == "pl" and data["routers"] == ["R1", "R2", "R3"]
    code, out2, _ = generate(capsys, "parking-lot", "--hops", 2, "--name", "pl")
    assert out2 == out


def test_every_option_is_in_the_help_with_its_default(capsys):
    for kind in ("fat-tree", "leaf-spine", "dumbbell", "parking-lot", "random"):
        with pytest.raises(SystemExit) as stop:
            generate_main([kind, "--help"])
        assert stop.value.code == 0
        text = capsys.readouterr().out
        for option in ("--flows", "--flow-mb", "--algorithm", "--routing", "--seed",
                       "--duration", "--buffer-kb", "--out", "--force"):
            assert option in text, (kind, option)
        assert text.count("(default") >= 15, kind
    with pytest.raises(SystemExit):
        generate_main(["--help"])
    text = capsys.readouterr().out
    for option in ("--k", "--leaves", "--spines", "--hosts-per-leaf", "--pairs", "--hops",
                   "--host-rate-mbps", "--fabric-rate-mbps", "--delay-us", "--access-rate-mbps",
                   "--routers", "--degree", "--mark-k-kb", "--start-spread-s", "--pattern"):
        assert option in text, option


@pytest.mark.parametrize("args, message", [
    (["fat-tree", "--k", "5"], "generate fat-tree: --k: expected an even integer >= 2 (switch "
                               "ports), got 5"),
    (["fat-tree", "--k", "0"], "generate fat-tree: --k: expected an even integer >= 2"),
    (["fat-tree", "--k", "four"], "argument --k: invalid int value: 'four'"),
    (["fat-tree", "--flows", "-1"], "--flows: expected an integer >= 0"),
    (["fat-tree", "--host-rate-mbps", "0"], "--host-rate-mbps: expected a positive number, got 0.0"),
    (["leaf-spine", "--spines", "0"], "--spines: expected an integer >= 1, got 0"),
    (["dumbbell", "--long-lived"], "--long-lived: flows without a size send until the run ends; "
                                   "give --duration S"),
    (["dumbbell", "--algorithm", "rneo"], '--algorithm: unknown algorithm "rneo" (did you mean '
                                          '"reno"?)'),
    (["dumbbell", "--mark-k-kb", "60"], "--mark-k-kb: expected a threshold below every link's "
                                        "buffer (the smallest is 55 kB), got 60"),
    (["parking-lot", "--hops", "0"], "--hops: expected an integer >= 1, got 0"),
    (["random", "--routers", "4", "--degree", "5"], "--degree: at most 3 with 4 routers"),
    (["random", "--routers", "10", "--degree", "1e308"], "--degree: at most 9 with 10 routers, "
                                                         "got 1e+308"),
    (["fat-tree", "--k", "200"], "the topology would have 6000000 links; at most 300000"),
    (["ring"], "argument KIND: invalid choice: 'ring'"),
    (["fat-tree", "--name", "a/b"], 'field "name": expected a plain file name'),
])
def test_bad_arguments_are_one_line_and_exit_2(capsys, args, message):
    code, out, err = generate(capsys, *args)
    assert code == 2 and out == ""
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0], err


@pytest.mark.parametrize("args", [["fat-tree", "--name", "a/b"],          # the loader's error
                                  ["fat-tree", "--k", "4", "--delay-us", "1e308"],
                                  ["fat-tree", "--k", "5"]])                # the generator's
def test_an_error_names_the_generator_once(capsys, args):
    code, _, err = generate(capsys, *args)
    assert code == 2 and len(err) == 1
    assert err[0].startswith("error: generate fat-tree: ") and err[0].count("generate") == 1, err


def test_an_existing_file_is_replaced_only_with_force(tmp_path, capsys):
    target = tmp_path / "t.json"
    target.write_text("mine")
    code, _, err = generate(capsys, "dumbbell", "-o", target)
    assert code == 2 and err == [f"error: -o {target}: exists; pass --force to replace it"]
    assert target.read_text() == "mine"
    code, _, err = generate(capsys, "dumbbell", "-o", target, "--force")
    assert (code, err) == (0, [])
    assert json.loads(target.read_text())["name"] == "t"
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]   # no temporary file left


def test_never_through_a_symlink_nor_onto_a_non_regular_file(tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "link.json"
    link.symlink_to(victim)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for target, why in ((link, "is a symbolic link; refusing to write through it"),
                        (fifo, "exists and is not a regular file"),
                        (tmp_path, "exists and is not a regular file")):
        code, _, err = generate(capsys, "dumbbell", "-o", target, "--force")
        assert code == 2 and err == [f"error: -o {target}: {why}"]
    assert victim.read_text() == "precious" and link.is_symlink()
    code, _, err = generate(capsys, "dumbbell", "-o", tmp_path / "nowhere" / "t.json")
    assert code == 2 and "no such directory" in err[0]


def test_generator_errors_are_generate_errors():
    with pytest.raises(GenerateError, match="--pairs: expected an integer >= 1"):
        dumbbell(0)
    with pytest.raises(GenerateError, match="--pattern"):
        fat_tree(4, common=Common(pattern="stride"))
    with pytest.raises(GenerateError, match="--ecmp: expected flow, packet or none, got 'hash'"):
        fat_tree(4, common=Common(ecmp="hash"))


def test_ecmp_none_in_python_is_what_the_command_line_calls_it():
    """The error listed "none" among the values and refused it ("got 'none'")."""
    assert fat_tree(4, common=Common(ecmp="none")) == fat_tree(4, common=Common(ecmp=None))
    assert "ecmp" not in fat_tree(4, common=Common(ecmp="none"))["routing"]


def test_the_generators_import_nothing_above_the_topologies_layer(root):
    code = ("import sys, json; import topologies.generate; print(json.dumps(sorted({m.split('.')[0] "
            "for m in sys.modules} & {'netsim', 'theory', 'plot_tool', 'numpy', 'networkx'})))")
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                          check=True)
    assert json.loads(done.stdout) == []


def test_the_main_command_dispatches_generate(run_cli, tmp_path):
    done = run_cli("generate", "leaf-spine", "--leaves", "2", "--spines", "1",
                   "--hosts-per-leaf", "2", "-o", tmp_path / "ls.json")
    assert done.returncode == 0 and done.stderr == ""
    assert load_topology(tmp_path / "ls.json").name == "ls"
    done = run_cli("generate", "fat-tree", "--k", "3")
    assert done.returncode == 2 and done.stderr.count("\n") == 1


def test_never_into_a_results_directory(tmp_path, capsys):
    from netsim.run import simulate
    results = tmp_path / "results"
    simulate(load_topology(dumbbell()), duration_s=0.1).write(results)
    before = sorted(p.name for p in results.iterdir())
    code, _, err = generate(capsys, "dumbbell", "-o", results / "t.json")
    assert code == 2 and len(err) == 1
    assert err[0].startswith(f"error: -o {results / 't.json'}: is inside the netsim results directory")
    assert sorted(p.name for p in results.iterdir()) == before
