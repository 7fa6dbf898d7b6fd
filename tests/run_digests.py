"""Digests of a run for the identity tests: every packet arrival at a node, and the final
figures of every flow and link direction (tests/test_identity.py,
tests/test_linux_stack_identity.py). A helper module, not a test module:
``from run_digests import digests``.
"""
from __future__ import annotations

import hashlib

from components.link import sojourn_quantile
from netsim.run import Run


def record_arrivals(run: Run, digest) -> list:
    """Feed every packet arrival at a node to `digest` (innermost receive callback of each
    direction, inside failure guards and impairments); returns a one-item list counting them."""
    count = [0]
    sim = run.sim
    for link in run.network.links.values():
        for d in link.directions:
            parent, inner = None, d.dst_receive
            while hasattr(inner, "receive") and not hasattr(inner, "__self__"):
                parent, inner = inner, inner.receive
            node = d.dst.id

            def receive(packet, _inner=inner, _node=node):
                count[0] += 1
                digest.update(f"{sim.now!r} {_node} {packet.kind} {packet.src.id} "
                              f"{packet.dst.id} {packet.size_bytes} {packet.seq} "
                              f"{packet.ack_seq} {packet.sack_seq} {packet.sent_s!r} "
                              f"{packet.retx} {packet.ce}\n".encode())
                _inner(packet)

            if parent is None:
                d.dst_receive = receive
            else:
                parent.receive = receive
    return count


def figures_text(run: Run) -> str:
    """The final figures of every flow and link direction, as text (floats exact)."""
    lines = [f"end {run.sim.now!r}"]
    for fid, f in sorted(run.network.flows.items()):
        s = getattr(f, "sender", None)
        if s is None:
            continue
        lines.append(f"flow {fid} {s.finish_s!r} {s.packets_sent} {s.bytes_sent} "
                     f"{s.retransmissions} {s.timeouts} {s.cwnd!r} {s.ssthresh!r} "
                     f"{s.snd_una} {s.rtt.srtt!r} {s.rtt.rto!r} {s.rtt.rtt_sum!r} "
                     f"{s.rtt.rtt_count} {f.receiver.delivered_bytes} {s.ecn_echoes}")
    for lid, link in sorted(run.network.links.items()):
        for d in link.directions:
            d.settle(run.sim.now)
            lines.append(f"link {lid} {d.label} {d.arrived} {d.dropped} {d.tx_pkts} {d.tx_bytes} "
                         f"{d.area_bytes!r} {d.area_pkts!r} {d.area_work!r} {d.soj_sum!r} "
                         f"{sojourn_quantile(d, 0.5)!r} {sojourn_quantile(d, 0.99)!r} "
                         f"{d.failed} {d.lost_in_flight} {d.impaired_drops} {d.duplicated} "
                         f"{d.delayed} {d.routing_pkts} {d.routing_bytes} {d.marks} "
                         f"{d.aqm_drops}")
    return "\n".join(lines)


def counters_text(run: Run) -> list:
    """One line per flow with its transport counters (RTOs, loss probes, RACK marks ...)."""
    return [f"counters {fid} {sorted(flow.sender.counters().items())}"
            for fid, flow in sorted(run.network.flows.items())
            if getattr(flow, "sender", None) is not None]


def digests(run: Run, with_counters: bool = False) -> tuple:
    """Execute `run`: (arrivals digest, figures digest, number of arrivals), the figures with
    every flow's counters if `with_counters`."""
    arrivals = hashlib.sha256()
    count = record_arrivals(run, arrivals)
    run.execute()
    lines = [figures_text(run), *(counters_text(run) if with_counters else ())]
    figures = hashlib.sha256("\n".join(lines).encode())
    return arrivals.hexdigest()[:24], figures.hexdigest()[:24], count[0]
