"""Command-line entry point: run a topology, write its results and figures, print a summary.

The orchestration of a run (`run`: check the options, simulate, write the outputs) and the
dispatch to the other commands. The options shared with `sweep` are in `netsim.cli_options`,
what is shown at the end in `netsim.cli_output`.

    python initializer.py topologies/test_case_2.json -l L1 L3
    python initializer.py sweep experiments/goodput_vs_loss.json --jobs 2
    python initializer.py report results/test_case_2      # report.html of an earlier run
    python initializer.py convert OLD.json -o NEW.json    # a 2015 CS/EE 143 topology file

Exit status: 0 after a run (also one ended by the stall guard, which is reported), 1 when
`--check-tolerance` is given and the run is further from theory than that, or when runs of a
sweep failed (they are recorded with their error), 2 for bad input
(topology file, command-line values, unwritable output directory, `--check` on a topology none
of whose flows has an analytic model).
"""
from __future__ import annotations

import argparse
import logging
import math
import os
import shutil
import signal
import sys
import time
from pathlib import Path

from netsim.cli_options import (
    EXIT_BAD_INPUT,
    EXIT_CHECK_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    NUMPY_REMEDY,
    OneLineParser,
    UsageError,
    add_shared_options,
    check_ids,
    figures_remedy,
    load_algorithm_plugins,
    modules_available,
    pcap_available,
    positive,
    program_name,
    report_available,
    shipped_topology,
    version,
)
from netsim.cli_output import (
    ProgressBar,
    configure_logging,
    error,
    failed_file,
    finish_run,
    open_log_file,
    os_error_text,
    progress_shown,
)
from netsim.console import MAX_TABLE_ROWS, TABLE_ROWS
from simulator.garbage import collection_paused, set_aside_for_exit

__all__ = ["EXIT_BAD_INPUT", "EXIT_CHECK_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "UsageError",
           "build_parser", "entry", "main", "program_name", "run"]


log = logging.getLogger(__name__)
CHECK_SETTLE_S = 2.0     # --check-settle's default: seconds skipped after a join or departure
# netsim.event_trace.EVENTS, for --help without importing the trace (a test checks they agree)
TRACE_EVENTS = ("transmit", "enqueue", "drop", "receive")
# the filters of --trace: option, attribute of the parsed arguments, EventTrace's keyword
TRACE_FILTERS = (("--trace-flows", "trace_flows", "flows"),
                 ("--trace-links", "trace_links", "links"),
                 ("--trace-nodes", "trace_nodes", "nodes"),
                 ("--trace-events", "trace_events", "events"))
# the options whose list may swallow the topology (`-l L1 L3 file.json`)
LIST_OPTIONS = ("links", "flows", *(attribute for _, attribute, _ in TRACE_FILTERS))


