"""Where a run's links leave the values every `--check` model takes: a rate or a delay from the
link's `rate_schedule` or `delay_schedule` other than its `rate_mbps` or `delay_ms`, or a link
that is down (its `events`). The models describe fixed links that stay up, so the check cuts
its intervals at these instants and gives no model where a flow's path departs from them.

(A schedule entry at time 0 is the link's value from the start: the loader folds it into
`rate_bps` and `delay_s`, so it is no change here.)
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LinkChange:
    """One change of one link: at `time_s`, its "rate" (bit/s) or "delay" (s) becomes `value`,
    or it goes "down" or comes "up" (`value` None)."""

    time_s: float
    link: str
    what: str
    value: float | None


class LinkTimeline:
    """The changes of a topology's links in time order, and how the links stand at a time
    against the topology's fixed values (`departures`). Changes at one instant apply in the
    build's order: the schedules first, then the events."""

    def __init__(self, spec, bits_per_mbit: float = 1e6):
        self.bits_per_mbit = bits_per_mbit
        self.initial = {ls.id: (ls.rate_bps, ls.delay_s) for ls in spec.links}
        changes = []
        for ls in spec.links:
            changes += [LinkChange(t, ls.id, "rate", v) for t, v in ls.rate_schedule if t > 0]
            changes += [LinkChange(t, ls.id, "delay", v) for t, v in ls.delay_schedule if t > 0]
        events = [LinkChange(e.at_s, e.link, e.action, None) for e in spec.events]
        self.changes = sorted(changes + events, key=lambda c: c.time_s)   # (stable: schedules
                                                                          # first at one time)
        self._reset()

    def _reset(self) -> None:
        """`departures`' walk back at time 0: no change applied yet."""
        self._applied = 0             # changes applied to `_state`
        self._state: dict = {}        # link -> (rate, delay, up) after them
        self._since: dict = {}        # link -> time of its last change of state

    def times(self, links=None) -> list:
        """The instants at which some link (of `links`, ids, if given) changes, in order."""
        return sorted({c.time_s for c in self.changes if links is None or c.link in links})

    def first_change_s(self, links) -> float | None:
        """The first instant at which one of `links` (ids) changes, None if none ever does."""
        return next((c.time_s for c in self.changes if c.link in links), None)

    def departures(self, at_s: float) -> dict:
        """link id -> how it departs at `at_s` (after the changes up to and including `at_s`)
        from the topology's fixed values, in words; links that do not are left out. Asked in
        time order (the check's intervals), it applies each change once."""
        if self._applied and self.changes[self._applied - 1].time_s > at_s:
            self._reset()                                 # (asked about an earlier time)
        state, since, changes = self._state, self._since, self.changes
        while self._applied < len(changes) and changes[self._applied].time_s <= at_s:
            c = changes[self._applied]
            self._applied += 1
            rate, delay, up = state.get(c.link, (*self.initial[c.link], True))
            if c.what == "rate":
                rate = c.value
            elif c.what == "delay":
                delay = c.value
            else:
                up = c.what == "up"
            if (rate, delay, up) != state.get(c.link, (*self.initial[c.link], True)):
                since[c.link] = c.time_s
            state[c.link] = (rate, delay, up)
        out = {}
        for link, (rate, delay, up) in state.items():
            rate0, delay0 = self.initial[link]
            if up and rate == rate0 and delay == delay0:
                continue                  # (changed back, or to the value it had)
            when = f"since {since[link]:g} s"
            if not up:
                out[link] = f"link {link} is down ({when}, its events)"
            elif rate != rate0:
                out[link] = (f"link {link} runs at {rate / self.bits_per_mbit:g} Mb/s ({when}, its "
                             f"rate_schedule), not its {rate0 / self.bits_per_mbit:g} Mb/s")
            elif delay != delay0:
                out[link] = (f"link {link} has a delay of {delay * 1e3:g} ms ({when}, its "
                             f"delay_schedule), not its {delay0 * 1e3:g} ms")
        return out


FIXED_LINKS = "every model takes the topology's links as fixed and up"
