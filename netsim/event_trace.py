"""Packet event trace (``--trace FILE``): every packet event of a run, streamed to CSV or JSON Lines.

Events (docs/outputs.md, "Event trace"):

* one per packet offered to a link direction (by a host or a router), by what the link did:
  ``transmit`` (the transmitter was idle: transmission begins at once), ``enqueue`` (it waits
  in the buffer; ``start_s`` is when its transmission will begin, known at once because the
  queue is FIFO) or ``drop`` (``cause``: ``overflow``, the buffer was full, or ``link_down``);
* one per packet arriving at a node at the far end of a link: ``receive`` (the node then
  delivers it, forwards it — a new offer — or counts it as a no-route drop);
* one per packet the link accepted and lost before it arrived, at the time it would have
  arrived: ``drop`` with cause ``impairment`` (random or burst loss of a link impairment) or
  ``link_failure`` (waiting, in transmission or propagating when the link failed); a packet
  waiting in a queue discipline's buffer has its ``drop`` line when the discipline drops it or
  when the link fails.

So every packet offered to a link has one offer line (each direction's `arrived` counter) and,
unless still in flight at the end, one outcome line (``receive``, twice for a duplicated
packet, or an in-transit ``drop``); drop lines by cause add up to summary.json's ``drops``
(overflow), ``impairment_drops`` and ``failure_drops`` (``link_down`` + ``link_failure``).

Cost when off: nothing. Tracing is switched on per run by `EventTrace.install`, which swaps the
class of each `LinkDirection` for a tracing subclass (same slots, `send` traced) and wraps the
innermost receive callback of each direction (and the classes of its impairment and failure
guard, to see their losses); without a trace the simulator's code is the same
objects and methods as ever. Lines are written through a buffered file (1 MiB), so memory stays
bounded however long the run; the file is written under a hidden temporary name beside the
target and renamed into place by `commit` when the run's results are in place, so a run that
fails (a full disk) or is killed never leaves a truncated trace.
"""
from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

from components.packet import ACK, KIND_NAMES
from components.queues import AqmTransmitter, FifoAqm
from netsim.traces import csv_field

FIELDS = ("time_s", "event", "node", "link", "direction", "flow", "kind", "seq", "size_bytes",
          "cause", "start_s")
BUFFER_BYTES = 1 << 20


class TraceError(ValueError):
    """The trace file cannot be written."""