def build_parser() -> argparse.ArgumentParser:
    """The parser of a run's command line."""
    from flows import ALGORITHMS
    parser = OneLineParser(
        prog=program_name(),
        usage="%(prog)s TOPOLOGY [options]\n       %(prog)s sweep SWEEP [options]  "
              "(parameter sweeps: %(prog)s sweep --help)\n       %(prog)s report DIR  "
              "(interactive report.html of earlier results: %(prog)s report --help)"
              "\n       %(prog)s plot DIR  (the figures of earlier results: %(prog)s plot "
              "--help)"
              "\n       %(prog)s convert OLD.json [-o NEW.json]  (a 2015 CS/EE 143 file)"
              "\n       %(prog)s generate KIND [options]  (topology generators: %(prog)s "
              "generate --help)",
        description="Packet-level simulation of a network described by a JSON topology file. "
                    "Results go to results/<name>/ (or --out), replaced as a whole when the run "
                    "ends; Ctrl-C stops the run and keeps what it simulated so far.",
        epilog="Parameter sweeps over many runs: python initializer.py sweep SWEEP.json "
               "[--jobs N] (see python initializer.py sweep --help and docs/sweeps.md).")
    parser.add_argument("topology", nargs="?",
                        help="topology file (JSON), e.g. topologies/test_case_2.json, or the "
                             "name of a shipped one, e.g. test_case_2")
    parser.add_argument("--version", action="version", version=f"netsim {version()}")
    parser.add_argument("-l", "--links", nargs="+", action="extend", metavar="LINK", default=[],
                        help="links of interest: plotted and shown in the summary (default: all)")
    parser.add_argument("-F", "--flows", nargs="+", action="extend", metavar="FLOW", default=[],
                        help="flows to plot (default: all)")
    parser.add_argument("-v", "--verbosity", choices=["DEBUG", "INFO", "WARNING"], default="WARNING",
                        help="logging level (default WARNING)")
    parser.add_argument("-f", "--logfile", metavar="LOGFILE", help="write the log to this file")
    parser.add_argument("--duration", type=float, metavar="S",
                        help="stop after S seconds of simulated time (overrides duration_s)")
    parser.add_argument("--seed", type=int, metavar="N", help="random seed (overrides seed)")
    parser.add_argument("--algorithm", metavar="NAME",
                        help="run every flow with this algorithm: " + ", ".join(sorted(ALGORITHMS)))
    parser.add_argument("--stack", choices=("classic", "linux"),
                        help="run every flow on this transport stack (docs/model.md, \"The Linux "
                             "stack\")")
    parser.add_argument("--interval", type=float, default=0.1, metavar="S",
                        help="statistics sampling interval in seconds (default 0.1)")
    parser.add_argument("--check", action="store_true",
                        help="compare the run with theory, by the model each algorithm's class "
                             "declares: the equilibrium of FAST/Vegas flows, the response "
                             "functions of Reno/NewReno/Tahoe/CUBIC, BBR's share and queue bound, "
                             "DCTCP's queue at a step-marking link")
    parser.add_argument("--check-tolerance", type=float, metavar="PCT",
                        help="with --check: exit with status 1 if any compared quantity is off by "
                             "more than PCT percent")
    parser.add_argument("--check-settle", type=float, metavar="S",
                        help=f"with --check: seconds skipped after each join or departure "
                             f"(default {CHECK_SETTLE_S:g})")
    parser.add_argument("--table-rows", type=int, default=TABLE_ROWS, metavar="N",
                        help=f"summary table: list the first N flows and N link directions, "
                             f"then one line per algorithm, workload and for all links "
                             f"(default {TABLE_ROWS}; 0: list all)")
    parser.add_argument("--trace", metavar="FILE",
                        help="write every packet event (offers to links: transmit, enqueue, "
                             "drop with its cause; receives at nodes) to FILE, CSV or JSON Lines "
                             "for .jsonl (docs/outputs.md, \"Event trace\")")
    parser.add_argument("--trace-flows", nargs="+", action="extend", metavar="FLOW", default=[],
                        help="with --trace: only the events of these flows' packets (a "
                             "workload's id: all its flows; W#N: its Nth); routing packets, "
                             "which belong to no flow, are left out")
    parser.add_argument("--trace-links", nargs="+", action="extend", metavar="LINK", default=[],
                        help="with --trace: only the events on these links (both directions, "
                             "routing packets included)")
    parser.add_argument("--trace-nodes", nargs="+", action="extend", metavar="NODE", default=[],
                        help="with --trace: only the events whose node is one of these (what "
                             "the node offers to its links; what arrives at it or is lost on "
                             "the way to it)")
    parser.add_argument("--trace-events", nargs="+", action="extend", metavar="EVENT", default=[],
                        help="with --trace: only these events: " + ", ".join(TRACE_EVENTS))
    parser.add_argument("--trace-window", nargs=2, type=float, metavar=("START", "END"),
                        help="with --trace: only the events at START <= time < END seconds "
                             "(END inf: to the end of the run)")
    parser.add_argument("--pcap", action="store_true",
                        help="write pcap/<host>.pcap for each host of the flows of interest (-F, "
                             "else all): both directions of its interface, as tcpdump on the host "
                             "(needs dpkt: pip install -e '.[pcap]' in the checkout)")
    parser.add_argument("--pcap-links", action="store_true",
                        help="write pcap/<link>_<A>-<B>.pcap for each direction of the links of "
                             "interest (-l, else all), recorded at the far end")
    parser.add_argument("--iperf-json", action="store_true",
                        help="also write iperf3.json: the flows in iperf3 -J's structure and field "
                             "names, one stream per flow (docs/outputs.md, \"iperf3 JSON\")")
    add_shared_options(parser, "run")   # --out --no-plots --show --report --quiet --plugin
    parser.add_argument("--force", action="store_true",
                        help="replace the -f and --trace files even if they are not a log or "
                             "a trace netsim wrote (never an input, a symbolic link or a "
                             "non-regular file; nothing in --out that netsim did not write)")
    return parser



