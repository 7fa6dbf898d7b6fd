"""Which analytic model `--check` applies to a flow: the one its algorithm's class declares.

Every congestion-control class carries its own facts (`flows.congestion.CongestionControl`):
``theory_model`` names the model (or None: not checked) and its constants stay in the class
(its ``PARAMETERS``, merged into each flow's ``params`` by the loader). So a plugin, Tahoe or
DCTCP declares a model exactly as the built-ins do, and nothing here lists algorithms by name.

Models theory implements:

* ``"delay"``: the fluid equilibrium of delay-based flows (`theory.fluid`); the flow's
  ``params`` give ``alpha`` (and ``beta``, Vegas' upper target; FAST: alpha);
* ``"loss"``: Padhye et al.'s Reno response with timeouts (`theory.perflow.padhye_q_rate_pps`);
* ``"cubic"``: RFC 9438's response function with the flow's ``C`` and ``beta``;
* ``"rate"``: BBR v1's fair share and queue bound with the flow's ``cwnd_gain`` and the largest
  pacing gain of its ProbeBW cycle;
* ``"dctcp"``: the sawtooth analysis of DCTCP (Alizadeh et al., SIGCOMM 2010, Section 3.3) at a
  bottleneck with step marking at K: fair shares, and the queue between Q_max - A and Q_max.

A declared model theory does not implement is reported as such.
"""
from __future__ import annotations

IMPLEMENTED = ("delay", "loss", "cubic", "rate", "dctcp")
HOW_TO_DECLARE = ("to check such a flow, give its algorithm's class the attribute "
                  "theory_model = \"loss\" (Padhye's Reno response: a window that grows by 1 "
                  "packet per round trip and halves on loss), or \"cubic\", \"delay\", \"rate\" "
                  "or \"dctcp\" if its steady state is that model's (docs/algorithms.md, "
                  "\"Class attributes\")")
# the sources without congestion control (flows/cbr.py): nothing a model could describe
RATE_SOURCES = {"cbr": "a constant-bit-rate source", "onoff": "an on-off source"}
ROW_LABELS = {"loss": "padhye", "cubic": "rfc9438", "rate": "bbr", "dctcp": "dctcp"}   # rows' "model"
# how the check groups models when flows of different models share a link
KINDS = {"delay": "delay-based", "loss": "loss", "cubic": "loss", "rate": "bbr", "dctcp": "dctcp"}


def declared_model(algorithm: str) -> str | None:
    """The model the class registered as `algorithm` declares (None: none, or no such class)."""
    from flows import ALGORITHMS
    cls = ALGORITHMS.get(algorithm)
    return getattr(cls, "theory_model", None) if cls is not None else None


def model_of(algorithm: str) -> str | None:
    """The model `--check` applies to flows of `algorithm`: its declared model if theory
    implements it, else None."""
    model = declared_model(algorithm)
    return model if model in IMPLEMENTED else None


def kind_of(algorithm: str) -> str:
    """"delay-based", "loss" (Reno-like and CUBIC), "bbr", "dctcp" or "none"."""
    return KINDS.get(model_of(algorithm) or "", "none")


def modelled_algorithms() -> list:
    """The registered algorithms whose class declares a model theory implements."""
    from flows import ALGORITHMS
    return [name for name in ALGORITHMS if model_of(name) is not None]


def no_model_reason(algorithm: str) -> str:
    """Why a flow of `algorithm` is not compared."""
    if algorithm in RATE_SOURCES:
        return (f"{RATE_SOURCES[algorithm]} ({algorithm}), without congestion control: it sends "
                f"at the rate it was given, not compared with a model")
    model = declared_model(algorithm)
    if model is not None and model not in IMPLEMENTED:
        return (f"no analytic model for {algorithm} (its class declares the {model} model, "
                f"which theory does not implement; models: {', '.join(IMPLEMENTED)})")
    return f"no analytic model for {algorithm} ({HOW_TO_DECLARE})"


def missing_models_hint(algorithms) -> str:
    """What a student does about `algorithms` (names) that have no model: the class attribute,
    and for a class that declares a model theory does not implement, that it does not."""
    names = [name for name in dict.fromkeys(algorithms) if name not in RATE_SOURCES]
    unknown = [f"{name} declares theory_model = {declared_model(name)!r}, which theory does not "
               f"implement" for name in names
               if declared_model(name) is not None and declared_model(name) not in IMPLEMENTED]
    return "; ".join([*unknown, HOW_TO_DECLARE])


def has_slow_start(algorithm: str) -> bool:
    """Whether flows of `algorithm` start in slow start and must leave it before a steady state
    exists: True unless the class declares ``has_slow_start = False`` (FAST, whose update rule
    sets the window from the first round trip)."""
    from flows import ALGORITHMS
    return bool(getattr(ALGORITHMS.get(algorithm), "has_slow_start", True))


def bbr_gains(params: dict) -> tuple:
    """(cwnd_gain, the largest ProbeBW pacing gain) of a BBR flow with `params`: the flow's
    own cwnd_gain and the class's gain cycle (flows/bbr.py)."""
    from flows.bbr import GAIN_CYCLE, Bbr
    cwnd_gain = float(params.get("cwnd_gain", Bbr.PARAMETERS["cwnd_gain"]))
    return cwnd_gain, max(GAIN_CYCLE)


def cubic_constants(params: dict) -> tuple:
    """(C, beta) of a CUBIC flow with `params` (defaults: the class's, flows/cubic.py)."""
    from flows import ALGORITHMS
    defaults = ALGORITHMS["cubic"].PARAMETERS
    return float(params.get("C", defaults["C"])), float(params.get("beta", defaults["beta"]))
