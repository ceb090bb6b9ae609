"""The Spark explorer's per-partition logic, without a JVM: the level functions the
executors run, driven in-process over 1..7 simulated owner partitions, must give exactly
BFS's answers, and the same answers whatever the partitioning."""
from __future__ import annotations

import gc
import uuid
from typing import NamedTuple

import numpy as np
import pytest
import xxhash

from kmc.explorers.bfs import bfs
from kmc.explorers.core import Core
from kmc.explorers.errors import ExplorerError
from kmc.explorers.spark import level
from kmc.explorers.spark.explore import _cloudpickle, _shippable, explore
from kmc.explorers.spark.driver import DriverFrontier, join_blocks, split_blocks
from kmc.explorers.spark.frontier import SparkFrontier
from kmc.explorers.spark.placement import default_partitions, place_by_partition_key
from kmc.explorers.spark.run import Run
from kmc.explorers.spark.spool import Spool
from kmc.invariants.properties import always, quiescent, sometimes
from kmc.model.contract import Model
from kmc.explorers.keyarrays import to_ints
from kmc.explorers.visited import keys_array
from kmc.model.encoding import fingerprint128
from kmc.model.validation.diehard import DieHard
from kmc.model.validation.tcommit import TCommit
from kmc.model.validation.twophase import TwoPhase
from toymodels import Workers, reachable


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
    run = Run(core, limit, opts.get("stop_on_violation", False), opts.get("max_states"),
              opts.get("max_depth"), None)
    if not window:  # each partition's own recent keys, as when the window grows too large
        run.window = lambda: None
    frontier = run.start(DriverFrontier)
    if nparts is None:
        return explore(run, frontier)
    try:
        return explore(run, frontier,
                       to_spark=lambda f: SimulatedPartitions(core, f, nparts, spooled))
    finally:  # the executors' task switches the cyclic collector off for its process
        gc.unfreeze()
        gc.enable()


def summary(r):
    return (r.unique_states, r.generated_states, r.max_depth, r.stopped_by, r.verdicts(),
            {n: len(d.trace) for n, d in r.discoveries.items()}, r.coverage)


@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: ",".join(o) or "plain")
@pytest.mark.parametrize("name", sorted(MODELS))
def test_driver_levels_give_bfs_answers(name, opts):
    want = bfs(MODELS[name](), **opts)
    got = run_levels(MODELS[name](), **opts)
    assert summary(got) == summary(want)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_answers_do_not_depend_on_partitioning(name):
    """Same counts as BFS for every P, with and without the driver's known window, with
    the records in files (as on an embedded master) or passed as they are, and the very
    same counterexamples across them (choices are made by key order, never by arrival
    order)."""
    want = bfs(MODELS[name](), deadlock=True)
    traces = set()
    for nparts, window, spooled in ((1, True, False), (3, True, False), (7, True, False),
                                    (1, False, False), (3, False, False), (3, True, True)):
        got = run_levels(MODELS[name](), nparts, window=window, spooled=spooled,
                         deadlock=True)
        assert summary(got) == summary(want)
        traces.add(tuple(sorted((n, d.trace.init_index, tuple(d.trace.action_indices))
                                for n, d in got.discoveries.items())))
    assert len(traces) == 1


@pytest.mark.parametrize("symmetry", [False, True])
def test_partition_key_places_neighbours_together(symmetry):
    """With a partition key, every state with the same key has one owner whatever P, the
    key is still a function of the state, and the collision estimate counts the 112 bits
    of the state's own fingerprint below the partition key's 16."""
    model = MutexByServed(4)
    core = Core(model, symmetry=symmetry)
    place_by_partition_key(core)
    assert core.owner_shift == 48 and core.key_bits == 112
    states = [s for s in reachable(model) if not symmetry or model.representative(s) == s]
    keys = keys_array(map(core.rkey, states), len(states), core.key_dtype)
    assert len(set(to_ints(keys))) == len(states)
    assert [core.key(s) for s in states] == to_ints(keys)
    for nparts in (2, 3, 7):
        own = level.owners(keys, nparts, core.owner_shift)
        by_key = {}
        for s, o in zip(states, own.tolist()):
            assert by_key.setdefault(s.served, o) == o
    plain = Core(Mutex(4), symmetry=symmetry)
    place_by_partition_key(plain)  # no partition key: keys and owners as before
    assert plain.owner_shift == 0 and plain.key_bits == 128
    assert plain.rkey(states[0]) == Core(Mutex(4)).rkey(states[0])


