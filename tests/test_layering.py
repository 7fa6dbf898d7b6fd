"""Dependencies point one way: simulator < components < flows, routing < topologies < theory <
plot_tool < netsim (flows and routing are siblings: neither imports the other), with no import
cycles between files.

Two views, both over every module of the eight packages:

* the imports written in the source, parsed with `ast` wherever they are (at the top of a module
  or lazily inside a function), except those under ``if TYPE_CHECKING:``, which never run;
  ``from package import name`` counts as importing ``package.name`` when that is a module of
  ours, else the package's ``__init__``. An import of a submodule is an edge to that file only
  (Python also runs the parents' ``__init__``, which is not a dependency of the importer's);
* each module imported alone in a fresh interpreter (one per package, ``sys.modules`` cleared of
  our modules before each import): it must import, and load only packages at or below its own.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RANK = {"simulator": 0, "components": 1, "flows": 2, "routing": 2, "topologies": 3, "theory": 4,
        "plot_tool": 5, "netsim": 6}
PACKAGES = tuple(RANK)


def module_files() -> dict:
    """Module name -> its file, for every module of the eight packages (not ``__main__``)."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__main__":
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


MODULES = module_files()


def _type_checking_nodes(tree: ast.AST) -> set:
    """The nodes inside ``if TYPE_CHECKING:`` blocks."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                for child in node.body:
                    skipped.update(ast.walk(child))
    return skipped


def _resolve(name: str) -> str | None:
    """The module of ours `name` is, or the closest enclosing one (None: not ours)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in MODULES:
            return candidate
        parts.pop()
    return None


def imports_of(module: str) -> list:
    """(line, imported module of ours) of every import in `module`'s source, lazy ones too."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skipped = _type_checking_nodes(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _resolve(alias.name)
                if target is not None:
                    found.append((node.lineno, target))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                target = _resolve(f"{base}.{alias.name}") or _resolve(base)
                if target is not None:
                    found.append((node.lineno, target))
    return found


def graph() -> dict:
    """Module -> {imported module: first line}, without self-edges."""
    edges: dict = {}
    for module in MODULES:
        targets = edges.setdefault(module, {})
        for line, target in imports_of(module):
            if target != module:
                targets.setdefault(target, line)
    return edges


def location(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(ROOT)}:{line}"


def test_every_import_points_down_the_package_order():
    wrong = []
    for module, targets in graph().items():
        package = module.split(".")[0]
        for target, line in targets.items():
            other = target.split(".")[0]
            if other != package and not RANK[other] < RANK[package]:
                wrong.append(f"{location(module, line)} imports {target}")
    assert wrong == []


def cycles(edges: dict) -> list:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    found = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_the_cycle_finder_finds_circles_and_only_them():
    assert cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b": 1}, "b": {}, "c": {"b": 1}}) == []


def test_no_import_cycles_between_files():
    edges = graph()
    described = []
    for component in cycles(edges):
        members = set(component)
        described.append(", ".join(
            f"{location(module, line)} imports {target}" for module in component
            for target, line in sorted(edges[module].items()) if target in members))
    assert described == []


IMPORT_EACH_ALONE = """
import importlib, json, sys, traceback
ours = tuple(sys.argv[1].split(","))
report = {}
for name in sys.argv[2:]:
    for loaded in [m for m in sys.modules if m.split(".")[0] in ours]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
        error = None
    except BaseException as exc:
        error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    report[name] = {"error": error,
                    "packages": sorted({m.split(".")[0] for m in sys.modules} & set(ours))}
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def imported_alone() -> dict:
    """Module -> {"error", "packages" it loaded}, each imported alone: one interpreter per
    package, whose modules are removed from `sys.modules` before each import. With a compiled
    core (tools/compile_core.py) each module gets an interpreter of its own: an extension module
    is initialized once per process, and mypyc's imports between the modules of one build look
    an initialized module up in `sys.modules`."""
    from simulator.compiled import compiled_modules
    if compiled_modules():
        groups = [[m] for m in MODULES]
    else:
        groups = [[m for m in MODULES if m.split(".")[0] == package] for package in PACKAGES]
    report = {}
    for names in groups:
        done = subprocess.run([sys.executable, "-c", IMPORT_EACH_ALONE, ",".join(PACKAGES),
                               *names], cwd=ROOT, capture_output=True, text=True, check=True,
                              env={"MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin"})
        report.update(json.loads(done.stdout))
    return report


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_every_module_imports_alone(imported_alone):
    assert {m: r["error"] for m, r in imported_alone.items() if r["error"]} == {}
    assert set(imported_alone) == set(MODULES)


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_a_module_alone_loads_only_packages_below_it(imported_alone):
    wrong = {}
    for module, result in imported_alone.items():
        package = module.split(".")[0]
        above = [p for p in result["packages"] if p != package and not RANK[p] < RANK[package]]
        if above:
            wrong[module] = above
    assert wrong == {}


def test_a_run_without_figures_or_check_imports_neither_numpy_nor_matplotlib(tmp_path):
    code = ("import sys; from netsim.cli import main; "
            "code = main([sys.argv[1], '--no-plots', '--quiet', '--out', sys.argv[2]]); "
            "print(code, sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'matplotlib'}))")
    done = subprocess.run([sys.executable, "-c", code, str(ROOT / "topologies" / "test_case_0.json"),
                           str(tmp_path / "r")], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "0 []"
