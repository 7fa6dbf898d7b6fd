"""Reading and plotting the results of a netsim run.

A run writes ``summary.json``, ``links.csv``, ``flows.csv``, ``hosts.csv`` and ``routes.csv`` into
its output directory, and with ``--check`` also ``check.json`` and ``predictions.csv`` (format:
docs/outputs.md; the columns, types, units and meanings of every file: `plot_tool.schema`, which
the simulation's probes write by). This package only reads those results, through one reader
(`plot_tool.results`); it imports nothing from the simulator packages nor from netsim, so it can
be used on results copied to another machine.

Each kind of figure has a front end that computes its data once and drawing backends: the run
figures (`run_data` -> `png`), the sweep figures (`sweep_data` -> `sweep_figures` as PNG,
`report_sweep` in the report), the interactive report (`report`, plotly).

    from plot_tool import read_results, select, make_figures

    rs = read_results("out/test_case_2")   # ResultSet: .summary, .links, .flows, .hosts, .routes
    l1 = select(rs.links, link="L1", direction="R1->R2")
    l1["time_s"], l1["buffer_kb"]                    # numpy arrays
    select(rs.routes, router="R1", destination="H2")   # rs.routes is None for older results
    make_figures(rs, "out/test_case_2", flows=["F1", "F2"])
    # -> [links.png, flows.png, hosts.png] + [routing.png] when dynamic routing changed a route
    rs.predictions, rs.check      # predictions.csv (Table) and check.json (dict), or None
    rs.frame("flows")             # a pandas DataFrame with pandas installed, else a list of rows
    make_figures(rs, "figs", predictions=False)       # without the dashed analytic predictions

    from plot_tool import make_sweep_figures       # figures of a parameter sweep (docs/sweeps.md)
    make_sweep_figures("results/sweeps/goodput_vs_loss")

    from plot_tool import make_report     # interactive report.html (docs/report.md); needs plotly
    make_report("out/test_case_2")        # -> out/test_case_2/report.html
"""
from __future__ import annotations

from typing import Any

__all__ = ["ResultSet", "Table", "aggregate", "make_figures", "make_report", "make_sweep_figures",
           "read_results", "select"]

# Every public name is imported on first use (PEP 562): ``import plot_tool.schema`` (which the
# simulation's probes do) loads neither numpy nor matplotlib; ``make_figures`` never loads the
# report code (nor plotly) nor the sweep figures (nor theory).
_HOMES = {"ResultSet": "plot_tool.results", "Table": "plot_tool.results",
          "read_results": "plot_tool.results", "select": "plot_tool.results",
          "make_figures": "plot_tool.figures", "make_report": "plot_tool.report",
          "make_sweep_figures": "plot_tool.sweep_figures", "aggregate": "plot_tool.sweep_figures"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'plot_tool' has no attribute {name!r}")
    import importlib
    return getattr(importlib.import_module(home), name)
