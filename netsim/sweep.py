"""Running parameter sweeps: every point x seed of a `Sweep` is an independent simulation.

Runs go to a process pool (``--jobs``) or to a Dask cluster (``--scheduler``). What a sweep
directory holds (docs/sweeps.md):

* ``sweep.json``: the sweep as run, with its theory settings resolved from the topology;
* ``runs/<config digest>.json``: one small record per successful run, named by the SHA-256 of the
  run's resolved configuration (`topologies.spec.config_digest`: the topology after the point's
  parameters are set, duration, sampling interval, seed) and holding its ``summary.json`` data.
  Resume reuses a record only for a run with the same digest, so a changed setting re-runs just
  the points it changes, and a metric added later is computed from the records without a re-run;
* ``results.csv``: one row per run, appended as runs finish and rewritten in run order at the end
  (also after an interrupt), so a resumed, parallel or Dask sweep gives the same file as a
  sequential one.

A directory holds one sweep: running a different sweep (another name, topology or set of swept
parameters) into it is refused unless ``force=True``. SIGINT and SIGTERM stop a sweep: its
workers are killed, every finished run is kept, and `SweepInterrupted` is raised. Workers never
outlive the process that started them (`_worker_init`). Sweep files are read and validated by
`netsim.sweep_file`.
"""
from __future__ import annotations

import copy
import csv
import hashlib
import json
import math
import os
import shutil
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from netsim.sweep_file import (DERIVED_METRICS, Sweep, SweepError, load_sweep,  # noqa: F401
                                   set_path)
from netsim.results_dir import json_text
from topologies.validation import suggestion

SWEEP_FILE = "sweep.json"
RESULTS_FILE = "results.csv"
RECORDS_DIR = "runs"
RECORD_FORMAT = 1
RESULT_TAIL = ("config_digest", "wall_time_s", "status", "error")
POLL_S = 0.2                 # how often the parent looks for finished runs and stop requests
PARENT_CHECK_S = 1.0         # how often a worker's watchdog checks that its parent is alive
PR_SET_PDEATHSIG = 1         # linux/prctl.h


class SweepInterrupted(BaseException):
    """SIGINT or SIGTERM stopped the sweep; the finished runs are saved. A BaseException, like
    KeyboardInterrupt, so that nothing records it as a failed run."""

    def __init__(self, signum: int, done: int = 0, total: int = 0, out=None):
        super().__init__(signum)
        self.signum, self.done, self.total, self.out = signum, done, total, out


class SweepConflict(SweepError):
    """The results directory holds another sweep (and force was not given)."""


class _Rerun(Exception):
    """A stored record cannot give a metric (e.g. a check.* value it did not keep)."""


@dataclass(frozen=True)
class PlannedRun:
    run_id: str
    point: int
    seed: int
    params: tuple            # ((path, value), ...)
    digest: str              # config_digest of the run


# -- the runs' configurations ---------------------------------------------------------------------
def point_data(sweep: Sweep, point) -> dict:
    """The topology dict of one point: the base with the point's parameters and the sweep's
    duration set."""
    data = copy.deepcopy(sweep.base)
    for param, value in point:
        set_path(data, param, value)
    if sweep.duration_s is not None:
        data["duration_s"] = sweep.duration_s
    return data


def point_spec(sweep: Sweep, point):
    from topologies import load_topology
    return load_topology(point_data(sweep, point))


def plan(sweep: Sweep) -> list:
    """Every run of the sweep with its configuration digest, in run order."""
    from topologies.spec import config_digest
    specs = {}
    out = []
    plugin_code = "".join(hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in sweep.plugins)
    for run_id, index, seed, point in sweep.runs():
        if index not in specs:
            specs[index] = point_spec(sweep, point)
        spec = specs[index]
        digest = config_digest(spec, duration_s=spec.duration_s, seed=seed,
                               interval_s=sweep.interval_s)
        if sweep.plugins:             # an edited plugin file re-runs the runs
            digest = hashlib.sha256((digest + plugin_code).encode()).hexdigest()
        out.append(PlannedRun(run_id, index, seed, tuple(point), digest))
    return out


def identity(saved: dict) -> dict:
    """What makes two sweeps the same sweep: name, topology and the swept parameters (their
    paths; values, seeds, duration, metrics and plots may change between resumes)."""
    topology = saved.get("topology")
    return {"name": saved.get("name"),
            "topology": Path(str(topology)).stem if topology else None,
            "parameters": sorted(saved.get("parameters") or {})}


