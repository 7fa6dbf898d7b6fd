"""The benchmark scripts of bench/ import: each is loaded as a module (its `main` is not run), so
a helper moved elsewhere in the tree shows here rather than as a traceback when someone runs the
benchmark the README quotes."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
SCRIPTS = sorted(BENCH.glob("*.py"))


def test_every_script_is_listed():
    assert {p.name for p in SCRIPTS} >= {"bench_aqm.py", "bench_core.py", "bench_scale.py",
                                         "identity.py"}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_the_script_imports(script, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))      # the scripts prepend their folders
    spec = importlib.util.spec_from_file_location(f"bench_script_{script.stem}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(getattr(module, "main", None))
