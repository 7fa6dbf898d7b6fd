"""The collector after a run (simulator/garbage.py, called by netsim/cli.py): the console entry
point sets every object aside just before the program exits (`set_aside_for_exit`), so that the
interpreter's last full collection has nothing to traverse; `main` and `Run.execute` called
from Python leave nothing set aside, so a process running many simulations collects the networks
it drops."""
from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from netsim.cli import main
from netsim.run import Run
from topologies import load_topology

ROOT = Path(__file__).resolve().parent.parent

# run `entry` as the program does, and report, once it has decided to exit, how many objects
# the collector had set aside and the exit status
PROBE = """
import atexit, gc, sys
sys.argv = ["netsim", *sys.argv[1:]]
atexit.register(lambda: print("frozen", gc.get_freeze_count()))
from netsim.cli import entry
entry()
"""


def entry_exit(*args: str) -> tuple[int, int]:
    """(objects set aside when the program exits, exit status) of `entry` with `args`."""
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    frozen = [line for line in done.stdout.splitlines() if line.startswith("frozen ")]
    return int(frozen[-1].split()[1]), done.returncode


def test_the_program_sets_its_objects_aside_before_it_exits(tmp_path):
    frozen, status = entry_exit("topologies/test_case_0.json", "--duration", "1", "--no-plots",
                                "--quiet", "--out", str(tmp_path / "out"))
    assert status == 0 and frozen > 10_000
    assert (tmp_path / "out" / "summary.json").is_file()      # the results are written whole


def test_also_when_it_exits_with_an_error(tmp_path):
    frozen, status = entry_exit(str(tmp_path / "missing.json"), "--quiet")
    assert status == 2 and frozen > 1_000


def test_main_called_from_python_leaves_the_collector_alone(tmp_path, capsys):
    before = gc.get_freeze_count()
    assert main(["topologies/test_case_0.json", "--duration", "1", "--no-plots", "--quiet",
                 "--out", str(tmp_path / "out")]) == 0
    assert gc.get_freeze_count() == before


def test_runs_in_one_process_leave_nothing_set_aside():
    spec = load_topology(str(ROOT / "topologies" / "test_case_0.json"))
    before = gc.get_freeze_count()
    for _ in range(3):
        Run(spec, duration_s=1.0).execute()
        assert gc.get_freeze_count() == before
    gc.collect()
    tracked = len(gc.get_objects())
    Run(spec, duration_s=1.0).execute()
    gc.collect()
    assert len(gc.get_objects()) <= tracked + 50      # the dropped network was collected


# a notebook loop: many runs, each result dropped, and never a gc.collect() of its own
LOOP = """
import gc, sys, weakref
sys.path.insert(0, "tests")
from networks import dumbbell
from netsim import load_topology, simulate
spec = load_topology(dumbbell(20, rate_mbps=10.0, delay_ms=20.0, buffer_kb=55.0,
                              access_rate_mbps=100.0, access_buffer_kb=200.0, data_mb=0.1,
                              name="loop"))
networks = []
for seed in range(40):
    results = simulate(spec, duration_s=0.2, seed=seed)
    networks.append(weakref.ref(results.network))
    del results
print("alive", sum(ref() is not None for ref in networks), "full", gc.get_stats()[2]["collections"])
"""


def test_a_loop_of_runs_does_not_keep_the_networks_it_dropped():
    """`gc.unfreeze` hands a run back into the oldest generation without counting it towards a
    full collection: 100 dropped networks stayed alive (24 -> 144 MB). Now dropped runs stay
    only until they are a quarter of what is alive, CPython's own rule (simulator/garbage.py)."""
    done = subprocess.run([sys.executable, "-c", LOOP], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    alive, full = (int(word) for word in done.stdout.split()[1::2])
    assert alive <= 6 and full >= 5, done.stdout           # (without: 40 and 0)


def test_the_last_sample_runs_with_the_collector_paused_and_leaves_it_on(monkeypatch):
    """The sampler's `finish` allocates a row or a record per entity (a network's first sample,
    when the run stopped before it: 70 000 at 10 000 pairs) and no cycle: a collection started
    by those allocations would traverse the whole network (0.6 s of that run's 2.2 s)."""
    from simulator.sampling import Sampler
    seen = []
    finish = Sampler.finish

    def watched(self):
        seen.append(gc.isenabled())
        finish(self)

    monkeypatch.setattr(Sampler, "finish", watched)
    spec = load_topology(str(ROOT / "topologies" / "test_case_0.json"))
    enabled = gc.isenabled()
    Run(spec, duration_s=0.5).execute()
    assert seen == [False]
    assert gc.isenabled() == enabled


def test_stepping_one_loop_many_times_never_counts_the_heap(monkeypatch, make_flow):
    """The count behind the rule is taken once per run built, not per `sim.run`: counted in
    `take_back`, a caller stepping a loop 1 600 times walked the heap 1 600 times (a test took
    41 s instead of 0.02)."""
    counted = []
    real = gc.get_freeze_count
    monkeypatch.setattr(gc, "get_freeze_count", lambda: counted.append(1) or real())
    sim, _h1, _h2, _flow = make_flow(packets=200)
    for tick in range(1, 200):
        sim.run(until=tick * 0.005)
    assert counted == []
    spec = load_topology(str(ROOT / "topologies" / "test_case_0.json"))
    Run(spec, duration_s=0.1)                      # a run built after loops were handed back
    assert len(counted) == 1
    Run(spec, duration_s=0.1)                      # nothing handed back since: not counted
    assert len(counted) == 1
