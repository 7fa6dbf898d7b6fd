"""``initializer.py generate KIND [options] [-o FILE]``: write a generated topology file
(topologies/generate.py; docs/topology-format.md, "Generated topologies").

    python initializer.py generate fat-tree --k 8 --flows 64 -o fat_tree_k8.json
    python initializer.py generate leaf-spine --leaves 4 --spines 2 --hosts-per-leaf 16 \\
        --host-rate-mbps 10000 --fabric-rate-mbps 40000 -o ls.json     # 2:1 oversubscribed
    python initializer.py generate dumbbell --pairs 16            # to standard output

The file is checked with the topology loader before it is written. It is written whole (a
temporary file beside it, then renamed), never over an existing file without ``--force``, and
never through a symbolic link or onto anything that is not a regular file. Exit status 0
written, 2 for bad arguments (one line).
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from pathlib import Path

from netsim.cli_options import EXIT_BAD_INPUT, EXIT_OK, option_error_line, program_name
from netsim.output_paths import OutputPathError, check_output_file, current_umask

KINDS = {
    "fat-tree": "k-ary fat tree of k-port switches (Al-Fares et al. 2008)",
    "leaf-spine": "two-tier leaf-spine fabric; oversubscription set by the two rates",
    "dumbbell": "N sender/receiver pairs over one bottleneck (as topologies/dumbbell.json)",
    "parking-lot": "a chain of N bottlenecks, one long path and one cross path per hop",
    "random": "connected random router graph with hosts on random routers",
}


class _Usage(Exception):
    """A bad command-line argument: one line."""


class _OptionError(_Usage):
    """An argparse error (an unknown option, a value of the wrong type, a missing KIND): its
    whole line, as every subcommand's (netsim.cli_options.option_error_line)."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (no usage block) and exit status 2, returned
    by `generate_main` rather than exiting."""

    def error(self, message):
        raise _OptionError(option_error_line(self.prog, message))


def _common_options(parser: argparse.ArgumentParser, *, flows: str, flow_mb: float,
                    min_rto_ms: float, pattern: bool, ecmp: str = "none") -> None:
    flows_group = parser.add_argument_group("flows")
    flows_group.add_argument("--flows", type=int, metavar="N",
                             help=f"number of bulk flows; 0 for none, to add your own flows or "
                                  f"workloads (default: {flows})")
    if pattern:
        flows_group.add_argument("--pattern", choices=("random", "permutation"), default="random",
                                 help="random: each flow joins two distinct hosts drawn at random; "
                                      "permutation: host i sends to its image under a random "
                                      "permutation without fixed points (default random)")
    flows_group.add_argument("--flow-mb", type=float, default=flow_mb, metavar="MB",
                             help=f"data per flow, MB (10^6 bytes) (default {flow_mb:g})")
    flows_group.add_argument("--long-lived", action="store_true",
                             help="flows without a size: they send until the run ends "
                                  "(needs --duration)")
    flows_group.add_argument("--algorithm", default="reno", metavar="NAME",
                             help="congestion control of every flow (default reno)")
    flows_group.add_argument("--ecn", action="store_true",
                             help="ECN-capable flows (implied by --algorithm dctcp)")
    flows_group.add_argument("--start-s", type=float, default=0.0, metavar="S",
                             help="start time of the flows, seconds (default 0)")
    flows_group.add_argument("--start-spread-s", type=float, default=0.0, metavar="S",
                             help="draw each start uniformly from [start, start + S), seconds "
                                  "(default 0: all start together)")
    run = parser.add_argument_group("run")
    run.add_argument("--routing", choices=("static", "bellman-ford"), default="static",
                     help="routing protocol (default static)")
    run.add_argument("--ecmp", choices=("flow", "packet", "none"), default=ecmp,
                     help="equal-cost multipath: flow spreads flows by a hash of (flow, source, "
                          "destination, seed), packet sprays packets round-robin, none takes "
                          f"the first equal-cost next hop (default {ecmp})")
    run.add_argument("--seed", type=int, default=1, metavar="N",
                     help="seed of the generator's random choices, also written as the "
                          "topology's seed (default 1)")
    run.add_argument("--duration", type=float, metavar="S",
                     help="simulated seconds, written as duration_s (default: none, the run ends "
                          "when every flow has finished)")
    run.add_argument("--min-rto-ms", type=float, default=min_rto_ms, metavar="MS",
                     help=f"minimum retransmission timeout, ms (default {min_rto_ms:g})")
    run.add_argument("--mark-k-kb", type=float, metavar="KB",
                     help="DCTCP step ECN marking above K kB on every link (RFC 8257; Linux "
                          "suggests 30 kB at 1 Gb/s, 100 kB at 10 Gb/s) (default: drop-tail)")
    out = parser.add_argument_group("output")
    out.add_argument("-o", "--out", metavar="FILE",
                     help="write the topology to FILE (default: standard output)")
    out.add_argument("--force", action="store_true",
                     help="replace FILE if it exists (never a symbolic link or a non-regular file)")
    out.add_argument("--name", metavar="NAME",
                     help="the topology's name, its results directory (default: FILE's name "
                          "without extension, else e.g. fat_tree_k4)")


def _fabric_options(parser, *, rate_mbps: tuple, buffer_kb: float, rate_note: str,
                    buffer_note: str) -> None:
    links = parser.add_argument_group("links (every link direction has its own buffer)")
    links.add_argument("--host-rate-mbps", type=float, default=None, metavar="MBPS",
                       help=f"rate of the host links, Mb/s (default {rate_mbps[0]:g}{rate_note})")
    links.add_argument("--fabric-rate-mbps", type=float, default=None, metavar="MBPS",
                       help=f"rate of the switch-to-switch links, Mb/s (default {rate_mbps[1]:g})")
    links.add_argument("--delay-us", type=float, default=2.0, metavar="US",
                       help="propagation delay of every link, microseconds (default 2: a "
                            "switch's 1-2 us port-to-port latency plus tens of metres of fibre)")
    links.add_argument("--buffer-kb", type=float, default=buffer_kb, metavar="KB",
                       help=f"buffer per port, kB (default {buffer_kb:g}{buffer_note})")


def _wan_options(parser, *, delay_ms: float, buffer_kb) -> None:
    links = parser.add_argument_group("links")
    links.add_argument("--rate-mbps", type=float, default=10.0, metavar="MBPS",
                       help="bottleneck rate, Mb/s (default 10)")
    links.add_argument("--delay-ms", type=float, default=delay_ms, metavar="MS",
                       help=f"bottleneck one-way delay, ms (default {delay_ms:g})")
    links.add_argument("--buffer-kb", type=float, default=buffer_kb, metavar="KB",
                       help="bottleneck buffer, kB (default " + (
                           "one bandwidth-delay product of the base RTT)" if buffer_kb is None
                           else f"{buffer_kb:g})"))
    links.add_argument("--access-rate-mbps", type=float, default=100.0, metavar="MBPS",
                       help="access link rate, Mb/s (default 100)")
    links.add_argument("--access-delay-ms", type=float, default=1.0, metavar="MS",
                       help="access link delay, ms (default 1)")
    links.add_argument("--access-buffer-kb", type=float, default=200.0, metavar="KB",
                       help="access link buffer, kB (default 200)")


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``generate KIND [options]``: one subcommand per kind of topology."""
    from topologies import generate as g
    parser = _Parser(
        prog=f"{program_name()} generate",
        description="Write a generated topology file: plain JSON (docs/topology-format.md, "
                    "\"Generated topologies\") you can read, edit and run with "
                    "python initializer.py FILE.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    kinds = parser.add_subparsers(dest="kind", metavar="KIND", parser_class=_Parser)
    kinds.required = True
    sub: dict = {}
    _add_fabric_kinds(kinds, sub, g)
    _add_wan_kinds(kinds, sub, g)
    _add_random_kind(kinds, sub, g)
    parser.epilog = "kinds and their options (KIND --help for units and defaults):\n" + "\n".join(
        f"  {kind}: " + " ".join(sorted({opt for action in sub[kind]._actions
                                         for opt in action.option_strings if opt.startswith("--")}))
        for kind in KINDS)
    return parser


def _add_fabric_kinds(kinds, sub: dict, g) -> None:
    """The data-center fabrics: fat tree and leaf-spine."""
    p = sub["fat-tree"] = kinds.add_parser("fat-tree", help=KINDS["fat-tree"],
                                           description=KINDS["fat-tree"] + ": k pods of k/2 edge "
                                           "and k/2 aggregation switches, k/2 hosts per edge "
                                           "switch, (k/2)^2 core switches. Names: hosts "
                                           "h_p{pod}_e{edge}_{i}, edge e_p{pod}_{i}, aggregation "
                                           "a_p{pod}_{i}, core c_{group}_{i}; links <end>-<end>.")
    p.add_argument("--k", type=int, default=4, metavar="K",
                   help="switch ports: an even number >= 2; k^3/4 hosts (default 4)")
    _fabric_options(p, rate_mbps=(g.FAT_TREE_RATE_MBPS, g.FAT_TREE_RATE_MBPS),
                    buffer_kb=g.FAT_TREE_BUFFER_KB,
                    rate_note=": Al-Fares et al.'s commodity 1 GigE",
                    buffer_note=": 4 MB shared by the 52 ports of a Broadcom Triumph, the DCTCP "
                                "paper's 1 Gb/s top-of-rack switch")
    _common_options(p, flows="hosts/2", flow_mb=1.0, min_rto_ms=g.DC_MIN_RTO_MS, pattern=True,
                    ecmp="flow")
    p = sub["leaf-spine"] = kinds.add_parser("leaf-spine", help=KINDS["leaf-spine"],
                                             description=KINDS["leaf-spine"] + ": every leaf "
                                             "joined to every spine. Oversubscription = "
                                             "hosts-per-leaf x host rate / (spines x fabric rate). "
                                             "Names: hosts h_l{leaf}_{i}, leaves l_{i}, spines "
                                             "s_{i}; links <end>-<end>. Defaults: pFabric's "
                                             "fabric (Alizadeh et al. 2013), 144 hosts, 1:1.")
    p.add_argument("--leaves", type=int, default=g.LEAF_SPINE[0], metavar="L",
                   help=f"leaf (top-of-rack) switches (default {g.LEAF_SPINE[0]})")
    p.add_argument("--spines", type=int, default=g.LEAF_SPINE[1], metavar="S",
                   help=f"spine switches (default {g.LEAF_SPINE[1]})")
    p.add_argument("--hosts-per-leaf", type=int, default=g.LEAF_SPINE[2], metavar="H",
                   help=f"hosts per leaf (default {g.LEAF_SPINE[2]})")
    _fabric_options(p, rate_mbps=(g.LEAF_SPINE_HOST_MBPS, g.LEAF_SPINE_FABRIC_MBPS),
                    buffer_kb=g.LEAF_SPINE_BUFFER_KB, rate_note=", pFabric's",
                    buffer_note=": 4 MB shared by the 24 ports of a Broadcom Scorpion, the DCTCP "
                                "paper's 10 Gb/s switch")
    _common_options(p, flows="hosts/2", flow_mb=1.0, min_rto_ms=g.DC_MIN_RTO_MS, pattern=True,
                    ecmp="flow")


def _add_wan_kinds(kinds, sub: dict, g) -> None:
    """The wide-area shapes: dumbbell and parking lot."""
    p = sub["dumbbell"] = kinds.add_parser("dumbbell", help=KINDS["dumbbell"],
                                           description=KINDS["dumbbell"] + ". Names: senders "
                                           "S1..SN, receivers T1..TN, routers R1 R2, links LB, "
                                           "LS1.., LT1..; flow Fj runs on pair ((j - 1) mod N) + 1. The "
                                           "defaults give topologies/dumbbell.json.")
    p.add_argument("--pairs", type=int, default=4, metavar="N",
                   help="sender/receiver pairs (default 4)")
    _wan_options(p, delay_ms=20.0, buffer_kb=None)
    _common_options(p, flows="one per pair", flow_mb=4.0, min_rto_ms=g.WAN_MIN_RTO_MS,
                    pattern=False)
    p = sub["parking-lot"] = kinds.add_parser("parking-lot", help=KINDS["parking-lot"],
                                              description=KINDS["parking-lot"] + ". Names: "
                                              "routers R1..R(N+1), bottlenecks L1..LN, long path "
                                              "S0 -> T0, cross path i S_i -> T_i over L_i; flow "
                                              "F_j runs on path j mod (N+1). The defaults give "
                                              "topologies/parking_lot.json.")
    p.add_argument("--hops", type=int, default=3, metavar="N",
                   help="bottleneck links in the chain (default 3)")
    _wan_options(p, delay_ms=10.0, buffer_kb=50.0)
    _common_options(p, flows="one per path, N+1", flow_mb=4.0, min_rto_ms=g.WAN_MIN_RTO_MS,
                    pattern=False)


def _add_random_kind(kinds, sub: dict, g) -> None:
    """A random router graph."""
    p = sub["random"] = kinds.add_parser("random", help=KINDS["random"],
                                         description=KINDS["random"] + ": a random recursive "
                                         "tree (router i joined to a random earlier router) plus "
                                         "random extra links up to the mean degree. Names: "
                                         "routers r{i}, hosts h{i}; links <end>-<end>.")
    p.add_argument("--routers", type=int, default=100, metavar="N", help="routers (default 100)")
    p.add_argument("--degree", type=float, default=4.0, metavar="D",
                   help="mean router degree, router-to-router links (default 4)")
    p.add_argument("--hosts", type=int, default=20, metavar="H",
                   help="hosts, each on a random router (default 20)")
    links = p.add_argument_group("links")
    links.add_argument("--rate-mbps", type=float, default=100.0, metavar="MBPS",
                       help="rate of every link, Mb/s (default 100)")
    links.add_argument("--delay-ms", type=float, default=1.0, metavar="MS",
                       help="delay of every link, ms (default 1)")
    links.add_argument("--buffer-kb", type=float, default=100.0, metavar="KB",
                       help="buffer of every link, kB (default 100)")
    _common_options(p, flows="10", flow_mb=1.0, min_rto_ms=g.WAN_MIN_RTO_MS, pattern=True)


def generate(args):
    """The topology dict the parsed arguments describe (GenerateError, _Usage)."""
    from flows import ALGORITHMS
    from topologies import generate as g
    from topologies.validation import quote, suggestion
    if args.algorithm not in ALGORITHMS:
        raise _Usage(f"--algorithm: unknown algorithm {quote(args.algorithm)}"
                     f"{suggestion(args.algorithm, sorted(ALGORITHMS))}; known: "
                     f"{', '.join(sorted(ALGORITHMS))}")
    name = args.name or (Path(args.out).stem if args.out else None)
    common = g.Common(flows=args.flows, data_mb=None if args.long_lived else args.flow_mb,
                      algorithm=args.algorithm, ecn=args.ecn, start_s=args.start_s,
                      start_spread_s=args.start_spread_s,
                      pattern=getattr(args, "pattern", "random"), routing=args.routing,
                      ecmp=None if args.ecmp == "none" else args.ecmp,
                      seed=args.seed, duration_s=args.duration, min_rto_ms=args.min_rto_ms,
                      mark_k_kb=args.mark_k_kb, name=name)
    if args.kind in ("fat-tree", "leaf-spine"):
        defaults = ((g.FAT_TREE_RATE_MBPS, g.FAT_TREE_RATE_MBPS) if args.kind == "fat-tree"
                    else (g.LEAF_SPINE_HOST_MBPS, g.LEAF_SPINE_FABRIC_MBPS))
        links = dict(host_rate_mbps=defaults[0] if args.host_rate_mbps is None
                     else args.host_rate_mbps,
                     fabric_rate_mbps=defaults[1] if args.fabric_rate_mbps is None
                     else args.fabric_rate_mbps,
                     delay_us=args.delay_us, buffer_kb=args.buffer_kb, common=common)
        if args.kind == "fat-tree":
            return g.fat_tree(args.k, **links)
        return g.leaf_spine(args.leaves, args.spines, args.hosts_per_leaf, **links)
    if args.kind == "random":
        return g.random_graph(args.routers, degree=args.degree, hosts=args.hosts,
                              rate_mbps=args.rate_mbps, delay_ms=args.delay_ms,
                              buffer_kb=args.buffer_kb, common=common)
    links = dict(rate_mbps=args.rate_mbps, delay_ms=args.delay_ms, buffer_kb=args.buffer_kb,
                 access_rate_mbps=args.access_rate_mbps, access_delay_ms=args.access_delay_ms,
                 access_buffer_kb=args.access_buffer_kb, common=common)
    if args.kind == "dumbbell":
        return g.dumbbell(args.pairs, **links)
    return g.parking_lot(args.hops, **links)


def _check_target(path: Path, force: bool) -> None:
    """_Usage unless `path` may be written: not a symbolic link, not anything but a regular
    file, and not an existing file without --force."""
    label = f"-o {path}"
    if path.is_symlink():
        raise _Usage(f"{label}: is a symbolic link; refusing to write through it")
    if path.exists():
        if not path.is_file():
            raise _Usage(f"{label}: exists and is not a regular file")
        if not force:
            raise _Usage(f"{label}: exists; pass --force to replace it")
    if not path.parent.is_dir():
        raise _Usage(f"{label}: no such directory {path.parent}")
    try:                          # the rule every output path follows (never into a results dir)
        check_output_file("-o", path)
    except OutputPathError as exc:
        raise _Usage(str(exc)) from None


def write_file(path: Path, text: str, force: bool) -> None:
    """Write `text` to `path` whole: a temporary file beside it, then a rename (with --force) or
    a hard link that fails if something appeared there meanwhile."""
    _check_target(path, force)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(temp, 0o666 & ~current_umask())
        if force:
            _check_target(path, force)
            os.replace(temp, path)
        else:
            try:
                os.link(temp, path)
            except FileExistsError:
                raise _Usage(f"-o {path}: exists; pass --force to replace it") from None
            except OSError:               # no hard links here: exclusive create instead
                with open(path, "x", encoding="utf-8", newline="\n") as fh:
                    fh.write(text)
    finally:
        if os.path.lexists(temp):
            os.unlink(temp)


def _recorded(argv) -> list:
    """The arguments that shape the topology: argv without the output options."""
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in ("-o", "--out"):
            skip = True
        elif arg != "--force" and not arg.startswith(("--out=", "-o")):
            kept.append(arg)
    return kept


def generate_main(argv) -> int:
    """``generate KIND [options]``: 0 written, 2 bad arguments (one line)."""
    from topologies.generate import GenerateError, dumps
    from topologies.loader import TopologyError, load_topology
    from topologies.validation import one_line
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.out == "":
            raise _Usage("-o: expected a path, got an empty string (no -o: the standard output)")
        topology = generate(args)
        command = "python initializer.py generate " + " ".join(
            shlex.quote(a) for a in _recorded(argv))
        topology["description"] += f" Generated by: {one_line(command)}"
        load_topology(topology, label=f"generate {args.kind}")
        text = dumps(topology)
        if args.out:
            write_file(Path(args.out), text, args.force)
    except _OptionError as exc:
        print(exc, file=sys.stderr)
        return EXIT_BAD_INPUT
    except _Usage as exc:
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except GenerateError as exc:
        print(f"error: generate {args.kind}: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except TopologyError as exc:          # (its message starts with the label given above)
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:
        print(f"error: -o {one_line(str(args.out))}: cannot write: {exc.strerror or exc}",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.out:
        print(f"{args.out}: {len(topology['hosts'])} hosts, {len(topology['routers'])} routers, "
              f"{len(topology['links'])} links, {len(topology['flows'])} flows")
    else:
        sys.stdout.write(text)
    return EXIT_OK
