"""The sender's bound on the packets in flight (flows/sender.py `MAX_FLIGHT_PKTS`): a window far
above any path (a plugin's slip, 1e15 packets) is sent only up to the bound, logged once per
flow, and the run goes on instead of sending without end in one event. The bound is lowered to
400 packets here, so that it binds within a short run."""
from __future__ import annotations

import logging

import pytest
from networks import dumbbell

import flows.sender
from flows.congestion import WindowError
from netsim.plugins import load_plugin
from netsim.run import Run
from topologies import load_topology


def _window_setter(write_plugin, monkeypatch, window: str, on: str = "ack") -> None:
    """Lower the bound to 400 packets and register "bad", which sets the window to `window` on
    every ACK (`on` "ack") or on TX_START ("tx_start"), and records in `most` the largest
    flight it sees as an ACK comes."""
    monkeypatch.setattr(flows.sender, "MAX_FLIGHT_PKTS", 400)
    load_plugin(write_plugin(body=f"""\
        most = 0

        def on_ack(self, acked_pkts):
            flow = self.flow
            self.most = max(self.most, flow.snd_nxt - flow.snd_una)
            if {on!r} == "ack":
                flow.cwnd = {window}

        def cwnd_event(self, event):
            if event == {on!r}:
                self.flow.cwnd = {window}
    """))


@pytest.mark.parametrize("stack", ["classic", "linux"])
def test_a_huge_window_is_sent_up_to_the_bound_and_logged_once(write_plugin, monkeypatch, caplog,
                                                               stack):
    _window_setter(write_plugin, monkeypatch, "1e15")
    transport = {"stack": stack, "rwnd_kb": 1e12} if stack == "linux" else {"stack": stack}
    topology = dumbbell(1, algorithm="bad", duration_s=1.0, transport=transport)
    run = Run(load_topology(topology))
    with caplog.at_level(logging.WARNING, logger="flows.sender"):
        results = run.execute()
    assert results.summary["stop_reason"] == "duration"
    cc = run.network.flows["F0"].cc
    assert cc.most == 399         # as an ACK comes, one of the 400 sent was just acknowledged
    warnings = [r.getMessage() for r in caplog.records if r.name == "flows.sender"]
    assert warnings == ["algorithm 'bad' of the flow S0 -> D0 set a window of 1e+15 packets: "
                        "at most 400 are sent and not yet acknowledged, whatever the window "
                        "(docs/model.md, \"Transport\")"]


def test_a_window_below_the_bound_is_sent_whole(write_plugin, monkeypatch, caplog):
    _window_setter(write_plugin, monkeypatch, "399.0")
    run = Run(load_topology(dumbbell(1, algorithm="bad", duration_s=1.0)))
    with caplog.at_level(logging.WARNING, logger="flows.sender"):
        run.execute()
    assert run.network.flows["F0"].cc.most == 398           # (399 less the one acknowledged)
    assert not [r for r in caplog.records if r.name == "flows.sender"]


@pytest.mark.parametrize("window", ["5000.0", "float('nan')"])
def test_a_window_set_on_tx_start_is_bounded_and_checked_too(write_plugin, monkeypatch, window):
    """The transport tells the algorithm of a send after idle (TX_START, here the flow's first
    send) and reads the window again after it: that read was not bounded (4 999 packets went out
    in one event with the bound at 400), and a NaN set there sent nothing, with no error."""
    _window_setter(write_plugin, monkeypatch, window, on="tx_start")
    run = Run(load_topology(dumbbell(1, algorithm="bad", duration_s=1.0)))
    if window == "5000.0":
        run.execute()
        assert run.network.flows["F0"].cc.most == 399
    else:
        with pytest.raises(WindowError, match="set cwnd to nan"):
            run.execute()
