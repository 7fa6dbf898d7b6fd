"""A stalled flow's samples (netsim/probes.py `FlowProbe.quiet_cwnd`): once a row of zero rates,
no RTT and no counter gains repeats, the probe answers that row while every figure is the very
object it read last. Its rows, their identity (which a trace file's text reuse follows) and the
window's mean must be those of the probe computing every row (`Computing`), on random figure
histories and on real flows that stall on their retransmission timer."""
from __future__ import annotations

import math
from types import SimpleNamespace

from hypothesis import example, given, settings
from hypothesis import strategies as st

from netsim.probes import _LOUD, FlowProbe
from plot_tool.schema import FLOW_COUNTERS
from topologies.spec import TransportSpec


class Computing(FlowProbe):
    """The reference: a flow probe that never takes the stalled flow's path."""

    __slots__ = ()

    def __call__(self, now, span):
        self.quiet_cwnd = _LOUD
        return super().__call__(now, span)


def same_row(a, b) -> bool:
    """Rows equal field by field, NaN matching NaN, and -0.0 told from 0.0."""
    if a is None or b is None or len(a) != len(b):
        return a is b
    return all(repr(x) == repr(y) for x, y in zip(a, b))


def stand_in(counters: str):
    """A flow with plain attributes; its sender keeps one counter where `counter_paths` says
    ("paths"), reports it through `counters()` only ("dict") or has none ("none")."""
    sender = None
    if counters != "none":
        sender = SimpleNamespace(fast_retransmits=0)
        sender.counters = lambda: {"fast_retransmits": sender.fast_retransmits}
        if counters == "paths":
            sender.counter_paths = lambda: (None,) * (len(FLOW_COUNTERS) - 1) + (
                "fast_retransmits",)
    return SimpleNamespace(started=True, start_s=0.0, finish_s=None, bytes_sent=0,
                           delivered_bytes=0, arrived_bytes=0, cwnd=10.0, rtt_sum=0.0,
                           rtt_count=0, sender=sender, cc=None)


# what changes between two samples: nothing; a figure (or the same value as a new object)
steps = st.sampled_from(["none", "none", "none", "bytes", "delivered", "arrived", "rtt",
                         "rtt_sum_only", "cwnd", "cwnd_copy", "cwnd_zero", "cwnd_nan", "counter",
                         "counter_back", "bytes_copy"])


def apply(f, step: str) -> None:
    if step == "bytes":
        f.bytes_sent += 1500
    elif step == "bytes_copy":           # an equal int, another object
        f.bytes_sent = int(str(f.bytes_sent + 10 ** 30)) - 10 ** 30
    elif step == "delivered":
        f.delivered_bytes += 1500
    elif step == "arrived":
        f.arrived_bytes += 1500
    elif step == "rtt":
        f.rtt_sum += 0.02
        f.rtt_count += 1
    elif step == "rtt_sum_only":         # a sum without a sample: no RTT now, a later one moves
        f.rtt_sum += 0.5
    elif step == "cwnd":
        f.cwnd = f.cwnd + 1.0 if f.cwnd == f.cwnd else 1.0
    elif step == "cwnd_copy":            # an equal float, another object
        f.cwnd = float(repr(f.cwnd))
    elif step == "cwnd_zero":
        f.cwnd = 0.0
    elif step == "cwnd_nan":
        f.cwnd = math.nan
    elif step in ("counter", "counter_back") and f.sender is not None:
        f.sender.fast_retransmits += 1 if step == "counter" else -1


@settings(max_examples=300, deadline=None)
@given(history=st.lists(st.tuples(steps, st.sampled_from([0.1, 0.05])), min_size=1,
                        max_size=40),
       counters=st.sampled_from(["paths", "dict", "none"]))
@example(history=[("none", 0.1)] * 4 + [("rtt_sum_only", 0.1), ("none", 0.1), ("rtt", 0.1)],
         counters="paths")
@example(history=[("none", 0.1)] * 4 + [("counter", 0.1), ("none", 0.1)], counters="paths")
@example(history=[("none", 0.1)] * 4 + [("cwnd_nan", 0.1), ("none", 0.05), ("none", 0.1)],
         counters="none")
def test_rows_are_those_of_computing_every_row(history, counters):
    fast_flow, slow_flow = stand_in(counters), stand_in(counters)
    fast, slow = FlowProbe(fast_flow, 1e6), Computing(slow_flow, 1e6)
    now = 0.0
    fast_rows: list = []
    slow_rows: list = []
    for step, span in history:
        for f in (fast_flow, slow_flow):
            apply(f, step)
        now += span
        fast_rows.append(fast(now, span))
        slow_rows.append(slow(now, span))
        assert same_row(fast_rows[-1], slow_rows[-1])
        # the same tuple again exactly when the reference gives its last row again
        assert (len(fast_rows) > 1 and fast_rows[-1] is fast_rows[-2]) == (
            len(slow_rows) > 1 and slow_rows[-1] is slow_rows[-2])
    assert fast.window_rows == slow.window_rows
    assert repr(fast.window_sum) == repr(slow.window_sum)


def test_a_stalled_flow_takes_the_short_path(make_flow):
    """Real flows on both stacks, with losses and retransmission timeouts (a 3 kB buffer),
    sampled every 5 ms: the rows equal the reference's, and some are answered as stalled."""
    answered = 0
    for stack in ("classic", "linux"):
        runs = []
        for probe_class in (FlowProbe, Computing):
            sim, _h1, _h2, flow = make_flow(packets=400, buffer_bytes=3000,
                                            transport=TransportSpec(stack=stack))
            probe = probe_class(flow, 1e6)
            rows = []
            for tick in range(1, 400):
                sim.run(until=tick * 0.005)
                quiet = probe.quiet_cwnd is not _LOUD
                row = probe(tick * 0.005, 0.005)
                answered += quiet and row is probe.last_row
                rows.append(row)
            runs.append((rows, probe.window_sum, probe.window_rows))
        (fast_rows, fast_sum, fast_n), (slow_rows, slow_sum, slow_n) = runs
        assert all(same_row(a, b) for a, b in zip(fast_rows, slow_rows))
        assert (fast_sum, fast_n) == (slow_sum, slow_n)
    assert answered > 100
