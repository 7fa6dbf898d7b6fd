"""Running a network: termination, the stall guard, interrupts, statistics, and the results of a run.

A run ends when every finite flow has completed, when `duration_s` is reached, when it is
interrupted (`Run.interrupt`, which the command line calls on Ctrl-C), when the stall guard
finds that no unfinished flow has made progress (data its receiver did not have arrived there, or
new data was acknowledged at its sender) for `stall_timeout_s` of simulated time (it then reports
which flows stalled and why), or, without a duration, at MAX_RUN_TIME_S of simulated time.
Statistics are sampled every `interval_s` and streamed to trace files as the run goes (the
directory given as `trace_dir`, else a temporary one owned by the `Results`), so a run's memory does
not grow with simulated time; see docs/outputs.md for what each column means.
"""
from __future__ import annotations

import logging
import math
import numbers
import tempfile
import time
from pathlib import Path

from netsim.probes import (
    FLOW_COLUMNS,
    HOST_COLUMNS,
    HOST_IDLE_ROW,
    LINK_COLUMNS,
    LINK_IDLE_ROW,
    DirectionGroup,
    DirectionWatch,
    FlowProbe,
    HostProbe,
    flow_state,
    state_columns,
)
from netsim.results import Results
from netsim.traces import RouteLog, TraceFile
from simulator.garbage import collection_paused
from simulator.sampling import Sampler
from topologies.bounds import MAX_RUN_TIME_S, MAX_TRACE_ROWS, seed_problem, time_problem, trace_rows
from topologies.build import Network, build_network
from topologies.spec import TopologySpec

log = logging.getLogger(__name__)

DEFAULT_INTERVAL_S = 0.1
STALL_TIMEOUT_S = 1800.0     # thirty times the RFC 6298 maximum RTO: a flow retransmitting into
                             # 50 % loss gets thirty attempts (odds of all failing ~1e-9) before it
                             # counts as stalled; waiting costs only timer events
STALL_CHECK_S = 1.0
CUT_OFF_WAIT_CAP_S = 60.0    # a cut-off flow waits at most this long (RFC 6298's maximum RTO)
PROGRESS_STEPS = 500         # progress reports over a run of known length


# how a problem of a run's length or sampling names its settings, by who asked for the run
# (`run_problem`): the interval, the duration, and how to give a duration
SETTING_NAMES = {
    "cli": ("--interval", "--duration", "set duration_s in the file or pass --duration"),
    "api": ("interval_s", "duration_s", "set duration_s in the topology or pass duration_s"),
    "sweep": ("interval_s", "duration_s", "set duration_s in the sweep file"),
}


def length_known(spec: TopologySpec, duration_s: float | None) -> bool:
    """Whether the run lasts exactly `duration_s`: nothing else ends it (a flow without end, a
    workload, or no flow). Else the duration, if any, only caps flows that may complete first."""
    return duration_s is not None and bool(
        spec.workloads or not spec.flows or any(f.data_bytes is None for f in spec.flows))


def _plain(value):
    """A number of another type than Python's (numpy's, of any precision) as Python's float;
    anything else as it is (Python's numbers, and what the checks refuse)."""
    return float(value) if value.__class__ not in (bool, int, float) and isinstance(
        value, numbers.Real) else value


def positive_problem(name: str, value) -> str | None:
    """None if `value` is a number (an int or float, numpy's included; not a bool) above 0;
    else the line naming the setting `name`: a string such as "5" is refused here, in the words
    of a negative number, not by the first comparison that meets it."""
    number = value.__class__ is not bool and isinstance(value, numbers.Real)
    if not number:
        return f"{name}: expected a positive number of seconds, got {value!r}"
    if not value > 0:
        return f"{name}: expected a positive number of seconds, got {value}"
    return None


def seconds_problem(name: str, value) -> str | None:
    """None if `value` is a usable positive time setting (`positive_problem`, within the bounds
    of every time value: topologies/bounds.py `time_problem`); else its line, naming it `name`."""
    problem = positive_problem(name, value)
    if problem is None:
        problem = time_problem(value, zero=False)
        if problem:
            problem = f"{name}: {problem}, got {value!r}"
    return problem


