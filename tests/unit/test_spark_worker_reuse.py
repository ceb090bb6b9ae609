"""What a Spark worker keeps from task to task: the field reprs' memos of its core (shared
by the tasks' copies of the core, never pickled with it), the frontier's field reprs
handed from the deduplication to the expansion of the same task, and a collector that
leaves the worker's long-lived objects alone after a task (``settle_garbage``)."""
from __future__ import annotations

import copy
import pickle
import subprocess
import sys
import textwrap

import numpy as np

from kmc.api import build
from kmc.explorers import keyarrays
from kmc.explorers.core import Core
from kmc.explorers.spark import level
from kmc.explorers.spark.explore import _cloudpickle, _shippable
from kmc.explorers.spark.placement import place_by_partition_key
from toymodels import reachable


def _core():
    core = Core(build("stale-read", "kip516", {}))
    place_by_partition_key(core)
    return core


def test_copies_of_a_core_share_its_field_reprs_and_a_pickled_core_starts_without():
    core = _core()
    shipped = len(_cloudpickle(_shippable(core)))  # as the broadcast ships the core
    task = copy.copy(core)
    cls, reprs, key = task.field_keys()
    assert core.field_keys()[1] is reprs  # the copy's answer is the original's
    _keys_, states = _frontier(core)
    assert all(type(s) is cls and key(reprs.of(s)) == core.rkey(s) for s in states)
    held = sum(len(m) for m in reprs.memos)
    assert held > 50
    # the memos (hundreds of reprs) do not travel: the core pickles as it did before
    again = _cloudpickle(_shippable(core))
    assert len(again) < shipped + 200
    assert pickle.loads(again).field_keys()[1] is not reprs


def test_a_new_key_function_gets_new_field_keys():
    core = Core(build("stale-read", "kip516", {}))
    plain = core.field_keys()
    place_by_partition_key(core)  # the Spark explorer's keys: the key function changes
    keyed = core.field_keys()
    assert keyed is not plain and keyed[2] is not plain[2]
    init = core.model.init_states()[0]
    assert keyed[2](keyed[1].of(init)) == core.rkey(init) != plain[2](plain[1].of(init))


def _frontier(core, limit=40):
    """The first ``limit`` states of a BFS of ``core``'s model, as one candidate batch
    (ascending keys)."""
    states = reachable(core.model, limit)
    by_key = sorted((core.rkey(s), i) for i, s in enumerate(states))
    return _keys(core, [k for k, _i in by_key]), [states[i] for _k, i in by_key]


def _keys(core, ints):
    return keyarrays.from_ints(ints, len(ints), core.key_dtype)


def test_dedup_hands_the_new_states_field_reprs_to_the_expansion():
    core = _core()
    keys, states = _frontier(core)
    parents = keys.copy()
    empty = _keys(core, [])
    _v, new_keys, _p, new_states, _found, _idx, pieces = level.dedup(
        core, (), empty, [(keys, parents, states, None)], True)
    assert new_states == states and len(pieces) == len(states)
    _cls, reprs, _key = core.field_keys()
    assert pieces == [reprs.of(s) for s in states]
    given = level.expand(core, (), new_keys, new_states, 2, (), None, pieces)
    looked_up = level.expand(core, (), new_keys, new_states, 2)
    for (k1, p1, s1, r1), (k2, p2, s2, r2) in zip(given[0], looked_up[0]):
        assert np.array_equal(k1, k2) and np.array_equal(p1, p2) and s1 == s2
        assert r1 == r2 == [reprs.of(s) for s in s1]  # each batch carries its reprs
    assert given[1:4] == looked_up[1:4]
    # nothing is checked or added at the depth bound: no reprs either
    assert level.dedup(core, (), empty, [(keys, parents, states, None)], False)[6] is None


def test_a_batch_travels_as_field_tables_and_arrives_with_its_reprs():
    core = _core()
    _keys_, states = _frontier(core, limit=100)
    _cls, reprs, _key = core.field_keys()
    pieces = [reprs.of(s) for s in states]
    blob = level.pack_states(states, pieces)
    owner = _core()  # another worker's core: its own memos give the reprs
    got, got_pieces = level.unpack_batch(blob, owner)
    assert got == states and [type(s) for s in got] == [type(s) for s in states]
    assert got_pieces == pieces and all(type(p) is list for p in got_pieces)
    # equal field values arrive as one object: each is pickled once per batch
    assert len({id(s.budget) for s in got}) < len({id(s.budget) for s in states})
    plain = level.pack_states(states)  # without reprs: the list itself
    assert level.unpack_batch(plain, owner) == (states, None) and len(blob) < len(plain)
    # a batch of other states, or with a state's reprs missing, travels plain
    assert level.unpack_batch(level.pack_states(states, pieces[:-1] + [None]), owner)[1] \
        is None
    mixed = states[:3] + [tuple(states[3])]
    assert level.unpack_batch(level.pack_states(mixed, pieces[:4]), owner) == (mixed, None)
    assert level.unpack_frontier(((blob,), np.zeros(2, dtype=np.int32),
                                  np.array([1, 0], dtype=np.int32))) == states[1::-1]


def test_after_a_task_the_garbage_is_gone_and_what_lives_on_is_frozen():
    # in a process of its own: freezing is for the rest of the process's life
    code = textwrap.dedent("""
        import gc, weakref
        from kmc.explorers.spark.level_tasks import settle_garbage
        gc.disable()
        settle_garbage()
        class Node:
            pass
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle only the collector frees
        gone = weakref.ref(a)
        del a, b
        cache = {i: [i] for i in range(50000)}  # a worker's memo: lives on
        before = len(gc.get_objects())
        settle_garbage()
        print(gone() is None, before >= 50000, len(gc.get_objects()) < 1000,
              gc.get_freeze_count() >= 50000)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", "True", "True", "True"]
