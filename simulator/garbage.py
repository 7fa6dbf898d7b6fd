"""The cyclic garbage collector around a run: not scanning the network over and over.

A run builds a large graph of long-lived objects (nodes, link directions, transmitters, routes,
probes, trace keys: about a hundred objects per link) and then allocates and frees packets for as
long as it runs. CPython's collector scans every tracked object in its oldest generation each time
that generation has grown by a quarter, so building a 10 000-router network ran about a dozen
full collections over a growing heap (1.2 s of a 4.5 s run), and the simulation rescanned the
whole network whenever the packets' survivors had grown enough (0.4-0.5 s more): about a third of
the run's CPU on the largest cases, for no garbage found. Two measures, in one place:

* `collection_paused` (a context manager and decorator) turns the collector off while a run is
  built (`netsim.run.Run`, which also sets what it built aside until the event loop runs), while
  its results are collected and while the command line writes them, and back on afterwards if
  it was on. Reference counting still frees everything acyclic at once; a cycle dropped
  meanwhile waits for the next collection. Nothing stays set aside once a run's results are
  returned: a process that runs many simulations (a sweep worker, a notebook) collects each
  dropped network (tests/test_exit_collection.py).
* `Simulator.run` calls `set_aside()` when it starts and `take_back()` when it returns: the
  objects that exist when the event loop starts are moved out of the collector's generations
  (`gc.freeze`) for as long as it runs, so collections during the run scan only what the run
  allocated since. When the loop returns they are handed back (`gc.unfreeze`): a network dropped
  after its run is collected as usual (a long sweep process does not accumulate them).
* What `gc.unfreeze` hands back goes straight into the oldest generation without counting
  towards the growth that makes CPython collect it (a full collection runs when the objects that
  survived into it since the last one pass a quarter of those it held then), and a run leaves few
  survivors of its own: a notebook loop or a sweep worker ran hundreds of runs without one full
  collection, keeping every dropped network (100 runs of a 50-pair dumbbell: 24 -> 144 MB).
  A run's building (`collection_paused(until_run=True)`) therefore applies CPython's rule itself
  when a loop has been handed back since the last building: it counts the objects the collector
  tracks (about 10 ns per object, against about 100 for a collection), and when that has grown by more
  than a quarter since it was first counted after the last full collection, it collects. A
  process that runs many simulations holds, besides what its caller keeps, at most a quarter
  more in dropped runs (about one network when networks dominate); a process that runs once
  (the command line) never counts. Counting in `take_back` instead made a caller that steps
  one loop 1 600 times (`sim.run(until=...)`) walk the heap 1 600 times.

* While the event loop runs, the youngest generation is collected after `RUN_GEN0_THRESHOLD`
  (100 000) net new objects rather than CPython's 700 (restored when the loop returns): packets
  and their event entries live for a round trip, so at 700 the collector traced the packets in
  flight again and again (10 000 long-lived flows: 105 collections in the event loop, 0.2-0.4 s
  of CPU on a loaded machine; at 10 000, 6 collections, 0.05 s; at 100 000, one). Each
  collection traces what is alive of the young objects (the packets in flight, a cold-started
  Bellman-Ford's routing packets and vectors), not what died since, so fewer collections cost
  less in all: the whole command's collections, 10 000 long-lived flows 68 -> 40 ms, Bellman-Ford
  on 1 000 routers 42 -> 24 ms. Cyclic garbage, if a run makes any, waits for at most that many
  more objects (a few MB).

* A finished flow is garbage in reference cycles (its flow, sender, receiver and algorithm
  refer to one another): reference counting does not free it, and with the youngest
  generation collected that rarely the oldest one is almost never collected while the loop
  runs. A workload finishes flows for as long as it runs, so `CycleBudget` collects once
  `DROPPED_PER_COLLECTION` flows have finished since the last collection, or four times the
  flows in progress if more (each collection traces the objects the run keeps, mostly the
  flows in progress and their packets, so its cost per finished flow stays constant). Without,
  a workload of 10 000 flows/s held 0.6-0.8 kB per finished flow: 511 MB after 64 s
  (acceptance test); a full collection during the loop scans only what the run allocated,
  since what was built is set aside.

* `set_aside_for_exit` sets every object aside as the command line exits.

Neither changes what a run computes, only when garbage cycles are reclaimed. Interpreters
without `gc.freeze` or `gc.set_threshold` (PyPy, whose collector does not rescan old objects
this way) skip them.
"""
from __future__ import annotations

import gc
from contextlib import ContextDecorator

