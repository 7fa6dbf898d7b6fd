#!/usr/bin/env python3
"""Build, remove or inspect the optional compiled core (mypyc), in place.

    python tools/compile_core.py            # compile the core (needs mypy and a C compiler)
    python tools/compile_core.py --clean    # remove the compiled modules: pure Python again
    python tools/compile_core.py --status   # which modules are compiled, and whether up to date

The modules of the packet path and of the periodic statistics
(`simulator.compiled.COMPILED_MODULES`: the event loop, links, nodes, packets, the transport's
sender, receiver, RTT estimator and SACK scoreboard, the static routes' searches, and the
statistics sampler, its probes and the trace files it writes) are compiled with mypyc into
extension modules next to their sources, which CPython then imports instead of the .py files;
every run gives the same events and figures (tests/test_identity.py), about twice as fast per
event (bench/README.md). Nothing else changes:
`pip install -e .` never compiles, PyPy ignores the CPython extensions, and the build records
the SHA-256 of each source so that importing `simulator` refuses a stale build
(simulator/compiled.py). Rebuild after editing one of those modules, or --clean.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _compiled_module():
    """simulator/compiled.py, loaded by path: importing the `simulator` package would refuse a
    stale build, which is what this script repairs."""
    spec = importlib.util.spec_from_file_location("_netsim_compiled", ROOT / "simulator" / "compiled.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_core = _compiled_module()
COMPILED_MODULES, MANIFEST = _core.COMPILED_MODULES, _core.MANIFEST
extension_of, source_digest, source_of = _core.extension_of, _core.source_digest, _core.source_of


def build() -> int:
    try:
        from mypyc.build import mypycify
        from setuptools import setup
    except ImportError as exc:
        print(f"compile_core: cannot build: {exc} (pip install mypy setuptools)", file=sys.stderr)
        return 2
    clean(quiet=True)
    sources = [str(source_of(m).relative_to(ROOT)) for m in COMPILED_MODULES]
    os.chdir(ROOT)
    with tempfile.TemporaryDirectory(prefix="netsim-mypyc-") as tmp:
        try:
            setup(name="netsim-compiled-core", ext_modules=mypycify(sources, target_dir=tmp),
                  script_args=["--quiet", "build_ext", "--inplace", "--build-temp", tmp])
        except SystemExit as exc:                      # setuptools reports failures this way
            print(f"compile_core: the build failed ({exc}); the core stays pure Python",
                  file=sys.stderr)
            clean(quiet=True)
            return 1
    MANIFEST.write_text(json.dumps({m: source_digest(m) for m in COMPILED_MODULES}, indent=1)
                        + "\n")
    return status()


def clean(quiet: bool = False) -> int:
    """Remove the compiled modules: every extension module beside a source of the packages
    (those of an earlier list of modules too), mypyc's shared library and the manifest."""
    removed = _core.shadowing_extensions()
    removed += list(ROOT.glob("*__mypyc.*.so"))
    if MANIFEST.exists():
        removed.append(MANIFEST)
    for path in removed:
        path.unlink()
    if not quiet:
        print(f"removed {len(removed)} files: the core is pure Python")
    return 0


def status() -> int:
    try:
        recorded = json.loads(MANIFEST.read_text())
    except (OSError, ValueError):
        recorded = {}
    for module in COMPILED_MODULES:
        ext = extension_of(module)
        if ext is None:
            state = "pure Python"
        elif recorded.get(module) == source_digest(module):
            state = f"compiled ({ext.name})"
        else:
            state = "STALE: the source changed after the build"
        print(f"{module:<20} {state}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--clean", action="store_true", help="remove the compiled modules")
    group.add_argument("--status", action="store_true", help="show what is compiled")
    args = parser.parse_args(argv)
    if args.clean:
        return clean()
    if args.status:
        return status()
    return build()


if __name__ == "__main__":
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:           # the reader went away (`--status | head`): quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)
