"""Flow workloads: short bulk flows opened at Poisson arrivals between random hosts.

Each workload of the topology (`WorkloadSpec`, docs/topology-format.md "Workloads") opens flows
at the arrivals of a Poisson process of rate `arrivals_per_s` from `start_s` to `stop_s` (or the
end of the run); each flow goes from a sender drawn uniformly from `src` to a receiver drawn
uniformly from `dst` (drawn again until it differs from the sender), with a size drawn from the
workload's CDF (inverse transform, linear between the CDF's points, at least 1 byte). These draws
come from the workload's own stream, seeded when the run is built by a draw from the run's one
generator (`sim.rng`), in the order the workloads are listed: a run is reproducible from its seed,
and with the same seed every run offers the same flows at the same times, whatever else draws
from `sim.rng` as it goes (BBR's random phase, random loss, RED, jitter): common random numbers,
so that algorithms or queues compared at equal seeds see the same traffic.

When a flow finishes, one row goes to `fct.csv` (streamed: nothing is kept per flow) and its
completion time and slowdown go into fixed-size log histograms, per workload and size bucket, from
which the summary reports the count, mean, median and 99th percentile. A finished flow is
referenced by nothing: workload flows are never registered with the sampler or the run's flow
table, and the cycles its objects form are collected every so many finished flows
(simulator/garbage.py `CycleBudget`), so memory depends on the number of flows in progress, not
on how many have run; and the
flows in progress are at most MAX_FLOWS_ALIVE (topologies/bounds.py): an overloaded workload
stops the run cleanly there (stop reason "limit"), its results written.

The slowdown divides the flow completion time (FCT: from the flow's start to the moment the
sender has every byte acknowledged) by the FCT the same flow would have on an empty network,
`ideal_fct_s` (see its docstring and docs/model.md "Flow workloads").
"""
from __future__ import annotations

import bisect
import math
import random

from flows import ALGORITHMS
from flows.transport import Flow
from netsim.traces import csv_field
from plot_tool.schema import FCT
from routing.ecmp import direction_paths, set_flow_hashes
from simulator.garbage import CycleBudget
from topologies.bounds import MAX_FLOWS_ALIVE, MAX_TRACE_ROWS, MAX_WINDOW_PACKETS_ALIVE

FCT_COLUMNS = FCT.names     # the results schema's order (the row below follows it)
BUCKETS = ("all", "under_100kb", "100kb_to_10mb", "over_10mb")   # sizes in the topology's units

# Log histograms: 20 buckets per decade (each 12.2 % wide, so an order statistic, reported as
# the geometric middle of its bucket, is within 6 % of the true value) from 1e-6 to 1e6;
# percentiles interpolate linearly between order statistics, as numpy's default (fct.png).
HIST_LOW = 1e-6
HIST_DECADES = 12
HIST_PER_DECADE = 20
EQUAL_REL = 1e-9    # values this close (relative) count as equal to a bucket's smallest or largest


