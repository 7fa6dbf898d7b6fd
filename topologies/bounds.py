"""The bounds of a run, in one place (documented in docs/outputs.md, "Bounds and rules", and the
README): what keeps every run resolvable in time, bounded in memory and in output size.

Time. Simulated time is a float (seconds). At time t the clock resolves steps of about
t * 2.2e-16 s, so a delay vanishes (t + delay == t) once t is large enough: at t = 1e15 s a
microsecond RTT is zero and FAST divides by it. Every time value of an input (start and stop
times, event and schedule times, durations, delays, timeouts, intervals; in seconds or ms) is
therefore either 0 where 0 is allowed, or within [TIME_RESOLUTION_S, MAX_TIME_S]: at MAX_TIME_S
the clock still resolves 1e-10 s, ten times finer than TIME_RESOLUTION_S, the smallest delay an
input may give.

Timers. A periodic timer of one flow or one link (an algorithm's tick, such as FAST's window
update or a plugin's tick_interval_s; PIE's drop-probability update) fires at most every
MIN_TIMER_INTERVAL_S (10 us, shorter than a data-center RTT): at 1e-9 s one flow's timer alone
made a run of seconds last hours. Bellman-Ford rounds, which send
a vector over every link, are at least MIN_ROUTING_INTERVAL_S apart.

Rates. A workload's Poisson arrivals are refused when their mean gap (1 / arrivals_per_s) is
below TIME_RESOLUTION_S, and so is a cbr or onoff flow whose packets (one data packet every
packet_bytes * 8 / rate_bps seconds, topologies/load_flows.py) would come closer than that: the
clock could not advance between them.

Link rates. A link's rate (rate_mbps, and each rate of its rate_schedule) is at least what
transmits the topology's largest packet (data, ACK, or routing with Bellman-Ford) within
MAX_TIME_S (min_rate_bps): a slower link could not finish one packet in the time a run may
simulate, and rates near the smallest floats make transmission times infinite (NaN in the
link's statistics).

Data. A flow's data_mb is at most what its hosts' links carry in MAX_TIME_S (the slower of
the two, at its fastest rate over its rate schedule: every byte crosses both), and at most
MAX_DATA_BYTES: a larger transfer could not end within the time the clock resolves, and would
run for days of wall time first (topologies/load_flows.py). A transport's receive window
(rwnd_kb) is at most MAX_RWND_KB, the same MAX_DATA_BYTES in kB of 1000 bytes: a larger window
bounds nothing a flow may send (and its packet count would overflow a float).

Memory. Flows of workloads alive at once are at most MAX_FLOWS_ALIVE (about 2 to 4 kB each
without their packets), and at most MAX_WINDOW_PACKETS_ALIVE / the workload's initial window
(`initial_cwnd_pkts`): a flow's first window goes out at once, and a sender keeps what it has
sent until it is acknowledged (about 100-200 bytes a packet in the Linux stack), so 50 000
flows of an initial window of 100 000 packets would hold gigabytes. An overloaded workload
stops the run cleanly at that point, with a warning, and its results are written (stop reason
"limit").

Output. The trace files (links.csv, flows.csv, hosts.csv) get at most MAX_TRACE_ROWS rows, counted
as sampling instants (duration / interval) times traced entities (link directions, flows,
hosts): a sampling interval with which the busiest entities alone (the flows, the hosts of flows
and workloads, their links' directions: netsim/run.py `busy_entities`) would write more over a
run of known length (nothing but its duration ends it) is refused (with the smallest interval
that fits); a run of unknown length (no duration, or one that only caps flows that may complete
first), or of known length whose idle entities could pass the limit if they were busy, stops
cleanly when it reaches the limit (stop reason "limit").
"""
from __future__ import annotations

import math
import numbers

from flows.congestion import MIN_TICK_INTERVAL_S

TIME_RESOLUTION_S = 1e-9      # the smallest positive time value (delay, duration, gap) accepted
MAX_TIME_S = 1e6              # the largest time value accepted (11.6 days of simulated time)
MAX_RUN_TIME_S = 2 * MAX_TIME_S  # where a run without a duration stops: a flow may start at
                              # MAX_TIME_S with data its links carry in MAX_TIME_S
