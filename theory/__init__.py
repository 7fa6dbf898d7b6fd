"""Theory in one place: what the simulations are compared with.

* `response`: closed-form response functions of loss-based algorithms (Mathis et al. for Reno,
  RFC 9438 for CUBIC), used by sweep figures and validation tests.
* `equilibrium`: the solver of the fluid-model equilibrium of delay-based flows (FAST, Vegas),
  with its steps in `ncp_newton` (Newton, path following), `ncp` (support, polish, repair) and
  `simplex` (the rank rule).
* `paths`: the routes and base round trips of a topology's flows, from the routing code, without
  building a network.
* `fluid`: the piecewise-constant timeline of equilibria of a topology (`predict`).
* `models`: which model each flow gets, as its algorithm's class declares (`theory_model`).
* `perflow`: the per-flow models (Padhye, RFC 9438, max-min fair shares).
* `check`: comparing a run with the models (`--check`), interval by interval, with
  `windows` (the compared windows of a run), `check_rows` (the rows of each model) and
  `check_report` (the console table, check.json, predictions.csv).

Nothing here imports the simulator: theory reads topology specs and run results (and the
algorithm classes' declared facts).
"""