# -- theory settings from the topology --------------------------------------------------------
def path_facts(spec, flow_id: str) -> dict:
    """What theory curves need to know of one flow's path in `spec`: data packet size (bytes),
    base RTT (ms: propagation and transmission of a data packet and its ACK, no queueing, along
    the static routes the run starts with), the bottleneck link (smallest rate on the data path)
    and, per link of the data path, its rate in the topology's Mbps and the flows that cross it."""
    from theory.paths import Paths
    paths = Paths(spec)
    flow = spec.flow(flow_id)
    mbit = spec.units.bits_per_mbit
    crossing = {}
    for other in spec.flows:
        for hop in paths.path(other.src, other.dst):
            crossing.setdefault(hop.link.id, []).append(other.id)
    links = {}
    for hop in paths.path(flow.src, flow.dst):
        links[hop.link.id] = {"mbps": hop.link.rate_bps / mbit, "flows": crossing[hop.link.id]}
    bottleneck = min(links, key=lambda lid: links[lid]["mbps"])
    return {"mss_bytes": spec.packet_sizes.data_bytes,
            "base_rtt_ms": paths.base_rtt_s(flow) * 1e3,
            "bits_per_mbit": mbit, "links": links, "bottleneck": bottleneck}


def base_rtts_ms(spec) -> dict:
    """Flow id -> base RTT (ms) of `spec`, from the spec alone (no run needed)."""
    from theory.paths import base_rtts_s
    return {fid: rtt * 1e3 for fid, rtt in base_rtts_s(spec).items()}


def _theory_flow(where: str, theory: dict, plot: dict, sweep: Sweep) -> str:
    flows = [f.get("id") for f in sweep.base.get("flows", [])]
    flow = theory.get("flow")
    if flow is None:
        parts = str(plot.get("y", "")).split(".")
        if parts[0] == "flows" and len(parts) == 3:
            flow = parts[1]
        elif len(flows) == 1:
            flow = flows[0]
        else:
            raise SweepError(f'{where}: field "theory.flow": name the flow whose path the model '
                             f"describes (flows: {', '.join(map(str, flows))})")
    if flow not in flows:
        raise SweepError(f'{where}: field "theory.flow": no flow "{flow}"{suggestion(flow, flows)}')
    return flow


def _same(values: list, what: str, where: str, unit: str):
    """The one value all points share; SweepError when they differ."""
    low, high = min(values), max(values)
    if not math.isclose(low, high, rel_tol=1e-9, abs_tol=1e-12):
        raise SweepError(f"{where}: {what} differs between the points of the sweep ({low:.4g} to "
                         f"{high:.4g} {unit}); a theory curve needs one value: vary it in another "
                         f"sweep or draw the points without theory")
    return values[0]


