"""What the command's parsers share: exit statuses, usage errors, the program name and the
options written once for a run and a sweep (`add_shared_options`), and the checks of option
values that need neither a run nor a topology loaded.

The parsers themselves stay with their commands (`netsim.cli` for a run, `netsim.sweep_cli`,
`netsim.convert`, `netsim.generate_cli`); none of them imports another.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

EXIT_OK = 0
EXIT_CHECK_FAILED = 1          # --check-tolerance exceeded (a run), or runs failed (a sweep)
EXIT_RUNS_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_FIGURES_FAILED = 3       # the run is written, but drawing its figures failed (a bug)
EXIT_INTERRUPTED = 130         # 128 + SIGINT, as shells report it (SIGTERM: 143)

INSTALL_HINT = "pip install -e '.[{extra}]' in the netsim checkout"   # not PyPI's unrelated netsim
NUMPY_REMEDY = "run it under CPython, or install numpy for this Python"


def figures_remedy(redraw: str) -> str:
    """What to do when the figures' modules are missing: under PyPy, whose netsim cannot be
    pip-installed (Python 3.11 is required), draw them afterwards under CPython (`redraw`);
    elsewhere, install them."""
    if sys.implementation.name == "pypy":
        return f"pass --no-plots, and draw them under CPython afterwards ({redraw})"
    return "pass --no-plots, or install them (pip install -e . in the checkout)"


class UsageError(Exception):
    """A command-line value that cannot be used (one line, exit status 2)."""


def version() -> str:
    from netsim.version import __version__
    return __version__


def program_name() -> str:
    """The name the program was started by, for usage lines: initializer.py, else netsim (the
    installed command, python -m netsim)."""
    started = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return "initializer.py" if started == "initializer.py" else "netsim"


# What differs between a run's and a sweep's wording of the shared options.
_SHARED_WORDING = {
    "run": {
        "out": "results directory (default results/<name>/)",
        "no-plots": "do not draw figures",
        "report": "also write report.html, an interactive page of the run",
        "quiet": "print nothing but errors (no progress bar, no summary table)",
        "plugin": " (repeatable; docs/algorithms.md, \"Write your own\")",
    },
    "sweep": {
        "out": "results directory (default results/sweeps/<name>/)",
        "no-plots": "do not draw the sweep's figures",
        "report": "also write report.html: the sweep's figures as interactive charts and the "
                  "table of runs",
        "quiet": "print nothing but errors",
        "plugin": ", here and in every worker (repeatable; a sweep file's \"plugins\" only names "
                  "the files it needs: code runs only from the command line)",
    },
}


def add_shared_options(parser: argparse.ArgumentParser, command: str) -> None:
    """The six options a run (`command` "run") and a sweep ("sweep") both take: --out,
    --no-plots, --show, --report, --quiet and --plugin."""
    words = _SHARED_WORDING[command]
    parser.add_argument("--out", metavar="DIR", help=words["out"])
    parser.add_argument("--no-plots", action="store_true", help=words["no-plots"])
    parser.add_argument("--show", action="store_true", help="open the figures interactively")
    parser.add_argument("--report", action="store_true",
                        help=words["report"] + " (needs plotly and networkx: "
                        + INSTALL_HINT.format(extra="report") + ")")
    parser.add_argument("--quiet", action="store_true", help=words["quiet"])
    parser.add_argument("--plugin", action="append", default=[], metavar="FILE.py",
                        help="load the congestion-control algorithms this Python file defines"
                             + words["plugin"])


def option_error_line(prog: str, message: str) -> str:
    """The one line of an argparse error (an unknown option, a value of the wrong type or not
    among the choices, a missing argument): ``error: PROG: MESSAGE (PROG --help lists the
    options)``, argparse's own first words without its usage block. What the user typed is
    shown on one line (an unknown argument is quoted by argparse as typed)."""
    from topologies.validation import one_line
    return f"error: {prog}: {one_line(message)} ({prog} --help lists the options)"


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors (an unknown option, a value of the wrong type or not among
    the choices, a missing argument) are one line naming the option, with a pointer to --help,
    and exit status 2: never argparse's usage block (`option_error_line`). Subparsers made with
    ``add_subparsers`` are of the same class."""

    def error(self, message):
        self.exit(EXIT_BAD_INPUT, option_error_line(self.prog, message) + "\n")