def build_report_parser() -> argparse.ArgumentParser:
    """The parser of ``report DIR``."""
    parser = OneLineParser(
        prog=f"{program_name()} report",
        description="Write report.html, the interactive report (docs/report.md), of an earlier "
                    "run's results directory or of a sweep directory. Reads only that directory.")
    parser.add_argument("directory", help="results directory (holding summary.json) or sweep "
                                          "directory (holding sweep.json and results.csv)")
    parser.add_argument("-o", "--out", metavar="FILE", help="where to write (default DIR/report.html)")
    parser.add_argument("-l", "--links", nargs="+", action="extend", metavar="LINK", default=[],
                        help="links whose time series are shown at first (default: the busiest)")
    parser.add_argument("-F", "--flows", nargs="+", action="extend", metavar="FLOW", default=[],
                        help="flows whose time series are shown at first (default: the first 8)")
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
    parser.add_argument("--force", action="store_true",
                        help="replace FILE (-o) even if it is not a report netsim wrote (never "
                             "a symbolic link or a non-regular file)")
    return parser


def check_report_ids(directory: Path, links: list, flows: list) -> None:
    """UsageError unless every id of `links` (-l) and `flows` (-F) is one the results in
    `directory` hold; a sweep directory has no time series to select."""
    from plot_tool.report import is_sweep_directory
    if is_sweep_directory(directory):
        option = "-l" if links else "-F"
        raise UsageError(f"{option}: {directory} is a sweep directory, whose report has no "
                         f"link or flow time series to select; -l and -F apply to a run's "
                         f"results directory")
    from netsim.plot_cli import result_ids
    known_links, known_flows = result_ids(directory)
    if known_links is not None:               # (else the report says what the directory lacks)
        check_ids("-l", links, known_links)
        check_ids("-F", flows, known_flows)


def report_main(argv) -> int:
    """``report DIR``: the report of earlier results. 0 written, 2 bad input."""
    args = build_report_parser().parse_args(argv)
    try:
        report_available("report")
        if args.out is not None:                # never over an input, a device, a link...
            from netsim.output_paths import OutputPathError, check_output_file
            from plot_tool.report import REPORT_FILE
            try:
                check_output_file("-o", args.out,
                                  allowed_inside=[Path(args.directory) / REPORT_FILE],
                                  kind="report", force=args.force)
            except OutputPathError as exc:
                raise UsageError(str(exc)) from None
        args.links = list(dict.fromkeys(args.links))       # an id given twice: once
        args.flows = list(dict.fromkeys(args.flows))
        if args.links or args.flows:          # the ids the results hold, as a run checks them
            check_report_ids(Path(args.directory), args.links, args.flows)
        from plot_tool.report import make_report
        path = make_report(args.directory, args.out, links=args.links or None,
                           flows=args.flows or None)
    except UsageError as exc:
        return error(str(exc))
    except OSError as exc:            # (a full or read-only disk)
        return error(f"report {args.directory}: {os_error_text(exc, args.out or 'the report')}")
    except ValueError as exc:
        return error(f"report {args.directory}: {exc}")
    if not args.quiet:
        print(f"report written to {path}")
    return EXIT_OK



