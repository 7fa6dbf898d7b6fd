"""Reading and plotting the results of a netsim run.

A run writes ``summary.json``, ``links.csv``, ``flows.csv``, ``hosts.csv`` and ``routes.csv`` into
its output directory, and with ``--check`` also ``check.json`` and ``predictions.csv`` (format:
docs/outputs.md). This package only reads those results; it imports nothing from the simulator
packages, so it can be used on results copied to another machine.

    from plot_tool import read_results, select, make_figures

    rs = read_results("out/test_case_2")   # ResultSet: .summary, .links, .flows, .hosts, .routes
    l1 = select(rs.links, link="L1", direction="R1->R2")
    l1["time_s"], l1["buffer_kb"]                    # numpy arrays
    select(rs.routes, router="R1", destination="H2")   # rs.routes is None for older results
    make_figures(rs, "out/test_case_2", flows=["F1", "F2"])
    # -> [links.png, flows.png, hosts.png] + [routing.png] when dynamic routing changed a route
    rs.predictions, rs.check      # predictions.csv (Table) and check.json (dict), or None
    make_figures(rs, "figs", predictions=False)       # without the dashed analytic predictions

    from plot_tool import make_sweep_figures       # figures of a parameter sweep (docs/sweeps.md)
    make_sweep_figures("results/sweeps/goodput_vs_loss")

    from plot_tool import make_report     # interactive report.html (docs/report.md); needs plotly
    make_report("out/test_case_2")        # -> out/test_case_2/report.html
"""
from plot_tool.figures import make_figures
from plot_tool.results import ResultSet, Table, read_results, select

__all__ = ["ResultSet", "Table", "aggregate", "make_figures", "make_report", "make_sweep_figures",
           "read_results", "select"]


def __getattr__(name):
    """`make_report`, `make_sweep_figures` and `aggregate` are imported on first use:
    ``import plot_tool`` (a run's figures) never loads the report code (nor plotly, which the
    report imports only while writing a page) nor the sweep figures (nor theory)."""
    if name == "make_report":
        from plot_tool.report import make_report
        return make_report
    if name in ("make_sweep_figures", "aggregate"):
        from plot_tool import sweep_figures
        return getattr(sweep_figures, name)
    raise AttributeError(f"module 'plot_tool' has no attribute {name!r}")
