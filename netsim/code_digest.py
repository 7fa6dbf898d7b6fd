"""The digest of the code that makes a run's results: a sweep's records carry it, and a resume
reuses a record only when it was made by the same code (docs/sweeps.md, "Resuming").

A configuration digest (`topologies.spec.config_digest`) says what was simulated, not by which
simulator: without this, a sweep resumed after the simulator changed (a fix pulled, a Dask
worker importing another checkout) gave back the numbers of the old code, with nothing to tell
them apart. The digest covers the source files of every package a run's record depends on
(`RESULT_PACKAGES`, all of netsim included, and the modules of plot_tool a run imports:
`RESULT_MODULES`; tests/test_sweep_code_digest.py checks that a run loads no module of the
project outside them), by their paths and bytes, and the plugin files the run loads; the
figures and the report are left out, since they do not change a record. It is computed once
per process (about 10 ms), before the run imports the simulator.
"""
from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the packages whose every module can change a run's record, and netsim's modules that do
RESULT_PACKAGES = ("simulator", "components", "flows", "routing", "topologies", "theory",
                   "netsim")
RESULT_MODULES = ("plot_tool/__init__.py", "plot_tool/schema.py", "plot_tool/results.py",
                  "plot_tool/json_fields.py")


@cache
def _sources_digest(root: Path) -> str:
    digest = hashlib.sha256()
    files = sorted(path for package in RESULT_PACKAGES for path in (root / package).rglob("*.py"))
    files += sorted(root / name for name in RESULT_MODULES)
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:           # (a module the installation lacks: counted as absent)
            data = b"\0absent"
        name = path.relative_to(root).as_posix().encode("utf-8")
        digest.update(len(name).to_bytes(4, "big") + name)
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def code_digest(plugins=()) -> str:
    """SHA-256 (hex) of the sources a run's results depend on, and of the plugin files
    `plugins` (paths) it loads: equal digests, the same code."""
    if not plugins:
        return _sources_digest(ROOT)
    digest = hashlib.sha256(_sources_digest(ROOT).encode("ascii"))
    for plugin in plugins:
        try:
            digest.update(hashlib.sha256(Path(plugin).read_bytes()).digest())
        except OSError:
            digest.update(b"\0absent")
    return digest.hexdigest()