def test_partition_fields_make_the_same_keys_from_one_repr_per_field():
    """A model whose partition key is some fields of its tuple state (the topic model)
    gets keys made from one repr per field; they are exactly the keys of the two reprs.
    A declaration the states do not bear out (a NamedTuple's own repr) keeps the plain
    keys."""
    from kmc.api import build

    model = build("stale-read", "kip516", None)
    core = Core(model)
    place_by_partition_key(core)
    assert core.rkey.__qualname__.startswith("fieldwise_key")
    pk = model.partition_key
    mask = (1 << 112) - 1
    states = reachable(model, limit=3000)
    assert len(states) >= 3000
    assert [core.rkey(s) for s in states] == \
        [(fingerprint128(s) & mask) | (fingerprint128(pk(s)) & ~mask & (2 ** 128 - 1))
         for s in states]

    class Declared(MutexByServed):
        partition_fields = (1,)  # Desk.served, but Desk has the NamedTuple repr
    wrong = Core(Declared(3))
    place_by_partition_key(wrong)
    assert not wrong.rkey.__qualname__.startswith("fieldwise_key")
    assert wrong.owner_shift == 48


def test_owner_partitions_per_core():
    """Uniform owners get one partition per core; lumpy owners (a partition key) two per
    core on two cores or more (a free core takes the next task), and one on one core
    (each extra owner adds candidates two owners both ship)."""
    lumpy, plain = Core(MutexByServed(3)), Core(Mutex(3))
    place_by_partition_key(lumpy)
    place_by_partition_key(plain)
    assert lumpy.owner_shift and not plain.owner_shift
    assert [default_partitions(n) for n in (0, 1, 2, 16)] == [1, 1, 2, 16]
    assert [default_partitions(n, lumpy=True) for n in (0, 1, 2, 16)] == [1, 1, 4, 32]


def test_driver_budget_shrinks_with_local_cores(monkeypatch):
    """A level leaves the driver once its work split over E local cores outweighs a
    Spark level's fixed cost: sooner with more cores; one core and a cluster keep 0.4 s."""
    from kmc.explorers.spark import run as run_mod

    monkeypatch.setattr(run_mod, "DRIVER_SECONDS_SET", None)
    assert run_mod.driver_seconds(True, 2) is None  # unset: levels go by split_limit
    assert [run_mod.split_limit(n) for n in (1, 2, 4)] == [0, 1, 3]
    monkeypatch.setattr(run_mod, "DRIVER_SECONDS_SET", "auto")
    local = [run_mod.driver_seconds(True, e) for e in (1, 2, 4, 16)]
    assert local[0] == run_mod.DRIVER_LEVEL_SECONDS == 0.4
    assert local[0] > local[1] > local[2] > local[3] > run_mod.LOCAL_LEVEL_COST
    assert 0.1 < local[1] < 0.2
    assert run_mod.driver_seconds(False, 16) == 0.4
    monkeypatch.setattr(run_mod, "DRIVER_SECONDS_SET", "0.25")
    assert run_mod.driver_seconds(True, 2) == 0.25
    monkeypatch.setattr(run_mod, "DRIVER_SECONDS_SET", "fast")
    with pytest.raises(ExplorerError, match="KMC_SPARK_DRIVER_SECONDS='fast' is not a number"):
        run_mod.driver_seconds(True, 2)
    r = Run(Core(Mutex(3)), None, False, None, None, None, driver_seconds=0.25)
    r._cost = 2 ** -16  # the driver's measured seconds per expanded state
    assert r.limit() == 16384


def test_blocks_round_trip():
    rng = np.random.default_rng(3)
    visited = np.sort(rng.integers(0, 2 ** 63, 500, dtype=np.uint64))
    fkeys = np.sort(rng.choice(visited, 60, replace=False))
    states = [f"s{int(k)}" for k in fkeys]
    records = split_blocks(visited, fkeys, states, 5)
    assert [p for p, _ in records] == list(range(5))
    v, k, s = join_blocks(records)
    assert np.array_equal(v, visited) and np.array_equal(k, fkeys) and s == states