def importable(name: str) -> bool:
    """Whether this Python can import the module `name`, without importing it: a module set to
    None in sys.modules (a blocked import) or one a finder refuses to find is not."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):     # (a finder that raises; a module without __spec__)
        return False


REPORT_MODULES = ("plotly", "networkx")     # the report extra: the page, the network's layout


def report_available(option: str = "--report") -> None:
    """UsageError unless the report extra's modules (`REPORT_MODULES`) and numpy, which the
    report's data needs, are installed; does not import them."""
    extra_available(f"{option}: the interactive report", REPORT_MODULES, "report", pip=True)
    modules_available(f"{option}: the interactive report", ("numpy",), NUMPY_REMEDY)


def modules_available(what: str, modules: tuple, remedy: str) -> None:
    """UsageError unless every one of `modules` can be imported by this Python (checked before
    anything is simulated, so that a run is never lost to a missing module after it: Debian's
    PyPy has neither numpy nor matplotlib); does not import them."""
    missing = [name for name in modules if not importable(name)]
    if missing:
        python = f"{sys.implementation.name} {sys.version.split()[0]}"
        raise UsageError(f"{what} needs{'' if len(missing) == 1 else ' both'} "
                         f"{' and '.join(missing)}, which this Python ({python}) does not have: "
                         f"{remedy}")


def cluster_available() -> None:
    """UsageError unless dask and distributed (the cluster extra, for --scheduler) are
    installed; does not import them."""
    extra_available("--scheduler: running on a Dask cluster", ("dask", "distributed"), "cluster")


def extra_available(what: str, modules: tuple, extra: str, pip: bool = False) -> None:
    """UsageError unless every one of `modules` (those of the extra `extra`) can be imported:
    "WHAT needs A and B; install them with INSTALL_HINT", then, with `pip`, "(or pip install A
    B)"; does not import them."""
    missing = [name for name in modules if not importable(name)]
    if missing:
        raise UsageError(f"{what} needs {' and '.join(missing)}; install "
                         f"{'it' if len(missing) == 1 else 'them'} with "
                         f"{INSTALL_HINT.format(extra=extra)}"
                         + (f" (or pip install {' '.join(missing)})" if pip else ""))


def pcap_available() -> None:
    """UsageError unless dpkt (the pcap extra) is installed; does not import it."""
    if not importable("dpkt"):
        raise UsageError(f"--pcap: packet captures need dpkt; install it with "
                         f"{INSTALL_HINT.format(extra='pcap')} (or pip install dpkt)")


def load_algorithm_plugins(paths) -> None:
    """Register installed packages' algorithms and those of the --plugin files (UsageError)."""
    from netsim.plugins import PluginError, load_entry_points, load_plugins
    try:
        load_entry_points()
        load_plugins(paths)
    except PluginError as exc:
        raise UsageError(str(exc)) from None


def shipped_topology(name: str) -> str:
    """`name` itself when it is a file that exists, else the shipped topology file of that name
    (`topologies.shipped.shipped_file`: ``netsim test_case_0`` from any directory), else `name`
    (the loader then says why it cannot be read). A bare name close to a shipped one is a
    mistyped shipped name: UsageError with a did-you-mean; a path keeps the loader's line."""
    if not name:
        raise UsageError('topology: expected a topology file or the name of a shipped one '
                         '(e.g. test_case_2), got ""')
    try:
        if Path(name).is_file():        # (a directory of that name is not a topology file)
            return name
    except (OSError, ValueError):       # a name too long, a NUL: the loader's line says so
        return name
    from topologies.shipped import is_bare_name, shipped_file, shipped_names
    found = shipped_file(name)
    if found is not None:
        return str(found)
    if is_bare_name(name):
        from topologies.validation import suggestion
        typed = name[:-5] if name.endswith(".json") else name
        close = suggestion(typed.lower(), shipped_names())  # (the shipped names: lower case)
        if close:
            raise UsageError(f"{name}: no such file, nor a shipped topology{close}")
    return name


def check_ids(kind: str, wanted: list, known: list) -> None:
    """UsageError naming the first of `wanted` that is not `known` (with a did-you-mean)."""
    from topologies.validation import unknown_id
    problem = unknown_id(kind, wanted, known)
    if problem is not None:
        raise UsageError(problem)


def positive(option: str, value) -> None:
    """UsageError unless `value` is None or a positive number."""
    if value is not None and not value > 0:
        raise UsageError(f"{option}: expected a positive number, got {value}")
