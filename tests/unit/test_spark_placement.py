"""Pieces of the Spark explorer's data path, without a JVM: owners by hash
(``level.owners``), the owner table that balances partition-key values
(``placement.balanced_owners``) and the compact form of sorted visited keys
(``keycodec``)."""
from __future__ import annotations

import random

import numpy as np
import pytest

from kmc.explorers.spark import keycodec, level, placement
from kmc.explorers.spark.placement import (SHIFT, balanced_owners, predicted_weights,
                                       value_links)
from kmc.model.encoding import mix64


def _keys(values_and_counts, seed=1):
    """Keys whose top 16 bits are the given partition-key values, count times each."""
    rng = np.random.default_rng(seed)
    out = [(np.uint64(v) << np.uint64(SHIFT)) | rng.integers(0, 1 << SHIFT, n, dtype=np.uint64)
           for v, n in values_and_counts]
    return np.sort(np.concatenate(out))


def test_owner_table_splits_lumpy_values_evenly():
    # weights hashing splits badly on 2 owners: find values that all hash to one owner
    hashed = level.owners(np.arange(1 << 16, dtype=np.uint64), 2)
    lumpy = [int(v) for v in np.flatnonzero(hashed == 0)[:6]]
    keys = _keys(zip(lumpy, (500, 400, 300, 200, 100, 100)))
    assert np.bincount(level.owners(keys, 2, SHIFT), minlength=2).tolist() == [1600, 0]
    table = balanced_owners(predicted_weights(keys), 2)
    counts = np.bincount(level.owners(keys, 2, SHIFT, table), minlength=2)
    assert sorted(counts.tolist()) == [800, 800]  # 500+300 / 400+200+100+100


def test_owner_table_is_a_function_of_the_keys_and_keeps_unseen_values_hashed():
    keys = _keys([(7, 50), (9, 50), (1234, 10), (65535, 3)])
    a = balanced_owners(predicted_weights(keys), 3)
    b = balanced_owners(predicted_weights(keys[::-1].copy()), 3)
    assert np.array_equal(a, b)
    hashed = level.owners(np.arange(1 << 16, dtype=np.uint64), 3)
    seen = {7, 9, 1234, 65535}
    others = np.array([v for v in range(1 << 16) if v not in seen])
    assert np.array_equal(a[others], hashed[others])
    # heaviest first, each to the least loaded owner: 7 and 9 take two owners, 1234 the
    # third, and 65535 joins 1234 there
    assert len({a[7], a[9], a[1234]}) == 3 and a[65535] == a[1234]
    assert int(a.max()) < 3


def test_weights_two_levels_on_follow_the_flow_between_values(monkeypatch):
    """Level d-1 has 100 states of value 1 and 10 of value 2; level d has 100 states of
    value 1 and 100 of value 3, all of value 3 reached from value 1, and 5 of value 2.
    Per state, value 1 leads to 1 state of value 1 and 1 of value 3, value 2 to half a
    state of value 2, and value 3 (no state of d came from it) keeps its weight."""
    before = _keys([(1, 100), (2, 10)], seed=2)
    monkeypatch.setattr(placement, "FLOW_MIN", 100)  # no guess from fewer states
    assert np.array_equal(predicted_weights(_keys([(1, 5)]), _keys([(1, 5)]), before[:99]),
                          predicted_weights(_keys([(1, 5)])))
    value_of = before >> np.uint64(SHIFT)
    ones, twos = before[value_of == 1], before[value_of == 2]
    keys = _keys([(1, 100), (3, 100), (2, 5)], seed=3)
    vals = keys >> np.uint64(SHIFT)
    parents = np.where(vals == 2, twos[0], ones[0])
    w = predicted_weights(keys, parents, before)
    # next level: 1 -> 100, 3 -> 100 (from 1) + 100 (kept), 2 -> 2.5; then again
    assert {int(v): float(w[v]) for v in np.flatnonzero(w)} == {1: 100.0, 3: 300.0, 2: 1.25}
    assert np.array_equal(predicted_weights(keys), np.bincount(vals.astype(np.int64),
                                                               minlength=1 << 16))
    # the table splits the guess, not the frontier: 300 alone, 100 + 1.25 together
    table = balanced_owners(w, 2)
    assert table[3] != table[1] and table[2] == table[1]


