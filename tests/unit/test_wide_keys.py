"""128-bit state keys: the collision estimate at cluster scale, the key-array operations
against plain Python integers, and a deliberately weak hash whose top 64 bits collide:
the wide key keeps the states apart where a 64-bit key merges them."""
from __future__ import annotations

import random

import numpy as np
import pytest
import xxhash

from kmc.explorers import core as core_mod
from kmc.explorers import keyarrays as ka
from kmc.explorers.bfs import bfs
from kmc.explorers.core import Core
from kmc.explorers.dfs import dfs
from kmc.explorers.simulate import simulate
from kmc.explorers.spark.placement import place_by_partition_key
from kmc.model.encoding import COLLISION_WARN, collision_probability
from kmc.model.validation.twophase import TwoPhase
from kmc.reports.summary import render_text
from toymodels import Workers

DISTINCT, GENERATED = 10 ** 9, 4 * 10 ** 9


def test_collision_estimate_at_cluster_scale_is_below_one_in_a_million():
    """TLC's estimate for 10^9 distinct and 4x10^9 generated states, with the key width
    every explorer uses: the full 128-bit fingerprint, and on Spark with a partition key
    the 112 bits below the partition key's 16. A 64-bit key would not do."""
    from kmc.api import build

    plain = Core(Workers(3, 2))
    lumpy = Core(build("stale-read", "legacy", None))
    place_by_partition_key(lumpy)
    assert lumpy.owner_shift and (plain.key_bits, lumpy.key_bits) == (128, 112)
    for c in (plain, lumpy):
        assert collision_probability(DISTINCT, GENERATED, c.key_bits) <= COLLISION_WARN
    assert collision_probability(DISTINCT, GENERATED, 64) > COLLISION_WARN


def test_summary_shows_the_estimate_and_warns_above_the_threshold():
    r = bfs(Workers(3, 2))
    r.extra["model"] = Workers(3, 2)
    text = render_text(r)
    assert "fingerprint collision probability: " in text and "(128-bit keys)" in text
    assert "warning" not in text
    r.collision_probability = collision_probability(DISTINCT, GENERATED, 64)
    assert "warning: the collision estimate exceeds 1e-06" in render_text(r)
    packed = bfs(TwoPhase(3))
    packed.extra["model"] = TwoPhase(3)
    assert "0.00e+00 (exact keys: packed states)" in render_text(packed)


def _ints(rng, n, highs):
    """n distinct 128-bit ints whose high words take only ``highs`` values."""
    out = set()
    while len(out) < n:
        out.add((rng.randrange(highs) << 64) | rng.getrandbits(64))
    return list(out)


@pytest.mark.parametrize("highs", [1, 5, 2 ** 64])
def test_key_arrays_answer_as_128_bit_integers(highs):
    rng = random.Random(highs % 1000)
    ints = _ints(rng, 600, highs)
    arr = ka.from_ints(ints, len(ints), ka.WIDE)
    assert ka.to_ints(arr) == ints and ka.key_at(arr, 7) == ints[7]
    want = sorted(ints)
    assert ka.to_ints(arr[ka.sort_order(arr)]) == want
    stored, probes = want[::2], ints[:300] + _ints(rng, 50, highs)
    s = ka.from_ints(stored, len(stored), ka.WIDE)
    q = ka.from_ints(probes, len(probes), ka.WIDE)
    import bisect
    assert ka.search(s, q).tolist() == [bisect.bisect_left(stored, k) for k in probes]
    assert ka.unseen(s, q).tolist() == [k not in set(stored) for k in probes]
    new = sorted(set(want[1::2]) - set(stored))
    merged = ka.insert_sorted(s, ka.from_ints(new, len(new), ka.WIDE))
    assert ka.to_ints(merged) == sorted(stored + new)
    mask = ka.smallest(arr, 37)
    assert sorted(k for k, m in zip(ints, mask.tolist()) if m) == want[:37]
    assert ka.max_key(arr) == want[-1]
    for starts in (np.array([0, 3, 10, 11, 400]), np.array([5, 6, 300])):
        bounds = starts.tolist() + [len(ints)]
        assert ka.to_ints(ka.group_min(arr, starts)) == \
            [min(ints[a:b]) for a, b in zip(bounds, bounds[1:])]


def _weak128(data: bytes) -> int:
    """A deliberately weak 128-bit hash: its top 64 bits take 16 values only (so any
    64-bit key cut from it merges states), its low 64 bits are a good hash."""
    return ((xxhash.xxh3_64_intdigest(data) & 15) << 64) | \
        xxhash.xxh3_64_intdigest(data, seed=1)


def _explorers():
    return {"bfs": lambda m, **kw: bfs(m, deadlock=True, **kw),
            "dfs": lambda m, **kw: dfs(m, deadlock=True, **kw),
            "simulate": lambda m, **kw: simulate(m, walks=300, walk_length=30, seed=5, **kw)}


def _answers(r):
    return (r.unique_states, r.generated_states, r.max_depth, r.verdicts(),
            {n: len(d.trace) for n, d in r.discoveries.items()})


@pytest.mark.parametrize("engine", sorted(_explorers()))
def test_a_weak_hash_collides_in_64_bits_and_the_wide_key_keeps_states_apart(
        engine, monkeypatch):
    run = _explorers()[engine]
    model = Workers(4, 2, bug=True)
    want = run(model)
    monkeypatch.setattr(core_mod, "fingerprint128", lambda s: _weak128(repr(s).encode()))
    core = Core(model)
    reached = {s for _i, s in core.initial()}
    for s in list(reached):
        reached.update(t for _a, t in core.successors(s))
    keys = [core.rkey(s) for s in reached]
    assert len({k >> 64 for k in keys}) < len(keys) == len(set(keys))  # 64 bits collide
    assert _answers(run(model)) == _answers(want)
    # the same weak hash cut to 64 bits, as a 64-bit key would be: states merge (counted
    # without properties: a trace through merged states cannot be rebuilt)
    monkeypatch.setattr(core_mod, "fingerprint128",
                        lambda s: _weak128(repr(s).encode()) >> 64)
    assert run(model, properties=[]).unique_states < want.unique_states
