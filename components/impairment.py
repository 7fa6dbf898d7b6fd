"""Link impairments: what happens to one direction's packets between its transmitter and the
far node (loss, burst loss, duplication, reordering, jitter); docs/model.md, "Impairments".
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from simulator.compiled import plain_mypyc_attr

if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr

    from components.direction import LinkDirection
    from components.packet import Packet


# (mypyc_attr: simulator/compiled.py, `plain_mypyc_attr`)
globals().setdefault("mypyc_attr", plain_mypyc_attr)

@mypyc_attr(allow_interpreted_subclasses=True)
class Impairment:
    """What happens to one direction's packets between transmitter and far node.

    Called at a packet's nominal arrival time, in this order: lost (independently with
    `loss_rate`, or by the Gilbert-Elliott chain, stepped once per packet), else delivered; held
    back by `reorder_delay_s` with probability `reorder_rate` (later packets overtake it); delayed
    by a uniform jitter in [0, `jitter_s`] — without `jitter_reorder`, never earlier than the
    previous jittered packet of this direction, so jitter alone keeps the order; and with
    probability `duplicate_rate` delivered a second time right after, as a packet of its own
    (`Packet.copy`: later marks and the routers' hop count are each copy's own). Lost packets have used the
    link's capacity; duplicates have not. All draws come from the run's generator. What it does
    is counted by its direction `d`.

    Jitter mode ``"netem"`` (`netem`): as Linux netem's ``delay D J`` without a distribution
    table or rate, each packet's propagation delay is drawn on its own, uniform in [D - J, D + J)
    (D the link's delay, J `jitter_s`; at least 0), so packets sent less than 2 J apart may
    arrive in either order. The direction's transmitter then schedules the arrival at the end of
    transmission (its own delay is 0, `LinkDirection.impair`) and the impairment adds the draw.
    """

    __slots__ = ("d", "sim", "rng", "receive", "loss_rate", "gilbert", "bad", "duplicate_rate",
                 "reorder_rate", "reorder_delay_s", "jitter_s", "jitter_reorder", "netem",
                 "last_release_s")

    def __init__(self, d: LinkDirection, spec, receive: Callable[[Packet], None]):
        self.d = d
        sim = d.sim
        self.sim = sim
        self.rng = sim.rng
        self.receive = receive
        self.loss_rate = spec.loss_rate
        self.gilbert = spec.loss_model
        self.bad = False
        self.duplicate_rate = spec.duplicate_rate
        self.reorder_rate = spec.reorder_rate
        self.reorder_delay_s = spec.reorder_delay_s
        self.jitter_s = spec.jitter_s
        self.jitter_reorder = spec.jitter_reorder
        self.netem = bool(spec.jitter_s) and spec.jitter_mode == "netem"
        self.last_release_s = 0.0

    def _lost(self) -> bool:
        random = self.rng.random
        model = self.gilbert
        if model is None:
            return self.loss_rate > 0.0 and random() < self.loss_rate
        if self.bad:
            if random() < model.p_bad_to_good:
                self.bad = False
        elif random() < model.p_good_to_bad:
            self.bad = True
        return random() < (model.loss_bad if self.bad else model.loss_good)

    def __call__(self, packet: Packet) -> None:
        if self._lost():
            d: Any = self.d             # (a dynamic call: docs/model.md, "Compiled core")
            d.lost_in_transit()
            return
        random = self.rng.random
        delay = 0.0
        if self.reorder_rate and random() < self.reorder_rate:
            delay = self.reorder_delay_s
            self.d.held_back()
        copies = 2 if self.duplicate_rate and random() < self.duplicate_rate else 1
        if self.netem:                  # the link's delay +- jitter, drawn for this packet
            link: Any = self.d.link
            drawn = link.delay_s + (2.0 * random() - 1.0) * self.jitter_s
            if drawn > 0.0:
                delay += drawn
        elif self.jitter_s:
            now = self.sim.now
            release = now + random() * self.jitter_s
            if not self.jitter_reorder:
                release = max(release, self.last_release_s)
                self.last_release_s = release
            delay += release - now
        twin = packet.copy() if copies == 2 else None   # a packet of its own: hops, marks
        if delay <= 0.0:
            self.receive(packet)
            if twin is not None:
                self.d.duplicate_delivered()
                self.receive(twin)
            return
        guard = self.d.guard
        if guard is None:               # the link never fails
            self.sim.schedule(delay, self.receive, packet)
            if twin is not None:
                self.sim.schedule(delay, self._deliver_twin, twin)
            return
        # The link may fail while the packet is held: it is still on the link (propagating), so
        # it is not yet delivered, and a failure before its release loses it (`release`).
        guard.delivered -= 1
        self.sim.schedule(delay, self.release, (packet, guard, True))
        if twin is not None:
            self.sim.schedule(delay, self.release, (twin, guard, False))

    def _deliver_twin(self, twin: Packet) -> None:
        """A duplicate's copy at the end of its hold, on a link that never fails: counted as
        delivered now (`duplicated`: the copies delivered)."""
        self.d.duplicate_delivered()
        self.receive(twin)

    def release(self, held: tuple) -> None:
        """The end of a hold (reordering, jitter, netem's delay) on a link that may fail:
        deliver the packet, unless the link failed since it was held (`guard`, the failure guard
        that passed it, is then dead). `counted`: the packet was transmitted (a duplicate's copy
        was not), and counts as delivered, or as lost in flight (`LinkDirection.fail`)."""
        packet, guard, counted = held
        if guard.live:
            if counted:
                guard.delivered += 1
            else:                       # the copy: counted as it is delivered
                self.d.duplicate_delivered()
            self.receive(packet)
        elif counted:                   # a failure drop, counted when the link failed
            guard(packet)               # (the dead guard delivers nothing; a trace sees it)
