"""Two pieces of the Spark explorer's data path, without a JVM: the owner table that
balances partition-key values (``placement.balanced_owners``) and the compact form of
sorted visited keys (``keycodec``)."""
from __future__ import annotations

import numpy as np
import pytest

from explorers.spark import keycodec, level
from explorers.spark.placement import SHIFT, balanced_owners


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
    table = balanced_owners(keys, 2)
    counts = np.bincount(level.owners(keys, 2, SHIFT, table), minlength=2)
    assert sorted(counts.tolist()) == [800, 800]  # 500+300 / 400+200+100+100


def test_owner_table_is_a_function_of_the_keys_and_keeps_unseen_values_hashed():
    keys = _keys([(7, 50), (9, 50), (1234, 10), (65535, 3)])
    a, b = balanced_owners(keys, 3), balanced_owners(keys[::-1].copy(), 3)
    assert np.array_equal(a, b)
    hashed = level.owners(np.arange(1 << 16, dtype=np.uint64), 3)
    seen = {7, 9, 1234, 65535}
    others = np.array([v for v in range(1 << 16) if v not in seen])
    assert np.array_equal(a[others], hashed[others])
    # heaviest first, each to the least loaded owner: 7 and 9 take two owners, 1234 the
    # third, and 65535 joins 1234 there
    assert len({a[7], a[9], a[1234]}) == 3 and a[65535] == a[1234]
    assert int(a.max()) < 3


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
