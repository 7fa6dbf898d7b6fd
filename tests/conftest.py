"""Shared fixtures: paths of the shipped topologies, topology factories, the figures the docs
quote, and the helpers of the transport and congestion-control tests (one-link flows, packet
droppers, a stand-in flow)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOPOLOGIES = sorted((ROOT / "topologies").glob("*.json"))


@pytest.fixture
def root() -> Path:
    return ROOT


def _quoted(pattern: str, *files: str) -> list:
    """The numbers the groups of `pattern` match in each of `files` (paths from the checkout,
    whitespace folded to single spaces, a digit group such as "1 065" read as 1065): one tuple
    of floats per file."""
    found = []
    for name in files:
        text = " ".join((ROOT / name).read_text(encoding="utf-8").split())
        match = re.search(pattern, text)
        assert match, f"{name} no longer quotes {pattern!r}"
        found.append(tuple(float(group.replace(" ", "")) for group in match.groups()))
    return found


@pytest.fixture
def quoted():
    """`quoted(pattern, *files)`: the figures README.md or docs/ quote, for a test that measures
    them to compare, so that a change that moves a figure fails instead of leaving the docs
    stale."""
    return _quoted

# Property tests are deterministic: the same examples on every machine and every run (no local
# example database), so a red or green result never depends on where the suite ran.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("deterministic", derandomize=True, database=None,
                                      print_blob=True)
_hypothesis_settings.load_profile("deterministic")


@pytest.fixture
def dumbbell():
    """A factory of N-pair dumbbell topologies (dicts) from the shared builder (tests/networks.py):
    S_i -> D_i (i from 0) over a 10 Mb/s, 20 ms, 55 kB bottleneck L (R1-R2), 100 Mb/s access
    links A_i (S_i-R1) and B_i (R2-D_i) with 200 kB buffers, `total_mb` split evenly over Reno
    flows F_i."""
    from networks import dumbbell as build

    def make(pairs: int, total_mb: float = 32.0, start_s: float = 0.0) -> dict:
        return build(pairs, rate_mbps=10.0, delay_ms=20.0, buffer_kb=55.0, access_rate_mbps=100.0,
                     access_buffer_kb=200.0, data_mb=total_mb / pairs, start_s=start_s,
                     name=f"dumbbell_{pairs}")
    return make


@pytest.fixture
def run_cli():
    """Run `python initializer.py ARGS...` in a child process; returns the CompletedProcess."""
    import subprocess
    import sys

    def run(*args, cwd=None, timeout=120):
        return subprocess.run([sys.executable, str(ROOT / "initializer.py"), *map(str, args)],
                              capture_output=True, text=True, cwd=cwd, timeout=timeout)
    return run


# -- transport and congestion-control helpers (test_transport, test_recovery, test_pacing_and_
# rate_samples and the algorithm tests) ---------------------------------------------------------
class _FlowFactory:
    """make_flow(packets=200, algorithm=Reno, buffer_bytes=10**6, transport=None,
    data_bytes=None, endless=False) -> (sim, h1, h2, flow): one flow H1 -> H2 over a single
    full-duplex link of RATE_BPS (1000 B packets take 1 ms) and DELAY_S, 1000 B data packets and
    40 B ACKs, starting at t = 0. The hosts accept per-instance replacements of their methods."""

    RATE_BPS = 8e6
    DELAY_S = 0.005

    def __call__(self, packets=200, algorithm=None, buffer_bytes=10**6, transport=None,
                 data_bytes=None, endless=False):
        from components.link import Link
        from components.node import Host
        from flows.reno import Reno
        from flows.transport import Flow
        from simulator.engine import Simulator
        from topologies.spec import TransportSpec

        class SpyHost(Host):
            """A Host whose methods tests may replace per instance (no __slots__ here)."""

        sim = Simulator(1)
        h1, h2 = SpyHost("H1"), SpyHost("H2")
        Link(sim, "L1", h1, h2, self.RATE_BPS, self.DELAY_S, buffer_bytes, "full")
        data = None if endless else (data_bytes if data_bytes else packets * 1000)
        flow = Flow(sim, "F1", h1, h2, data, 0.0, algorithm or Reno, None,
                    transport or TransportSpec(), 1000, 40)
        return sim, h1, h2, flow


@pytest.fixture
def make_flow():
    """A factory of one-link flows (see `_FlowFactory`); `make_flow.RATE_BPS` is the link rate."""
    return _FlowFactory()


def _drop_at(host, predicate):
    """Make the link discard packets arriving at `host` for which predicate(packet) is true;
    returns the list the discarded packets are appended to."""
    direction = next(d for d in host.links[0].directions if d.dst is host)
    receive = direction.dst_receive
    dropped = []

    def filtered(packet):
        if predicate(packet):
            dropped.append(packet)
            return
        receive(packet)
    direction.dst_receive = filtered
    return dropped


@pytest.fixture
def drop_at():
    """drop_at(host, predicate): discard packets arriving at `host` (see `_drop_at`)."""
    return _drop_at


def _drop_first_copy(seqs):
    """A drop_at predicate that drops the first copy of each data packet in `seqs`."""
    from components.packet import DATA

    pending = set(seqs)

    def predicate(packet):
        if packet.kind == DATA and packet.seq in pending:
            pending.discard(packet.seq)
            return True
        return False
    return predicate


@pytest.fixture
def drop_first_copy():
    return _drop_first_copy


@pytest.fixture
def fake_flow():
    """fake_flow(cwnd=10.0, ssthresh=inf, flight=None, srtt=None, seed=1): a stand-in flow, the
    public one plugin authors test with (flows.testing.StandInFlow)."""
    from flows.testing import StandInFlow
    return StandInFlow


@pytest.fixture(autouse=True)
def _algorithm_registry():
    """Algorithms a test registers (plugins, sweep files listing "plugins") are removed after it."""
    from flows import ALGORITHMS
    before = dict(ALGORITHMS)
    yield
    if ALGORITHMS != before:
        ALGORITHMS.clear()
        ALGORITHMS.update(before)


class _PluginWriter:
    """write_plugin(body, sack=False) -> Path: writes `bad_cc.py` in the test's tmp_path, a plugin
    defining the algorithm "bad" (a `CongestionControl` whose class body is `body`, dedented),
    recovering by SACK if `sack`; `first_line` is the file line of body's first line (the same
    either way), for the line numbers of failure messages."""

    HEADER = ("from flows.congestion import CongestionControl, RecoveryMode\n\n\n"
              "class Bad(CongestionControl):\n"
              "    name = \"bad\"\n"
              "    recovery = {recovery}\n")
    first_line = HEADER.count("\n") + 1

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def __call__(self, body: str, sack: bool = False) -> Path:
        import textwrap
        recovery = "RecoveryMode.SACK" if sack else "CongestionControl.recovery"
        path = self.directory / "bad_cc.py"
        path.write_text(self.HEADER.format(recovery=recovery)
                        + textwrap.indent(textwrap.dedent(body), "    "))
        return path


@pytest.fixture
def write_plugin(tmp_path):
    """A writer of one-class plugin files (see `_PluginWriter`)."""
    return _PluginWriter(tmp_path)
