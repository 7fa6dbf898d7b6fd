"""Test plugin of tests/test_sweep_worker_deaths.py: Reno's window rule, except that with
`mode` = 2 it kills its own process with SIGKILL at its first ACK, as the out-of-memory killer
would kill a sweep's worker, and with `mode` = 3 it does so once: only if the file named by
$NETSIM_TEST_KILL_ONCE does not exist yet (it creates it), as a worker killed from outside.

It only ever kills a worker process (a child of multiprocessing: a pool's worker or a Dask
nanny's): in any other process it raises instead, so that a mistake never kills the tests."""
import multiprocessing
import os
import signal
from typing import ClassVar

from flows.congestion import CongestionControl


def _kill_this_worker() -> None:
    if multiprocessing.parent_process() is None:
        raise RuntimeError("sweep_killer_plugin: not in a worker process, not killing it")
    os.kill(os.getpid(), signal.SIGKILL)


class Killer(CongestionControl):
    name = "killer"
    PARAMETERS: ClassVar[dict] = {"mode": 1.0}
    recovery = "sack"
    __slots__ = ()

    def on_ack(self, acked_pkts):
        mode = self.params["mode"]
        if mode == 2:
            _kill_this_worker()
        elif mode == 3:
            flag = os.environ.get("NETSIM_TEST_KILL_ONCE")
            if flag:
                try:
                    os.close(os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                except FileExistsError:
                    pass
                else:
                    _kill_this_worker()
        flow = self.flow
        if flow.cwnd < flow.ssthresh:
            acked_pkts = self.slow_start(acked_pkts)
        if acked_pkts > 0:
            flow.cwnd += acked_pkts / flow.cwnd

    def ssthresh(self):
        return max(0.5 * self.flow.flight_size(), 2.0)