@pytest.mark.parametrize("name", ["twophase3", "twophase4-broken", "tcommit3", "diehard"])
def test_packed_models_travel_with_cloudpickle(name):
    """Packed models hold exec-generated functions; executors get them through
    cloudpickle and must compute the very same successors and property values."""
    from pyspark import cloudpickle

    model = MODELS[name]()
    copy = cloudpickle.loads(cloudpickle.dumps(Core(model)))
    states, seen = list(model.init_states()), set()
    while states and len(seen) < 300:
        s = states.pop()
        if s in seen:
            continue
        seen.add(s)
        assert copy.successors(s) == model.successors(s)
        assert [p.check(s) for p in copy.properties] == \
            [p.check(s) for p in model.properties()]
        states.extend(t for _a, t in model.successors(s))


def test_levels_move_to_partitions_and_back():
    """A frontier above the threshold goes to the partitions; once the BFS tail shrinks
    below half of it, levels return to the driver — with the same answers."""
    want = bfs(TwoPhase(4))
    got = run_levels(TwoPhase(4), 3, limit=100)
    modes = [lv["mode"] for lv in got.extra["spark"]["levels"]]
    assert modes[0] == "driver" and "spark" in modes and modes[-1] == "driver"
    assert summary(got) == summary(want)


def test_window_holds_the_last_three_levels(monkeypatch):
    """The known window is every key of the last three levels, and there is none
    once those outgrow WINDOW_MAX (partitions then fall back to their own recent keys)."""
    from kmc.explorers.spark import run as run_mod

    run = Run(Core(TwoPhase(3)), 0, False, None, None, None)
    run.start(DriverFrontier)
    assert np.array_equal(np.sort(np.concatenate(run.window())), run.level_keys[0])
    run.level_keys += [np.array(ks, dtype=np.uint64) for ks in ([5, 9], [1, 7], [3, 8, 20])]
    assert np.sort(np.concatenate(run.window())).tolist() == [1, 3, 5, 7, 8, 9, 20]  # not level 0's
    monkeypatch.setattr(run_mod, "WINDOW_MAX", 4)
    assert run.window() is None


class _RecordingPartitions(SimulatedPartitions):
    """Notes, per Spark level, whether a known window was given and how many levels of
    recently shipped keys the blocks carry on to the next level."""

    def __init__(self, *args):
        super().__init__(*args)
        self.seen = []

    def run_level(self, decided, commit, deadline=None, window=None, weigh=None,
                  ahead=False, rows=True):
        self._window_given = window is not None
        return super().run_level(decided, commit, deadline, window, weigh, ahead, rows)

    def _launch(self, parent, task):
        owned, handle = super()._launch(parent, task)
        carried = {len(rec[4]) for part in owned for _p, rec in part if rec[0] == "B"}
        self.seen.append((self._window_given, carried))
        return owned, handle


def test_blocks_carry_recent_keys_only_while_there_is_no_window():
    """Under the driver's window the blocks carry no recently shipped keys (they would
    travel through every shuffle unused); without it they carry the last two levels'.
    A window that ends mid-run (the keys outgrew WINDOW_MAX) changes no answer."""
    want = bfs(TwoPhase(5), deadlock=True)
    core = Core(TwoPhase(5), deadlock=True)
    run = Run(core, 0, False, None, None, None)
    calls, real_window = [0], run.window

    def window():  # the window ends after the sixth level
        calls[0] += 1
        return real_window() if calls[0] <= 6 else None
    run.window = window
    parts = []

    def to_spark(f):
        parts.append(_RecordingPartitions(core, f, 3))
        return parts[-1]
    try:
        got = explore(run, run.start(DriverFrontier), to_spark=to_spark)
    finally:
        gc.unfreeze()
        gc.enable()
    assert summary(got) == summary(want)
    seen = [s for p in parts for s in p.seen]
    assert any(given for given, _c in seen) and not all(given for given, _c in seen)
    for given, carried in seen:
        assert carried <= ({0} if given else {1, 2})
    assert {2} in [c for given, c in seen if not given]


def _weak128(data: bytes) -> int:
    """A deliberately weak 128-bit hash: 16 values in its top 64 bits (a 64-bit key cut
    from it merges states), a good hash in its low 64."""
    return ((xxhash.xxh3_64_intdigest(data) & 15) << 64) | \
        xxhash.xxh3_64_intdigest(data, seed=1)