def check_run_options(args, spec) -> None:
    """The option values that need the topology: ids, positive numbers, the extras asked for
    and whether --check has a model for some flow (UsageError)."""
    for option, value in (("--out", args.out), ("--trace", args.trace), ("-f", args.logfile)):
        if value == "":
            raise UsageError(f"{option}: expected a path, got an empty string")
    link_ids = [link.id for link in spec.links]
    check_ids("-l", args.links, link_ids)
    check_ids("-F", args.flows, [flow.id for flow in spec.flows])
    args.links = list(dict.fromkeys(args.links or []))    # an id given twice is shown once
    args.flows = list(dict.fromkeys(args.flows or []))
    positive("--duration", args.duration)
    positive("--interval", args.interval)
    if not 0 <= args.table_rows <= MAX_TABLE_ROWS:
        raise UsageError(f"--table-rows: expected a number from 0 to {MAX_TABLE_ROWS} (0: list "
                         f"all), got {args.table_rows}")
    if args.seed is not None:
        from topologies.bounds import seed_problem  # (loaded with the topology already)
        problem = seed_problem(args.seed)
        if problem is not None:
            raise UsageError(f"--seed: {problem}")
    if args.check_tolerance is not None and not args.check:
        raise UsageError("--check-tolerance: only meaningful with --check")
    if args.check_settle is not None and not args.check:
        raise UsageError("--check-settle: only meaningful with --check")
    if args.check_settle is None:
        args.check_settle = CHECK_SETTLE_S
    check_trace_filters(args, spec)
    if args.check_tolerance is not None and not 0 <= args.check_tolerance < math.inf:
        raise UsageError(f"--check-tolerance: expected a finite percentage >= 0, got "
                         f"{args.check_tolerance}")
    if not args.no_plots or args.show:
        modules_available("drawing the figures", ("numpy", "matplotlib"),
                          figures_remedy("python initializer.py plot DIR"))
    if args.check:
        modules_available("--check", ("numpy",), NUMPY_REMEDY)
    if args.report:
        report_available()
    if args.pcap or args.pcap_links:
        pcap_available()
        from netsim.pcap import size_problem
        problem = size_problem(spec.packet_sizes)
        if problem is not None:
            raise UsageError(f"{'--pcap' if args.pcap else '--pcap-links'}: {spec.source}: "
                             f"{problem}; give smaller packets, or run without captures")
    if args.iperf_json and not any(flow.kind == "bulk" for flow in spec.flows):
        raise UsageError("--iperf-json: the topology has no TCP flow (iperf3's streams are "
                         "TCP; cbr and onoff flows have no window)")
    if args.iperf_json:               # (it reads flows.csv back with the results' reader)
        modules_available("--iperf-json", ("numpy",), NUMPY_REMEDY)
    if not 0 <= args.check_settle < math.inf:
        raise UsageError(f"--check-settle: expected a finite number of seconds >= 0, got "
                         f"{args.check_settle}")
    if args.check:                    # the prediction is made after the run, from what it measured
        from theory.check import models_problem
        from theory.fluid import TheoryError
        try:
            problem = models_problem(spec, duration_s=args.duration)
        except TheoryError as exc:
            raise UsageError(f"--check: {exc}") from None
        if problem:
            raise UsageError(f"--check: {problem}")


def check_trace_filters(args, spec) -> None:
    """The filters of --trace (--trace-flows, --trace-links, --trace-nodes, --trace-events,
    --trace-window): only with --trace, ids the topology has, event kinds, a window that
    begins before the run's end (UsageError naming the option); an id given twice is kept
    once."""
    given = [option for option, attribute, _ in TRACE_FILTERS if getattr(args, attribute)]
    if args.trace_window is not None:
        given.append("--trace-window")
    if given and not args.trace:
        raise UsageError(f"{given[0]}: only meaningful with --trace")
    if not given:
        return
    from netsim.event_trace import events_problem, ids_problem, window_problem
    for _, attribute, _ in TRACE_FILTERS:
        setattr(args, attribute, list(dict.fromkeys(getattr(args, attribute))))
    names = {keyword: option for option, _, keyword in TRACE_FILTERS}
    start_s, end_s = args.trace_window or (None, None)
    problem = (ids_problem(names, args.trace_flows or None, args.trace_links or None,
                           args.trace_nodes or None, [flow.id for flow in spec.flows],
                           [workload.id for workload in spec.workloads],
                           [link.id for link in spec.links], [*spec.hosts, *spec.routers])
               or events_problem("--trace-events", args.trace_events)
               or window_problem(start_s, end_s, "--trace-window"))
    if problem:
        raise UsageError(problem)
    duration_s = args.duration if args.duration is not None else spec.duration_s
    if start_s is not None and duration_s is not None and start_s >= duration_s:
        raise UsageError(f"--trace-window: START ({start_s:g} s) is not before the end of the "
                         f"run ({duration_s:g} s): the trace would be empty")


def trace_filters(args) -> dict:
    """The keyword arguments of EventTrace for the filters of --trace given."""
    filters = {keyword: getattr(args, attribute) for _, attribute, keyword in TRACE_FILTERS
               if getattr(args, attribute)}
    if args.trace_window is not None:
        filters["start_s"], filters["end_s"] = args.trace_window
    return filters


def check_run_outputs(args, out: Path) -> None:
    """The output-path rule (netsim/output_paths.py) for a run's outputs: -f and --trace are
    files that are neither an input (the topology, the plugins) nor each other, nor inside a
    results directory (this run's --out, which is replaced whole, or another), nor an existing
    file that is not a log or a trace netsim wrote (unless --force); --out holds no input.
    UsageError naming the option."""
    from netsim.output_paths import OutputPathError, check_inputs_outside, check_output_file
    inputs = [args.topology, *args.plugin]
    try:
        check_inputs_outside("--out", out, inputs)
        if args.logfile:
            check_output_file("-f", args.logfile, inputs=inputs, replaced_dirs=[out],
                              kind="log", force=args.force)
        if args.trace:
            check_output_file("--trace", args.trace, inputs=inputs, replaced_dirs=[out],
                              outputs=[args.logfile], kind="trace", force=args.force)
    except OutputPathError as exc:
        raise UsageError(str(exc)) from None


