"""The event loop: a clock and a priority queue of callbacks.

An event is a plain tuple ``(time_s, sequence, callback, argument, line)`` on a private `heapq`.
The sequence number grows with every scheduling call, so events due at the same time run in the
order they were scheduled and a run is reproducible. The engine knows nothing of networks: it
calls ``callback(argument)`` at the event's time and advances the clock, which never goes
backwards. `run` processes events until none is left (or a time, or `stop`); `step` processes one.

Two structures keep the heap as small as the set of things that are busy, not the number of
events pending:

* A **line** (`line`, `schedule_line`) holds events of one source that come due in the order they
  are scheduled, such as the packets propagating on one direction of a FIFO link: they wait in a
  deque and only the first is on the heap; when it runs, the next one takes its place (one
  `heapreplace`, a single sift, rather than a pop and a push: TC2 -3.2 % instructions). Each event
  keeps the sequence number of the moment it was scheduled, so the order of events is exactly
  what one heap entry per event would give. An event due before the last one of its line (the
  line would be out of order) gets a heap entry of its own.
* Timers that are re-armed often (a retransmission timer is restarted on nearly every ACK) are
  `Timer` objects: restarting one later than its pending event costs nothing on the heap,
  cancelling one is O(1), and stale heap entries are skipped when they come up (lazy removal).
  A timer's entry due in a later slot of 1/128 s than the current one is *parked* in that slot's
  list rather than on the heap. Only the earliest parked slot has an entry on the heap (its
  start time, sequence 0: before any event of the slot), which moves the slot's entries onto the
  heap when the slot begins and puts the next parked slot's entry there; the other slots wait in
  a heap of their own, of plain slot numbers. So 10 000 flows' retransmission timers, a second
  away, cost the event heap one or two entries, not 10 000 (nor one per slot of that second: the
  130 such entries were most of the heap of 10 000 long-lived flows); the moves are not events
  (`events` does not count them) and change no order. Flows' starts are parked the same way
  (`schedule_ahead`): 10 000 flows starting over the first 0.1 s keep the starts of one slot,
  about 800, on the heap at a time, not up to 10 000.
"""
from __future__ import annotations

import random
from collections import deque
from heapq import heapify, heappop, heappush, heapreplace

from simulator.garbage import set_aside, take_back

SLOTS_PER_S = 128.0     # parked timer entries are grouped in slots of 1/128 s (exact binary times)


class SchedulingError(ValueError):
    """An event was scheduled in the past."""