def resolve_theory(where: str, plot: dict, sweep: Sweep) -> dict | None:
    """The plot's ``theory`` with every setting taken from the topology (docs/sweeps.md, "Theory
    curves"): packet size, base RTT, units and link rates at every point of the sweep, which must
    agree; optional overrides are checked against them. Raises SweepError."""
    theory = plot.get("theory")
    if theory is None or theory.get("model") in ("column", "band"):
        return theory
    model = theory["model"]
    specs = [point_spec(sweep, point) for point in sweep.points()]
    resolved = {"model": model}
    if model in ("mathis", "cubic"):
        flow = _theory_flow(where, theory, plot, sweep)
        facts = [path_facts(spec, flow) for spec in specs]
        mss = _same([f["mss_bytes"] for f in facts], f"flow {flow}'s data packet size", where, "B")
        base = _same([f["base_rtt_ms"] for f in facts], f"the base RTT of flow {flow}'s path",
                     where, "ms")
        bits = _same([f["bits_per_mbit"] for f in facts], "the units", where, "bits per Mbit")
        given = theory.get("mss_bytes")
        if given is not None and not math.isclose(float(given), mss):
            raise SweepError(f'{where}: field "theory.mss_bytes": {given!r} disagrees with the '
                             f"topology, whose data packets are {mss} B; remove it (the packet "
                             f"size is taken from the topology)")
        given = theory.get("units_bits_per_mbit")
        if given is not None and not math.isclose(float(given), bits):
            raise SweepError(f'{where}: field "theory.units_bits_per_mbit": {given!r} disagrees '
                             f"with the topology's units ({bits} bits per Mbit); remove it")
        rtt = theory.get("rtt_ms")
        if rtt is None:
            rtt = base
        elif float(rtt) < base * (1 - 1e-6):
            raise SweepError(f'{where}: field "theory.rtt_ms": {rtt!r} is below the base RTT of '
                             f"flow {flow}'s path ({base:.4g} ms); the model's RTT is the base RTT "
                             f"plus the queueing delay it expects (leave it out to use the base RTT)")
        resolved.update(flow=flow, mss_bytes=mss, rtt_ms=float(rtt), base_rtt_ms=base,
                        units_bits_per_mbit=bits)
        if model == "cubic":
            resolved.update(C=theory.get("C", 0.4), beta=theory.get("beta", 0.7))
        return resolved
    # capacity / fair_share: a horizontal line at a rate the topology gives
    link = theory.get("link")
    flow = None
    if link is None:
        if model == "capacity" and theory.get("mbps") is not None:
            label = theory.get("label") or f"capacity {float(theory['mbps']):g} Mbps"
            return {"model": model, "mbps": float(theory["mbps"]), "label": label}
        flow = _theory_flow(where, theory, plot, sweep)
    links = {l.get("id") for l in sweep.base.get("links", [])}
    if link is not None and link not in links:
        raise SweepError(f'{where}: field "theory.link": no link "{link}"{suggestion(link, links)}')
    rates, shares, counts = [], [], []
    for spec in specs:
        if flow is not None:
            facts = path_facts(spec, flow)
            chosen = facts["bottleneck"]
            info = facts["links"][chosen]
        else:
            chosen = link
            info = _link_info(spec, link)
        link = chosen
        rates.append(info["mbps"])
        counts.append(len(info["flows"]))
        shares.append(info["mbps"] / max(1, len(info["flows"])))
    rate = _same(rates, f"the rate of link {link}", where, "Mbps")
    if model == "capacity":
        mbps = rate
        label = f"{link} capacity {rate:g} Mbps"
    else:
        count = int(_same(counts, f"the number of flows crossing {link}", where, "flows"))
        if count == 0:
            raise SweepError(f'{where}: field "theory.link": no flow crosses link {link}')
        mbps = rate / count
        label = f"fair share {mbps:g} Mbps ({link} {rate:g} Mbps / {count} flows)"
    given = theory.get("mbps")
    if given is not None and not math.isclose(float(given), mbps, rel_tol=1e-9):
        raise SweepError(f'{where}: field "theory.mbps": {given!r} disagrees with the topology '
                         f"({label}); remove it")
    return {"model": model, "link": link, "mbps": mbps, "label": theory.get("label") or label}


def _link_info(spec, link_id: str) -> dict:
    from theory.paths import Paths
    paths = Paths(spec)
    crossing = [f.id for f in spec.flows
                if any(hop.link.id == link_id for hop in paths.path(f.src, f.dst))]
    return {"mbps": spec.link(link_id).rate_bps / spec.units.bits_per_mbit, "flows": crossing}


# -- one run (in a worker) -------------------------------------------------------------------------
def run_one(task) -> dict:
    """Run one configuration; never raises: a failure gives status "error" and its message.

    Returns {"config_digest", "status", "error", "wall_time_s", "record"}: the record (summary,
    base RTTs, the check report when asked for) is what `compute_metrics` reads."""
    data, digest, seed, interval_s, want_check = task[:5]
    plugins = task[5] if len(task) > 5 else ()
    out = {"config_digest": digest, "status": "ok", "error": "", "record": None}
    start = time.perf_counter()
    try:
        if plugins:                               # workers are other processes: load them here
            from netsim.plugins import load_entry_points, load_plugins
            load_entry_points()
            load_plugins(plugins)
        from netsim.run import simulate
        from topologies import load_topology
        spec = load_topology(data)
        results = simulate(spec, seed=seed, interval_s=interval_s)
        summary = dict(results.summary)
        summary.pop("description", None)
        record = {"format": RECORD_FORMAT, "config_digest": digest, "seed": seed,
                  "summary": summary, "base_rtt_ms": _safe_base_rtts_ms(spec), "check": None}
        if want_check:
            from theory.check import compare
            from theory.fluid import predict
            record["check"] = compare(results, predict(spec))
        out["record"] = json.loads(json_text(record, default=_jsonable))
    except Exception as exc:                      # recorded, the sweep goes on
        line = None
        if plugins:                               # a plugin's failure: its file, line and hook
            from netsim.plugins import failure_line
            line = failure_line(exc)
        out["status"], out["error"] = "error", line or f"{type(exc).__name__}: {exc}"
    out["wall_time_s"] = round(time.perf_counter() - start, 4)
    if out["record"] is not None:
        out["record"]["wall_time_s"] = out["wall_time_s"]
    return out