def run_problem(spec: TopologySpec, duration_s: float | None, interval_s: float,
                caller: str = "api") -> str | None:
    """What keeps `spec` from being run for `duration_s` (None: until it ends) sampled every
    `interval_s`, as one line naming the settings as `caller` ("cli", "api", "sweep") knows
    them, or None: the times' bounds, that something ends the run, and that its traces stay
    within MAX_TRACE_ROWS when its length is known (topologies/bounds.py)."""
    interval_name, duration_name, remedy = SETTING_NAMES[caller]
    settings = [(interval_name, interval_s)]          # (no duration: until the run ends)
    settings += [] if duration_s is None else [(duration_name, duration_s)]
    for name, value in settings:
        problem = positive_problem(name, value)
        if problem:
            return problem
    for name, value in settings:
        problem = time_problem(value, zero=False)
        if problem:
            return f"{name}: {problem}, got {value!r}"
    endless = [f.id for f in spec.flows if f.data_bytes is None]
    if duration_s is None and (endless or not spec.flows or spec.workloads):
        what = f"flow {endless[0]} has no data_mb" if endless else "the topology has no flows"
        if spec.workloads:
            where = f'workloads[0] "{spec.workloads[0].id}"'
            what = f"{where}: the workload opens flows without end"
        return f"{spec.source}: {what}, so nothing ends the run: {remedy}"
    entities = busy_entities(spec)
    if length_known(spec, duration_s):
        rows = trace_rows(duration_s, interval_s, entities)   # type: ignore[arg-type]
        for index, workload in enumerate(spec.workloads):      # fct.csv: a row per flow
            end_s = duration_s if workload.stop_s is None else min(workload.stop_s, duration_s)
            flows = workload.arrivals_per_s * max(0.0, end_s - workload.start_s)  # (the mean)
            if rows <= MAX_TRACE_ROWS < rows + flows:   # (the traces alone: the interval, below)
                return (f'{spec.source}: workloads[{index}] "{workload.id}": about {flows:.3g} '
                        f"flows in the run's {duration_s:g} s ({workload.arrivals_per_s:g} per "
                        f"s), a row of fct.csv each: with the other trace files more than the "
                        f"{MAX_TRACE_ROWS:.3g} rows a run writes; use fewer arrivals_per_s or a "
                        f"shorter {duration_name}")
            rows += flows
        if rows > MAX_TRACE_ROWS:
            shortest = duration_s * entities / MAX_TRACE_ROWS  # type: ignore[operator]
            return (f"{interval_name}: {interval_s!r} s over a {duration_s:g} s run whose "
                    f"{entities} busiest traced entities (its flows, the hosts of its flows and "
                    f"workloads, and the directions of their links) write {rows:.3g} trace rows; at most "
                    f"{MAX_TRACE_ROWS:.3g} are written: use an interval of at least "
                    f"{shortest:.3g} s")
    return None


def busy_entities(spec: TopologySpec) -> int:
    """The traced entities a run of known length (endless flows, workloads) writes a row for
    at about every sampling instant: its flows, their hosts and the workloads', and both
    directions of those hosts' links.
    The others write rows only while they carry something (docs/outputs.md), so a large network
    whose links are mostly idle is not refused an interval for them; its run stops cleanly if
    the rows still reach MAX_TRACE_ROWS (`Run`)."""
    hosts = {h for f in spec.flows for h in (f.src, f.dst)}
    hosts.update(h for w in spec.workloads for h in (*w.src, *w.dst))
    links = sum(1 for ls in spec.links if ls.ends[0] in hosts or ls.ends[1] in hosts)
    return len(spec.flows) + len(hosts) + 2 * links


def all_entities(spec: TopologySpec) -> int:
    """Every traced entity: link directions, flows, hosts."""
    return 2 * len(spec.links) + len(spec.flows) + len(spec.hosts)