class EventTrace:
    """Writes the packet events of one network to `path` (CSV, or JSON Lines for ``.jsonl``)."""

    def __init__(self, path):
        from netsim.output_paths import AtomicFile
        self.path = Path(path)
        self.jsonl = self.path.suffix.lower() in (".jsonl", ".ndjson")
        try:
            self.out = AtomicFile(self.path, "w", encoding="utf-8", newline="",
                                  buffering=BUFFER_BYTES)
            self.fh = self.out.fh
        except OSError as exc:
            raise TraceError(f"--trace {self.path}: cannot write the trace file: "
                             f"{exc.strerror or exc}") from None
        if not self.jsonl:
            self.fh.write(",".join(FIELDS) + "\n")
        self.lines = 0
        # a node's, link's or direction's id -> its CSV field (quoted when it holds a comma,
        # quote or line break, as the other CSV files quote ids); JSON Lines: the id itself
        self.fields: dict = {"": ""}
        self.flow_of: dict = {}           # id(a flow's part) -> the flow's field (as above)
        self.forget_after_s = 60.0        # a finished workload flow's name is kept this long
        # (time to forget, name, ids) of the finished workload flows, in time order
        self.finished: deque = deque()
        self.wrapper_classes: dict = {}
        self.direction_of: dict = {}      # id(failure guard) -> its direction (kept alive by it)
        # link id -> time of its last scheduled change (after 0): of rate or delay; of rate
        self.changes_until: dict = {}
        self.rate_changes_until: dict = {}

    # -- writing ------------------------------------------------------------------------------
    def emit(self, now, event, node, link, direction, packet, cause="", start_s=None) -> None:
        owner = getattr(packet.deliver, "__self__", None)
        flow = self.flow_of.get(id(owner), "") if owner is not None else ""
        kind = packet.kind
        seq = packet.ack_seq if kind == ACK else packet.seq
        self.lines += 1
        if self.jsonl:
            record = {"time_s": now, "event": event, "node": node, "link": link,
                      "direction": direction, "flow": flow, "kind": KIND_NAMES[kind], "seq": seq,
                      "size_bytes": packet.size_bytes}
            if cause:
                record["cause"] = cause
            if start_s is not None:
                record["start_s"] = start_s
            self.fh.write(json.dumps(record, separators=(",", ":")) + "\n")
        else:
            fields = self.fields
            try:
                ids = f"{fields[node]},{fields[link]},{fields[direction]}"
            except KeyError:
                ids = ",".join([self._field(part) for part in (node, link, direction)])
            self.fh.write(f"{now!r},{event},{ids},{flow},{KIND_NAMES[kind]},"
                          f"{seq},{packet.size_bytes},{cause},"
                          f"{'' if start_s is None else repr(start_s)}\n")

    def _field(self, text: str) -> str:
        """The CSV field of an id, made once (`fields`)."""
        field = self.fields.get(text)
        if field is None:
            field = self.fields[text] = text if self.jsonl else csv_field(text)
        return field

    def finish(self) -> None:
        """Write out what is buffered (OSError when the disk is full)."""
        if not self.fh.closed:
            self.fh.flush()

    def commit(self) -> None:
        """Put the complete trace file in place (it is written under a temporary name beside
        it, so that a failed or killed run never leaves a truncated trace)."""
        if not self.out.done:
            self.out.commit()

    close = commit

    def discard(self) -> None:
        """Remove the trace written so far (the previous file at the path, if any, stays)."""
        self.out.discard()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is None:
            self.commit()
        else:
            self.discard()

    # -- hooking in ---------------------------------------------------------------------------
    def trace_wrapper(self, wrapper, d) -> None:
        """Switch an arrival wrapper of direction `d` (impairment, failure guard) to its tracing
        subclass."""
        cls = type(wrapper)
        if cls in self.wrapper_classes.values():
            return
        if cls not in self.wrapper_classes:
            self.wrapper_classes[cls] = _traced_wrapper_class(self, cls)
        self.direction_of[id(wrapper)] = d
        wrapper.__class__ = self.wrapper_classes[cls]

    def install(self, network) -> None:
        """Trace every link direction and node of `network` (before it runs)."""
        for flow in network.flows.values():
            self._name_flow(flow)
        listeners = getattr(network, "flow_listeners", None)
        spec = getattr(network, "spec", None)
        if listeners is not None:                 # the flows workloads open as the run goes
            if spec is not None:
                from netsim.run import cut_off_wait_s
                self.forget_after_s = cut_off_wait_s(spec)
            listeners.append(self._name_workload_flow)
        for ls in (spec.links if spec is not None else ()):
            times = [t_s for t_s, _ in (*ls.rate_schedule, *ls.delay_schedule) if t_s > 0]
            if times:
                self.changes_until[ls.id] = max(times)
            rates = [t_s for t_s, _ in ls.rate_schedule if t_s > 0]
            if rates:
                self.rate_changes_until[ls.id] = max(rates)
        tracing: dict = {}
        for link in network.links.values():
            for d in link.directions:
                cls = type(d)
                if cls not in tracing:
                    tracing[cls] = _tracing_class(self, cls)
                d.__class__ = tracing[cls]
                self._wrap_receive(d)
                if hasattr(d.transmitter, "on_queued_drop"):     # a queue discipline
                    d.transmitter.on_queued_drop = self._queued_drop

    def _name_flow(self, flow) -> str:
        """Name `flow`'s packets in the `flow` column: they are delivered to its sender or
        receiver (a TCP flow), or to the flow itself (cbr, onoff: flows/cbr.py)."""
        name = flow.id if self.jsonl else csv_field(flow.id)
        self.flow_of[id(flow)] = name
        for part in ("sender", "receiver"):
            endpoint = getattr(flow, part, None)
            if endpoint is not None:
                self.flow_of[id(endpoint)] = name
        return name

    def _name_workload_flow(self, flow) -> None:
        """Name a workload flow's packets (`_name_flow`) until `forget_after_s` after it
        finishes, when none of its packets can be on its way any more: the names kept are those
        of the flows alive or just finished, not of every flow the run opened."""
        finished = self.finished
        now = flow.sim.now
        flow_of = self.flow_of
        while finished and finished[0][0] <= now:       # (no event of its own: the run's
            _, name, keys = finished.popleft()          # events stay the same with a trace)
            for key in keys:
                if flow_of.get(key) == name:            # (not a later flow's, at a reused id)
                    del flow_of[key]
        name = self._name_flow(flow)
        keys = tuple(id(part) for part in (flow, getattr(flow, "sender", None),
                                           getattr(flow, "receiver", None)) if part is not None)
        finish = flow.on_finish

        def on_finish(f, _finish=finish, _keys=keys, _name=name) -> None:
            if _finish is not None:
                _finish(f)
            finished.append((f.sim.now + self.forget_after_s, _name, _keys))

        flow.on_finish = on_finish

    def _queued_drop(self, packet, d, cause: str) -> None:
        """A queue discipline dropped a packet it had queued (CoDel at dequeue, FQ-CoDel's
        fattest queue on overflow)."""
        self.emit(d.sim.now, "drop", d.src.id, d.link.id, d.label, packet, cause)

    def _wrap_receive(self, d) -> None:
        """Wrap the innermost receive callback of direction `d` (inside the failure guard and
        impairment wrappers, so a repaired link keeps tracing); trace the wrappers' losses."""
        parent, inner = None, d.dst_receive
        while hasattr(inner, "receive") and not hasattr(inner, "__self__"):
            self.trace_wrapper(inner, d)
            parent, inner = inner, inner.receive
        emit = self.emit
        sim = d.sim
        node = d.dst.id
        link = d.link.id
        label = d.label

        def receive(packet, _inner=inner):
            emit(sim.now, "receive", node, link, label, packet)
            _inner(packet)

        if parent is None:
            d.dst_receive = receive
        else:
            parent.receive = receive