def _jsonable(value):
    try:
        import numpy as np
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, np.ndarray):
            return value.tolist()
    except ImportError:                           # pragma: no cover
        pass
    return repr(value)


def _safe_base_rtts_ms(spec):
    try:
        return base_rtts_ms(spec)
    except Exception:                             # no route at the start: no queueing delay
        return None


def compute_metrics(record: dict, metrics: list) -> dict:
    """The metrics of one run from its record (its summary, base RTTs and check report).

    KeyError when the summary has no such value; `_Rerun` when only a new run can give it."""
    summary = record["summary"]
    flows = summary["flows"]
    goodputs = [f["goodput_mbps"] for f in flows.values()]
    derived = {}
    if goodputs:
        total = sum(goodputs)
        squares = sum(g * g for g in goodputs)
        derived["total_goodput_mbps"] = total
        derived["jain_index"] = total * total / (len(goodputs) * squares) if squares else 1.0
    rtts = [f["avg_rtt_ms"] for f in flows.values() if f["avg_rtt_ms"] is not None]
    if rtts:
        derived["mean_rtt_ms"] = sum(rtts) / len(rtts)
    bases = record.get("base_rtt_ms")
    if bases:
        delays = [f["avg_rtt_ms"] - bases[fid] for fid, f in flows.items()
                  if f["avg_rtt_ms"] is not None and fid in bases]
        derived["mean_queue_delay_ms"] = sum(delays) / len(delays) if delays else None
    if derived.get("mean_rtt_ms"):
        derived["power"] = derived["total_goodput_mbps"] / (derived["mean_rtt_ms"] / 1e3)
    out = {}
    for metric in metrics:
        parts = metric.split(".")
        if metric in DERIVED_METRICS:
            out[metric] = derived.get(metric)
        elif parts[0] == "check":
            if record.get("check") is None:
                raise _Rerun(metric)
            out[metric] = _check_value(record["check"], parts)
        else:
            value = summary
            for part in parts:
                value = value[part]
            out[metric] = value
    return out


