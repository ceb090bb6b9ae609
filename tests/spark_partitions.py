"""The Spark explorer's level logic driven in one process: SparkFrontier itself with
the Spark job played partition by partition (``SimulatedPartitions``), and the small
models the level tests run on it."""
from __future__ import annotations

import gc
import uuid
from typing import NamedTuple

import numpy as np

from kmc.explorers.core import Core
from kmc.explorers.spark.explore import _cloudpickle, _shippable, explore
from kmc.explorers.spark.driver import DriverFrontier, join_blocks
from kmc.explorers.spark.frontier import SparkFrontier
from kmc.explorers.spark.level import for_tasks
from kmc.explorers.spark.placement import place_by_partition_key
from kmc.explorers.spark.run import Run
from kmc.explorers.spark.spool import Spool
from kmc.invariants.properties import always, quiescent, sometimes
from kmc.model.contract import Model
from kmc.model.validation.diehard import DieHard
from kmc.model.validation.tcommit import TCommit
from kmc.model.validation.twophase import TwoPhase
from toymodels import Workers


class Desk(NamedTuple):
    phases: tuple  # per worker: "idle" | "busy" | "done"
    served: int


class Mutex(Model):
    """A generic (tuple-state) model: workers take a mutex, finish, and may be reset (a
    fault). It has symmetry, a boundary, quiescent and sometimes properties and a violated
    invariant, so every Core feature the Spark explorer relays is exercised."""
    name = "mutex"
    has_symmetry = True

    def __init__(self, n=3):
        self.n = n

    def init_states(self):
        return [Desk(("idle",) * self.n, 0)]

    def actions(self, s):
        out = []
        for i, ph in enumerate(s.phases):
            if ph == "idle" and "busy" not in s.phases:
                out.append(("start", i))
            elif ph == "busy":
                out.append(("finish", i))
            elif ph == "done":
                out.append(("reset", i))
        return out

    def next_state(self, s, a):
        kind, i = a
        ph = list(s.phases)
        ph[i] = {"start": "busy", "finish": "done", "reset": "idle"}[kind]
        return Desk(tuple(ph), s.served + (kind == "finish"))

    def within_boundary(self, s):
        return s.served <= self.n + 1

    def representative(self, s):
        return Desk(tuple(sorted(s.phases)), s.served)

    def is_fault(self, a):
        return a[0] == "reset"

    def properties(self):
        return [always("Mutex", lambda s: s.phases.count("busy") <= 1),
                always("ServedFew", lambda s: s.served < self.n),
                sometimes("AllDone", lambda s: all(p == "done" for p in s.phases)),
                quiescent("NoneBusy", lambda s: "busy" not in s.phases)]


class MutexByServed(Mutex):
    """Mutex with a partition key: its states are placed by ``served`` (which few
    actions change), the Spark explorer's locality-preserving placement."""
    name = "mutex-by-served"

    def partition_key(self, s):
        return s.served


MODELS = {
    "twophase3": lambda: TwoPhase(3),
    "twophase4-broken": lambda: TwoPhase(4, broken=True),
    "tcommit3": lambda: TCommit(3),
    "diehard": DieHard,
    "mutex3": lambda: Mutex(3),
    "mutex3-by-served": lambda: MutexByServed(3),
    "toy-workers": lambda: Workers(3, 2),
}
OPTIONS = [{}, {"symmetry": True}, {"deadlock": True}, {"max_depth": 4},
           {"max_states": 40}, {"stop_on_violation": True}]


class _Held:
    """What a Broadcast is to a task: a value, and a path that names it (the task caches
    the model it unpickles by that path)."""

    def __init__(self, value):
        self.value, self._path = value, f"simulated-{uuid.uuid4().hex}"

    def destroy(self):
        pass


class _Accumulator:
    def __init__(self):
        self.value = {}

    def add(self, update):
        self.value.update(update)


class SimulatedPartitions(SparkFrontier):
    """SparkFrontier itself — its level bookkeeping and its executors' task
    (``level_tasks.step_task``) — with the Spark job played in one process: each
    partition's task runs in turn, and its records go to their owners as the shuffle
    sends them."""

    def __init__(self, core, driver_frontier, nparts, spooled=False):
        self.nparts, self.lineage_every, self.levels, self.jobs = nparts, 0, 0, 0
        self.lineage_bytes, self._since_cut = 0, (0, 0)  # no lineage to cut here
        self._spool = Spool() if spooled else None  # records in files, as on local[N]
        self.shift = core.owner_shift
        self.core_bc = _Held(_cloudpickle(_shippable(core)))
        self.summaries = _Accumulator()
        self.state = [[(p, rec)] for p, rec in driver_frontier.blocks(nparts)]
        self._next, self._ahead, self._windows, self._kept = None, None, [], None
        self._size, self._visited_bytes = driver_frontier.size, 0

    def _broadcast(self, keys):
        return _Held(keys)

    def _launch(self, parent, task):
        owned = [[] for _ in range(self.nparts)]
        for pid, records in enumerate(parent):
            for dest, rec in task(pid, iter(records)):
                owned[dest].append((dest, rec))
        return owned, None

    def _await(self, job, deadline, also=None):
        return self._summaries(job.job)

    def _cancel(self, job):
        pass

    def _flat_collect(self, fn):
        return [x for part in self.state for r in part for x in fn(r)]

    def to_driver(self, core, fkeys, depth, visited=None):
        # the driver's own keys, when it holds them all, stand in for the partitions'
        # (SparkFrontier.to_driver): here they are checked against what the partitions hold
        held = join_blocks([r for part in self.state for r in part])
        assert visited is None or np.array_equal(held[0], visited)
        assert fkeys is None or np.array_equal(held[1], fkeys)
        return super().to_driver(core, fkeys, depth, visited)


def run_levels(model, nparts=None, limit=0, window=True, spooled=False, **opts):
    core = Core(model, symmetry=opts.get("symmetry", False),
                deadlock=opts.get("deadlock", False))
    place_by_partition_key(core)  # as spark_bfs does
    for_tasks(core)
    run = Run(core, limit, opts.get("stop_on_violation", False), opts.get("max_states"),
              opts.get("max_depth"), None)
    if not window:  # each partition's own recent keys, as when the window grows too large
        run.window = lambda: None
    if nparts is None:
        return explore(run, run.start(DriverFrontier))
    return explore_partitioned(run, lambda f: SimulatedPartitions(core, f, nparts, spooled))


def explore_partitioned(run, make, made=None):
    """``explore`` with the run's Spark levels on ``make(driver_frontier)``; each frontier
    made is appended to ``made`` (when given), which the caller reads afterwards, also
    after a run that raised."""
    def to_spark(f):
        part = make(f)
        if made is not None:
            made.append(part)
        return part
    try:
        return explore(run, run.start(DriverFrontier), to_spark=to_spark)
    finally:  # the executors' task switches the cyclic collector off for its process
        gc.unfreeze()
        gc.enable()


def summary(r):
    return (r.unique_states, r.generated_states, r.max_depth, r.stopped_by, r.verdicts(),
            {n: len(d.trace) for n, d in r.discoveries.items()}, r.coverage)
