"""Test plugin of tests/test_sweep_run_timeout.py: Reno's window rule, except that with `mode` = 2
its first ACK never returns (a busy loop), with `mode` = 3 it sleeps for ever in a loop that
catches every Exception, as a hook written to be robust might, and with `mode` = 4 in one that
catches everything (a bare except:)."""
import time
from typing import ClassVar

from flows.congestion import CongestionControl


class Hang(CongestionControl):
    name = "hang"
    PARAMETERS: ClassVar[dict] = {"mode": 1.0}
    recovery = "sack"
    __slots__ = ()

    def on_ack(self, acked_pkts):
        mode = self.params["mode"]
        while mode == 2:
            pass
        while mode == 3:
            try:
                time.sleep(1000)
            except Exception:
                pass
        while mode == 4:
            try:
                time.sleep(1000)
            except BaseException:    # noqa: BLE001 (what the test is about)
                pass
        flow = self.flow
        if flow.cwnd < flow.ssthresh:
            acked_pkts = self.slow_start(acked_pkts)
        if acked_pkts > 0:
            flow.cwnd += acked_pkts / flow.cwnd

    def ssthresh(self):
        return max(0.5 * self.flow.flight_size(), 2.0)