MAX_ARRIVALS_PER_S = 1.0 / TIME_RESOLUTION_S   # a workload's mean gap >= TIME_RESOLUTION_S
MAX_FLOWS_ALIVE = 50_000      # workload flows in progress at once
MAX_WINDOW_PACKETS_ALIVE = 5_000_000   # their initial windows together, in packets
MAX_TRACE_ROWS = 20_000_000   # rows of the trace files of one run (about 1 GB of CSV)
MIN_ROUTING_INTERVAL_S = 1e-3  # Bellman-Ford rounds (each router's vector to each neighbour)
BOUND_ROUNDING = 1e-12        # relative: a value this close to a bound in another unit is at it
MIN_TIMER_INTERVAL_S = MIN_TICK_INTERVAL_S  # a periodic timer of one flow or link: an
                               # algorithm's tick (FAST's update_interval_s, a plugin's
                               # tick_interval_s), PIE's tupdate_ms
MAX_DATA_BYTES = 10 ** 18     # a flow's data (1 EB; the integers an input may hold have 20 digits)
MAX_RWND_KB = MAX_DATA_BYTES / 1000.0   # a receive window, kB of 1000 bytes (1e15: 1 EB)
# a link's rate and buffer, in the topology's units: 1e18 bit/s and 1 EB, so that every number
# of summary.json stays within the readers' magnitude (plot_tool.json_fields.MAX_MAGNITUDE)
MAX_RATE_MBPS = 1e12
# a flow's initial window: the packets it sends at once when it starts, in one event (1e9 made
# that event last for ever, deaf to Ctrl-C); 100 000 packets is 150 MB, beyond any path's BDP
MAX_INITIAL_CWND_PKTS = 1e5
MAX_BUFFER_KB = 1e15
# a run's seed (the topology's "seed", --seed, simulate(seed=...)): an integer of at most 20
# digits, the most an input's integer may hold, so that summary.json's readers take it back
MAX_SEED = 10 ** 20 - 1


def min_rate_bps(packet_bytes: int) -> float:
    """The slowest link rate (bit/s): a packet of `packet_bytes` (the largest the topology
    sends) is transmitted within MAX_TIME_S."""
    return packet_bytes * 8.0 / MAX_TIME_S


def max_data_bytes(access_bps: float) -> float:
    """The most data a flow may carry over hosts' links of at most `access_bps`: what they
    carry in MAX_TIME_S, at most MAX_DATA_BYTES."""
    return min(access_bps * MAX_TIME_S / 8.0, float(MAX_DATA_BYTES))


def time_problem(value: float, *, unit: str = "s", zero: bool = True) -> str | None:
    """None if `value` (a finite number of seconds, or of milliseconds for unit "ms") is a usable
    time value: 0 (when `zero`) or within [TIME_RESOLUTION_S, MAX_TIME_S]; else 'expected ...'
    for the caller's message."""
    scale = 1e3 if unit == "ms" else 1.0
    if value == 0 and zero:
        return None
    # (the bounds in ms are products that may round up: 1e-9 * 1e3 > 1e-6, which the message
    # prints as the bound; a value within rounding of a bound is at it)
    if TIME_RESOLUTION_S * scale * (1.0 - BOUND_ROUNDING) <= value \
            <= MAX_TIME_S * scale * (1.0 + BOUND_ROUNDING):
        return None
    low = "0 or " if zero else ""
    return (f"expected {low}a time from {TIME_RESOLUTION_S * scale:g} {unit} to "
            f"{MAX_TIME_S * scale:g} {unit}")


def seed_problem(seed) -> str | None:
    """None if `seed` is a usable seed: an integer (not a bool) from 0 to MAX_SEED; else
    'expected ..., got ...' for the caller's message (a huge integer is described, not printed:
    Python refuses to write one of more than 4 300 digits)."""
    if seed.__class__ is not bool and isinstance(seed, numbers.Integral) and (
            0 <= int(seed) <= MAX_SEED):                  # (numpy's integers too)
        return None
    shown = (f"an integer of {seed.bit_length()} bits" if isinstance(seed, int)
             and seed.bit_length() > 1000 else repr(seed))
    return (f"expected a non-negative integer of at most {len(str(MAX_SEED))} digits (as a "
            f"topology's seed), got {shown}")


def trace_rows(duration_s: float, interval_s: float, entities: int) -> float:
    """Rows the trace files of a run of `duration_s` get at most (sampling instants x entities)."""
    return math.ceil(duration_s / interval_s) * max(1, entities)