def prepare_run(args):
    """Load the topology and check every option and output path before anything is simulated:
    (spec, results directory, its staging directory, the event trace or None), or the exit
    status after one error line."""
    from netsim.results_dir import ResultsDirError, StagedDirectory
    from netsim.run import RunError
    from topologies.load_algorithms import check_override
    from topologies.loader import TopologyError, load_topology

    staged = None
    try:
        args.topology = shipped_topology(args.topology)
        with collection_paused():         # (the parsed file's objects hold no cycles)
            check_override(args.algorithm, "--algorithm")    # (named as it was given)
            spec = load_topology(args.topology, algorithm=args.algorithm, stack=args.stack)
        check_run_options(args, spec)
        out = Path(os.path.normpath(args.out)) if args.out else Path("results") / spec.name
        check_run_outputs(args, out)
        staged = StagedDirectory(out)
        if args.logfile:                  # after the inputs are read and the paths checked
            open_log_file(args.logfile)
        trace = open_event_trace(args.trace, trace_filters(args))
    except (TopologyError, RunError, UsageError, ResultsDirError, OSError) as exc:
        if staged is not None:
            staged.discard()
        if isinstance(exc, ResultsDirError):
            return error(f"--out: {exc}")
        if isinstance(exc, OSError):
            return error(f"cannot write results to {args.out or 'results/'}: {exc.strerror or exc}")
        return error(str(exc))
    return spec, out, staged, trace


def install_captures(args, network, staged) -> list:
    """The packet captures asked for (--pcap, --pcap-links), installed on `network`; nothing
    is imported without them (netsim/pcap.py). Each keeps its file open: room for them all is
    made first (`reserve_open_files`), or `TooManyCaptures` says what to capture instead."""
    if not (args.pcap or args.pcap_links):
        return []
    from netsim.pcap import (
        capture_file_count,
        close_quietly,
        install_host_captures,
        reserve_open_files,
    )
    from netsim.pcap import install_captures as install_link_captures
    reserve_open_files(capture_file_count(network, hosts=args.pcap, links=args.pcap_links,
                                          flows=args.flows or None,
                                          link_ids=args.links or None))
    captures: list = []
    if args.pcap:
        captures += install_host_captures(network, staged.path / "pcap", args.flows or None)
    if args.pcap_links:
        try:
            captures += install_link_captures(network, staged.path / "pcap", args.links or None)
        except BaseException:
            close_quietly(captures)                 # (the host captures: the error is the link's)
            raise
    return captures


def plugin_failure_line(results) -> str | None:
    """The one line of a plugin's failure that ended the run (None without one); netsim's own
    failures are raised again."""
    failure = getattr(results, "failure", None)
    if failure is None:
        return None
    from netsim.plugins import failure_line
    network = getattr(results, "network", None)
    line = failure_line(failure, network.flows.values() if network is not None else ())
    if line is None:                  # not a plugin's (nor an algorithm's value): netsim's own bug
        raise failure
    return line


