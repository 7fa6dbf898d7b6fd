"""The optional compiled core: which modules run compiled, and a guard against a stale build.

`tools/compile_core.py` compiles the modules of the packet path and of the periodic statistics
(the sampler, the probes and the trace files) (`COMPILED_MODULES`) with mypyc into extension
modules next to their sources; the import system then prefers them to the .py files (CPython
only: PyPy and other interpreters look for their own extension suffix and keep running the
sources). Because a compiled module shadows its source, a source edited after the
build would silently not run: `check` (called when `simulator` is imported) refuses to go on if
a compiled module's source differs from the one it was built from (SHA-256 recorded in
`MANIFEST` by the build), or if a compiled module shadows a source that `COMPILED_MODULES` no
longer lists (left by a build of an earlier list: it would run as it was). Without compiled
modules it costs a few `stat` calls.
"""
from __future__ import annotations

import hashlib
import json
import os
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMPILED_MODULES = ("simulator.engine", "components.direction", "components.impairment",
                    "components.link", "components.node", "components.packet",
                    "flows.sender_view", "flows.sender", "flows.receiver", "flows.rtt",
                    "flows.scoreboard", "routing.static", "simulator.sampling",
                    "netsim.traces", "netsim.probes")
MANIFEST = ROOT / "compiled_core.json"       # {module: sha256 of the source it was built from}
PACKAGES = ("simulator", "components", "flows", "routing", "topologies", "theory", "plot_tool",
            "netsim")


def plain_mypyc_attr(*_args, **_flags):
    """`mypy_extensions.mypyc_attr` for plain Python: a class decorator that changes nothing.

    A compiled module's classes that Python code subclasses are declared
    ``@mypyc_attr(allow_interpreted_subclasses=True)``. The module imports `mypyc_attr` from
    mypy_extensions under `TYPE_CHECKING` (mypyc reads it there) and, at run time, takes this one
    with ``globals().setdefault("mypyc_attr", plain_mypyc_attr)``: a module-level `else:` branch
    would be compiled as unreachable, and the plain install (or Debian's pypy3) has no
    mypy_extensions to import."""
    return lambda cls: cls


class StaleBuildError(ImportError):
    """A compiled core module was built from a source that has changed since."""


def source_of(module: str) -> Path:
    return ROOT.joinpath(*module.split(".")).with_suffix(".py")


def extension_of(module: str) -> Path | None:
    """The extension module this interpreter would import instead of `module`'s source."""
    source = source_of(module)
    for suffix in EXTENSION_SUFFIXES:
        path = source.with_name(source.stem + suffix)
        if path.exists():
            return path
    return None


def shadowing_extensions() -> list:
    """Every extension module in the project's packages that shadows a source beside it (``x.py``
    and ``x`` + an extension suffix), whether `COMPILED_MODULES` lists it or not."""
    found = []
    for package in PACKAGES:
        try:
            names = set(os.listdir(ROOT / package))
        except OSError:
            continue
        for name in sorted(names):
            for suffix in EXTENSION_SUFFIXES:
                if name.endswith(suffix) and name[:-len(suffix)] + ".py" in names:
                    found.append(ROOT / package / name)
                    break
    return found


def compiled_modules() -> list:
    """The core modules this interpreter runs compiled."""
    return [m for m in COMPILED_MODULES if extension_of(m) is not None]


def source_digest(module: str) -> str:
    return hashlib.sha256(source_of(module).read_bytes()).hexdigest()


def check() -> None:
    """Raise `StaleBuildError` if a compiled module's source changed after the build, or a
    compiled module shadows a source the list no longer names."""
    built = compiled_modules()
    if not built:
        return
    try:
        recorded = json.loads(MANIFEST.read_text())
    except (OSError, ValueError):
        recorded = {}
    listed = {extension_of(module) for module in built}
    for path in shadowing_extensions():
        if path not in listed:
            raise StaleBuildError(
                f"{path} is a compiled module the current build does not list (left by a build "
                f"of an earlier list, it would run in place of its source): rebuild the core "
                f"(python tools/compile_core.py) or remove it (python tools/compile_core.py "
                f"--clean)")
    for module in built:
        if recorded.get(module) != source_digest(module):
            raise StaleBuildError(
                f"{extension_of(module)} was not built from the current {source_of(module)}: "
                f"rebuild it (python tools/compile_core.py) or remove the compiled core "
                f"(python tools/compile_core.py --clean)")