class LogHistogram:
    """Counts of positive values in log-spaced buckets, with their exact count, sum, min, max."""

    __slots__ = ("counts", "lows", "highs", "at_lows", "at_highs", "n", "total", "low", "high")

    def __init__(self):
        self.counts = [0] * (HIST_DECADES * HIST_PER_DECADE)
        self.lows = [math.inf] * len(self.counts)        # each bucket's smallest and largest
        self.highs = [-math.inf] * len(self.counts)
        # how many values equal each bucket's smallest, and its largest, within EQUAL_REL
        self.at_lows = [0] * len(self.counts)
        self.at_highs = [0] * len(self.counts)
        self.n = 0
        self.total = 0.0
        self.low = math.inf
        self.high = -math.inf

    def add(self, value: float) -> None:
        self.n += 1
        self.total += value
        self.low = min(self.low, value)
        self.high = max(self.high, value)
        if value <= HIST_LOW:
            i = 0
        else:
            i = int(math.log10(value / HIST_LOW) * HIST_PER_DECADE)
        i = min(max(i, 0), len(self.counts) - 1)
        self.counts[i] += 1
        low, high = self.lows[i], self.highs[i]
        if value < low:
            self.at_lows[i] = self.at_lows[i] + 1 if value >= low - low * EQUAL_REL else 1
            self.lows[i] = value
        elif value <= low + low * EQUAL_REL:
            self.at_lows[i] += 1
        if value > high:
            self.at_highs[i] = self.at_highs[i] + 1 if value <= high + high * EQUAL_REL else 1
            self.highs[i] = value
        elif value >= high - high * EQUAL_REL:
            self.at_highs[i] += 1

    def mean(self):
        return self.total / self.n if self.n else None

    def quantile(self, q: float):
        """The `q` quantile as numpy's default (and fct.png) define it: linear interpolation
        between the order statistics at ranks floor(h) and ceil(h), h = (n - 1) q (0-based).
        An order statistic is the geometric middle of its bucket, clamped to the smallest and
        largest value the bucket holds, so within 6 % of the value it stands for. It is exact
        among the values equal (within EQUAL_REL) to their bucket's smallest or largest:
        slowdowns of 1, which float rounding puts a hair either side of 1 and so at the top of
        one bucket and the bottom of the next, however many other values share those buckets.
        The smallest and largest of all are exact too."""
        if not self.n:
            return None
        h = (self.n - 1) * q
        lower = math.floor(h)
        low = self._order_statistic(lower)
        if h == lower:
            return low
        return low + (h - lower) * (self._order_statistic(lower + 1) - low)

    def _order_statistic(self, k: int) -> float:
        """The k-th smallest value (0-based), from the buckets."""
        if k <= 0:
            return self.low
        if k >= self.n - 1:
            return self.high
        seen = 0
        for i, count in enumerate(self.counts):
            if seen + count > k:
                rank = k - seen
                if rank < self.at_lows[i]:
                    return self.lows[i]
                if rank >= count - self.at_highs[i]:
                    return self.highs[i]
            seen += count
            if seen > k:
                middle = HIST_LOW * 10 ** ((i + 0.5) / HIST_PER_DECADE)
                return min(max(middle, self.lows[i]), self.highs[i])
        return self.high


class SizeDistribution:
    """Inverse-transform sampling of a CDF ((bytes, cumulative probability), ...)."""

    __slots__ = ("sizes", "probs")

    def __init__(self, cdf):
        self.sizes = [float(s) for s, _ in cdf]
        self.probs = [float(p) for _, p in cdf]

    def sample(self, u: float) -> int:
        i = bisect.bisect_left(self.probs, u)
        if i >= len(self.probs):
            i = len(self.probs) - 1
        if i == 0 or self.probs[i] == self.probs[i - 1]:
            size = self.sizes[i]
        else:
            p0, p1 = self.probs[i - 1], self.probs[i]
            s0, s1 = self.sizes[i - 1], self.sizes[i]
            size = s0 + (s1 - s0) * (u - p0) / (p1 - p0)
        return max(1, round(size))

    def mean(self) -> float:
        """Mean size in bytes (uniform between consecutive points, as `sample` draws)."""
        total = self.sizes[0] * self.probs[0]
        for i in range(1, len(self.sizes)):
            total += (self.probs[i] - self.probs[i - 1]) * (self.sizes[i] + self.sizes[i - 1]) / 2
        return total


SPRAY_PATHS = 64      # packet spraying: the paths (combinations of members) a reference tries


def path_links(src, dst, hash_value: int = 0) -> list | None:
    """The links from host `src` to host `dst` along the current forwarding tables (None: no
    route): at a flow-hash ECMP entry the member a packet hashed `hash_value` takes; when
    spraying, the first member of each set (the packets of one flow take them all)."""
    paths, _ = direction_paths(src.port, dst, hash_value, limit=1)
    return [d.link for d in paths[0]] if paths else None


def _one_path(src, dst, hash_value: int = 0) -> list:
    """[`path_links`] or [] (no route)."""
    links = path_links(src, dst, hash_value)
    return [links] if links else []


def sprayed_links(src, dst) -> list:
    """The paths (lists of links) packets sprayed from `src` to `dst` can take through the
    current tables: every combination of the sets' members, the first SPRAY_PATHS of them."""
    paths, _ = direction_paths(src.port, dst, 0, limit=SPRAY_PATHS)
    return [[d.link for d in path] for path in paths]