class Simulator:
    """A discrete-event clock and event queue.

    Owns the run's only random number generator (`rng`), seeded once, so that every source of
    randomness in a run derives from the seed.
    """

    __slots__ = ("now", "rng", "events", "_heap", "seq", "_parked", "_slots", "_entered",
                 "_stopped", "stop_reason")

    def __init__(self, seed: int = 1):
        self.now = 0.0
        self.rng = random.Random(seed)
        self.events = 0           # events processed so far
        self._heap: list = []     # (time_s, sequence, callback, argument, line or None)
        self.seq = 0              # sequence number of the last event scheduled (see `schedule_line`)
        self._parked: dict = {}   # slot -> entries parked until the slot begins (Timer)
        self._slots: list = []    # the parked slots' numbers (a heap: the earliest first)
        self._entered: set = set()    # parked slots whose start is on the event heap
        self._stopped = False
        self.stop_reason: str | None = None

    def schedule(self, delay_s: float, callback, argument=None) -> None:
        """Call ``callback(argument)`` after `delay_s` seconds of simulated time."""
        if delay_s < 0:
            raise SchedulingError(f"cannot schedule {delay_s} s in the past")
        self.seq += 1
        heappush(self._heap, (self.now + delay_s, self.seq, callback, argument, None))

    def schedule_at(self, time_s: float, callback, argument=None) -> None:
        """Call ``callback(argument)`` at simulated time `time_s` (not before now)."""
        if time_s < self.now:
            raise SchedulingError(f"cannot schedule at {time_s} s, the clock is at {self.now} s")
        self.seq += 1
        heappush(self._heap, (time_s, self.seq, callback, argument, None))

    @staticmethod
    def line() -> deque:
        """A new, empty line for `schedule_line` (the caller keeps it; only the engine changes it,
        but for the common case of `schedule_line` that a caller may do itself)."""
        return deque()

    def schedule_line(self, line: deque, time_s: float, callback, argument=None) -> None:
        """Call ``callback(argument)`` at simulated time `time_s` (not before now), as the last
        event of `line`: the same order as `schedule_at`, with one heap entry per line.

        The common case -- `line` not empty and `time_s` not before its last event -- is
        ``self.seq += 1; line.append((time_s, self.seq, callback, argument, line))``; a caller on
        the packet path may do exactly that itself (`LinkDirection.send`: one call less per packet
        and hop), and must call this method otherwise."""
        self.seq = seq = self.seq + 1
        if line:
            if time_s >= line[-1][0]:
                line.append((time_s, seq, callback, argument, line))
            else:                                     # out of order: an entry of its own
                if time_s < self.now:
                    raise SchedulingError(f"cannot schedule at {time_s} s, the clock is at "
                                          f"{self.now} s")
                heappush(self._heap, (time_s, seq, callback, argument, None))
            return
        if time_s < self.now:
            raise SchedulingError(f"cannot schedule at {time_s} s, the clock is at {self.now} s")
        entry = (time_s, seq, callback, argument, line)
        line.append(entry)
        heappush(self._heap, entry)

    def retime_line(self, line: deque, times: list) -> None:
        """Move the last ``len(times)`` events of `line` to `times` (in order, not before now,
        and keeping the line in time order), each keeping its sequence number, callback and
        argument: a FIFO link whose waiting packets a rate change re-times
        (`Transmitter.change_rate`). The line's heap entry follows its first event."""
        n = len(times)
        if not n:
            return
        head = line[0]
        moved = [line.pop() for _ in range(n)]
        moved.reverse()
        for entry, time_s in zip(moved, times):
            line.append((time_s, entry[1], entry[2], entry[3], line))
        if line[0] is not head:                       # its first event moved: so does its entry
            heap = self._heap
            for i, entry in enumerate(heap):
                if entry is head:
                    heap[i] = line[0]
                    heapify(heap)
                    break

    def schedule_ahead(self, time_s: float, callback, argument=None) -> None:
        """`schedule_at` for an event that is usually far ahead (a timer, a flow's start): the
        same order, parked in its slot's list if the slot begins after now, on the heap
        otherwise."""
        if time_s < self.now:
            raise SchedulingError(f"cannot schedule at {time_s} s, the clock is at {self.now} s")
        self.seq = seq = self.seq + 1
        slot = int(time_s * SLOTS_PER_S)
        start = slot / SLOTS_PER_S                    # <= time_s, exactly
        if start <= self.now:
            heappush(self._heap, (time_s, seq, callback, argument, None))
            return
        parked = self._parked.get(slot)
        if parked is None:
            parked = self._parked[slot] = []
            slots = self._slots
            if not slots or slot < slots[0]:          # the earliest parked slot: on the heap
                self._entered.add(slot)
                heappush(self._heap, (start, 0, self._unpark, slot, None))
            heappush(slots, slot)
        parked.append((time_s, seq, callback, argument, None))

    def _unpark(self, slot: int) -> None:
        """A slot begins (`_move_slot`). Not an event."""
        self._move_slot(slot)
        self.events -= 1                              # (run and step counted it)

    def _move_slot(self, slot: int) -> None:
        """Put the parked entries of `slot`, the earliest parked slot, on the heap, and the start
        of the next parked slot if it is not there yet."""
        heap = self._heap
        for entry in self._parked.pop(slot):
            heappush(heap, entry)
        slots, entered = self._slots, self._entered
        heappop(slots)                                # (`slot`: the earliest has the entry
        entered.discard(slot)                         # that came up first)
        if slots:
            following = slots[0]
            if following not in entered:
                entered.add(following)
                heappush(heap, (following / SLOTS_PER_S, 0, self._unpark, following, None))

    def stop(self, reason: str | None = None) -> None:
        """End `run` after the event being processed."""
        self._stopped = True
        if reason is not None and self.stop_reason is None:
            self.stop_reason = reason

    @property
    def pending(self) -> int:
        """Number of entries on the heap: a line counts one, the parked entries one (plus one
        for each slot parked since that was earlier than the earliest then), stale timer
        entries are included."""
        return len(self._heap)

    def peek(self) -> float | None:
        """Time of the next event, or None when the queue is empty."""
        heap = self._heap
        while heap and heap[0][1] == 0:              # a slot's start: unpark it now (early
            self._move_slot(heappop(heap)[3])         # changes no order)
        return heap[0][0] if heap else None

    def step(self) -> bool:
        """Process the next event (if it exists: False otherwise)."""
        heap = self._heap
        if not heap:
            return False
        time_s, _, callback, argument, line = heap[0]
        self.now = time_s
        if line is None:
            heappop(heap)
        else:
            line.popleft()
            if line:
                heapreplace(heap, line[0])
            else:
                heappop(heap)
        self.events += 1
        callback(argument)
        return True

    def run(self, until: float | None = None) -> float:
        """Process events in time order until the queue is empty, `stop` is called, or the next
        event is later than `until`; with `until`, the clock then stands at `until` (unless
        stopped earlier). Returns the clock."""
        heap = self._heap
        self._stopped = False
        processed = 0
        set_aside()                                   # (simulator/garbage.py)
        try:
            if until is None:
                while heap and not self._stopped:
                    time_s, _, callback, argument, line = heap[0]
                    self.now = time_s
                    if line is None:
                        heappop(heap)
                    else:                             # the next event of the line takes its place
                        line.popleft()                # (one sift instead of a pop and a push)
                        if line:
                            heapreplace(heap, line[0])
                        else:
                            heappop(heap)
                    processed += 1
                    callback(argument)
            else:
                if until < self.now:
                    raise SchedulingError(f"cannot run until {until} s, the clock is at {self.now} s")
                while heap and not self._stopped:
                    time_s, _, callback, argument, line = heap[0]
                    if time_s > until:
                        break
                    self.now = time_s
                    if line is None:
                        heappop(heap)
                    else:
                        line.popleft()
                        if line:
                            heapreplace(heap, line[0])
                        else:
                            heappop(heap)
                    processed += 1
                    callback(argument)
                if not self._stopped:
                    self.now = until
        finally:
            self.events += processed
            take_back()
        return self.now


