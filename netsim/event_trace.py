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

Filters (``--trace-flows``, ``--trace-links``, ``--trace-nodes``, ``--trace-events``,
``--trace-window``; ``EventTrace(path, flows=, links=, nodes=, events=, start_s=, end_s=)``)
keep the rows that match every filter given (within one filter, any of its values): a filtered
trace is the unfiltered one with rows left out, row for row. Links, nodes and event kinds are
chosen when the hooks are installed: a direction of a link not selected, a node's side not
selected, an event kind no hook of it is wanted for, gets no hook at all (no cost). Flows and
the time window are checked first thing in the hooks of offers and receives (`keep`), and the
event kinds that share a hook (an offer's ``transmit``, ``enqueue`` and ``drop``) before a row
is formatted (`hook`). Rows without a flow (routing packets) are left out by a flow filter and
kept by the others. Without a filter the hooks are the very functions of an unfiltered trace:
no check is added.

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
import math
import re
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from components.packet import ACK, KIND_NAMES
from components.queues import AqmTransmitter, FifoAqm
from netsim.traces import csv_field

FIELDS = ("time_s", "event", "node", "link", "direction", "flow", "kind", "seq", "size_bytes",
          "cause", "start_s")
BUFFER_BYTES = 1 << 20
EVENTS = ("transmit", "enqueue", "drop", "receive")     # the `event` column's values
OFFER_EVENTS = frozenset(("transmit", "enqueue", "drop"))   # what an offer's hook writes
# how `ids_problem`'s messages name the filters: the keyword arguments of EventTrace
KEYWORDS = {"flows": "flows", "links": "links", "nodes": "nodes"}
_WORKLOAD_FLOW = re.compile(r"(.+)#([1-9][0-9]*)")     # W#N: the Nth flow workload W opened


class TraceError(ValueError):
    """The trace file cannot be written."""


class TraceFilterError(ValueError):
    """A filter of the trace names something the network does not have, or is not a value."""


def selection(name: str, values) -> tuple | None:
    """The ids (or event kinds) of a filter, in their order, each once: None for None (no
    filter), a string for itself alone; TraceFilterError for an empty selection or one that
    holds a non-string."""
    if values is None:
        return None
    if isinstance(values, str):
        values = (values,)
    try:
        chosen = list(values)
    except TypeError:
        raise TraceFilterError(f"{name}: expected a list of ids, got "
                               f"{type(values).__name__}") from None
    if not chosen:
        raise TraceFilterError(f"{name}: expected at least one value (None: no filter)")
    for value in chosen:
        if not isinstance(value, str):
            raise TraceFilterError(f"{name}: expected ids (strings), got {value!r}")
    return tuple(dict.fromkeys(chosen))


def events_problem(name: str, events: Iterable) -> str | None:
    """The message naming the first of `events` that is not an event kind (with a
    did-you-mean and the kinds), or None."""
    from topologies.validation import quote, suggestion
    for event in events:
        if event not in EVENTS:
            return (f"{name}: unknown event {quote(event)}{suggestion(event, EVENTS)}; "
                    f"known: {', '.join(EVENTS)}")
    return None


def window_problem(start_s, end_s, option: str | None = None) -> str | None:
    """The message saying what is wrong with a time window (`start_s` <= time_s < `end_s`,
    either None: open), or None: a start of at least 0 seconds, an end above the start (inf:
    none). The message names `option` and its START and END, else the keywords."""
    names = ((f"{option} START", f"{option} END", "START") if option else
             ("start_s", "end_s", "start_s"))
    for name, value in zip(names, (start_s, end_s)):
        if value is not None and (isinstance(value, bool) or
                                  not isinstance(value, (int, float)) or math.isnan(value)):
            return f"{name}: expected a number of seconds, got {value!r}"
    if start_s is not None and not 0 <= start_s < math.inf:
        return f"{names[0]}: expected a finite number of seconds >= 0, got {start_s:g}"
    if end_s is not None and not end_s > (start_s or 0):
        above = f"{names[2]} ({start_s:g})" if start_s is not None else "0"
        return f"{names[1]}: expected a number of seconds above {above}, got {end_s:g}"
    return None


def ids_problem(names: dict, flows, links, nodes, known_flows, known_workloads, known_links,
                known_nodes) -> str | None:
    """The message naming the first id of a filter (`flows`, `links`, `nodes`: iterables or
    None) the network does not have, with a did-you-mean and the known ids, or None. A flow
    filter takes flow ids, workload ids (all the flows of that workload) and ``W#N`` (the Nth
    flow workload W opened, as the `flow` column names it); `names` says how to name each
    filter (`KEYWORDS`, or the command line's options)."""
    from topologies.validation import unknown_id
    flow_ids = list(known_flows)
    known_workloads = list(known_workloads)
    workloads = set(known_workloads)
    if flows is not None:
        wanted = []
        for flow in flows:
            match = _WORKLOAD_FLOW.fullmatch(flow)
            if flow in workloads or (match and match.group(1) in workloads):
                continue
            wanted.append(flow)
        problem = unknown_id(names["flows"], wanted, flow_ids + known_workloads)
        if problem is not None and known_workloads:     # (the first one, as an example)
            first = known_workloads[0]
            problem += f", or {first}#N (workload {first}'s Nth flow)"
        if problem is not None:
            return problem
    for key, wanted_ids, known in (("links", links, known_links), ("nodes", nodes, known_nodes)):
        if wanted_ids is not None:
            problem = unknown_id(names[key], list(wanted_ids), list(known))
            if problem is not None:
                return problem
    return None


class EventTrace:
    """Writes the packet events of one network to `path` (CSV, or JSON Lines for ``.jsonl``).

    Filters (None: no filter; a row is kept when it matches every filter given): `flows`, ids
    of flows, of workloads (all their flows) or ``W#N`` (workload W's Nth flow), rows without a
    flow (routing packets) left out; `links`, link ids (both directions); `nodes`, node ids,
    matched against the `node` column (a node's offers to its links, and the receives and the
    in-transit losses at it); `events`, among `EVENTS`; `start_s` <= time_s < `end_s`.
    TraceFilterError (a ValueError) for a value that is not one; ids unknown to the network
    when `install` is called."""

    def __init__(self, path, flows=None, links=None, nodes=None, events=None, start_s=None,
                 end_s=None):
        from netsim.output_paths import AtomicFile
        # the filters as given (in order, for messages), and as sets
        self.given = {name: selection(name, values) for name, values in
                      (("flows", flows), ("links", links), ("nodes", nodes), ("events", events))}
        problem = ((self.given["events"] is not None and events_problem("events",
                                                                        self.given["events"]))
                   or window_problem(start_s, end_s))
        if problem:
            raise TraceFilterError(problem)
        sets = {name: None if chosen is None else frozenset(chosen)
                for name, chosen in self.given.items()}
        self.flows, self.links, self.nodes, self.events = (
            sets["flows"], sets["links"], sets["nodes"], sets["events"])
        self.start_s = start_s
        self.end_s = end_s
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
        # what the hooks call: `emit` itself, or `emit` behind the checks of the filters that
        # are made per row (flows, the time window, offer events)
        self.keep = self._packet_check()
        self.hook: Callable[..., None] = self._filtered_emit() or self.emit

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

    def _packet_check(self) -> Callable[[float, Any], bool] | None:
        """Whether a packet's event at a time is wanted by the filters of time and flow (None
        without them): the hooks of offers and receives ask it first, so that a packet left out
        costs them this check and nothing else."""
        flow_of = self.flow_of if self.flows is not None else None
        timed = self.start_s is not None or self.end_s is not None
        if flow_of is None and not timed:
            return None
        start = -math.inf if self.start_s is None else self.start_s
        end = math.inf if self.end_s is None else self.end_s
        if flow_of is None:
            def in_window(now, packet) -> bool:
                return start <= now < end
            return in_window

        def wanted(now, packet) -> bool:
            if not start <= now < end:
                return False
            owner = getattr(packet.deliver, "__self__", None)
            return owner is not None and id(owner) in flow_of   # (flow_of: the flows wanted)

        return wanted

    def _filtered_emit(self) -> Callable[..., None] | None:
        """`emit` behind the checks the filters need per row, before anything is formatted: the
        time window and the flow (`keep`), and the event kind where one hook writes kinds wanted
        and kinds not (an offer: transmit, enqueue, drop); None when no row needs a check (no
        filter, or only those chosen by where the hooks go: links, nodes, event kinds of their
        own)."""
        events = self.events
        if events is not None:
            wanted = events & OFFER_EVENTS
            events = events if wanted and wanted != OFFER_EVENTS else None
        keep = self.keep
        if events is None and keep is None:
            return None
        emit = self.emit

        def filtered(now, event, node, link, direction, packet, cause="", start_s=None):
            if events is not None and event not in events:
                return
            if keep is not None and not keep(now, packet):
                return
            emit(now, event, node, link, direction, packet, cause, start_s)

        return filtered

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
        """Trace the link directions and nodes of `network` the filters select (before it
        runs); TraceFilterError if a filter names an id the network does not have."""
        spec = getattr(network, "spec", None)
        if self.flows is not None or self.links is not None or self.nodes is not None:
            given = self.given
            problem = ids_problem(KEYWORDS, given["flows"], given["links"], given["nodes"],
                                  network.flows,
                                  [w.id for w in getattr(spec, "workloads", None) or ()],
                                  network.links, [*network.hosts, *network.routers])
            if problem:
                raise TraceFilterError(problem)
        for flow in network.flows.values():
            if self.flows is None or flow.id in self.flows:
                self._name_flow(flow)
        listeners = getattr(network, "flow_listeners", None)
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
        # where hooks go: an offer's at the sending node (transmit, enqueue, drop), a receive's
        # and the losses in transit at the far node (receive; drop); none where no row is wanted
        events = self.events
        offers = events is None or not OFFER_EVENTS.isdisjoint(events)
        receives = events is None or "receive" in events
        losses = events is None or "drop" in events
        links, nodes = self.links, self.nodes
        queued_drop = self._queued_drop if nodes is None else self._queued_drop_at_nodes
        tracing: dict = {}
        for link in network.links.values():
            if links is not None and link.id not in links:
                continue
            for d in link.directions:
                send = offers and (nodes is None or d.src.id in nodes)
                at_dst = nodes is None or d.dst.id in nodes
                if send or (losses and at_dst):
                    key = (type(d), send, losses and at_dst)
                    if key not in tracing:
                        tracing[key] = _tracing_class(self, *key)
                    d.__class__ = tracing[key]
                if at_dst and (receives or losses):
                    self._wrap_receive(d, receives, losses)
                if send and losses and hasattr(d.transmitter, "on_queued_drop"):  # a discipline
                    d.transmitter.on_queued_drop = queued_drop

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
        of the flows alive or just finished, not of every flow the run opened. A flow a flow
        filter leaves out is not named (its packets have no row)."""
        finished = self.finished
        now = flow.sim.now
        flow_of = self.flow_of
        while finished and finished[0][0] <= now:       # (no event of its own: the run's
            _, name, keys = finished.popleft()          # events stay the same with a trace)
            for key in keys:
                if flow_of.get(key) == name:            # (not a later flow's, at a reused id)
                    del flow_of[key]
        keys = tuple(id(part) for part in (flow, getattr(flow, "sender", None),
                                           getattr(flow, "receiver", None)) if part is not None)
        wanted = self.flows
        if wanted is not None and flow.id not in wanted and \
                flow.id.rpartition("#")[0] not in wanted:
            for key in keys:                            # (an earlier flow's name at a reused id
                flow_of.pop(key, None)                  # would select this one)
            return
        name = self._name_flow(flow)
        finish = flow.on_finish

        def on_finish(f, _finish=finish, _keys=keys, _name=name) -> None:
            if _finish is not None:
                _finish(f)
            finished.append((f.sim.now + self.forget_after_s, _name, _keys))

        flow.on_finish = on_finish

    def _queued_drop(self, packet, d, cause: str) -> None:
        """A queue discipline dropped a packet it had queued (CoDel at dequeue, FQ-CoDel's
        fattest queue on overflow)."""
        self.hook(d.sim.now, "drop", d.src.id, d.link.id, d.label, packet, cause)

    def _queued_drop_at_nodes(self, packet, d, cause: str) -> None:
        """`_queued_drop` under a node filter: a half-duplex link's directions share their
        discipline, and the sending node of one may be left out."""
        if d.src.id in self.nodes:      # type: ignore[operator]  # (set when this is used)
            self._queued_drop(packet, d, cause)

    def _wrap_receive(self, d, receives: bool = True, losses: bool = True) -> None:
        """Wrap the innermost receive callback of direction `d` (inside the failure guard and
        impairment wrappers, so a repaired link keeps tracing) if `receives`; trace the
        wrappers' losses if `losses`."""
        parent, inner = None, d.dst_receive
        while hasattr(inner, "receive") and not hasattr(inner, "__self__"):
            if losses:
                self.trace_wrapper(inner, d)
            parent, inner = inner, inner.receive
        if not receives:
            return
        emit = self.hook
        sim = d.sim
        node = d.dst.id
        link = d.link.id
        label = d.label

        keep = self.keep
        if keep is None:
            def receive(packet, _inner=inner):
                emit(sim.now, "receive", node, link, label, packet)
                _inner(packet)
        else:
            def receive(packet, _inner=inner):
                if keep(sim.now, packet):
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
    emit = trace.hook
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


def _tracing_class(trace: EventTrace, base: Any, offers: bool = True, losses: bool = True
                   ) -> type:
    """A subclass of the LinkDirection class `base` (no new slots: instances can switch to it)
    whose `send` emits the offer's event (if `offers`) and whose `repair` traces the losses of
    the new failure guard (if `losses`)."""
    emit = trace.hook
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

    def traced_drops(self, packet):                   # `traced_send` of the drops alone
        now = self.sim.now
        down = self.down
        aqm = getattr(self, "aqm_drops", 0)
        accepted = send(self, packet)
        if not accepted:
            cause = ("link_down" if down else
                     "aqm" if getattr(self, "aqm_drops", 0) != aqm else "overflow")
            emit(now, "drop", self.src.id, self.link.id, self.label, packet, cause)
        return accepted

    repair = base.repair

    def traced_repair(self, now):                     # a new failure guard: trace it too
        repair(self, now)
        trace.trace_wrapper(self.guard, self)

    drops_only = trace.events is not None and trace.events & OFFER_EVENTS == {"drop"}
    offer = traced_drops if drops_only else traced_send   # (drops: no start time to work out)
    keep = trace.keep
    if keep is not None:                              # a packet left out costs the check alone
        def checked_send(self, packet, _offer=offer):
            if keep(self.sim.now, packet):
                return _offer(self, packet)
            return send(self, packet)
        offer = checked_send

    methods: dict = {"__slots__": ()}
    if offers:
        methods["send"] = offer
    if losses:
        methods["repair"] = traced_repair
    return type(f"Tracing{base.__name__}", (base,), methods)