def write_outputs(args, spec, results, staged, retransmit_counter, held=None):
    """Everything a run writes besides its traces, into the staging directory: summary.json,
    iperf3.json, the check, figures, sequence plots, report.html. Returns the check report
    (None without --check); when a signal came once the simulation was over, (its number,
    when it came), else None: the figures and the report are then left out; and when drawing
    them failed (netsim's own bug), ("figures" or "report", the error), else None: what that
    stage drew is then removed and the data files are kept."""
    report = None
    results.write_summary()
    if args.iperf_json:               # from the results just written (netsim/iperf_json.py)
        from netsim.iperf_json import write as write_iperf_json
        write_iperf_json(staged.path, packet_bytes={
            fid: getattr(flow, "packet_bytes", None)
            for fid, flow in results.network.flows.items()},
            retransmits=retransmit_counter.counts if retransmit_counter is not None else None)
    if args.check:
        from theory.check import compare, predict_run
        from theory.check_report import write_check
        model = predict_run(spec, results, duration_s=args.duration)
        report = compare(results, model, links=args.links or None, settle_s=args.check_settle,
                         tolerance_pct=args.check_tolerance)
        write_check(staged.path, report, model, results.units, links=results.summary["links"])
    # the data files are whole from here on: a signal held while they were written means no
    # figures, and an interrupt while the figures (and the report) are drawn removes what it had
    # drawn and keeps the rest, rather than the whole run
    if held is not None:
        if held.signum is not None:
            return report, (held.signum, "after the simulation"), None
        held.release()
    before = set(os.listdir(staged.path))

    def remove_drawn(since: set) -> None:
        for name in set(os.listdir(staged.path)) - since:
            drawn = Path(staged.path) / name
            if drawn.is_dir() and not drawn.is_symlink():
                shutil.rmtree(drawn)
            else:
                drawn.unlink()
    stage, stage_before = "figures", before
    try:
        if not args.no_plots or args.show:
            from plot_tool import make_figures
            make_figures(staged.path, staged.path, links=args.links or None,
                         flows=args.flows or None, show=args.show)
        if (args.pcap or args.pcap_links) and not args.no_plots:   # seq_<flow>.png
            from plot_tool.seqplot import make_seq_plots
            make_seq_plots(staged.path)
        if args.report:
            stage, stage_before = "report", set(os.listdir(staged.path))
            from plot_tool.report import make_report
            make_report(staged.path, links=args.links or None, flows=args.flows or None)
    except KeyboardInterrupt as exc:
        remove_drawn(before)
        signum = int(getattr(exc, "signum", signal.SIGINT))
        return report, (signum, "while drawing the figures"), None
    except (OSError, ModuleNotFoundError):
        raise                         # (a full disk, a module gone: the callers' one line)
    except Exception as exc:          # a bug in drawing: the simulated run is kept
        log.debug("drawing the %s failed", stage, exc_info=True)
        remove_drawn(stage_before)    # (the figures stay when the report failed)
        return report, None, (stage, f"{type(exc).__name__}: {exc}")
    return report, None, None


def simulate_and_write(args, spec, out: Path, staged, trace):
    """Simulate (Ctrl-C keeps what was simulated) and write every output into the staging
    directory, then commit it: (results, stopping signal, check report, plugin failure line,
    (signal, when) for a signal once the simulation was over, the figures then left out,
    what failed when drawing them failed), or the exit status after one error line (the
    staging discarded)."""
    from netsim.run import Run, RunError
    progress = ProgressBar() if progress_shown(args.quiet) else None
    try:
        simulation = Run(spec, duration_s=args.duration, seed=args.seed,
                         interval_s=args.interval, trace_dir=staged.path, progress=progress,
                         caller="cli")
    except RunError as exc:
        staged.discard()
        return error(str(exc))
    except Exception as exc:          # a plugin's algorithm failed as the flows were built
        from netsim.plugins import failure_line
        line = failure_line(exc)
        if line is None:              # netsim's own bug
            raise
        staged.discard()
        return error(line)
    if trace is not None:
        trace.install(simulation.network)
    try:
        captures = install_captures(args, simulation.network, staged)
    except (ValueError, OSError) as exc:   # pcap.TooManyCaptures; a file that cannot be opened
        staged.discard()
        if isinstance(exc, OSError):
            return error(f"cannot write {failed_file(exc)}: {exc.strerror or exc}")
        return error(f"--pcap{'-links' if args.pcap_links and not args.pcap else ''}: {exc}")
    retransmit_counter = None
    if args.iperf_json:               # intervals' retransmits (netsim/iperf_json.py)
        from netsim.iperf_json import RetransmitCounter
        retransmit_counter = RetransmitCounter(simulation.network, args.interval)
    with HeldSignals() as held:      # (the simulation puts its own handlers in place)
        return _simulate_and_write(args, spec, out, staged, trace, simulation, captures,
                                   retransmit_counter, held)