def _released() -> None:
    """The callback of a released `Timer` (never called: the timer is not active)."""


class Timer:
    """A restartable, cancellable one-shot timer that calls ``callback()`` when it expires.

    `start` may be called any number of times; only the latest deadline counts. Moving a deadline
    later leaves the heap alone (the pending entry re-queues itself when it comes up); moving it
    earlier pushes a new entry and makes the old one stale.
    """

    __slots__ = ("sim", "callback", "deadline", "active", "_token", "_pending", "_pending_time")

    def __init__(self, sim: Simulator, callback):
        self.sim = sim
        self.callback = callback
        self.deadline: float = None  # type: ignore[assignment]   # a time once start() ran
        self.active = False
        self._token = 0          # identifies heap entries
        self._pending: int | None = None   # token of the entry that will act, None if none will
        self._pending_time = 0.0  # time of that entry

    def start(self, delay_s: float) -> None:
        """(Re)arm the timer to expire `delay_s` seconds from now."""
        deadline = self.sim.now + delay_s
        self.deadline = deadline
        self.active = True
        if self._pending is None or self._pending_time > deadline:
            self._push(deadline)

    def cancel(self) -> None:
        """Disarm the timer; its heap entry, if any, is ignored when it comes up."""
        self.active = False

    def release(self) -> None:
        """Disarm the timer for good: its entry, if any, still comes up and does nothing, but
        no longer keeps `callback`'s object alive until then (a finished flow's sender, until
        its retransmission timeout would have expired: simulator/garbage.py)."""
        self.active = False
        self.callback = _released

    def _push(self, time_s: float) -> None:
        self._token += 1
        self._pending = self._token
        self._pending_time = time_s
        self.sim.schedule_ahead(time_s, self._fire, self._token)

    def _fire(self, token: int) -> None:
        if token != self._pending:
            return                      # stale entry
        self._pending = None
        if not self.active:
            return
        if self.deadline > self.sim.now:
            self._push(self.deadline)   # the deadline moved later since this entry was pushed
            return
        self.active = False
        self.callback()
