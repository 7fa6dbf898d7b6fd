"""Theory in one place: what the simulations are compared with.

* `response`: closed-form response functions of loss-based algorithms (Mathis et al. for Reno,
  RFC 9438 for CUBIC), used by sweep figures and validation tests.
* `equilibrium`: the solver of the fluid-model equilibrium of delay-based flows (FAST, Vegas).
* `paths`: the routes and base round trips of a topology's flows, from the routing code, without
  building a network.
* `fluid`: the piecewise-constant timeline of equilibria of a topology (`predict`).
* `check`: comparing a run with that timeline (`--check`).

Nothing here imports the simulator: theory reads topology specs and run results.
"""