def _simulate_and_write(args, spec, out, staged, trace, simulation, captures,
                        retransmit_counter, held: HeldSignals):
    """`simulate_and_write` from the simulation on, with signals held once it is over."""
    try:
        try:
            results, signum = execute_interruptibly(simulation, held)
        finally:
            close_all(captures)
        if trace is not None:
            trace.finish()
    except OSError as exc:            # a full disk: one line, nothing half-written kept
        staged.discard()
        return error(f"cannot write {failed_file(exc)}: {exc.strerror or exc}")
    failure_line = plugin_failure_line(results)
    write_start_s = time.process_time()
    try:
        with collection_paused():     # no collection traverses the network (simulator/garbage.py)
            report, drawing_stopped, drawing_failed = write_outputs(
                args, spec, results, staged, retransmit_counter, held)
        staged.commit()
        if trace is not None:
            trace.commit()
    except OSError as exc:
        staged.discard()
        return error(f"cannot write {os_error_text(exc, f'results to {out}')}")
    except ModuleNotFoundError as exc:  # (checked before the run: only a module that failed late)
        staged.discard()
        return error(f"writing the results needs {exc.name}, which this Python cannot import: "
                     f"no results written to {out}/ (pass --no-plots and leave out --check, "
                     f"--report and --iperf-json, or install it)")
    results.cpu_s["write"] = time.process_time() - write_start_s
    return results, signum, report, failure_line, drawing_stopped, drawing_failed


def run(args) -> int:
    """One run of `args.topology` with the options of `build_parser`: its exit status."""
    startup_s = time.process_time()       # the interpreter, the imports, the options
    prepared = prepare_run(args)
    if isinstance(prepared, int):
        return prepared
    load_s = time.process_time() - startup_s
    spec, out, staged, trace = prepared
    try:
        with staged:                  # an exception (Ctrl-C while drawing...) discards the staging
            outcome = simulate_and_write(args, spec, out, staged, trace)
    finally:                          # a trace not committed (failure, Ctrl-C) is removed
        if trace is not None:
            trace.discard()
    if isinstance(outcome, int):
        return outcome
    status = finish_run(args, outcome, out, [link.id for link in spec.links])
    log_cpu_phases(startup_s, load_s, outcome[0])
    return status


def log_cpu_phases(startup_s: float, load_s: float, results) -> None:
    """Log (INFO) the CPU time of each phase of the command: start-up (interpreter, imports,
    options), loading the topology, building the network and its traces, simulating, finishing
    the traces and the summary, writing the results directory (figures included), and the
    rest (printing)."""
    if not log.isEnabledFor(logging.INFO):
        return
    phases = results.cpu_s
    total_s = time.process_time()
    events = results.summary["events"]
    seconds = {"start-up": startup_s, "loading": load_s, "building": phases.get("build", 0.0),
               "simulating": phases.get("simulate", 0.0),
               "results": phases.get("finish", 0.0) + phases.get("summary", 0.0),
               "writing": phases.get("write", 0.0)}
    seconds["other"] = max(0.0, total_s - sum(seconds.values()))
    texts = [f"{name} {value:.3f} s" for name, value in seconds.items()]
    if events:
        texts[3] += f" ({seconds['simulating'] / events * 1e6:.2f} us/event)"
    log.info("CPU by phase: %s; total %.3f s, %d events", ", ".join(texts), total_s, events)


def close_all(files) -> None:
    """Close every one of `files`; then raise the first OSError any of them gave."""
    first = None
    for item in files:
        try:
            item.close()
        except OSError as exc:
            first = first or exc
    if first is not None:
        raise first


def open_event_trace(path, filters=None):
    """The EventTrace writing to `path` with `filters` (EventTrace's keyword arguments, checked
    by `check_trace_filters`), or None without --trace; UsageError if unwritable."""
    if not path:
        return None
    from netsim.event_trace import EventTrace, TraceError
    try:
        return EventTrace(path, **(filters or {}))
    except TraceError as exc:
        raise UsageError(str(exc)) from None


class HeldSignals:
    """While a run's data files are written after its simulation (the traces closed, the
    summary, the check, iperf3.json), SIGINT and SIGTERM are held, not raised: a file half
    written would lose the whole run. The first one is kept (`signum`: the figures are then not
    drawn); a second acts at once, as during the simulation. `release` puts the handlers
    before it back (the figures may be stopped at any moment: `write_outputs`)."""

    def __init__(self):
        self.signum: int | None = None
        self.previous: dict = {}

    def __enter__(self) -> HeldSignals:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self.previous[sig] = signal.signal(sig, self._hold)
        return self

    def _hold(self, signum, frame) -> None:
        if self.signum is None:
            self.signum = signum
            return
        self.release()
        raise Stopped(signum)

    def release(self) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
        self.previous = {}

    def __exit__(self, *exc) -> None:
        self.release()


