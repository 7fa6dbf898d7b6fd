"""Running parameter sweeps: every point x seed of a `Sweep` is an independent simulation.

Runs go to a process pool (``--jobs``), or to a Dask cluster (``--scheduler``); each finished run
is appended to ``results.csv`` at once, so an interrupted sweep resumes where it stopped; at the
end the file is rewritten in run order, so the same sweep gives the same file whichever way it
ran. Sweep files are read and validated by `topologies.sweep_file`.
"""
from __future__ import annotations

import copy
import csv
import json
import math
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from topologies.sweep_file import (DERIVED_METRICS, Sweep, SweepError, load_sweep,  # noqa: F401
                                   set_path)

RESULT_TAIL = ("wall_time_s", "status", "error")


# -- running -------------------------------------------------------------------------------------
def run_one(task) -> dict:
    """Run one point x seed; never raises: failures become a row with status "error"."""
    base, run_id, index, seed, point, duration_s, interval_s, metrics = task
    row = {"run_id": run_id, "point": index, "seed": seed}
    row.update({param: value for param, value in point})
    start = time.perf_counter()
    try:
        from topologies import load_topology, simulate
        data = copy.deepcopy(base)
        for param, value in point:
            set_path(data, param, value)
        if duration_s is not None:
            data["duration_s"] = duration_s
        spec = load_topology(data)
        results = simulate(spec, seed=seed, interval_s=interval_s)
        row.update(collect_metrics(spec, results, metrics))
        row["status"], row["error"] = "ok", ""
    except Exception as exc:                      # recorded, the sweep goes on
        row["status"], row["error"] = "error", f"{type(exc).__name__}: {exc}"
    row["wall_time_s"] = round(time.perf_counter() - start, 4)
    return row


def collect_metrics(spec, results, metrics: list) -> dict:
    summary = results.summary
    flows = list(summary["flows"].values())
    goodputs = [f["goodput_mbps"] for f in flows]
    out = {}
    derived = {}
    if goodputs:
        total = sum(goodputs)
        squares = sum(g * g for g in goodputs)
        derived["total_goodput_mbps"] = total
        derived["jain_index"] = total * total / (len(goodputs) * squares) if squares else 1.0
    rtts = [f["avg_rtt_ms"] for f in flows if f["avg_rtt_ms"] is not None]
    if rtts:
        derived["mean_rtt_ms"] = sum(rtts) / len(rtts)
    needs_queue = {"mean_queue_delay_ms"} & set(metrics)
    if needs_queue:
        from topologies.theory import base_rtts_s
        bases = base_rtts_s(results.network)
        delays = [f["avg_rtt_ms"] - bases[fid] * 1e3 for fid, f in summary["flows"].items()
                  if f["avg_rtt_ms"] is not None]
        derived["mean_queue_delay_ms"] = sum(delays) / len(delays) if delays else None
    if "power" in metrics and derived.get("mean_rtt_ms"):
        derived["power"] = derived["total_goodput_mbps"] / (derived["mean_rtt_ms"] / 1e3)
    report = None
    for metric in metrics:
        parts = metric.split(".")
        if metric in DERIVED_METRICS:
            out[metric] = derived.get(metric)
        elif parts[0] == "check":
            if report is None:
                from topologies.check import compare
                from topologies.theory import predict
                report = compare(results, predict(spec))
            out[metric] = _check_value(report, parts)
        else:
            value = summary
            for part in parts:
                value = value[part]
            out[metric] = value
    return out


def _check_value(report: dict, parts: list):
    if parts[1] == "max_error_pct":
        return report["max_error_pct"]
    index, entity, quantity, field = int(parts[1]), parts[2], parts[3], parts[4]
    for row in report["intervals"][index]["rows"]:
        if row["id"] == entity and row["quantity"] == quantity:
            value = row[field]
            return value[0] if isinstance(value, list) else value
    raise KeyError(f"check interval {index} has no {entity} {quantity}")


def _columns(sweep: Sweep) -> list:
    return (["run_id", "point", "seed"] + [p for p, _ in sweep.parameters] + sweep.metrics
            + list(RESULT_TAIL))


def _read_done(path: Path) -> dict:
    if not path.is_file():
        return {}
    with open(path, newline="") as fh:
        return {row["run_id"]: row for row in csv.DictReader(fh) if row.get("status") == "ok"}


def run_sweep(sweep: Sweep, out_dir, *, jobs: int | None = None, scheduler: str | None = None,
              progress=None) -> list:
    """Run every run not already in out_dir/results.csv; returns all rows, in run order."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    saved = dict(sweep.raw, topology=str(sweep.topology_path))
    (out / "sweep.json").write_text(json.dumps(saved, indent=2) + "\n")
    results_path = out / "results.csv"
    columns = _columns(sweep)
    done = _read_done(results_path)
    all_runs = sweep.runs()
    todo = [r for r in all_runs if r[0] not in done]
    tasks = [(sweep.base, run_id, index, seed, point, sweep.duration_s, sweep.interval_s,
              sweep.metrics) for run_id, index, seed, point in todo]
    rows = {run_id: row for run_id, row in done.items()}
    with open(results_path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for row in done.values():
            writer.writerow(row)
        fh.flush()
        for row in _execute(tasks, jobs, scheduler):
            rows[row["run_id"]] = row
            writer.writerow({k: _cell(v) for k, v in row.items()})
            fh.flush()
            if progress is not None:
                progress(row)
    ordered = [rows[run_id] for run_id, _, _, _ in all_runs if run_id in rows]
    with open(results_path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for row in ordered:
            writer.writerow({k: _cell(v) for k, v in row.items()})
    return ordered


def _cell(value):
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.9g}"
    return "" if value is None else value


def _execute(tasks: list, jobs: int | None, scheduler: str | None):
    if not tasks:
        return
    if scheduler:
        from dask.distributed import Client, as_completed as dask_completed
        with Client(scheduler) as client:
            futures = client.map(run_one, tasks, pure=False)
            for future in dask_completed(futures):
                yield future.result()
        return
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1:
        for task in tasks:
            yield run_one(task)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_one, task) for task in tasks]
        for future in as_completed(futures):
            yield future.result()
