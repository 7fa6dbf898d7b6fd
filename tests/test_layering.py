"""Dependencies point one way: simulator <- components <- flows, routing <- topologies <- theory,
netsim (the application); plot_tool reads results and uses only the response functions of
theory. Each package is imported alone in a fresh interpreter and its imports are listed."""
from __future__ import annotations

from pathlib import Path

import json
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parent.parent


OURS = ("simulator", "components", "flows", "routing", "topologies", "theory", "netsim",
        "plot_tool")
ALLOWED = {
    "simulator": {"simulator"},
    "components": {"simulator", "components"},
    "flows": {"simulator", "components", "flows"},
    "routing": {"simulator", "components", "routing"},
    "topologies": {"simulator", "components", "flows", "routing", "topologies"},
    "theory": {"simulator", "components", "flows", "routing", "topologies", "theory"},
    "plot_tool": {"plot_tool", "theory"},
}


def imported_by(package: str) -> dict:
    code = ("import importlib, json, sys; importlib.import_module(sys.argv[1]); "
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in sys.argv[2:])))")
    done = subprocess.run([sys.executable, "-c", code, package, *OURS], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_a_package_imports_only_what_is_below_it(package):
    modules = imported_by(package)
    tops = {m.split(".")[0] for m in modules}
    assert tops <= ALLOWED[package], sorted(tops - ALLOWED[package])


def test_plot_tool_uses_only_the_response_functions_of_theory():
    import_all = "plot_tool.sweep_figures"
    theory = [m for m in imported_by(import_all) if m.split(".")[0] == "theory"]
    assert set(theory) <= {"theory", "theory.response"}


def test_the_topology_format_does_not_import_the_application():
    modules = imported_by("topologies")
    assert not [m for m in modules if m.split(".")[0] in ("netsim", "theory", "plot_tool")]


def test_a_run_without_figures_or_check_imports_neither_numpy_nor_matplotlib(tmp_path):
    code = ("import sys; from netsim.cli import main; "
            "code = main([sys.argv[1], '--no-plots', '--quiet', '--out', sys.argv[2]]); "
            "print(code, sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'matplotlib'}))")
    done = subprocess.run([sys.executable, "-c", code, str(ROOT / "topologies" / "test_case_0.json"),
                           str(tmp_path / "r")], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "0 []"