@pytest.mark.parametrize("name", ["mutex3", "mutex3-by-served", "stale-read"])
def test_keys_whose_high_words_collide_give_bfs_answers_on_partitions(name, monkeypatch):
    """With the weak hash injected (a partition key's keys too), the executors' task
    code on 3 partitions keeps every state apart: BFS's counts, verdicts and
    counterexample lengths."""
    from kmc.api import build
    from kmc.explorers import core as core_mod
    from kmc.explorers.spark import placement

    make = (lambda: build("stale-read", "legacy", None)) if name == "stale-read" \
        else MODELS[name]
    want = bfs(make(), deadlock=True)
    weak = lambda s: _weak128(repr(s).encode())  # noqa: E731
    monkeypatch.setattr(core_mod, "fingerprint128", weak)
    monkeypatch.setattr(placement, "fingerprint128", weak)
    monkeypatch.setattr(placement, "hash128", _weak128)
    for nparts in (1, 3):
        got = run_levels(make(), nparts, deadlock=True)
        # the properties the Spark explorer checks (it leaves liveness to the local ones)
        mine = set(got.verdicts())
        assert summary(got)[:3] == summary(want)[:3] and summary(got)[6] == summary(want)[6]
        assert got.verdicts() == {n: v for n, v in want.verdicts().items() if n in mine}
        assert {n: len(d.trace) for n, d in got.discoveries.items()} == \
            {n: len(d.trace) for n, d in want.discoveries.items() if n in mine}
    core = Core(make())
    place_by_partition_key(core)
    keys = [core.rkey(s) for s in reachable(make(), limit=500)]
    assert len({k >> 64 for k in keys}) < len(keys) == len(set(keys))


@pytest.mark.parametrize("name", ["twophase4-broken", "toy-workers", "mutex3-by-served"])
def test_trace_rows_spilled_to_files_give_the_same_answers(name, monkeypatch):
    """With no memory for trace rows, every level but the newest is read back from the
    driver's files: BFS's answers and the very counterexamples of a run that kept them
    all in memory."""
    from kmc.explorers.spark import rows

    def traces(r):
        return {n: (d.trace.init_index, tuple(d.trace.action_indices))
                for n, d in r.discoveries.items()}
    kept = run_levels(MODELS[name](), 3, deadlock=True)
    spilled = []
    real = rows.LevelRows.close

    def close(self):
        spilled.append(self.spilled)
        real(self)
    monkeypatch.setattr(rows, "ROWS_MEMORY", 0)
    monkeypatch.setattr(rows.LevelRows, "close", close)
    got = run_levels(MODELS[name](), 3, deadlock=True)
    assert summary(got) == summary(bfs(MODELS[name](), deadlock=True))
    assert traces(got) == traces(kept) and traces(got)
    assert max(spilled) > 0


@pytest.mark.parametrize("window", [True, False])
@pytest.mark.parametrize("spooled", [False, True])
@pytest.mark.parametrize("name", ["twophase4-broken", "mutex3", "mutex3-by-served"])
def test_counterexamples_walk_back_through_the_rows_the_partitions_hold(name, spooled,
                                                                         window, monkeypatch):
    """The rows of a level explored on the partitions stay in their blocks; the driver
    forgets them beyond its newest levels (and, with no known window and no owner
    table, never receives them: only their number) and a counterexample looks its
    parents up on the partitions: the very traces BFS gives (the same initial state and
    actions)."""
    def traces(r):
        return {n: (d.trace.init_index, tuple(d.trace.action_indices))
                for n, d in r.discoveries.items()}
    lookups = []
    real = SparkFrontier.parents

    def parents(self, lvl, keys):
        found = real(self, lvl, keys)
        lookups.append((lvl, len(found)))
        return found
    monkeypatch.setattr(SparkFrontier, "parents", parents)
    counted = []
    real_count = Run._absorb_count

    def absorb_count(self, outcome, *args):
        counted.append(outcome.new_count)
        return real_count(self, outcome, *args)
    monkeypatch.setattr(Run, "_absorb_count", absorb_count)
    want = bfs(MODELS[name](), deadlock=True)
    got = run_levels(MODELS[name](), 3, spooled=spooled, window=window, deadlock=True)
    assert summary(got) == summary(want)
    assert traces(got) == traces(want) and traces(got)
    assert lookups and all(n == 1 for _lvl, n in lookups)
    # levels whose rows never reached the driver: only without a window, and never for
    # a partition-key model (its owner table weighs the frontier's rows)
    assert bool(counted) == (not window and name != "mutex3-by-served")
