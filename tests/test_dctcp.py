"""DCTCP (RFC 8257): alpha once per window of data, cwnd (1 - alpha / 2) on marks, the loader's
ECN requirement."""
from __future__ import annotations

import json

import pytest

from flows import ALGORITHMS
from flows.dctcp import Dctcp
from topologies import load_topology
from topologies.loader import TopologyError


class _Flow:
    def __init__(self, cwnd=100.0):
        self.cwnd = cwnd
        self.ssthresh = float("inf")
        self.snd_una = 0
        self.snd_nxt = 100

    def flight_size(self):
        return self.snd_nxt - self.snd_una


def _window(cc, flow, marked_every):
    """Acknowledge one window (100 packets, one per ACK), every `marked_every`-th with ECE."""
    start = flow.snd_una
    for i in range(100):
        flow.snd_una = start + i + 1
        cc.ecn_ack(1, marked_every and i % marked_every == 0)
    flow.snd_nxt = flow.snd_una + 100


def test_registered_with_defaults():
    assert ALGORITHMS["dctcp"] is Dctcp
    assert Dctcp.PARAMETERS == {"g": 1 / 16, "alpha_init": 1.0}
    assert Dctcp.ecn_echo == "dctcp" and Dctcp.requires_ecn and Dctcp.recovery == "sack"


def test_alpha_is_an_ewma_of_the_marked_fraction_once_per_window():
    flow = _Flow()
    cc = Dctcp(flow)
    assert cc.alpha == 1.0
    _window(cc, flow, 0)        # the first ACK passes window_end = 0: alpha from one ACK
    updates = cc.alpha_updates
    alpha = cc.alpha
    _window(cc, flow, 4)        # 25 % marked
    assert cc.alpha_updates == updates + 1
    # the update happened at the first ACK past window_end; its counters held the rest of the
    # previous window (unmarked) and that ACK (marked)
    assert cc.alpha == pytest.approx((1 - 1 / 16) * alpha + 1 / 16 * (1 / 100))
    for _ in range(200):
        _window(cc, flow, 4)
    assert cc.alpha == pytest.approx(0.25, abs=0.01)


def test_reaction_is_cwnd_times_one_minus_half_alpha():
    flow = _Flow(cwnd=100.0)
    cc = Dctcp(flow, {"alpha_init": 0.5})
    assert cc.ecn_ssthresh() == pytest.approx(75.0)
    flow.cwnd = 3.0
    cc.alpha = 1.0
    assert cc.ecn_ssthresh() == 2.0            # at least two packets


def test_loss_response_is_renos():
    flow = _Flow(cwnd=100.0)
    assert Dctcp(flow).ssthresh() == 50.0      # FlightSize / 2


def test_param_validation():
    assert Dctcp.param_problem("g", 0) is not None
    assert Dctcp.param_problem("g", 1.5) is not None
    assert Dctcp.param_problem("alpha_init", 0) is None
    assert Dctcp.param_problem("alpha_init", 2) is not None


def _topology(**flow):
    return {"name": "t", "hosts": ["A", "B"], "routers": [],
            "links": [{"id": "L", "ends": ["A", "B"], "rate_mbps": 10, "delay_ms": 1,
                       "buffer_kb": 64}],
            "flows": [dict({"id": "F1", "src": "A", "dst": "B", "data_mb": 1}, **flow)]}


def test_dctcp_without_ecn_is_an_error_naming_file_flow_and_field(tmp_path):
    with pytest.raises(TopologyError) as info:
        load_topology(_topology(algorithm="dctcp"))
    message = str(info.value)
    assert message == ('<dict>: flows[0] "F1": field "ecn": algorithm "dctcp" needs ECN: '
                       'expected true, got false')
    with pytest.raises(TopologyError, match='field "ecn": algorithm "dctcp" needs ECN: '
                                            'expected true, got false'):
        load_topology(_topology(algorithm="reno", ecn=False), algorithm="dctcp")
    assert load_topology(_topology(algorithm="dctcp", ecn=True)).flows[0].ecn


def test_the_algorithm_override_dctcp_turns_ecn_on_where_the_file_is_silent():
    spec = load_topology(_topology(algorithm="reno"), algorithm="dctcp")
    assert spec.flows[0].algorithm == "dctcp" and spec.flows[0].ecn
    assert not load_topology(_topology(algorithm="reno"), algorithm="cubic").flows[0].ecn
    assert not load_topology(_topology(algorithm="reno")).flows[0].ecn


def test_cli_exit_status_2_and_one_line(tmp_path):
    import subprocess
    import sys
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_topology(algorithm="dctcp")))
    done = subprocess.run([sys.executable, "-m", "netsim", str(path), "--no-plots", "--quiet",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "t.json" in lines[0] and '"F1"' in lines[0] and '"ecn"' in lines[0]


def test_bad_ecn_value():
    with pytest.raises(TopologyError, match='field "ecn": expected true or false'):
        load_topology(_topology(ecn="yes"))


@pytest.mark.parametrize("g", [1e-320, 5e-324, 2.0 ** -1030, 1e-300])
def test_a_g_too_small_for_its_inverse_shifts_by_the_most(g):
    """1 / g overflowed to inf for a subnormal g (a traceback): Linux's shift is then its most."""
    assert Dctcp(_Flow(), {"g": g}).shift_g == 10


@pytest.mark.parametrize("g", [1.0, 0.5, 1 / 16, 0.3, 2.0 ** -4.5, 1e-3, 2.0 ** -10.5, 1e-200])
def test_the_shift_of_every_normal_g_is_unchanged(g):
    import math
    assert Dctcp(_Flow(), {"g": g}).shift_g == min(max(round(math.log2(1.0 / g)), 0), 10)


@pytest.mark.parametrize("stack", ["classic", "linux"])
def test_a_subnormal_g_runs_on_both_stacks(stack):
    from netsim.run import simulate
    data = _topology(algorithm="dctcp", ecn=True, params={"g": 1e-320})
    data["transport"] = {"stack": stack}
    data["duration_s"] = 1
    assert simulate(load_topology(data)).summary["stop_reason"] in ("completed", "duration")