def execute_interruptibly(simulation, held: HeldSignals | None = None):
    """Run `simulation`; the first SIGINT or SIGTERM stops it at the current event (its results
    are then kept, stop reason "interrupted"), or, when it comes while a plugin's code runs,
    in that code (`netsim.plugins.HookInterrupted`: a hook may never return); a second one acts
    as usual (with `held`, the handlers from before it). Returns the results and the number of
    the signal that stopped the run (None if none did); the handlers in place before are back
    (`held`'s)."""
    previous: dict = {}
    received: list = []

    def stop(signum, frame):
        received.append(signum)
        simulation.interrupt()
        usual = held.previous if held is not None and held.previous else previous
        for sig, handler in usual.items():        # a second signal acts at once
            signal.signal(sig, handler)
        from netsim.plugins import HookInterrupted, plugin_code_running
        if plugin_code_running(frame):            # it may never return to the event loop
            raise HookInterrupted(signum)

    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, stop)
    try:
        results = simulation.execute(keep_failure=True)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return results, (received[0] if received else None)


def main(argv=None) -> int:
    """The command line `argv` (default: sys.argv[1:]); returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "sweep":
        from netsim.sweep_cli import sweep_main
        return sweep_main(argv[1:])
    if argv and argv[0] == "report" and not Path("report").is_file():
        return report_main(argv[1:])
    if argv and argv[0] == "plot" and not Path("plot").is_file():
        from netsim.plot_cli import plot_main  # figures of an earlier run
        return plot_main(argv[1:])
    if argv and argv[0] == "convert" and not Path("convert").is_file():
        from netsim.convert import convert_main  # the 2015 CS/EE 143 files
        return convert_main(argv[1:])
    if argv and argv[0] == "generate" and not Path("generate").is_file():
        from netsim.generate_cli import generate_main  # topology generators
        return generate_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.topology is None:
        take_topology_from_lists(args, parser)
    try:
        configure_logging(args.verbosity)     # the log file (-f) once the inputs are read
        load_algorithm_plugins(args.plugin)
    except UsageError as exc:
        return error(str(exc))
    return run(args)


def take_topology_from_lists(args, parser) -> None:
    """`-l L1 L3 file.json`: the option's list swallowed the topology; give it back (the
    lists of -l, -F and the --trace filters alike; a shipped topology's bare name too)."""
    from topologies.shipped import shipped_file
    for option in LIST_OPTIONS:
        values = getattr(args, option)
        if values and (values[-1].endswith(".json") or Path(values[-1]).is_file()
                       or shipped_file(values[-1]) is not None):
            args.topology = values.pop()
            return
    parser.error("the following arguments are required: topology")


class Stopped(KeyboardInterrupt):
    """SIGINT or SIGTERM outside a run (loading, drawing): a KeyboardInterrupt that knows which
    signal it was, so that SIGTERM ends the program as cleanly as Ctrl-C."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _stop(signum, frame):
    raise Stopped(signum)


def install_stop_handlers() -> None:
    """SIGINT and SIGTERM raise `Stopped` (a run and a sweep put their own handlers in place
    while they go, and this one back after)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _stop)


def entry() -> None:
    """Console entry point: `main`, quiet when the reader of stdout goes away (e.g. `| head`).
    The signal handlers are installed first: a signal at any moment ends the program with one
    line and 128 + its number."""
    install_stop_handlers()
    code = None
    try:
        code = main()
        _install_exit_handlers()
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = EXIT_OK
    except KeyboardInterrupt as exc:  # outside the simulation (loading, drawing): nothing written
        for sig in (signal.SIGINT, signal.SIGTERM):   # a second signal while the line is printed
            signal.signal(sig, signal.SIG_IGN)        # (a group signalled twice) changes nothing
        signum = getattr(exc, "signum", signal.SIGINT)
        if code is None:
            print(f"interrupted ({signal.Signals(signum).name}): no results written",
                  file=sys.stderr)
        else:                         # (between main's return and the exit handlers)
            print(f"interrupted ({signal.Signals(signum).name}) as the program exited; what it "
                  f"wrote is complete", file=sys.stderr)
        code = 128 + int(signum)
    _install_exit_handlers()
    set_aside_for_exit()
    sys.exit(code)


def _exit_now(signum, frame):
    os.write(2, f"interrupted ({signal.Signals(signum).name}) as the program exited; what it "
                f"wrote is complete\n".encode())
    os._exit(128 + signum)


def _install_exit_handlers() -> None:
    """Once `main` has returned, a signal ends the program at once (128 + its number, one line):
    raised as an exception instead, it could land in the interpreter's finalization (a weakref
    callback), which prints it as a traceback and exits 0."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _exit_now)


if __name__ == "__main__":
    entry()
