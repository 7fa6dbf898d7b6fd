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
EXIT_INTERRUPTED = 130         # 128 + SIGINT, as shells report it (SIGTERM: 143)

INSTALL_HINT = "pip install -e '.[{extra}]' in the netsim checkout"   # not PyPI's unrelated netsim


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
                        help=words["report"] + " (needs plotly: "
                        + INSTALL_HINT.format(extra="report") + ")")
    parser.add_argument("--quiet", action="store_true", help=words["quiet"])
    parser.add_argument("--plugin", action="append", default=[], metavar="FILE.py",
                        help="load the congestion-control algorithms this Python file defines"
                             + words["plugin"])


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors (an unknown option, a value of the wrong type or not among
    the choices) are one line, as netsim's own, and exit status 2, with no usage block."""

    def error(self, message):
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {message} ({self.prog} --help lists "
                                  f"the options)\n")


def report_available(option: str = "--report") -> None:
    """UsageError unless plotly (the report extra) is installed; does not import it."""
    if importlib.util.find_spec("plotly") is None:
        raise UsageError(f"{option}: the interactive report needs plotly; install it with "
                         f"{INSTALL_HINT.format(extra='report')} (or pip install plotly)")


def modules_available(what: str, modules: tuple, remedy: str) -> None:
    """UsageError unless every one of `modules` can be imported by this Python (checked before
    anything is simulated, so that a run is never lost to a missing module after it: Debian's
    PyPy has neither numpy nor matplotlib); does not import them."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        python = f"{sys.implementation.name} {sys.version.split()[0]}"
        raise UsageError(f"{what} needs{'' if len(missing) == 1 else ' both'} "
                         f"{' and '.join(missing)}, which this Python ({python}) does not have: "
                         f"{remedy}")


def pcap_available() -> None:
    """UsageError unless dpkt (the pcap extra) is installed; does not import it."""
    if importlib.util.find_spec("dpkt") is None:
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
    """`name` itself when it is a path that exists, else the shipped topology file of that name
    (topologies/<name> or topologies/<name>.json of the package: ``netsim test_case_0`` from any
    directory), else `name` (the loader then says it does not exist)."""
    if not name or Path(name).exists():
        return name
    import topologies
    shipped = Path(topologies.__file__).resolve().parent
    for candidate in (shipped / name, shipped / f"{name}.json"):
        if candidate.is_file() and shipped in candidate.resolve().parents:   # (examples/...)
            return str(candidate)
    from topologies.validation import suggestion
    names = sorted([p.stem for p in shipped.glob("*.json")]
                   + [f"examples/{p.stem}" for p in shipped.glob("examples/*.json")])
    close = suggestion(name[:-5] if name.endswith(".json") else name, names)
    if close:                           # a mistyped shipped name, not a path of the user's
        raise UsageError(f"{name}: no such file, nor a shipped topology{close}")
    return name


def check_ids(kind: str, wanted: list, known: list) -> None:
    """UsageError naming the first of `wanted` that is not `known` (with a did-you-mean)."""
    from topologies.validation import quote, suggestion
    for item in wanted:
        if item not in known:
            raise UsageError(f'{kind}: unknown id {quote(item)}{suggestion(item, known)}; '
                             f'known: {", ".join(known)}')


def positive(option: str, value) -> None:
    """UsageError unless `value` is None or a positive number."""
    if value is not None and not value > 0:
        raise UsageError(f"{option}: expected a positive number, got {value}")