_freeze = getattr(gc, "freeze", None)
_unfreeze = getattr(gc, "unfreeze", None)
_get_threshold = getattr(gc, "get_threshold", None)
_set_threshold = getattr(gc, "set_threshold", None)
RUN_GEN0_THRESHOLD = 100_000  # net new objects between collections of the youngest generation
_set_aside_depth = 0          # nested set_aside() calls (a loop run from within another's event)
_thresholds: tuple = ()       # the collector's thresholds before the outermost set_aside()
_freeze_count = getattr(gc, "get_freeze_count", None)
_handed_back = False          # a loop's objects were handed back since the last run's building
_oldest_then = 0              # the oldest generation's size at the first such building since
                              # the last full collection (0: not measured yet)


class collection_paused(ContextDecorator):
    """Turn the cyclic collector off inside the block (or the decorated call), then back on if it
    was on when the block began. With `until_run` (building a run), what exists then is also set
    aside unscanned until the event loop's `take_back`; without it (collecting results, writing
    them), nothing stays set aside after the block: a network dropped after its run is collected
    as usual."""

    _was_enabled = False

    def __init__(self, until_run: bool = False):
        self.until_run = until_run

    def __enter__(self) -> collection_paused:
        self._was_enabled = gc.isenabled()
        if (self.until_run and _handed_back and self._was_enabled and _set_aside_depth == 0
                and _freeze_count is not None):
            _collect_dropped_runs()
        gc.disable()
        return self

    def _recreate_cm(self) -> collection_paused:     # a decorated call gets its own state
        return type(self)(self.until_run)

    def __exit__(self, *exc) -> None:
        if self._was_enabled:
            if self.until_run and _freeze is not None:
                _freeze()             # what was built is set aside unscanned (until take_back)
            gc.enable()


def set_aside() -> None:
    """Move every object the collector tracks now out of its generations, and collect the
    youngest one less often (until `take_back`)."""
    global _set_aside_depth, _thresholds
    _set_aside_depth += 1
    if _set_aside_depth != 1:
        return
    if _freeze is not None:
        _freeze()
    if _get_threshold is not None and _set_threshold is not None:
        _thresholds = tuple(_get_threshold())
        if 0 < _thresholds[0] < RUN_GEN0_THRESHOLD:     # (0: automatic collection is off)
            _set_threshold(RUN_GEN0_THRESHOLD, *_thresholds[1:])


def take_back() -> None:
    """Undo the outermost `set_aside` (and what `collection_paused` set aside before it): the
    objects are scanned by later collections again."""
    global _set_aside_depth, _handed_back
    _set_aside_depth -= 1
    if _set_aside_depth != 0:
        return
    if _unfreeze is not None:
        _unfreeze()
        _handed_back = True
    if _thresholds and _set_threshold is not None:
        _set_threshold(*_thresholds)


def _collect_dropped_runs() -> None:
    """CPython's rule for its oldest generation, applied to what `take_back` handed back: a
    full collection once the oldest generation has grown by more than a quarter since it was
    first measured after the last one (module docstring). Measured once per run built, not per
    event loop (a caller may step a loop thousands of times)."""
    global _handed_back, _oldest_then
    _handed_back = False
    # the objects the collector tracks: set aside and counted in place (a walk of its list;
    # listing them, gc.get_objects, costs twice that), then handed back to the oldest
    # generation, where `take_back` put the last run's anyway
    gc.freeze()
    size = gc.get_freeze_count()
    gc.unfreeze()
    if not _oldest_then:
        _oldest_then = size
    elif size - _oldest_then > _oldest_then // 4:
        gc.collect()                  # the runs dropped since
        _oldest_then = 0


DROPPED_PER_COLLECTION = 10_000   # finished flows between two collections (at least)


class CycleBudget:
    """Collects the cycles a run drops as it goes (module docstring): `dropped(alive)` after
    each finished flow, `alive` the flows still in progress."""

    __slots__ = ("count",)

    def __init__(self):
        self.count = 0

    def dropped(self, alive: int) -> None:
        self.count += 1
        if self.count >= DROPPED_PER_COLLECTION and self.count >= 4 * alive:
            self.count = 0
            gc.collect()


def set_aside_for_exit() -> None:
    """Move every object out of the collector's generations for good, just before the program
    exits: the full collection the interpreter runs while it finalizes then has nothing to
    traverse (after a run with figures, the simulation's and matplotlib's objects: 0.06 s of
    test case 2's command). Objects are still freed and files closed as usual. Only the console
    entry point (netsim/cli.py `entry`) calls it, so a `main` called from Python leaves its
    caller's collector alone."""
    if _freeze is not None:
        _freeze()
