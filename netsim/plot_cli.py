"""``netsim plot DIR``: draw the figures of an earlier run's results directory into it, as the
run would have (links.png, flows.png, hosts.png, fct.png, routing.png and, when it has
captures, seq_<flow>.png): for a run made with ``--no-plots``, a run whose drawing failed, or
another choice of links and flows. Reads only that directory."""
from __future__ import annotations

from pathlib import Path

from netsim.cli_options import (
    EXIT_OK,
    OneLineParser,
    UsageError,
    check_ids,
    modules_available,
    program_name,
)
from netsim.cli_output import error

FIGURE_MODULES = ("numpy", "matplotlib")


def result_ids(directory: Path) -> tuple:
    """(link ids, flow ids) of the results in `directory` from its summary.json, (None, None)
    where there is none to read (the reader then says what is wrong with the directory)."""
    import json
    try:
        summary = json.loads((directory / "summary.json").read_text(encoding="utf-8"))
        return list(summary["links"]), list(summary["flows"])
    except (OSError, ValueError, KeyError, TypeError):
        return None, None


def build_plot_parser() -> OneLineParser:
    """The parser of ``plot DIR``."""
    parser = OneLineParser(
        prog=f"{program_name()} plot",
        description="Draw the figures of an earlier run's results directory into it, as the "
                    "run does (docs/outputs.md, Figures): for a run made with --no-plots, or "
                    "for other links and flows. Reads only that directory.")
    parser.add_argument("directory", help="results directory (holding summary.json)")
    parser.add_argument("-l", "--links", nargs="+", action="extend", metavar="LINK", default=[],
                        help="links to draw (default: every link, as a run draws them)")
    parser.add_argument("-F", "--flows", nargs="+", action="extend", metavar="FLOW", default=[],
                        help="flows to draw (default: every flow)")
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
    return parser


def plot_main(argv) -> int:
    """``plot DIR``: 0 drawn, 2 bad input (one line)."""
    args = build_plot_parser().parse_args(argv)
    directory = Path(args.directory)
    try:
        modules_available("plot: the figures", FIGURE_MODULES,
                          "install them with pip install -e . in the checkout")
        from netsim.results_dir import SUMMARY_FILE, is_results_dir
        if not is_results_dir(directory):
            raise UsageError(f"plot {directory}: not a results directory (no {SUMMARY_FILE} "
                             f"written by netsim)")
        links = list(dict.fromkeys(args.links))          # an id given twice: once
        flows = list(dict.fromkeys(args.flows))
        known_links, known_flows = result_ids(directory)
        if known_links is not None:
            check_ids("-l", links, known_links)
            check_ids("-F", flows, known_flows)
        from plot_tool import make_figures
        paths = make_figures(directory, directory, links=links or None, flows=flows or None)
        from netsim.cli_options import importable
        if (directory / "pcap").is_dir() and importable("dpkt"):   # (as a run with --pcap)
            from plot_tool.seqplot import make_seq_plots
            paths = [*paths, *make_seq_plots(directory)]
    except UsageError as exc:
        return error(str(exc))
    except OSError as exc:            # (a full or read-only disk)
        from netsim.cli_output import os_error_text
        return error(f"plot {directory}: {os_error_text(exc, str(directory))}")
    except ValueError as exc:
        return error(f"plot {directory}: {exc}")
    if not args.quiet:
        names = ", ".join(Path(path).name for path in paths) or "no figure (nothing to draw)"
        print(f"drawn into {directory}/: {names}")
    return EXIT_OK
