"""A sweep whose seeds cannot differ says so (issue 23): when no run drew a random number and no
ECMP hashing used the seed, every seed of a point repeats the same run."""
from __future__ import annotations

import csv
import json

from initializer import main
from netsim.sweep import load_sweep, run_sweep, seeds_warning
from netsim.sweep_store import RECORDS_DIR

DETERMINISTIC = {
    "name": "same", "topology": "test_case_0", "duration_s": 1.5,
    "parameters": {"links.L1.delay_ms": [5, 10]}, "seeds": 2,
    "metrics": ["flows.F1.goodput_mbps", "flows.F1.retransmissions"],
}
RANDOM_LOSS = dict(DETERMINISTIC, name="lossy",
                   parameters={"links.L1.impairments.H1->H2.loss_rate": [0.01]})


def write(tmp_path, data):
    path = tmp_path / f"{data['name']}.json"
    path.write_text(json.dumps(data))
    return path


def test_identical_seeds_are_reported_and_really_are_identical(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["sweep", str(write(tmp_path, DETERMINISTIC)), "--jobs", "1", "--no-plots",
                 "--quiet", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "warning: same: its 2 seeds per point gave identical runs" in err
    assert '"seeds": 1' in err
    with open(out / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for point in ("0", "1"):                       # the warning tells the truth
        seeds = [r for r in rows if r["point"] == point]
        assert len(seeds) == 2
        assert seeds[0]["flows.F1.goodput_mbps"] == seeds[1]["flows.F1.goodput_mbps"]


def test_random_loss_lets_seeds_differ_and_no_warning(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["sweep", str(write(tmp_path, RANDOM_LOSS)), "--jobs", "1", "--no-plots",
                 "--quiet", "--out", str(out)]) == 0
    assert "identical runs" not in capsys.readouterr().err
    records = [json.loads(p.read_text()) for p in (out / RECORDS_DIR).glob("*.json")]
    assert len(records) == 2 and all(r["seed_used"] is True for r in records)


def test_one_seed_or_an_old_record_gives_no_warning(tmp_path):
    one = load_sweep(write(tmp_path, dict(DETERMINISTIC, name="one", seeds=1)))
    run_sweep(one, tmp_path / "one", jobs=1)
    assert seeds_warning(one, tmp_path / "one") is None
    two = load_sweep(write(tmp_path, DETERMINISTIC))
    run_sweep(two, tmp_path / "two", jobs=1)
    assert seeds_warning(two, tmp_path / "two") is not None
    record_path = next((tmp_path / "two" / RECORDS_DIR).glob("*.json"))
    record = json.loads(record_path.read_text())
    del record["seed_used"]                        # a record written before the flag existed
    record_path.write_text(json.dumps(record))
    assert seeds_warning(two, tmp_path / "two") is None


def test_ecmp_uses_the_seed_only_where_it_made_an_equal_cost_set():
    """Flow hashing picks a set's member with the seed, without a random draw; ECMP on a
    network without equal costs (a dumbbell) forwards on single paths and leaves the seed
    unused, so its identical seeds are reported (they were counted as used)."""
    from netsim import load_topology
    from netsim.run import Run
    from netsim.sweep_execute import seed_used
    from topologies.generate import Common, dumbbell, fat_tree

    for routing in ("static", "bellman-ford"):
        common = Common(flows=4, data_mb=0.02, seed=1, ecmp="flow", routing=routing)
        fabric = Run(load_topology(fat_tree(4, common=common)))
        assert seed_used(fabric.execute()) is True, routing
        pairs = Run(load_topology(dumbbell(2, common=common)))
        assert seed_used(pairs.execute()) is False, routing


def test_an_ecmp_dumbbell_sweep_reports_its_identical_seeds(tmp_path, capsys):
    from topologies.generate import Common, dumbbell
    topology = tmp_path / "pairs.json"
    topology.write_text(json.dumps(dumbbell(2, common=Common(flows=2, data_mb=0.05, seed=1,
                                                             ecmp="flow"))))
    sweep = {"name": "db", "topology": str(topology), "duration_s": 1.0, "seeds": 2,
             "parameters": {"flows.F1.data_mb": [0.05]}, "metrics": ["flows.F1.goodput_mbps"]}
    out = tmp_path / "out"
    assert main(["sweep", str(write(tmp_path, sweep)), "--jobs", "1", "--no-plots", "--quiet",
                 "--out", str(out)]) == 0
    assert "warning: db: its 2 seeds per point gave identical runs" in capsys.readouterr().err