def cut_off_wait_s(spec: TopologySpec) -> float:
    """How long a flow cut off for good waits before it counts as stalled: longer than any of
    its packets can still be on its way (one hop per router and one more, each the longest
    delay, jitter and full buffer drain of any link, at its slowest rate), at least a check
    interval, at most CUT_OFF_WAIT_CAP_S."""
    hop_s = 0.0
    for ls in spec.links:
        rate_bps = min([ls.rate_bps, *(rate for _, rate in ls.rate_schedule)])
        delay_s = max([ls.delay_s, *(delay for _, delay in ls.delay_schedule)])
        extra_s = max(i.jitter_s + i.reorder_delay_s for i in ls.impairments)
        hop_s = max(hop_s, delay_s + extra_s + (ls.buffer_bytes + 65536) * 8 / rate_bps)
    return min(CUT_OFF_WAIT_CAP_S, max(STALL_CHECK_S, (len(spec.routers) + 1) * hop_s))


STALL_REASONS = 3       # stalled flows whose reasons the stall guard's line gives
STALL_IDS = 10          # the others' ids it names


def stall_detail(stalled: list, why) -> str:
    """The stall guard's one line (the warning, the console's headline, summary.json's
    stop_detail): `why(flow)` of the first STALL_REASONS flows, then how many more stalled and
    the first STALL_IDS of their ids. 43 stalled flows of a fat tree with failed links made a
    line of 9 400 characters, printed twice; each flow's counters are in summary.json."""
    text = "; ".join(why(f) for f in stalled[:STALL_REASONS])
    rest = stalled[STALL_REASONS:]
    if rest:
        ids = ", ".join(f.id for f in rest[:STALL_IDS])
        more = ", ..." if len(rest) > STALL_IDS else ""
        text += (f"; and {len(rest)} more flow{'s' if len(rest) > 1 else ''} made no progress "
                 f"({ids}{more}; each flow's counters are in summary.json)")
    return text


class RunError(ValueError):
    """The topology cannot be run as asked (e.g. a flow without end and no duration)."""