def _traced_wrapper_class(trace: EventTrace, base: type) -> type:
    """A subclass of an arrival wrapper class (`Impairment`: losses in transit; `Arrival`: the
    failure guard, whose dead instances lose what was sent before the link failed) that emits
    the packets the wrapper loses."""
    emit = trace.emit
    call = base.__call__
    if hasattr(base, "live"):                         # the failure guard (Arrival)
        def traced_call(self, packet):
            if not self.live:
                d = trace.direction_of.get(id(self))
                if d is not None:
                    emit(d.sim.now, "drop", d.dst.id, d.link.id, d.label, packet, "link_failure")
            call(self, packet)
    else:                                             # an impairment (counts its own losses)
        def traced_call(self, packet):
            d = self.d
            before = d.impaired_drops
            call(self, packet)
            if d.impaired_drops != before:
                emit(d.sim.now, "drop", d.dst.id, d.link.id, d.label, packet, "impairment")
    return type(f"Tracing{base.__name__}", (base,), {"__slots__": (), "__call__": traced_call})


def _tracing_class(trace: EventTrace, base: Any) -> type:
    """A subclass of the LinkDirection class `base` (no new slots: instances can switch to it)
    whose `send` emits the offer's event."""
    emit = trace.emit
    send = base.send
    changes_until = trace.changes_until
    rate_changes_until = trace.rate_changes_until

    def traced_send(self, packet):
        t = self.transmitter
        now = self.sim.now
        before = getattr(t, "busy_until", None)       # when the transmitter is free
        start = before                                # drop-tail: after every accepted packet,
        if now <= rate_changes_until.get(self.link.id, -1.0):  # unless a new rate re-times it
            start = None
        elif isinstance(t, AqmTransmitter):           # a discipline holds the waiting packets
            # one that decides at enqueue keeps FIFO order: after those waiting, at the rate of
            # now, unless a scheduled change of rate or delay comes first (a new rate times every
            # packet that begins after it, a shorter delay holds the next); CoDel may drop
            # waiting packets at dequeue and FQ-CoDel serves by flow: not known yet
            start = (t.busy_until + t.queued_bytes * t.seconds_per_byte
                     if isinstance(t, FifoAqm) and now > changes_until.get(self.link.id, -1.0)
                     else None)
        down = self.down
        aqm = getattr(self, "aqm_drops", 0)           # a queue discipline's own drops
        accepted = send(self, packet)
        if not accepted:
            cause = ("link_down" if down else
                     "aqm" if getattr(self, "aqm_drops", 0) != aqm else "overflow")
            emit(now, "drop", self.src.id, self.link.id, self.label, packet, cause)
        elif before is not None and before <= now and not getattr(t, "queued_pkts", 0):
            emit(now, "transmit", self.src.id, self.link.id, self.label, packet)
        else:
            emit(now, "enqueue", self.src.id, self.link.id, self.label, packet, "", start)
        return accepted

    repair = base.repair

    def traced_repair(self, now):                     # a new failure guard: trace it too
        repair(self, now)
        trace.trace_wrapper(self.guard, self)

    return type(f"Tracing{base.__name__}", (base,), {"__slots__": (), "send": traced_send,
                                                     "repair": traced_repair})
