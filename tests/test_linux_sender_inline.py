"""The Linux sender's hot paths that repeat another function inline agree with that function.

flows/linux_sender.py runs a few helpers inline on its per-ACK path (each marked "`name`, inline"
in the code): the loss-probe timeout of `TailLossProbe.timeout` (tcp_schedule_loss_probe) in
`_set_xmit_timer`, and `CwndUsage.is_cwnd_limited` in the `is_cwnd_limited` property. These tests
run Linux-stack flows through loss, reordering and duplication, and check at every call that the
inline code gives what the helper it repeats gives in the same state, so that a change to the
helper cannot silently leave the common path behind.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.linux_sender import LinuxSender
from flows.tlp import PROBE, REORDER
from netsim.run import Run
from topologies import load_topology

TOPOLOGY_DIR = Path(__file__).resolve().parent.parent / "topologies"


def impaired_dumbbell(algorithm: str, data_mb: float | None = None) -> dict:
    """The dumbbell on the Linux stack, with loss, jitter, reordering and duplication on its
    bottleneck, every flow `algorithm` (and `data_mb` if given), 8 simulated seconds."""
    data = json.loads((TOPOLOGY_DIR / "dumbbell.json").read_text())
    data["transport"] = {**data.get("transport", {}), "stack": "linux"}
    data["links"][0].update(loss_rate=0.005, jitter_ms=2.0, reorder_rate=0.01,
                            reorder_delay_ms=3.0, duplicate_rate=0.005)
    for flow in data["flows"]:
        flow["algorithm"] = algorithm
        if data_mb is not None:
            flow["data_mb"] = data_mb
    data["duration_s"] = 8.0
    return data


@pytest.mark.parametrize("algorithm, data_mb", [("reno", None), ("bbr", None), ("cubic", 0.2)])
def test_the_timer_after_an_ack_arms_the_probe_tail_loss_probe_timeout_computes(
        algorithm, data_mb, monkeypatch):
    original = LinuxSender._set_xmit_timer
    probes = []

    def checked(self, advanced, sent_new):
        expected = None
        if (self.tlp is not None and self.snd_una < self.high_seq
                and not (self.timer_kind == REORDER and self.timer.active)):
            expected = self.tlp.timeout(self, not sent_new)
        original(self, advanced, sent_new)
        if expected is not None:
            assert self.timer_kind == PROBE
            assert self.timer.deadline == self.sim.now + expected
            probes.append(expected)

    monkeypatch.setattr(LinuxSender, "_set_xmit_timer", checked)
    Run(load_topology(impaired_dumbbell(algorithm, data_mb))).execute()
    assert len(probes) > 100                           # the path was taken, many times


def test_is_cwnd_limited_is_what_the_window_usage_says(monkeypatch):
    original = LinuxSender.on_ack
    answers = []

    def checked(self, ack):
        original(self, ack)
        answer = self.is_cwnd_limited
        assert answer == self.usage.is_cwnd_limited(self.cwnd, self.ssthresh)
        answers.append(answer)

    monkeypatch.setattr(LinuxSender, "on_ack", checked)
    data = impaired_dumbbell("cubic")
    data["flows"][0]["transport"] = {"rwnd_kb": 16}   # limited by the receive window instead
    Run(load_topology(data)).execute()
    assert True in answers and False in answers        # both answers were checked
