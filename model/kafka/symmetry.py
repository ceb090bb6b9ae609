"""Symmetry reduction over interchangeable identities (brokers).

``representative(state, ids, rename)`` returns the same member of a state's orbit for every
member: the least, by canonical encoding, of ``rename(state, perm)`` over all permutations
of ``ids``. ``rename(state, mapping)`` must apply ``mapping`` (old id -> new id) to every
place an id occurs, including inside messages and ghost logs, and re-sort canonical
collections. Cost is |ids|! renames per state: fine for the 2-4 brokers of a scenario.
"""
from __future__ import annotations

from itertools import permutations
from typing import Callable, Sequence


def mappings(ids: Sequence[int]) -> list[dict]:
    """Every renaming of ``ids`` (identity first)."""
    ids = tuple(ids)
    return [dict(zip(ids, p)) for p in permutations(ids)]


def representative(state, maps: list[dict], rename: Callable, key=repr):
    best, best_key = state, key(state)
    for m in maps[1:]:
        s = rename(state, m)
        k = key(s)
        if k < best_key:
            best, best_key = s, k
    return best
