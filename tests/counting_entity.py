"""A stand-in sampled entity shared by the sampler tests (test_sampling, test_sampler_wake,
test_sampler_groups): one counter, the probe that reports its change per interval, and the
wake/arm protocol of simulator/sampling.py."""
from __future__ import annotations

import math


class Counter:
    """An entity with one counter; its probe reports and resets the per-interval change.

    `probe` counts its calls (`calls`), `wake()` how often the sampler compared the entity
    asleep (`compared`); `arm(nudge)` keeps the nudge
    and answers `arm_at` (inf: asleep until nudged; -inf: compared every tick); `bump(by,
    notify)` adds `by` (0: a nudge that changes nothing) and nudges the sampler if armed and
    `notify`."""

    def __init__(self, arm_at: float = math.inf):
        self.value = 0
        self.seen = 0
        self.calls = 0
        self.compared = 0
        self.arm_at = arm_at
        self.nudge = None

    def probe(self, now, span):
        self.calls += 1
        if self.value == self.seen:
            return None
        row = (float(self.value - self.seen),)
        self.seen = self.value
        return row

    def wake(self):
        self.compared += 1
        return self.value

    def arm(self, nudge):
        self.nudge = nudge
        return self.arm_at

    def bump(self, by: int = 1, notify: bool = True):
        self.value += by
        if notify and self.nudge is not None:
            self.nudge()
