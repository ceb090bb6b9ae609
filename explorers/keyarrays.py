"""Arrays of state keys, narrow or wide, and the sorted-array operations every explorer
uses on them.

A packed model's key is its state, an int below 2**64: a ``uint64`` array (NARROW). Any
other model's key is a 128-bit fingerprint (``model.encoding.fingerprint128``): an array
of (hi, lo) pairs of 64-bit words (WIDE, 16 bytes a key), ordered as the 128-bit ints
they stand for. In Python a key is always an int.

Wide arrays are sorted and searched on their high word, in C, like narrow ones; two keys
with the same high word (one pair in 2**64 by chance, or a deliberately weak hash) are
told apart by their low word, on a slower path taken only where high words are equal.
Every function gives exactly the answer it would give on 128-bit integers.
"""
from __future__ import annotations

import numpy as np

NARROW = np.dtype(np.uint64)
WIDE = np.dtype([("hi", "<u8"), ("lo", "<u8")])
_M64 = (1 << 64) - 1


def dtype_of(core) -> np.dtype:
    """The key array type of a Core's keys."""
    return NARROW if core.packed else WIDE


def is_wide(keys: np.ndarray) -> bool:
    return keys.dtype == WIDE


def empty(dtype=NARROW) -> np.ndarray:
    return np.empty(0, dtype=dtype)


def from_ints(keys, count: int, dtype=NARROW) -> np.ndarray:
    """An array of ``count`` keys given as Python ints (any iterable)."""
    if dtype != WIDE:
        return np.fromiter(keys, dtype=NARROW, count=count)
    ks = keys if isinstance(keys, list) else list(keys)
    out = np.empty(count, dtype=WIDE)
    out["hi"] = np.fromiter((k >> 64 for k in ks), dtype=np.uint64, count=count)
    out["lo"] = np.fromiter((k & _M64 for k in ks), dtype=np.uint64, count=count)
    return out


def to_ints(keys: np.ndarray) -> list:
    """The keys as Python ints."""
    if not is_wide(keys):
        return keys.tolist()
    return [(h << 64) | lo for h, lo in zip(keys["hi"].tolist(), keys["lo"].tolist())]


def key_at(keys: np.ndarray, i: int) -> int:
    """Key ``i`` as a Python int."""
    if not is_wide(keys):
        return int(keys[i])
    return (int(keys["hi"][i]) << 64) | int(keys["lo"][i])


def high_word(keys: np.ndarray) -> np.ndarray:
    """The keys' top 64 bits (the keys themselves when narrow): what owners are read from."""
    return keys["hi"] if is_wide(keys) else keys


def sort_order(keys: np.ndarray) -> np.ndarray:
    """Indices that sort ``keys`` ascending, stable (equal keys keep their order)."""
    if not is_wide(keys):
        return np.argsort(keys, kind="stable")
    hi = keys["hi"]
    order = np.argsort(hi, kind="stable")
    sh = hi[order]
    if sh.size > 1 and (sh[1:] == sh[:-1]).any():
        return np.lexsort((keys["lo"], hi))  # lexsort is stable
    return order


def sorted_keys(keys: np.ndarray) -> np.ndarray:
    return np.sort(keys) if not is_wide(keys) else keys[sort_order(keys)]


def search(sorted_keys_: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``np.searchsorted(sorted_keys_, keys)`` (side "left") on 128-bit values."""
    if not is_wide(sorted_keys_):
        return np.searchsorted(sorted_keys_, keys)
    sh, qh = sorted_keys_["hi"], keys["hi"]
    left = np.searchsorted(sh, qh, side="left")
    right = np.searchsorted(sh, qh, side="right")
    run = right - left
    pos = left.copy()
    one = np.flatnonzero(run == 1)
    if one.size:
        pos[one] += sorted_keys_["lo"][left[one]] < keys["lo"][one]
    slo, qlo = sorted_keys_["lo"], keys["lo"]
    for i in np.flatnonzero(run > 1).tolist():  # equal high words: a run to search
        a, b = int(left[i]), int(right[i])
        pos[i] = a + int(np.searchsorted(slo[a:b], qlo[i]))
    return pos


def unseen(sorted_keys_: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """True where ``keys[i]`` is not in the sorted array ``sorted_keys_``."""
    if sorted_keys_.size == 0:
        return np.ones(keys.size, dtype=bool)
    pos = search(sorted_keys_, keys)
    pos[pos == sorted_keys_.size] = 0  # past-the-end probes compare against a[0]; any works
    return sorted_keys_[pos] != keys


def insert_sorted(sorted_keys_: np.ndarray, new_keys: np.ndarray) -> np.ndarray:
    """``sorted_keys_`` with the sorted ``new_keys`` (known to be absent) inserted: one
    pass, no re-sort of the old keys."""
    if new_keys.size == 0:
        return sorted_keys_
    return np.insert(sorted_keys_, search(sorted_keys_, new_keys), new_keys)


def smallest(keys: np.ndarray, need: int) -> np.ndarray:
    """Mask of the ``need`` smallest of distinct ``keys``: the one rule by which every
    explorer keeps part of a level at ``--max-states``. It depends only on the states'
    keys, not on the order candidates were generated in nor on the partitioning, so BFS
    and Spark keep the same states and give the same verdicts."""
    if need <= 0:
        return np.zeros(keys.size, dtype=bool)
    if need >= keys.size:
        return np.ones(keys.size, dtype=bool)
    if not is_wide(keys):
        return keys <= np.partition(keys, need - 1)[need - 1]
    mask = np.zeros(keys.size, dtype=bool)
    mask[sort_order(keys)[:need]] = True
    return mask


def max_key(keys: np.ndarray) -> int:
    """The largest key as a Python int (-1 for no key)."""
    if keys.size == 0:
        return -1
    if not is_wide(keys):
        return int(keys.max())
    return key_at(keys, int(sort_order(keys)[-1]))


def group_min(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The least of ``values`` in each group [starts[g], starts[g + 1]) (the last group
    runs to the end): ``np.minimum.reduceat`` on 128-bit values."""
    if not is_wide(values):
        return np.minimum.reduceat(values, starts)
    first = int(starts[0]) if starts.size else 0
    values, starts = values[first:], starts - first  # reduceat ignores what lies before
    sizes = np.diff(np.append(starts, values.size))
    group = np.repeat(np.arange(starts.size), sizes)
    order = np.lexsort((values["lo"], values["hi"], group))
    return values[order[starts]]