def test_linked_values_share_an_owner_while_the_loads_stay_even():
    """40 states of value 3 came from value 2; 3 states of value 4 and 20 of value 5 from
    value 1. A value goes to the owner of the values it is linked to when that owner is
    loaded at most AFFINITY_SLACK of an even share above the least loaded one."""
    keys = np.concatenate([_keys([(3, 40)], 5), _keys([(4, 3)], 6), _keys([(5, 20)], 7)])
    parents = np.concatenate([_keys([(2, 40)], 8), _keys([(1, 23)], 9)])
    src, dst, count = value_links(keys, parents)
    assert {(int(a), int(b)): int(n) for a, b, n in zip(src, dst, count)} == \
        {(2, 3): 40, (1, 4): 3, (1, 5): 20}
    # 1 and 2 weigh 100, 3 and 4 weigh 50: without links 3 goes to the lower of two
    # equally loaded owners (1's), with them to 2's; 150 each either way
    w = np.zeros(1 << 16)
    w[[1, 2, 3, 4]] = [100, 100, 50, 50]
    plain, linked = balanced_owners(w, 2), balanced_owners(w, 2, (src, dst, count))
    assert plain[3] == plain[1] != plain[2] and linked[3] == linked[2] != linked[1]
    for t in (plain, linked):  # 150 each either way
        assert sorted(np.bincount(t[[1, 2, 3, 4]], weights=w[[1, 2, 3, 4]]).tolist()) == \
            [150.0, 150.0]
    # 1 weighs 100 and 2 60: 5 (linked to 1) goes to 2's owner, 40 less loaded
    w2 = np.zeros(1 << 16)
    w2[[1, 2, 5]] = [100, 60, 30]
    t = balanced_owners(w2, 2, (src, dst, count))
    assert t[5] == t[2] != t[1]
    w2[2] = 99.5  # now within the slack (0.02 of a share of 229.5 is 2.3): the link wins
    t = balanced_owners(w2, 2, (src, dst, count))
    assert t[5] == t[1] != t[2]


@pytest.mark.parametrize("spread", ["packed", "boundary", "fingerprints", "small"])
def test_keycodec_round_trips(spread):
    rng = np.random.default_rng(5)
    if spread == "packed":  # small states, close together, a few far gaps
        keys = np.unique(rng.integers(0, 1 << 28, 200_000, dtype=np.uint64))
        far = np.array([keys[-1] + np.uint64(1 << 40), 2**64 - 1], dtype=np.uint64)
        keys = np.concatenate([keys, far])
    elif spread == "boundary":  # gaps just below, at and above the escape
        gaps = np.array([0xFFFE, 0xFFFF, 0x10000, 1] * 3000, dtype=np.uint64)
        keys = np.cumsum(gaps, dtype=np.uint64)
    elif spread == "fingerprints":
        keys = np.unique(rng.integers(0, 2**64 - 1, 50_000, dtype=np.uint64))
    else:
        keys = np.arange(100, dtype=np.uint64)
    packed = keycodec.pack(keys)
    out = keycodec.unpack(packed)
    assert out.dtype == np.uint64 and np.array_equal(out, keys)
    if spread in ("fingerprints", "small"):
        assert packed is keys  # nothing to gain: sent as they are
    elif spread == "packed":
        assert 8 + sum(a.nbytes for a in packed[1:]) < 2.2 * keys.size


def test_mix64_array_matches_mix64():
    rng = random.Random(7)
    xs = [0, 1, 2 ** 63, 2 ** 64 - 1] + [rng.getrandbits(64) for _ in range(1000)]
    got = level.mix64_array(np.array(xs, dtype=np.uint64))
    assert [int(v) for v in got] == [mix64(x) for x in xs]


def test_owners_split_keys_evenly_and_stably():
    keys = np.arange(10_000, dtype=np.uint64)  # packed states are small consecutive ints
    own = level.owners(keys, 4)
    assert [int(o) for o in own[:50]] == [mix64(int(k)) % 4 for k in keys[:50]]
    counts = np.bincount(own, minlength=4)
    assert counts.min() > 2200  # mix64 spreads consecutive ints over all owners