class MetricUnavailable(KeyError):
    """A metric the run's record cannot give (a check interval the run did not reach...); its
    message is the one line results.csv records."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _check_value(report: dict, parts: list):
    if parts[1] == "max_error_pct":
        return report["max_error_pct"]
    metric = ".".join(parts)
    try:
        index = int(parts[1])
    except ValueError:
        raise MetricUnavailable(f"{metric}: expected a check interval number (0, 1, ...) or "
                                f"max_error_pct, got {parts[1]!r}") from None
    entity, quantity, field = parts[2], parts[3], parts[4]
    intervals = report.get("intervals") or []
    if not 0 <= index < len(intervals):
        have = (f"only intervals 0 to {len(intervals) - 1}" if intervals
                else "no interval long enough to compare")
        raise MetricUnavailable(f"{metric}: the run's --check comparison has {have} (the run is "
                                f"too short for interval {index}: lengthen duration_s, or collect "
                                f"an earlier interval)")
    for row in intervals[index]["rows"]:
        if row["id"] == entity and row["quantity"] == quantity:
            if field in ("predicted_low", "predicted_high"):
                value = row["predicted"]
                if isinstance(value, list):
                    return value[0] if field == "predicted_low" else value[-1]
                return value
            value = row[field]
            if isinstance(value, list):           # Vegas: an interval, not one value
                raise KeyError(f"{'.'.join(parts)}: the prediction is an interval "
                               f"[{value[0]:.6g}, {value[-1]:.6g}] (Vegas); collect "
                               f"{'.'.join(parts[:4])}.predicted_low and .predicted_high")
            return value
    raise KeyError(f"check interval {index} has no {entity} {quantity}")


# -- the results directory ---------------------------------------------------------------------------
def _columns(sweep: Sweep) -> list:
    return (["run_id", "point", "seed"] + [p for p, _ in sweep.parameters] + sweep.metrics
            + list(RESULT_TAIL))


def saved_sweep(sweep: Sweep) -> dict:
    """sweep.json: the sweep as run, its plots with theory settings resolved from the topology."""
    return dict(sweep.raw, name=sweep.name, topology=str(sweep.topology_path),
                plots=getattr(sweep, "resolved_plots", None) or sweep.plots)


def _describe(ident: dict) -> str:
    return (f"sweep \"{ident['name']}\" of topology {ident['topology']} over "
            f"{', '.join(ident['parameters']) or 'no parameters'}")


def check_sweep_dir(out: Path, sweep: Sweep) -> None:
    """Refuse (SweepError, whatever --force says) a directory that cannot hold the sweep: one
    that is not a directory, a single run's results directory, a non-empty directory that holds
    no sweep, one inside a results or sweep directory, or one holding an input of the sweep
    (its file, topology or plugins)."""
    from netsim.output_paths import OutputPathError, check_inputs_outside
    from netsim.results_dir import enclosing_results_dir, is_results_dir
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise SweepError(f"--out {out}: exists and is not a directory")
    if is_results_dir(out):
        raise SweepError(f"--out {out}: is the results directory of a single run (it holds "
                         f"summary.json), not a sweep directory; use another --out")
    if out.is_dir() and not (out / SWEEP_FILE).is_file() and not (out / RESULTS_FILE).exists() \
            and any(not entry.name.startswith(".") for entry in out.iterdir()):
        raise SweepError(f"--out {out}: exists, is not empty and holds no sweep (no "
                         f"{SWEEP_FILE}); choose another --out or remove what is there")
    outer = enclosing_results_dir(out)
    if outer is not None:
        raise SweepError(f"--out {out}: is inside the netsim results directory {outer}; use "
                         f"another --out")
    try:
        check_inputs_outside("--out", out, [getattr(sweep, "path", None), sweep.topology_path,
                                            *sweep.plugins])
    except OutputPathError as exc:
        raise SweepError(str(exc)) from None


def claim(out: Path, sweep: Sweep, force: bool = False) -> None:
    """Make `out` the directory of `sweep`: refuse (SweepError) a directory that cannot hold it
    (`check_sweep_dir`) and (SweepConflict) one that holds another sweep, unless `force`, which
    removes what that sweep wrote (sweep.json, results.csv, runs/ and its figures). Then write
    sweep.json."""
    check_sweep_dir(out, sweep)
    saved = saved_sweep(sweep)
    sweep_path, results_path = out / SWEEP_FILE, out / RESULTS_FILE
    previous = None
    if sweep_path.is_file():
        try:
            previous = json.loads(sweep_path.read_text())
        except (OSError, ValueError):
            previous = {}
        if not isinstance(previous, dict):
            previous = {}
    elif results_path.exists():
        previous = {}
    if previous is not None and identity(previous) != identity(saved):
        if not force:
            what = (_describe(identity(previous)) if previous.get("name") is not None
                    else "results of an unknown sweep")
            raise SweepConflict(f"{out} holds the {what}, not the {_describe(identity(saved))}; "
                                f"use another --out, or pass --force to replace them")
        _remove_sweep(out, previous)
    out.mkdir(parents=True, exist_ok=True)
    _write_atomic(sweep_path, json_text(saved, indent=2) + "\n")


def _remove_sweep(out: Path, previous: dict) -> None:
    for name in (SWEEP_FILE, RESULTS_FILE):
        (out / name).unlink(missing_ok=True)
    if (out / RECORDS_DIR).is_dir():
        shutil.rmtree(out / RECORDS_DIR)
    root = out.resolve()
    for plot in previous.get("plots") or []:
        name = plot.get("file") if isinstance(plot, dict) else None
        if not isinstance(name, str):
            continue
        path = (out / name).resolve()
        if path.suffix.lower() == ".png" and root in path.parents and path.is_file():
            path.unlink()


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, newline="\n")
    os.replace(tmp, path)


def _record_path(out: Path, digest: str) -> Path:
    return out / RECORDS_DIR / f"{digest}.json"


def _read_record(out: Path, digest: str):
    try:
        record = json.loads(_record_path(out, digest).read_text())
    except (OSError, ValueError):
        return None
    if (not isinstance(record, dict) or record.get("format") != RECORD_FORMAT
            or record.get("config_digest") != digest or not isinstance(record.get("summary"), dict)):
        return None
    return record


def _save_record(out: Path, record: dict) -> None:
    (out / RECORDS_DIR).mkdir(exist_ok=True)
    _write_atomic(_record_path(out, record["config_digest"]),
                  json_text(record, separators=(",", ":")) + "\n")


def _write_csv(path: Path, columns: list, rows: list) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _cell(v) for k, v in row.items()})
    os.replace(tmp, path)


def _cell(value):
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.9g}"
    return "" if value is None else value


def _row(sweep: Sweep, run: PlannedRun, result: dict) -> dict:
    metrics = sweep.metrics
    row = {"run_id": run.run_id, "point": run.point, "seed": run.seed}
    row.update({param: sweep.cell(param, value) for param, value in run.params})
    row.update({metric: None for metric in metrics})
    row.update(config_digest=run.digest, wall_time_s=result.get("wall_time_s"),
               status=result["status"], error=result["error"])
    if result["status"] == "ok":
        try:
            row.update(compute_metrics(result["record"], metrics))
        except Exception as exc:                  # recorded like a failed run
            row.update({metric: None for metric in metrics})
            row["status"], row["error"] = "error", f"{type(exc).__name__}: {exc}"
    return row


# -- running -----------------------------------------------------------------------------------------
def run_sweep(sweep: Sweep, out_dir, *, jobs: int | None = None, scheduler: str | None = None,
              progress=None, force: bool = False) -> list:
    """Run every run of `sweep` whose result `out_dir` does not hold yet; return all rows in run
    order. Raises SweepConflict when `out_dir` holds another sweep (unless `force`), and
    SweepInterrupted on SIGINT/SIGTERM after saving every finished run. `progress(row)` is
    called once per row, reused ones first."""
    out = Path(out_dir)
    runs = plan(sweep)
    claim(out, sweep, force)
    columns = _columns(sweep)
    results_path = out / RESULTS_FILE
    want_check = any(m.split(".")[0] == "check" for m in sweep.metrics)
    rows, todo, by_digest = {}, {}, {}
    for run in runs:
        by_digest.setdefault(run.digest, []).append(run)
        if run.digest in todo:
            continue
        record = _read_record(out, run.digest)
        if record is not None:
            try:
                compute_metrics(record, sweep.metrics)
            except _Rerun:                        # only a new run can give a metric
                record = None
            except Exception:                     # a new run would fail the same way: the
                pass                              # row records the error (_row)
        if record is None:
            todo[run.digest] = (point_data(sweep, run.params), run.digest, run.seed,
                                sweep.interval_s, want_check, sweep.plugins)
            continue
        rows[run.run_id] = _row(sweep, run, {"status": "ok", "error": "", "record": record,
                                             "wall_time_s": record.get("wall_time_s")})
    order = [run.run_id for run in runs]

    def in_order():
        return [rows[run_id] for run_id in order if run_id in rows]

    _write_csv(results_path, columns, in_order())
    if progress is not None:
        for row in in_order():
            progress(row)
    interrupted = None
    try:
        with open(results_path, "a", newline="") as fh, _StopSignals() as stop:
            writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore",
                                    lineterminator="\n")
            with closing(_execute(list(todo.values()), jobs, scheduler, stop)) as results:
                for result in results:
                    if result["status"] == "ok":
                        _save_record(out, result["record"])
                    for run in by_digest[result["config_digest"]]:
                        row = _row(sweep, run, result)
                        rows[run.run_id] = row
                        writer.writerow({k: _cell(v) for k, v in row.items()})
                        fh.flush()
                        if progress is not None:
                            progress(row)
    except SweepInterrupted as exc:
        interrupted = exc
    _write_csv(results_path, columns, in_order())
    if interrupted is not None:
        interrupted.done, interrupted.total, interrupted.out = len(rows), len(runs), out
        raise interrupted
    _prune_records(out, set(by_digest))
    return in_order()


def _prune_records(out: Path, keep: set) -> None:
    """Remove the records of runs that are no longer part of the sweep (a complete sweep only)."""
    directory = out / RECORDS_DIR
    if not directory.is_dir():
        return
    for path in directory.glob("*.json"):
        if path.stem not in keep:
            path.unlink(missing_ok=True)


class _StopSignals:
    """While active (in the main thread), SIGINT and SIGTERM ask the sweep to stop: `signum` is
    set, and, while `interruptible` (a run in this process), SweepInterrupted is raised at once."""

    def __init__(self):
        self.signum = None
        self.interruptible = False
        self._previous = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame):
        first = self.signum is None
        self.signum = signum
        if first and self.interruptible:
            self.interruptible = False
            raise SweepInterrupted(signum)

    def check(self):
        if self.signum is not None:
            raise SweepInterrupted(self.signum)

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        return False


def _execute(tasks: list, jobs: int | None, scheduler: str | None, stop: _StopSignals):
    """Yield run_one's results as runs finish; SweepInterrupted when `stop` is asked, after
    yielding the runs that had finished."""
    if not tasks:
        return
    if scheduler:
        yield from _execute_dask(tasks, scheduler, stop)
        return
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1:
        for task in tasks:
            stop.check()
            stop.interruptible = True
            try:
                result = run_one(task)
            finally:
                stop.interruptible = False
            yield result
        stop.check()
        return
    yield from _execute_pool(tasks, min(jobs, len(tasks)), stop)


def _execute_pool(tasks: list, jobs: int, stop: _StopSignals):
    import multiprocessing
    from concurrent.futures.process import BrokenProcessPool
    context = multiprocessing.get_context("spawn")     # workers are children of this process
    # A Ctrl-C reaches the whole process group. Workers must ignore it from their first
    # instruction, or one pressed while they import prints their tracebacks: an ignored signal
    # stays ignored across exec (and Python then installs no handler of its own), so SIGINT is
    # ignored here while the workers are started, and the stop handler put back at once.
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context,
                                   initializer=_worker_init, initargs=(os.getpid(),))
        pending = {pool.submit(run_one, task): task for task in tasks}
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)
    try:
        while pending:
            done, _ = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            if stop.signum is not None:                # keep what finished meanwhile, then stop
                done = [future for future in pending if future.done()]
            for future in done:
                task = pending.pop(future)
                try:
                    yield future.result()
                except BrokenProcessPool as exc:      # a worker died (killed, out of memory)
                    if stop.signum is None:           # not a casualty of the interrupt
                        yield {"config_digest": task[1], "status": "error", "record": None,
                               "wall_time_s": None, "error": f"worker process died: {exc}"}
            stop.check()
    finally:
        _kill_workers(pool)


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """Stop the pool at once: kill its workers (whatever they are running) and cancel the rest."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        try:
            process.kill()
        except (OSError, ValueError, AttributeError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        try:
            process.join(timeout=5)
        except (OSError, ValueError, AssertionError, AttributeError):
            pass


def _execute_dask(tasks: list, scheduler: str, stop: _StopSignals):
    from dask.distributed import Client
    with Client(scheduler) as client:
        futures = client.map(run_one, tasks, pure=False)
        pending = list(futures)
        try:
            while pending:
                done = [f for f in pending if f.done()]
                for future in done:
                    pending.remove(future)
                    yield future.result()
                stop.check()
                if not done:
                    time.sleep(POLL_S)
        finally:
            if pending:
                client.cancel(pending)


# -- workers ------------------------------------------------------------------------------------------
def _worker_init(parent_pid: int) -> None:
    """Initializer of every pool worker. Ctrl-C reaches the whole process group; the parent
    decides what happens, so the worker ignores SIGINT (from its start: `_execute_pool`). And the worker must not outlive the
    parent, even after kill -9 of the parent: on Linux the kernel kills it when the parent dies
    (prctl PR_SET_PDEATHSIG, SIGKILL); the parent may have died before that call, so the worker
    then checks that its parent is still the process that started it; and, where prctl is not
    available, a watchdog thread checks it every PARENT_CHECK_S seconds."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # already ignored since exec: see above
    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent_pid:
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True,
                         name="sweep-parent-watchdog").start()


def _watch_parent(parent_pid: int) -> None:
    while True:
        time.sleep(PARENT_CHECK_S)
        if os.getppid() != parent_pid:
            os._exit(1)
