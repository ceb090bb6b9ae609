"""The fingerprint set: a sorted numpy array of keys, no Python objects (8 bytes per state
for a packed model's keys, 16 for 128-bit fingerprints: ``explorers.keyarrays``).

BFS looks up a whole level of candidate keys at once (``searchsorted``) and merges the new
keys once per level, so the per-state cost stays in C.
"""
from __future__ import annotations

import numpy as np

from kmc.explorers import keyarrays
from kmc.explorers.keyarrays import insert_sorted, smallest, unseen  # noqa: F401

MASK64 = (1 << 64) - 1


class SortedKeySet:
    def __init__(self, dtype=keyarrays.NARROW):
        self._a = keyarrays.empty(dtype)

    def __len__(self) -> int:
        return int(self._a.size)

    @property
    def nbytes(self) -> int:
        return int(self._a.nbytes)

    def unseen_mask(self, keys: np.ndarray) -> np.ndarray:
        """Boolean mask: True where ``keys[i]`` is not in the set."""
        return unseen(self._a, keys)

    def add_new(self, keys: np.ndarray) -> None:
        """Insert keys known to be absent and pairwise distinct."""
        self._a = insert_sorted(self._a, keyarrays.sorted_keys(keys))


def keys_array(keys, count: int, dtype=keyarrays.NARROW) -> np.ndarray:
    """``count`` keys (Python ints) as an array of ``dtype`` (``keyarrays``)."""
    return keyarrays.from_ints(keys, count, dtype)