def ideal_fct_s(size_bytes: int, links, packet_bytes: int, ack_bytes: int,
                initial_cwnd: float, min_window: float = 1.0, ack_links=None) -> float:
    """FCT of a flow alone on an empty network, its data over `links` (source first) and its
    ACKs back over `ack_links` (destination first; by default `links` reversed), with the
    transport's slow start and no loss (from the initial window; each later round's window at
    least `min_window`, the algorithm's `min_window_pkts`: BBR's 4 packets after the first
    round):

    * base RTT R = the sum over the data path's links of delay + packet x 8 / rate, plus the sum
      over the ACK path's of delay + ACK x 8 / rate (one data packet and its ACK, store and
      forward);
    * bottleneck transmission time of a packet T = packet x 8 / min rate; N = ceil(size / packet);
    * slow start from the initial window w: while the rest does not fit in the window and the
      window does not fill the pipe (w T < R), a round of w packets costs R and the window
      doubles; the last round (or, once the pipe is full, the rest of the flow) of n packets
      costs R + (n - 1) T: its first packet's round trip, then one packet per T at the bottleneck;
    * the flow's last packet holds what is left of its size (as the transport sends it): it costs
      its own transmission time at the bottleneck (the first of the slowest links) instead of T,
      and its own on each link past it, where it may catch up with the full packet before it and
      wait for that one's end (links of the bottleneck's rate); a flow whose last round is that
      packet alone costs its own round trip (R with its size in place of the packet's), so that
      a flow smaller than a packet is not measured against a full packet's round trip, or, if
      later, the ACK of the round before's last packet ((w - 1) T after that round's first).
    """
    if ack_links is None:
        ack_links = links[::-1]
    ack_s = sum(ack_bytes * 8.0 / link.rate_bps + link.delay_s for link in ack_links)
    rtt = sum(link.delay_s + packet_bytes * 8.0 / link.rate_bps for link in links) + ack_s
    rates = [link.rate_bps for link in links]
    b = rates.index(min(rates))                        # the (first) bottleneck
    per_packet = packet_bytes * 8.0 / rates[b]
    remaining = -(-size_bytes // packet_bytes)
    last_bytes = size_bytes - (remaining - 1) * packet_bytes     # flows/transport.py's last packet
    window = max(1, int(initial_cwnd))
    elapsed = 0.0
    before = 0                                  # the packets of the round before the last
    while remaining > window and window * per_packet < rtt:
        elapsed += rtt
        remaining -= window
        before = window
        window = max(window * 2, int(min_window))
    if remaining <= 1:              # the last packet alone: its round trip, unless the ACK of
        return elapsed + max(       # the round before's last packet comes after its own
            sum(link.delay_s + last_bytes * 8.0 / link.rate_bps for link in links) + ack_s,
            (before - 1) * per_packet)
    # the last round: its first packet crosses the links up to the (first) bottleneck, where the
    # round's packets go out one after another; past it the last packet, shorter, crosses each
    # link in its own time, but may catch up with the full packet before it and wait for it
    # (on links of the bottleneck's rate); then its ACK comes back
    full_bits, last_bits = packet_bytes * 8.0, last_bytes * 8.0
    full_done = sum(full_bits / link.rate_bps + link.delay_s for link in links[:b]) \
        + (remaining - 1) * per_packet                 # the full packet before the last: its end
    last_done = full_done + last_bits / rates[b]       # and the last's, at the bottleneck
    delay_s = links[b].delay_s
    for link in links[b + 1:]:
        full_done += delay_s + full_bits / link.rate_bps
        last_done = max(last_done + delay_s, full_done) + last_bits / link.rate_bps
        delay_s = link.delay_s
    return elapsed + last_done + delay_s + ack_s


class FctFile:
    """fct.csv, one row per finished workload flow, written as flows finish."""

    __slots__ = ("path", "rows", "_fh")

    def __init__(self, path):
        self.path = path
        self.rows = 0
        self._fh = open(path, "w", encoding="utf-8", newline="\n", buffering=1 << 16)
        self._fh.write(",".join(FCT_COLUMNS) + "\n")

    def append(self, row: tuple) -> None:
        workload, flow, src, dst, size, start, finish, fct, ideal, slowdown = row
        ids = ",".join(csv_field(str(part)) for part in (workload, flow, src, dst))   # as csv quotes
        self._fh.write(f"{ids},{size},{start:.9g},{finish:.9g},"
                       f"{fct:.9g},{ideal:.9g},{slowdown:.9g}\n")
        self.rows += 1

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    def __len__(self) -> int:
        return self.rows


class Workload:
    """Runs one `WorkloadSpec` in a built network; results in `summary()`."""

    def __init__(self, spec, network, fct_file: FctFile, units, alive=None, stop=None,
                 budget=None):
        self.spec = spec
        self.budget = budget if budget is not None else CycleBudget()   # (shared by a run's)
        self.alive = alive if alive is not None else [0]   # flows in progress, all workloads
        self.stop = stop                    # called with a reason at `max_alive`
        # flows in progress at once (topologies/bounds.py): their first windows held together
        self.window = spec.transport.initial_cwnd_pkts or 10.0   # (None: the stack's, 1 or 10)
        self.max_alive = min(MAX_FLOWS_ALIVE, max(1, int(MAX_WINDOW_PACKETS_ALIVE // self.window)))
        self.sim = network.sim
        # the workload's own stream (module docstring): seeded now, before anything runs
        self.rng = random.Random(self.sim.rng.getrandbits(64))
        self.hosts = network.hosts
        self.src = [network.hosts[h] for h in spec.src]
        self.dst = [network.hosts[h] for h in spec.dst]
        sizes = network.spec.packet_sizes
        self.packet_bytes = sizes.data_bytes
        self.ack_bytes = sizes.ack_bytes
        self.cc_class = ALGORITHMS[spec.algorithm]
        self.sizes = SizeDistribution(spec.sizes)
        self.fct_file = fct_file
        self.small_bytes = 100 * units.bytes_per_kb
        self.large_bytes = 10 * units.bytes_per_mb
        self.fct = {b: LogHistogram() for b in BUCKETS}
        self.slowdown = {b: LogHistogram() for b in BUCKETS}
        self.started = 0
        self.started_in = {b: 0 for b in BUCKETS[1:]}     # flows started, by size bucket
        self.finished = 0
        self.no_route = 0
        self._paths: dict = {}
        self.ecmp_seed = network.seed if network.spec.routing.ecmp == "flow" else None
        self.spraying = network.spec.routing.ecmp == "packet"
        self._at_start: dict = {}    # flow in progress -> (tables' stamp, reference) at its start
        self.listeners = network.flow_listeners    # (shared: a trace may join later)
        self.network = network
        self._paths_at = network.tables_changed     # the tables `_paths` were walked in
        self.sim.schedule_at(spec.start_s + self._gap(), self._arrival)

    def _gap(self) -> float:
        return self.rng.expovariate(self.spec.arrivals_per_s)

    def _arrival(self, _=None) -> None:
        sim, spec = self.sim, self.spec
        if spec.stop_s is not None and sim.now >= spec.stop_s:
            return
        if self.alive[0] >= self.max_alive:   # overloaded: memory would grow without bound
            if self.stop is not None:
                limit = ("MAX_FLOWS_ALIVE" if self.max_alive == MAX_FLOWS_ALIVE else
                         f"MAX_WINDOW_PACKETS_ALIVE / its initial window of {self.window:g} "
                         f"packets")
                self.stop(f"workload {spec.id}: {self.alive[0]} workload flows in progress at "
                          f"once, the limit ({limit}); the offered load "
                          f"({spec.arrivals_per_s:g} flows/s) is more than the network carries")
                return
        if len(self.fct_file) + self.alive[0] >= MAX_TRACE_ROWS:   # a row each once finished
            if self.stop is not None:
                self.stop(f"workload {spec.id}: fct.csv would pass its limit of "
                          f"{MAX_TRACE_ROWS:.3g} rows ({len(self.fct_file)} written, "
                          f"{self.alive[0]} flows in progress)")
                return
        rng = self.rng
        src = self.src[int(rng.random() * len(self.src))]
        dst = src
        while dst is src:
            dst = self.dst[int(rng.random() * len(self.dst))]
        size = self.sizes.sample(rng.random())
        self.started += 1
        self.started_in[self._bucket(size)] += 1
        flow = Flow(sim, f"{spec.id}#{self.started}", src, dst, size, sim.now, self.cc_class,
                    spec.params, spec.transport, self.packet_bytes, self.ack_bytes,
                    ecn=spec.ecn)
        if self.ecmp_seed is not None:
            set_flow_hashes(flow, self.ecmp_seed)
        flow.on_finish = self._finished
        self._at_start[flow] = (self.network.tables_changed, self._ideal(flow))
        for listener in self.listeners:
            listener(flow)
        self.alive[0] += 1
        sim.schedule(self._gap(), self._arrival)

    def _ideal(self, flow) -> float:
        """The flow's empty-network FCT over the paths its data and its ACKs take: each walked
        through the current tables with the flow's own hash in that direction (flow-hash ECMP:
        per flow, two walks of the path's length) or kept per host pair until the tables change
        (without: the paths do not depend on the flow). When spraying, the least over the data's
        paths (up to SPRAY_PATHS), with the ACKs' quickest."""
        src, dst = flow.src, flow.dst
        if self.ecmp_seed is not None:
            data = _one_path(src, dst, flow.sender.flow_hash)
            acks = _one_path(dst, src, flow.receiver.flow_hash)
        else:
            if self.network.tables_changed != self._paths_at:    # the tables changed since
                self._paths.clear()
                self._paths_at = self.network.tables_changed
            key = (src.id, dst.id)
            paths = self._paths.get(key)
            if paths is None:
                walk = sprayed_links if self.spraying else _one_path
                paths = self._paths[key] = (walk(src, dst), walk(dst, src))
            data, acks = paths
        if not data or not acks:
            return math.nan
        ack_bits = self.ack_bytes * 8.0
        quickest = min(acks, key=lambda links: sum(ack_bits / link.rate_bps + link.delay_s
                                                   for link in links))
        window = self.spec.transport.initial_cwnd_pkts
        floor = self.cc_class.min_window_pkts
        return min(ideal_fct_s(flow.data_bytes, links, self.packet_bytes, self.ack_bytes,
                               window, floor, ack_links=quickest) for links in data)

    def _finished(self, flow) -> None:
        self.finished += 1
        self.alive[0] -= 1
        fct = flow.finish_s - flow.start_s
        stamp, ideal = self._at_start.pop(flow)
        if stamp != self.network.tables_changed:    # routes changed while it ran: the lesser
            ideal = min((value for value in (ideal, self._ideal(flow)) if value == value),
                        default=math.nan)           # of its paths' at its start and end (NaN:
            # no route then)
        slowdown = fct / ideal if ideal > 0 else math.nan
        size = flow.data_bytes
        self.fct_file.append((self.spec.id, flow.id, flow.src.id, flow.dst.id, size,
                              flow.start_s, flow.finish_s, fct, ideal, slowdown))
        for b in ("all", self._bucket(size)):
            self.fct[b].add(fct)
            if slowdown == slowdown:
                self.slowdown[b].add(slowdown)
        flow.on_finish = None
        self.budget.dropped(self.alive[0])          # (a finished flow is cyclic garbage)

    def _bucket(self, size: int) -> str:
        return ("under_100kb" if size < self.small_bytes
                else "100kb_to_10mb" if size <= self.large_bytes else "over_10mb")

    def summary(self, bits_per_mbit: float) -> dict:
        spec = self.spec
        mean_size = self.sizes.mean()
        out = {"sizes": spec.sizes_name, "algorithm": spec.algorithm,
               "arrivals_per_s": spec.arrivals_per_s, "mean_size_bytes": _r(mean_size),
               "offered_mbps": _r(spec.arrivals_per_s * mean_size * 8.0 / bits_per_mbit),
               "flows_started": self.started, "flows_completed": self.finished,
               "flows_unfinished": self.started - self.finished}
        for b in BUCKETS:
            fct, slow = self.fct[b], self.slowdown[b]
            started = self.started if b == "all" else self.started_in[b]
            out[b] = {"count": fct.n, "unfinished": started - fct.n, "mean_fct_s": _r(fct.mean()),
                      "p50_fct_s": _r(fct.quantile(0.5)), "p99_fct_s": _r(fct.quantile(0.99)),
                      "mean_slowdown": _r(slow.mean()), "p50_slowdown": _r(slow.quantile(0.5)),
                      "p99_slowdown": _r(slow.quantile(0.99))}
        return out


def _r(value):
    return None if value is None else float(f"{value:.9g}")


def start_workloads(run) -> list:
    """Start the topology's workloads in `run` (a `netsim.run.Run`); fct.csv in its trace
    directory, registered as the trace "fct"."""
    spec = run.spec
    if not spec.workloads:
        return []
    fct_file = FctFile(run.trace_dir / "fct.csv")
    run.traces["fct"] = fct_file
    alive = [0]                     # flows in progress over all workloads (MAX_FLOWS_ALIVE)
    budget = CycleBudget()
    return [Workload(w, run.network, fct_file, spec.units, alive, run.stop_at_limit, budget)
            for w in spec.workloads]
