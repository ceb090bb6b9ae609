"""The Spark explorer's per-partition logic, without a JVM: the level functions the
executors run, driven in-process over 1..7 simulated owner partitions, must give exactly
BFS's answers, and the same answers whatever the partitioning."""
from __future__ import annotations


import numpy as np
import pytest

from kmc.explorers.bfs import bfs
from kmc.explorers.core import Core
from kmc.explorers.errors import ExplorerError
from kmc.explorers.spark import level
from kmc.explorers.spark.driver import DriverFrontier, join_blocks, split_blocks
from kmc.explorers.spark.placement import default_partitions, place_by_partition_key
from kmc.explorers.spark.run import Run
from kmc.explorers.keyarrays import to_ints
from kmc.explorers.visited import keys_array
from kmc.model.encoding import fingerprint128
from kmc.model.validation.twophase import TwoPhase
from toymodels import reachable

from spark_partitions import Mutex, MutexByServed, MODELS, OPTIONS, run_levels, summary


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
