"""The simulation engine: event loop, timers and domain-agnostic statistics helpers."""
from simulator.compiled import check as _check_compiled

_check_compiled()              # a compiled core (tools/compile_core.py) must match its sources

from simulator.engine import SchedulingError, Simulator, Timer  # noqa: E402

__all__ = ["SchedulingError", "Simulator", "Timer"]
