"""What is not used is not imported: the command line and a run import no heavy third-party
module they do not use (numpy and matplotlib only to draw figures; plotly only for --report; tqdm
only for a progress bar on a terminal; networkx, dask, scipy, pandas never on the run path).
Each check runs in a fresh interpreter."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("networkx", "numpy", "matplotlib", "plotly", "dask", "distributed", "tqdm", "scipy",
         "pandas", "PIL", "dpkt", "hypothesis")


def modules_after(code: str, *args) -> set:
    """Top-level names of the modules imported by `code` (run with `args` in sys.argv[1:])."""
    script = (code + "\nimport json, sys\n"
              "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))")
    done = subprocess.run([sys.executable, "-c", script, *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_importing_the_command_line_or_the_api_imports_nothing_heavy():
    assert modules_after("import netsim.cli") & set(HEAVY) == set()
    assert modules_after("import netsim") & set(HEAVY) == set()


def test_the_api_is_imported_when_first_used():
    # importing the package (or netsim.command, where the command starts) imports no simulator:
    # a stale compiled core is then reported by the command, not by a traceback at import
    assert {"simulator", "topologies"} & modules_after("import netsim.command") == set()
    api = ("import netsim\n"
           "assert {'simulate', 'load_topology', 'TopologySpec'} <= set(dir(netsim))\n"
           "from netsim import simulate, TopologyError\n"
           "import netsim.run, topologies.loader\n"
           "assert simulate is netsim.run.simulate is netsim.simulate\n"
           "assert TopologyError is topologies.loader.TopologyError\n"
           "try:\n    netsim.no_such_name\nexcept AttributeError as exc:\n"
           "    assert str(exc) == \"module 'netsim' has no attribute 'no_such_name'\"\n"
           "else:\n    raise AssertionError('no AttributeError')")
    assert "simulator" in modules_after(api)


def test_a_run_without_figures_imports_nothing_heavy(tmp_path):
    """Test case 1 (Bellman-Ford routing) for a few seconds, with its summary table."""
    code = ("import sys\nfrom netsim.cli import main\n"
            "assert main([sys.argv[1], '--duration', '3', '--no-plots', '--out', sys.argv[2]]) == 0")
    modules = modules_after(code, ROOT / "topologies" / "test_case_1.json", tmp_path / "r")
    assert modules & set(HEAVY) == set()


# netsim's own modules a run uses only when its topology asks for them
OPTIONAL = {"routing.distance_vector": "Bellman-Ford", "routing.ecmp": "ECMP",
            "netsim.workloads": "workloads", "topologies.load_workloads": "workloads",
            "flows.cbr": "cbr/onoff flows", "flows.linux_sender": "the Linux stack",
            **{f"flows.{name}": name for name in ("tahoe", "reno", "newreno", "vegas", "cubic",
                                                   "bbr", "dctcp")}}


def own_modules_after(code: str, *args) -> set:
    script = (code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", script, *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_run_imports_only_the_parts_of_netsim_its_topology_uses(tmp_path):
    """Test case 0: static routing, one FAST flow, the classic stack, no workloads."""
    code = ("import sys\nfrom netsim.cli import main\n"
            "assert main([sys.argv[1], '--duration', '1', '--no-plots', '--quiet', '--out',\n"
            "             sys.argv[2]]) == 0")
    modules = own_modules_after(code, ROOT / "topologies" / "test_case_0.json", tmp_path / "r")
    assert "flows.fast" in modules and "routing.static" in modules
    assert {name: why for name, why in OPTIONAL.items() if name in modules} == {}


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_a_run_with_figures_imports_only_what_drawing_needs(tmp_path):
    code = ("import sys\nfrom netsim.cli import main\n"
            "assert main([sys.argv[1], '--quiet', '--out', sys.argv[2]]) == 0\n"
            "assert 'matplotlib.pyplot' not in sys.modules and 'plot_tool.report' not in "
            "sys.modules and 'plot_tool.sweep_figures' not in sys.modules")
    modules = modules_after(code, ROOT / "topologies" / "test_case_0.json", tmp_path / "r")
    assert modules & set(HEAVY) == {"numpy", "matplotlib", "PIL"}
    assert (tmp_path / "r" / "links.png").is_file()


def test_a_sweep_without_figures_imports_nothing_heavy(tmp_path):
    """Its plots are named in sweep.json, so the directory's figures are checked (a file of the
    user's is never replaced), with the standard library alone: under PyPy there is no numpy."""
    sweep = tmp_path / "s.json"
    sweep.write_text(json.dumps({
        "name": "s", "topology": "lossy_link", "duration_s": 0.5, "seeds": 1,
        "parameters": {"links.L1.delay_ms": [5]}, "metrics": ["flows.F1.goodput_mbps"],
        "plots": [{"file": "g.png", "x": "links.L1.delay_ms", "y": "flows.F1.goodput_mbps"}]}))
    code = ("import sys\nfrom netsim.cli import main\n"
            "for _ in range(2):\n"
            "    assert main(['sweep', sys.argv[1], '--no-plots', '--jobs', '1', '--quiet',\n"
            "                 '--out', sys.argv[2]]) == 0")
    (tmp_path / "out").mkdir()
    modules = modules_after(code, sweep, tmp_path / "out")
    assert modules & set(HEAVY) == set()