class Run:
    """One simulation of a topology; `execute()` returns its `Results`.

    `duration_s` and `interval_s` (seconds, `run_problem`), `seed` (an integer) and
    `stall_timeout_s` (the simulated seconds without progress after which the stall guard, which
    looks once every STALL_CHECK_S, stops the run: a positive time, `seconds_problem`) are
    checked before anything is built: RunError with one line naming the argument."""

    # building a run allocates no garbage worth scanning for (simulator/garbage.py)
    @collection_paused(until_run=True)
    def __init__(self, spec: TopologySpec, *, duration_s: float | None = None,
                 seed: int | None = None, interval_s: float = DEFAULT_INTERVAL_S,
                 stall_timeout_s: float = STALL_TIMEOUT_S, progress=None, trace_dir=None,
                 caller: str = "api"):
        started_cpu_s = time.process_time()
        if not isinstance(spec, TopologySpec):
            raise TypeError(f"expected a TopologySpec, got {type(spec).__name__}: read a file or "
                            f"a dict with netsim.load_topology first")
        self.spec = spec
        # numpy's numbers as Python's, before the checks (a float16 interval computed its rates
        # in float16: NaN); anything else is left to them
        duration_s = _plain(duration_s)
        interval_s = _plain(interval_s)
        stall_timeout_s = _plain(stall_timeout_s)
        self.duration_s = spec.duration_s if duration_s is None else duration_s
        problem = None if seed is None else seed_problem(seed)   # (-4 ran as 4 under another
        if problem is not None:                                   # digest; 10**30 was written
            raise RunError(f"seed: {problem}")                    # where no reader took it)
        self.seed = spec.seed if seed is None else int(seed)      # (numpy's integers too)
        problem = (run_problem(spec, self.duration_s, interval_s, caller)
                   or seconds_problem("stall_timeout_s", stall_timeout_s))
        if problem is not None:
            raise RunError(problem)
        endless = [f.id for f in spec.flows if f.data_bytes is None]
        self.length_known = length_known(spec, self.duration_s)
        # a run of unknown length stops before the traces pass MAX_TRACE_ROWS rows: the rows
        # written are counted every `row_check_s`, in which at most a tenth of the limit fits
        entities = all_entities(spec)
        self.row_check_s = max(1, MAX_TRACE_ROWS // 10 // max(1, entities)) * interval_s
        # (and so does a run of known length whose idle entities, if busy, could pass it)
        self.rows_checked = not self.length_known or (
            trace_rows(self.duration_s, interval_s, entities) > MAX_TRACE_ROWS)  # type: ignore[arg-type]
        self.interval_s = interval_s
        self.interval_name = SETTING_NAMES[caller][0]   # how the limit's message names it
        self.stall_timeout_s = stall_timeout_s
        self.progress = progress
        self.network: Network = build_network(spec, self.seed)
        self.sim = self.network.sim
        self.sampler = Sampler(self.sim, interval_s)
        self._unfinished = sum(1 for f in spec.flows if f.data_bytes is not None)
        self._endless = bool(endless) or bool(spec.workloads)   # workloads run to the duration
        self._stall_detail: str | None = None
        self._limit_detail: str | None = None
        # no link comes up after this: from then on, a flow whose hosts no path of up links
        # joins can never progress (`_cut_off`), and waits only `_cut_off_wait_s`
        self._last_repair_s = max((e.at_s for e in spec.events if e.action == "up"),
                                  default=-math.inf)
        self._cut_off_wait_s = cut_off_wait_s(spec)
        self._parts: dict = {}                # `_router_parts`, labelled at `_parts_at`
        self._parts_at = -math.inf
        self._progress_step_s = 0.0
        if trace_dir is None:
            self._tempdir: tempfile.TemporaryDirectory | None = tempfile.TemporaryDirectory(
                prefix="netsim-")
            self.trace_dir = Path(self._tempdir.name)
        else:
            self._tempdir = None
            self.trace_dir = Path(trace_dir)
        self.traces: dict = {}
        self.flow_probes: dict = {}
        self._setup_failure: Exception | None = None   # a plugin's report() failed (`_open_traces`)
        self._interrupted = False                      # `interrupt` was called (a signal)
        try:
            self._open_traces()
            self.workloads: list = []
            if spec.workloads:              # (imported only by the runs that have some)
                from netsim.workloads import start_workloads
                self.workloads = start_workloads(self)  # fct.csv (netsim/workloads.py)
        except BaseException:
            self.close()                   # the temporary directory goes with the failed build
            raise
        # CPU seconds of the run's phases: building (this), simulating, finishing the traces,
        # the summary (`execute`); the command line adds its own and logs them (-v INFO)
        self.cpu_s: dict = {"build": time.process_time() - started_cpu_s}

    def close(self) -> None:
        """Remove the temporary directory the traces went to, if the run made one (none when
        `trace_dir` was given). Idempotent. Its `Results` can no longer read tables it has not
        read yet. Without it the directory goes when the run is garbage collected or the
        interpreter exits normally, which a process that ends with `os._exit` (a
        multiprocessing worker) never does: sweeps close every run (netsim/sweep_execute.py)."""
        for trace in self.traces.values():
            try:
                trace.close()
            except OSError:
                log.debug("closing a trace file", exc_info=True)
        if self._tempdir is not None:
            self._tempdir.cleanup()

    def _open_traces(self) -> None:
        net, sampler, units = self.network, self.sampler, self.spec.units
        mbit, kb = units.bits_per_mbit, units.bytes_per_kb
        directory = self.trace_dir
        links = TraceFile(directory / "links.csv", ("link", "direction"), LINK_COLUMNS)
        # the algorithms' named state (probes.py); a report() that fails here is the run's
        # failure, raised when it starts (`execute`): the results up to then are written
        reports = []
        for flow in net.flows.values():
            try:
                reports.append(flow_state(flow))
            except Exception as exc:
                self._setup_failure = self._setup_failure or exc
                reports.append({})
        self._report_names = {flow.id: None if self._setup_failure else tuple(report)
                              for flow, report in zip(net.flows.values(), reports)}
        state = state_columns(net.flows.values(), reports)
        flows = TraceFile(directory / "flows.csv", ("flow",), FLOW_COLUMNS + tuple(state))
        hosts = TraceFile(directory / "hosts.csv", ("host",), HOST_COLUMNS)
        self.traces = {"links": links, "flows": flows, "hosts": hosts}
        for name, table in self.traces.items():
            sampler.add_table(name, table)
        # sleepers cost nothing per tick, and directions without a packet no probe (probes.py)
        directions = DirectionGroup([d for link in net.links.values() for d in link.directions],
                                    mbit, kb, DirectionWatch())
        sampler.register_group(links, directions, idle_row=LINK_IDLE_ROW)
        flow_probes, register = self.flow_probes, sampler.register
        state_names = tuple(state.values())
        on_finish = self._on_flow_finish
        for flow in net.flows.values():
            flow_probe = FlowProbe(flow, mbit, state_names, self._report_names[flow.id])
            flow_probes[flow.id] = flow_probe
            register(flows, (flow.id,), flow_probe, wake=flow_probe.wake, arm=flow_probe.arm)
            flow.on_finish = on_finish
        for host in net.hosts.values():
            host_probe = HostProbe(host, mbit, directions)
            sampler.register(hosts, (host.id,), host_probe, wake=host_probe.wake,
                             idle_row=HOST_IDLE_ROW, arm=host_probe.arm)
        routes = RouteLog(directory / "routes.csv", MAX_TRACE_ROWS, self._routes_at_limit)
        net.route_log = routes                    # type: ignore[assignment]   # a list until now
        for router, table in net.initial_routes:  # the tables at t = 0, written as made
            net.log_routes(0.0, router, table)
        net.initial_routes = []
        self.traces["routes"] = routes

    def _close_traces(self) -> None:
        for trace in self.traces.values():
            trace.close()

    def stop_at_limit(self, detail: str) -> None:
        """Stop the run at a bound of topologies/bounds.py (flows alive, trace rows): it ends
        cleanly with stop reason "limit" and `detail` saying which bound, and its results are
        written as for any other end."""
        if self.sim.stop_reason is None:
            self._limit_detail = detail
            log.info("stopping at t=%.6f s: %s", self.sim.now, detail)
            self.sim.stop("limit")

    def _stop_at_time_limit(self, _=None) -> None:
        self.stop_at_limit(f"simulated time reached its limit of {MAX_RUN_TIME_S:g} s; give a "
                           f"duration to end sooner")

    def _stop_at_instant_limit(self, _=None) -> None:
        self.stop_at_limit(f"the run reached its limit of {MAX_TRACE_ROWS:.3g} sampling "
                           f"intervals (every {self.interval_s!r} s); use a longer "
                           f"{self.interval_name}")

    def _routes_at_limit(self, _rows: int) -> None:
        """routes.csv reached MAX_TRACE_ROWS rows: stop once the events of this instant are
        done (an installation's rows, or the t = 0 tables before the first event, are written
        whole), as at the other traces' bound."""
        self.sim.schedule(0.0, self._stop_for_routes)

    def _stop_for_routes(self, _=None) -> None:
        self.stop_at_limit(f"routes.csv reached its limit of {MAX_TRACE_ROWS:.3g} rows "
                           f"({len(self.network.route_log)} forwarding entries logged); log "
                           f"fewer: a shorter duration, fewer hosts in the flows and workloads, "
                           f"or with Bellman-Ford a longer update_interval_s")

    def _check_rows(self, _=None) -> None:
        written = sum(len(self.traces[name]) for name in ("links", "flows", "hosts"))
        if written + MAX_TRACE_ROWS // 10 > MAX_TRACE_ROWS:   # the next period could pass it
            self.stop_at_limit(f"the trace files would pass their limit of {MAX_TRACE_ROWS:.3g} "
                               f"rows ({written} written, every {self.interval_s!r} s); use a "
                               f"longer {self.interval_name}")
            return
        self.sim.schedule(self.row_check_s, self._check_rows)

    def interrupt(self) -> None:
        """Stop the run after the event being processed (safe to call from a signal handler);
        `execute` then returns results with stop reason "interrupted"."""
        self._interrupted = True
        self.sim.stop("interrupted")

    def _on_flow_finish(self, flow) -> None:
        log.info("t=%.4f s: flow %s completed", self.sim.now, flow.id)
        self._unfinished -= 1
        if self._unfinished == 0 and not self._endless:
            self.sim.stop("completed")

    def _check_stall(self, _=None) -> None:
        now = self.sim.now
        flows = self.network.flows.values()
        active = [f for f in flows if f.started and not f.finished]
        if active and all(self._stalled(f, now) for f in active):
            self._stall_detail = stall_detail(active, self._why_stalled)
            log.info("stall guard: %s", self._stall_detail)
            self.sim.stop("stalled")
            return
        next_s = now + STALL_CHECK_S
        if not active:                # nothing can stall before the next flow starts
            waiting = [f.start_s for f in flows if not f.started]
            if waiting:
                next_s = max(next_s, min(waiting))
        self.sim.schedule_at(next_s, self._check_stall)

    def _stalled(self, f, now: float) -> bool:
        """Whether `f` counts as stalled: no progress for `stall_timeout_s`, or, cut off for good
        (`_cut_off`), for `_cut_off_wait_s`."""
        idle_s = now - f.last_progress_s
        if idle_s >= self.stall_timeout_s:
            return True
        return (idle_s >= min(self._cut_off_wait_s, self.stall_timeout_s)
                and now >= self._last_repair_s and self._cut_off(f))

    def _cut_off(self, f) -> bool:
        """Whether no path of up links joins `f`'s hosts any more (only routers forward): its
        hosts' up links reach no common component of routers (`_router_parts`), nor each other."""
        parts = self._router_parts()
        ends = []
        for host, other in ((f.src, f.dst), (f.dst, f.src)):
            reached = set()
            for link in host.links:
                if link.up:
                    for node in link.ends:
                        if node is other:
                            return False
                        if node is not host and node.id in parts:
                            reached.add(parts[node.id])
            ends.append(reached)
        return not ends[0] & ends[1]

    def _router_parts(self) -> dict:
        """Router id -> its component in the graph of up router-to-router links, labelled once
        per simulated instant (links change only at events): a stall check costs one pass over
        the links, whatever the number of flows it asks about."""
        if self._parts_at == self.sim.now:
            return self._parts
        routers = self.network.routers
        parent = {rid: rid for rid in routers}

        def root(rid):
            while parent[rid] != rid:
                parent[rid] = parent[parent[rid]]
                rid = parent[rid]
            return rid

        for link in self.network.links.values():
            a, b = (node.id for node in link.ends)
            if link.up and a in routers and b in routers:
                parent[root(a)] = root(b)
        self._parts = {rid: root(rid) for rid in routers}
        self._parts_at = self.sim.now
        return self._parts

    def _why_stalled(self, f) -> str:
        no_route = sum(r.no_route_drops for r in self.network.routers.values())
        if not hasattr(f, "snd_una"):  # a cbr or onoff source (flows/cbr.py): no window, no RTO
            reason = (f"{f.id} made no progress since t={f.last_progress_s:.3f} s (it sent no "
                      f"packet and none of it arrived): the {f.kind} source sends at "
                      f"{f.rate_bps:g} bit/s ({f.packets_sent} packets sent, "
                      f"{f.packets_received} arrived)")
        else:
            total = "unbounded" if f.data_bytes is None else str(f.n_packets)
            reason = (f"{f.id} made no progress since t={f.last_progress_s:.3f} s (no new data "
                      f"reached its receiver, none was newly acknowledged): packet {f.snd_una} "
                      f"of {total} unacknowledged after {f.timeouts} timeouts (RTO {f.rto:.3g} "
                      f"s, state {f.state}), its receiver holding the first "
                      f"{f.receiver.rcv_nxt} in order")
        if self.sim.now >= self._last_repair_s and self._cut_off(f):
            down = sorted(link.id for link in self.network.links.values() if not link.up)
            reason += (f"; no path of up links joins {f.src.id} and {f.dst.id} (down: "
                       f"{', '.join(down[:5])}{', ...' if len(down) > 5 else ''}) and no link "
                       f"comes up later")
        if no_route:
            reason += (f"; routers dropped {no_route} packet{'' if no_route == 1 else 's'} for "
                       f"lack of a route")
        looped = sum(r.loop_drops for r in self.network.routers.values())
        if looped:
            reason += (f"; routers dropped {looped} packet{'' if looped == 1 else 's'} caught in "
                       f"forwarding loops")
        return reason

    def _report_progress(self, _=None) -> None:
        sim = self.sim
        self.progress(sim.now, self._fraction_done())
        next_s = sim.now + self._progress_step_s
        upcoming = sim.peek()
        if upcoming is not None and upcoming > next_s:
            next_s = upcoming         # nothing happens before it: no report to make
        sim.schedule_at(next_s, self._report_progress)

    def _fraction_done(self):
        fractions = []
        if self.duration_s:
            fractions.append(self.sim.now / self.duration_s)
        finite = [f for f in self.network.flows.values() if f.data_bytes is not None]
        if finite and not self._endless:
            fractions.append(sum(f.delivered_bytes for f in finite) / sum(f.data_bytes for f in finite))
        return min(1.0, max(fractions)) if fractions else None

    def execute(self, *, keep_failure: bool = False) -> Results:
        """Run to the end; the `Results`. An exception raised while the run goes propagates,
        unless `keep_failure` (the command line's choice, to report a plugin's failure with the
        partial results): the results then have stop reason "error" and the exception as
        `results.failure` (an OSError, e.g. a full disk, always propagates)."""
        sim = self.sim
        self.sampler.start()
        sim.schedule(STALL_CHECK_S, self._check_stall)
        if self.progress is not None:
            self._progress_step_s = max(self.interval_s, (self.duration_s or 10.0) / PROGRESS_STEPS)
            sim.schedule(0.0, self._report_progress)
        if self.rows_checked:
            sim.schedule(self.row_check_s, self._check_rows)
            # idle entities write no rows, but every sampling instant counts: the readers take
            # at most MAX_TRACE_ROWS of them (plot_tool.results.check_summary)
            last_instant_s = (MAX_TRACE_ROWS - 1) * self.interval_s
            if last_instant_s < (self.duration_s or MAX_RUN_TIME_S):
                sim.schedule_at(last_instant_s, self._stop_at_instant_limit)
        if self.duration_s is None:   # every run ends (a flow can progress for ever, slowly)
            sim.schedule_at(MAX_RUN_TIME_S, self._stop_at_time_limit)
        wall_start = time.perf_counter()
        cpu_start = time.process_time()
        failure: BaseException | None = None
        try:
            if self._setup_failure is not None:
                raise self._setup_failure
            sim.run(until=self.duration_s)
            self._check_algorithms()
        except BaseException as exc:
            if not (keep_failure and self._kept(exc)):
                self._finish_after_failure()
                raise
            failure = exc
        finally:
            wall_s = time.perf_counter() - wall_start
            cpu_s = time.process_time()
            self.cpu_s["simulate"] = cpu_s - cpu_start
        if failure is None:
            try:
                with collection_paused():   # (its rows and sleepers' records are no cycles)
                    self.sampler.finish()
            finally:
                self._close_traces()
        else:
            self._finish_after_failure()
        if failure is None:
            reason = sim.stop_reason or "duration"
        else:                     # (a signal can stop a plugin's hook: netsim/cli.py)
            from netsim.plugins import HookInterrupted
            reason = "interrupted" if isinstance(failure, HookInterrupted) else "error"
        if reason == "completed":
            detail = "all flows completed"
        elif reason == "stalled":
            detail = f"stall guard: {self._stall_detail}"
        elif reason == "interrupted":
            detail = "interrupted"
        elif reason == "limit":
            detail = f"stopped at a bound: {self._limit_detail}"
        elif reason == "error":
            detail = f"failed: {type(failure).__name__}: {failure}"
        else:
            detail = f"simulated time reached {self.duration_s} s"
        if self.progress is not None:
            self.progress(sim.now, 1.0 if reason == "completed" else self._fraction_done())
        summary_cpu_s = time.process_time()
        self.cpu_s["finish"] = summary_cpu_s - cpu_s
        with collection_paused():      # (simulator/garbage.py)
            results = Results(self, reason, detail, wall_s)
        results.failure = failure
        self.cpu_s["summary"] = time.process_time() - summary_cpu_s
        return results

    def _kept(self, exc: BaseException) -> bool:
        """Whether `execute(keep_failure=True)` keeps `exc` as the run's failure (the results
        so far are then written): an exception, not an OSError (a full disk propagates) unless
        plugin code raised it (a hook reading a missing table file is the plugin's failure, not
        the results' writing); and ``sys.exit()`` or KeyboardInterrupt only when raised by
        plugin code. A KeyboardInterrupt is a plugin's only if no signal can have raised it:
        the command line's handler stops a run through `interrupt` (the first SIGINT or SIGTERM
        raises nothing, a second one comes after `interrupt`), so one raised before any
        `interrupt` while that handler (not Python's default, which raises it wherever the
        program is) is in place was raised by the code it went through."""
        from netsim.plugins import failure_line
        if isinstance(exc, Exception):
            return not isinstance(exc, OSError) or failure_line(exc) is not None
        if isinstance(exc, KeyboardInterrupt):
            import signal
            if (self._interrupted or hasattr(exc, "signum")
                    or signal.getsignal(signal.SIGINT) in (signal.default_int_handler, None)):
                return False
        elif not isinstance(exc, SystemExit):
            return False
        return failure_line(exc) is not None

    def _check_algorithms(self) -> None:
        """At the end of a run, what the summary reads of each flow's algorithm: the
        slow-start threshold it may have set, and its report() with the names of the first one
        (an `AlgorithmValueError` then fails the run as the same value would have during it)."""
        from flows.congestion import checked_ssthresh, is_count
        for flow in self.network.flows.values():
            sender = getattr(flow, "sender", None)
            ssthresh = getattr(sender, "ssthresh", None)
            if sender is not None and not is_count(ssthresh, inf_ok=True):
                checked_ssthresh(sender.cc, ssthresh)
            names = self._report_names.get(flow.id)
            if names is not None:
                flow_state(flow, names)

    def _finish_after_failure(self) -> None:
        """Close the traces after an exception stopped the run: a window or threshold left out
        of bounds is sampled as "no value" (its failure is what is reported), and nothing raised
        here hides the failure."""
        import math

        from flows.congestion import is_count
        for flow in self.network.flows.values():
            sender = getattr(flow, "sender", None)
            if sender is None:
                continue
            if not is_count(getattr(sender, "cwnd", 1.0)):
                sender.cwnd = math.nan
            if not is_count(getattr(sender, "ssthresh", 1.0), inf_ok=True):
                sender.ssthresh = math.nan
        try:
            self.sampler.finish()
        except Exception:                          # the failure is what is reported
            log.debug("sampling after a failure", exc_info=True)
        try:
            self._close_traces()
        except OSError:
            log.debug("closing the traces after a failure", exc_info=True)


def simulate(spec: TopologySpec, **options) -> Results:
    """Run `spec` to its end and return the `Results` (options: see `Run`)."""
    run = Run(spec, **options)
    try:
        return run.execute()
    except BaseException:
        run.close()                  # no results to read the traces: their directory goes now
        raise


def check_conservation(network: Network) -> list:
    """Violations of packet and byte conservation (empty when everything adds up).

    Per link direction: packets offered = transmitted (begun) + dropped by the full buffer +
    failure drops that were never transmitted + waiting in the buffer.
    Per completed flow: bytes delivered in order = bytes the application sent.
    """
    problems = []
    now = network.sim.now
    for link in network.links.values():
        for d in link.directions:
            d.settle(now)
            if d.arrived != d.tx_pkts + d.dropped + d.aqm_drops + d.failed + d.q_pkts:
                problems.append(f"link {link.id} {d.label}: {d.arrived} offered != {d.tx_pkts} "
                                f"transmitted + {d.dropped} dropped + {d.failed} failed + "
                                f"{d.q_pkts} queued")
    for flow in network.flows.values():
        if flow.finished and not flow.delivered_all():
            problems.append(f"flow {flow.id}: delivered {flow.delivered_bytes} of {flow.data_bytes} "
                            f"bytes (in order: {flow.in_order})")
        if not flow.in_order:
            problems.append(f"flow {flow.id}: delivered data out of order")
    return problems
