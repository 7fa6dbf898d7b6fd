"""An AIMD congestion control as a netsim plugin: additive increase of `a` packets per RTT,
multiplicative decrease to `b` times the window on a loss, SACK recovery.

    python initializer.py topologies/lossy_link.json --plugin experiments/plugins/aimd.py \
        --algorithm aimd
    python initializer.py sweep experiments/plugin_aimd.json --plugin experiments/plugins/aimd.py

With a = 1, b = 0.5 it is Reno's window rule; the defaults (a = 1, b = 0.8) back off less and
so keep a fuller pipe after a loss, at the price of a larger standing queue.
"""
from flows.congestion import CongestionControl


class Aimd(CongestionControl):
    name = "aimd"
    PARAMETERS = {"a": 1.0, "b": 0.8}
    recovery = "sack"
    __slots__ = ()

    @classmethod
    def param_problem(cls, name, value):
        problem = super().param_problem(name, value)
        if problem is None and name == "b" and not value < 1:
            return "expected a factor in (0, 1)"
        return problem

    def on_ack(self, acked_pkts):
        flow = self.flow
        if flow.cwnd < flow.ssthresh:                  # slow start up to ssthresh
            acked_pkts = self.slow_start(acked_pkts)
        if acked_pkts > 0:                             # then a packets per window of ACKs
            flow.cwnd += self.params["a"] * acked_pkts / flow.cwnd

    def ssthresh(self):
        return max(self.params["b"] * self.flow.flight_size(), 2.0)
