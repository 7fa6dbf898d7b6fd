"""The simulation engine: event loop, timers and domain-agnostic statistics helpers."""
from simulator.engine import SchedulingError, Simulator, Timer

__all__ = ["SchedulingError", "Simulator", "Timer"]
