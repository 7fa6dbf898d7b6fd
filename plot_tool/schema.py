"""The results schema: every table a run writes, its columns, their types, units and meanings.

One place for what a results directory holds (docs/outputs.md shows the same tables, and
tests/test_results_schema.py checks the document against this module): the probes that write the
time series (`netsim.probes`, `netsim.traces`) take their column order from here, and the one
reader of a results directory (`plot_tool.results.read_results`, used by the figures, the report,
the sweeps and `netsim.results.Results`) takes which columns are identifiers, which are required
and which newer results added.

A `TableSchema` describes one CSV file: its `Column` s in file order (`type` and `unit` as the
document writes them), the identifier columns naming an entity (`key`), and whether older results
may lack the file. `SUMMARY_FLOW_FIELDS` describes the per-flow object of ``summary.json``.
The file names of the packet captures (``pcap/<host>.pcap``) are here too: the sequence plot reads
them back (`plot_tool.seqplot`).

This module imports nothing beyond the standard library, so that the simulation's probes can use
it without loading numpy.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

NO_UNIT = "\u2013"          # the unit of an identifier, a flag, a ratio: none (an en dash)


@dataclass(frozen=True)
class Column:
    """One column of a CSV file (or one field of a summary object), as docs/outputs.md lists it.

    `type` and `unit` are the document's words ("float", "string or **empty**", "Mbps (topology
    units)"); `required` is False for a column that older results lack (the reader accepts its
    absence).
    """

    name: str
    type: str
    unit: str
    meaning: str
    required: bool = True

    @property
    def is_string(self) -> bool:
        """Whether the column holds identifiers (read as strings; every other column is a number)."""
        return self.type.startswith("string")


@dataclass(frozen=True)
class TableSchema:
    """One CSV file of a results directory: ``<name>.csv`` with `columns` in that order.

    `key`: the identifier columns that name an entity (a link direction, a flow, a host), after
    ``time_s``; `optional`: the file may be absent (older results, a run without ``--check`` or
    without workloads); `open_columns`: further columns may follow the listed ones (flows.csv: the
    named state of the flows' algorithms).
    """

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...] = ()
    optional: bool = False
    open_columns: bool = False

    @property
    def file_name(self) -> str:
        return f"{self.name}.csv"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns if c.required)

    @property
    def optional_numbers(self) -> tuple[str, ...]:
        """Numeric columns that older results lack: read strictly as numbers when present."""
        return tuple(c.name for c in self.columns if not c.required and not c.is_string)

    @property
    def string_columns(self) -> frozenset[str]:
        return frozenset(c.name for c in self.columns if c.is_string)

    @property
    def value_columns(self) -> tuple[str, ...]:
        """The columns after ``time_s`` and the key: the values a probe writes, in order."""
        skip = {"time_s", *self.key}
        return tuple(c.name for c in self.columns if c.name not in skip)

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"{self.file_name} has no column {name!r}; columns: {', '.join(self.names)}")


def _optional(columns: tuple[Column, ...], *names: str) -> tuple[Column, ...]:
    """`columns` with those named marked not required (newer than the oldest accepted results)."""
    unknown = set(names) - {c.name for c in columns}
    if unknown:
        raise ValueError(f"no such columns: {sorted(unknown)}")
    return tuple(replace(c, required=False) if c.name in names else c for c in columns)


_LINK_COLUMNS = (
    Column('time_s', 'float', 's',
           'End of the sampling interval'),
    Column('link', 'string', NO_UNIT,
           'Link id from the topology (`summary.json["links"]` keys)'),
    Column('direction', 'string', NO_UNIT,
           '`"A->B"`: node ids of the sending and receiving ends. Each link has two directions, '
           '`ends[0]->ends[1]` and `ends[1]->ends[0]` (`ends` in `summary.json["links"][id]`)'),
    Column('rate_mbps', 'float', 'Mbps (topology units)',
           'Rate of the bits this direction transmitted during the interval (every packet: data, ACKs, '
           "routing), each packet's bytes spread over its transmission time: a packet in service at a "
           'sampling instant counts in both intervals, in proportion, so the rate never exceeds the '
           'link\'s (docs/model.md, "Link rates")'),
    Column('buffer_kb', 'float', 'KB (topology units)',
           "Time-averaged occupancy of this direction's buffer over the interval: the packets waiting, "
           'not the one being transmitted'),
    Column('buffer_pkts', 'float', 'packets',
           'The same occupancy counted in packets (time average, so not necessarily an integer)'),
    Column('backlog_kb', 'float', 'KB (topology units)',
           'Time-averaged **unfinished work** of this direction over the interval: the bytes waiting in '
           "the buffer (`buffer_kb`) plus the part of this direction's packet in transmission that is "
           'not sent yet. It is what a packet arriving at that moment would wait behind, so it equals '
           'queueing delay \u00d7 link rate: the quantity the analytic model predicts (see '
           '[`--check`](#comparison-with-the-analytic-model---check)). While the link is busy it exceeds '
           '`buffer_kb` by about half a packet (a packet of S bytes contributes S/2 on average over its '
           'transmission), each interval counting the part of the transmission that falls in it'),
    Column('drops', 'float (integer-valued)', 'packets per interval',
           'Packets of this direction dropped during the interval because the buffer was full'),
    Column('failure_drops', 'float (integer-valued)', 'packets per interval',
           'Packets of this direction lost during the interval because the link was down (see [Link '
           'failures](#link-failures)): offered to the link while it was down, waiting in its buffer '
           'when it failed, or being transmitted or propagating when it failed. Not included in `drops`. '
           'Always 0 on a link without `events`'),
    Column('impairment_drops', 'float (integer-valued)', 'packets per interval',
           "Packets of this direction lost during the interval by the link's random-loss impairment "
           '(`loss_rate` or `loss_model`), counted when they would have arrived (with '
           '`"jitter_mode": "netem"`, at the end of their transmission, as netem decides losses '
           'before the delay). Always 0 on a link '
           'without loss impairments'),
    Column('routing_rate_mbps', 'float', 'Mbps (topology units)',
           'Rate of the routing packets offered to this link direction during the interval, counted when '
           'a routing agent sends them (so including any the buffer then dropped). They are also part of '
           '`rate_mbps` once their transmission begins. Always 0 with static routing'),
    Column('marks', 'float (integer-valued)', 'packets per interval',
           "Packets of this direction marked CE (congestion experienced) by the link's queue discipline "
           'during the interval (docs/topology-format.md, "Queue disciplines"). Always 0 for drop-tail'),
    Column('aqm_drops', 'float (integer-valued)', 'packets per interval',
           'Packets of this direction dropped by the queue discipline (RED, CoDel, FQ-CoDel, PIE) during '
           'the interval, at enqueue or at dequeue; not included in `drops` (buffer overflow). Always 0 '
           'for drop-tail'),
    Column('sojourn_ms', 'float or empty', 'ms',
           'Mean sojourn time of the packets of this direction whose transmission began during the '
           'interval: from joining the buffer to the start of transmission (0 for a packet sent at '
           'once). Empty when no packet began transmission (also in the rows around an idle spell)'),
)

_FLOW_COLUMNS = (
    Column('time_s', 'float', 's',
           'End of the sampling interval'),
    Column('flow', 'string', NO_UNIT,
           'Flow id from the topology (`summary.json["flows"]` keys)'),
    Column('send_rate_mbps', 'float', 'Mbps (topology units)',
           "Rate at which the sender handed the flow's data packets to its host's link during the "
           "interval, first transmissions and retransmissions alike (packets the link's buffer then "
           'dropped included)'),
    Column('recv_rate_mbps', 'float', 'Mbps (topology units)',
           'Goodput: rate of the bytes delivered **in order** to the receiving application during the '
           'interval (no duplicates, nothing held back by a gap). When a retransmission fills a gap, the '
           "data held back behind it is delivered at once, so this rate can briefly exceed the path's "
           'capacity'),
    Column('arrival_rate_mbps', 'float', 'Mbps (topology units)',
           "Rate of the flow's data bytes **arriving at the receiver** during the interval, in order or "
           "not (duplicates included): bounded by the path's capacity. The figures draw this one"),
    Column('window_pkts', 'float', 'packets',
           'Congestion window at the sample instant `time_s` (an instantaneous value, not an average)'),
    Column('rtt_ms', 'float or **empty**', 'ms',
           'Mean of the RTT samples the sender took during the interval; **empty (NaN) when the interval '
           'had no RTT sample** (e.g. while waiting for a timeout)'),
)

_HOST_COLUMNS = (
    Column('time_s', 'float', 's',
           'End of the sampling interval'),
    Column('host', 'string', NO_UNIT,
           'Host id from the topology (`summary.json["hosts"]` keys)'),
    Column('send_rate_mbps', 'float', 'Mbps (topology units)',
           'Rate of the bytes the host handed to its link (all its packets: data of the flows it sends, '
           "ACKs of the flows it receives; including packets the link's buffer then dropped)"),
    Column('recv_rate_mbps', 'float', 'Mbps (topology units)',
           'Rate of the bytes the host received from its link'),
)

_ROUTE_COLUMNS = (
    Column('time_s', 'float', 's',
           'When the router installed the entry (exact time, not a sampling instant); `0` for the '
           "initial tables; under static routing, for a workload's entries, the start of its first "
           'flow between the two hosts (under ECMP flow hashing, of its first flow whose path '
           'takes the entry)'),
    Column('router', 'string', NO_UNIT,
           'Router id'),
    Column('destination', 'string', NO_UNIT,
           'Destination host id'),
    Column('next_hop', 'string or **empty**', NO_UNIT,
           "Node the router now sends the destination's packets to (a router, or the destination host "
           'itself on its access link); **empty when the destination became unreachable**'),
    Column('link', 'string or **empty**', NO_UNIT,
           'Link the router sends them over (towards `next_hop`; it matters when parallel links join the '
           'same two nodes); empty when unreachable'),
    Column('cost_ms', 'float or **`inf`**', 'ms',
           'Cost of the route as the router computed it: the sum of the link costs along the path, each '
           'the static part (`cost_ms`, else the propagation delay) plus, with Bellman-Ford, the queueing '
           'delay the router measured. **Written `inf` when the destination became unreachable**'),
)

_PREDICTION_COLUMNS = (
    Column('start_s', 'float', 's',
           'Start of the predicted interval (a predicted join or departure)'),
    Column('end_s', 'float', 's',
           'Its end (the next one, or the end of the run when a `duration_s` ends it)'),
    Column('kind', 'string', NO_UNIT,
           '`"flow"` or `"link"`'),
    Column('id', 'string', NO_UNIT,
           'Flow id or link id'),
    Column('direction', 'string', NO_UNIT,
           'Empty for a flow. For a link, the labels of the link directions sharing the transmitter the '
           'row is about, joined by `+`: `"R1->R2+R2->R1"` for a half-duplex link (the prediction is for '
           'the whole link: compare it with the sum of both directions of `links.csv`), one label such '
           'as `"R1->R2"` for a direction of a full-duplex link'),
    Column('quantity', 'string', NO_UNIT,
           'Flow: `rate_mbps` (goodput, Mbps), `queue_delay_ms` (ms), `rtt_ms` (base round trip + '
           'queueing delay, ms: comparable with `flows.csv` `rtt_ms`), `window_pkts` (rate \u00d7 RTT, '
           'packets: comparable with `flows.csv` `window_pkts`). Link: `backlog_kb` (unfinished work, '
           'KB: comparable with `links.csv` `backlog_kb`)'),
    Column('low', 'float', 'unit of `quantity`',
           'The predicted value, or the lower end of the predicted interval'),
    Column('high', 'float', 'unit of `quantity`',
           'Equal to `low`, except for Vegas flows where [`low`, `high`] is the predicted interval (the '
           "quantity's extremes over the equilibria with every flow's backlog between its alpha and beta)"),
)

SUMMARY_FLOW_FIELDS: tuple[Column, ...] = (
    Column('algorithm', 'string', NO_UNIT,
           'Congestion-control algorithm (e.g. `"reno"`, `"tahoe"`)'),
    Column('src', 'string', NO_UNIT,
           'Sending and receiving host ids'),
    Column('dst', 'string', NO_UNIT,
           'Sending and receiving host ids'),
    Column('data_mb', 'number or null', 'MB (topology units)',
           'Amount of data to transfer; null for a flow that sends until the end of the run'),
    Column('data_bytes', 'integer or null', 'bytes',
           'The same in bytes (`data_mb \u00d7 bytes_per_mb`)'),
    Column('start_s', 'number', 's',
           'Start time of the flow'),
    Column('finish_s', 'number or null', 's',
           'Time the flow finished transferring its data; null if it did not finish'),
    Column('completed', 'boolean', NO_UNIT,
           'Whether the flow finished before the end of the run'),
    Column('goodput_mbps', 'number', 'Mbps (topology units)',
           '`delivered_bytes / (finish_s \u2212 start_s)` for a completed flow, `delivered_bytes / '
           '(end_time_s \u2212 start_s)` otherwise (converted to Mbps)'),
    Column('avg_rtt_ms', 'number or null', 'ms',
           'Mean of **all** RTT samples of the flow (not the mean of the per-interval means in '
           '`flows.csv`); null when there was no sample'),
    Column('avg_window_pkts', 'number', 'packets',
           'Mean of the sampled windows (the `window_pkts` column of `flows.csv`)'),
    Column('packets_sent', 'integer', 'packets',
           'Data packets the sender put on its link, retransmissions included'),
    Column('retransmissions', 'integer', 'packets',
           'Of which retransmissions'),
    Column('timeouts', 'integer', NO_UNIT,
           'Number of retransmission timeouts'),
    Column('ecn_echoes', 'integer', 'ACKs',
           'ACKs that carried ECN-Echo (ECE), the one that completes the flow included (as a '
           'capture of the sender counts them); 0 for flows without `"ecn": true`'),
    Column('ecn_reactions', 'integer', NO_UNIT,
           'Window reductions in response to ECE (at most one per window of data, RFC 3168 \u00a76.1.2); 0 '
           'without ECN'),
    Column('delivered_bytes', 'integer', 'bytes',
           'Bytes delivered in order to the receiving application (equals `data_bytes` for a completed '
           'flow)'),
    Column('in_order', 'boolean', NO_UNIT,
           'Check of the transport: the receiving application got the byte stream in sequence, without '
           'gaps or duplicates'),
    Column('base_rtt_ms', 'number or null', 'ms',
           "The base RTT the flow's algorithm used at the end of the run (FAST and Vegas `baseRTT`, "
           "BBR's RTprop), or for the others the smallest RTT sample; null without a sample. `--check` "
           'predicts FAST and Vegas from it'),
    Column('min_rtt_ms', 'number or null', 'ms',
           'The smallest RTT sample of the flow'),
    Column('rto_ms', 'number or null', 'ms',
           'The retransmission timeout of the last RTT estimate, without backoff: SRTT + 4 RTTVAR within '
           '[`min_rto_s`, `max_rto_s`] (RFC 6298)'),
    Column('in_slow_start', 'boolean', NO_UNIT,
           'Whether the flow was still in slow start at the end (window below ssthresh; BBR: in Startup; '
           'FAST, which has no slow start: window below an infinite ssthresh, true)'),
)

# ---------------------------------------------------------------------------------------------
# Per-flow counters of the transport (`Sender.counters()`, nstat-like; the same keys for every
# flow, 0 where a mechanism is off) and the named state of the algorithm (`report()`).

FLOW_COUNTERS = ("rto", "tlp", "rack_lost", "lost_retrans", "spurious_undo", "sack_recoveries",
                 "fast_retransmits")
_COUNTER_TYPE = "float (integer-valued) or empty"
_COUNTER_UNIT = "events per interval"
_COUNTER_MEANINGS = {
    "rto": "Retransmission timeouts that expired during the interval (RFC 6298; nstat "
           "`TcpExtTCPTimeouts`)",
    "tlp": "Tail loss probes sent (RFC 8985 \u00a77; nstat `TcpExtTCPLossProbes`); 0 without TLP",
    "rack_lost": "Segments RACK marked lost (RFC 8985 \u00a76.2); 0 without RACK",
    "lost_retrans": "Retransmissions found lost again (nstat `TcpExtTCPLostRetransmit`)",
    "spurious_undo": "Window reductions undone because the loss they answered was spurious "
                     "(Linux's undo; nstat `TcpExtTCPFullUndo` and kin)",
    "sack_recoveries": "Loss recoveries entered with SACK information (RFC 6675; nstat "
                       "`TcpExtTCPSackRecovery`)",
    "fast_retransmits": "Fast retransmissions: segments retransmitted by loss recovery, not by "
                        "a timeout (RFC 5681 \u00a73.2; nstat `TcpExtTCPFastRetrans`), Tahoe's "
                        "go-back-N after a third duplicate ACK included",
}
_EMPTY_COUNTERS = ". Empty for a flow without a transport (`cbr`, `onoff`)"
_COUNTER_COLUMNS = tuple(Column(name, _COUNTER_TYPE, _COUNTER_UNIT,
                                _COUNTER_MEANINGS[name] + _EMPTY_COUNTERS, required=False)
                         for name in FLOW_COUNTERS)
STATE_PREFIX = "cc_"     # an algorithm's state name that equals a fixed column gets this prefix

SUMMARY_FLOW_FIELDS = (*SUMMARY_FLOW_FIELDS,
    Column("counters", "object or null", "events",
           "The transport's counters over the whole run, one integer per key: "
           + ", ".join(f"`{name}`" for name in FLOW_COUNTERS)
           + " (the columns of `flows.csv` of the same names, summed); null for a flow "
           "without a transport (`cbr`, `onoff`)"),
    Column("algorithm_state", "object", "named by the algorithm",
           "The algorithm's named internal state at the end of the run (its `report()`, e.g. "
           "DCTCP `alpha`, BBR `btlbw_bps` and `min_rtt_s`): name -> number; `{}` when it "
           "reports none"),
    Column("path_links", "list of strings", NO_UNIT,
           "Only under static routing with ECMP flow hashing (`routing.ecmp` is `\"flow\"`): "
           "the links, source first, the flow's data packets take, i.e. the member its hash "
           "picks at each equal-cost set (static tables never change, so it holds for the "
           "whole run). Two flows whose paths share a link collided there. `[]` if the "
           "destination cannot be reached", required=False),
)

_FCT_COLUMNS = (
    Column("workload", "string", NO_UNIT, "Workload id from the topology"),
    Column("flow", "string", NO_UNIT, "Id of the workload flow (not in `flows.csv` nor in "
           "`summary.json[\"flows\"]`)"),
    Column("src", "string", NO_UNIT, "Sending host id"),
    Column("dst", "string", NO_UNIT, "Receiving host id"),
    Column("size_bytes", "integer", "bytes", "Data the flow transferred"),
    Column("start_s", "float", "s", "When the flow started"),
    Column("finish_s", "float", "s", "When the sender's last byte was acknowledged"),
    Column("fct_s", "float", "s", "Flow completion time: `finish_s \u2212 start_s`"),
    Column("ideal_fct_s", "float", "s", "The FCT on an empty network (docs/model.md, "
           "\"Flow workloads\")"),
    Column("slowdown", "float", NO_UNIT, "`fct_s / ideal_fct_s`"),
)

LINKS = TableSchema("links", _optional(
    _LINK_COLUMNS, "backlog_kb", "failure_drops", "impairment_drops", "routing_rate_mbps",
    "marks", "aqm_drops", "sojourn_ms"), key=("link", "direction"))
FLOWS = TableSchema("flows", (*_optional(_FLOW_COLUMNS, "arrival_rate_mbps"), *_COUNTER_COLUMNS),
                    key=("flow",), open_columns=True)
HOSTS = TableSchema("hosts", _HOST_COLUMNS, key=("host",))
ROUTES = TableSchema("routes", _ROUTE_COLUMNS, key=("router", "destination"), optional=True)
PREDICTIONS = TableSchema("predictions", _PREDICTION_COLUMNS, key=("kind", "id", "direction"),
                          optional=True)
FCT = TableSchema("fct", _FCT_COLUMNS, key=("workload", "flow"), optional=True)

TABLES: dict[str, TableSchema] = {t.name: t for t in (LINKS, FLOWS, HOSTS, ROUTES, PREDICTIONS, FCT)}
TIME_SERIES = ("links", "flows", "hosts")     # sampled every interval_s, written by the probes

SUMMARY_FILE = "summary.json"
CHECK_FILE = "check.json"


# ---------------------------------------------------------------------------------------------
# The fields of summary.json and check.json that the readers use (the report, iperf3.json, the
# figures' titles and tiers), with their types: `plot_tool.json_fields.check_fields` checks them
# when the file is read, so that a damaged file is one line naming the file, the field and what
# was expected, never a traceback in a reader.


@dataclass(frozen=True)
class JsonField:
    """One field of a JSON file of a results directory, by its `path` of keys ("*": every entry
    of an object: every link, every direction) and its `type`: "object", "string", "boolean",
    "number", "positive number", "integer", "time" (seconds, from 0), "positive time" (a time
    value a run accepts as input, topologies/bounds.py: a sampling interval), "pair of strings",
    "list of [start, end]" (pairs of times), "list of [time, rate]" (a time and a positive
    number), each possibly followed by " or null". A field absent from the file is accepted
    unless `required` (older results lack newer fields; the readers have defaults)."""

    path: tuple[str, ...]
    type: str
    required: bool = False

    @property
    def name(self) -> str:
        return ".".join(self.path)


def _fields(*specs: tuple[str, str]) -> tuple[JsonField, ...]:
    """JsonFields from ("links.*.ends", "pair of strings") pairs; a type ending in "!" is
    required. An object's own field comes before the fields inside it."""
    return tuple(JsonField(tuple(name.split(".")), kind.rstrip("!"), kind.endswith("!"))
                 for name, kind in specs)


_FLOW_TYPES = {c.name: c.type for c in SUMMARY_FLOW_FIELDS}   # the document's types

SUMMARY_FIELDS: tuple[JsonField, ...] = _fields(
    ("topology", "string"), ("seed", "integer"), ("stop_reason", "string"),
    ("stop_detail", "string"), ("config_digest", "string"), ("wall_time_s", "number"),
    ("events", "integer"), ("interval_s", "positive time"), ("end_time_s", "time"),
    ("units", "object!"), ("units.system", "string"), ("units.bits_per_mbit", "positive number"),
    ("packet_bytes", "object"), ("packet_bytes.data", "integer"),
    ("routing", "object"), ("routing.ecmp", "string"),
    ("hosts", "object!"), ("hosts.*", "object"),
    ("routers", "object"), ("routers.*", "object"),
    ("flows", "object!"), ("flows.*", "object"), ("flows.*.kind", "string"),
    *((f"flows.*.{name}", "time" if name == "start_s" else
       "time or null" if name == "finish_s" else _FLOW_TYPES[name])
      for name in ("algorithm", "src", "dst", "start_s", "finish_s", "completed", "data_bytes",
                   "goodput_mbps", "avg_rtt_ms", "min_rtt_ms", "packets_sent", "retransmissions",
                   "timeouts", "ecn_echoes", "ecn_reactions", "delivered_bytes", "in_order")),
    ("links", "object!"), ("links.*", "object"), ("links.*.ends", "pair of strings!"),
    ("links.*.rate_mbps", "number"), ("links.*.delay_ms", "number"),
    ("links.*.buffer_kb", "number or null"), ("links.*.duplex", "string"),
    ("links.*.queue", "string"), ("links.*.down_s", "list of [start, end] or null"),
    ("links.*.rate_schedule_mbps", "list of [time, rate]"),
    ("links.*.directions", "object or null"), ("links.*.directions.*", "object"),
    *((f"links.*.directions.*.{name}", "number or null")
      for name in ("avg_rate_mbps", "utilization", "avg_buffer_kb", "avg_sojourn_ms",
                   "p99_sojourn_ms")),
    *((f"links.*.directions.*.{name}", "integer")
      for name in ("drops", "impairment_drops", "failure_drops", "aqm_drops", "marks")),
)

CHECK_FIELDS: tuple[JsonField, ...] = _fields(
    ("passed", "boolean or null"), ("max_error_pct", "number or null"), ("compared", "integer"))

# ---------------------------------------------------------------------------------------------
# Packet captures (--pcap, --pcap-links): their file names under pcap/, and the ports of a flow.

PCAP_DIR = "pcap"
RECEIVER_PORT = 5001
FIRST_SENDER_PORT = 10000
SENDER_PORTS = 55536          # flow k (in summary.json order) sends from 10000 + k % 55536
MAX_PART_CHARS = 60           # an id's part of a file name; longer ones end in a digest


def sender_port(k: int) -> int:
    """The TCP (or UDP) source port of the k-th flow of a run (summary.json's order)."""
    return FIRST_SENDER_PORT + k % SENDER_PORTS


def file_part(text: str) -> str:
    """An id as part of a file name, one to one: ASCII letters and digits are kept, every other
    character (UTF-8 byte) is written %XX, so "L_1" and "L 1" (or "a-b" + "c" and "a" + "b-c")
    never give the same name and the separators "_" and "-" of the capture names stay
    unambiguous; an id longer than MAX_PART_CHARS once encoded is cut and ends in "~" and
    16 hex digits of its SHA-256 ("~" is never produced by the encoding)."""
    out = "".join(c if c.isascii() and c.isalnum() else
                  "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass")) for c in text)
    if len(out) > MAX_PART_CHARS:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        out = out[:MAX_PART_CHARS - 17] + "~" + digest
    return out


def host_capture_name(host_id: str) -> str:
    """The file name of a host's capture (--pcap): <host>.pcap."""
    return f"{file_part(host_id)}.pcap"


def link_capture_name(link_id: str, src: str, dst: str) -> str:
    """The file name of the capture of one link direction (--pcap-links): <link>_<src>-<dst>.pcap."""
    return f"{file_part(link_id)}_{file_part(src)}-{file_part(dst)}.pcap"


# ---------------------------------------------------------------------------------------------
# A sweep's results.csv (netsim/sweep.py writes it, plot_tool.sweep_data reads it).

# the start of the `error` cell of an "ok" run that stopped at a bound (stop_reason "limit" or
# "stalled") before its duration; the command warns of them and the figures' footnotes count them
STOPPED_EARLY = "stopped early"


def stopped_early(row) -> bool:
    """Whether a row of a sweep's results.csv is of a run that stopped at a bound (its `error`
    cell begins STOPPED_EARLY)."""
    return str(row.get("error") or "").startswith(STOPPED_EARLY)
