"""Reliable flows: the transport (`flows.transport`) and one module per congestion-control algorithm."""
from __future__ import annotations

from flows.bbr import Bbr
from flows.congestion import CongestionControl
from flows.cubic import Cubic
from flows.fast import Fast
from flows.newreno import NewReno
from flows.reno import Reno
from flows.tahoe import Tahoe
from flows.vegas import Vegas

# Every algorithm a topology or the CLI can name.
ALGORITHMS = {cls.name: cls for cls in (Tahoe, Reno, NewReno, Fast, Vegas, Cubic, Bbr)}

__all__ = ["ALGORITHMS", "CongestionControl"]
