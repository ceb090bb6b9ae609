"""Canonical collections for immutable states: sorted tuples as sets and maps.

States may not hold sets, dicts or lists (``model.encoding``); these helpers keep a tuple
sorted so equal contents always encode to equal bytes. Maps are sorted tuples of
``(key, value)`` pairs with unique keys. All functions return new tuples.
"""
from __future__ import annotations

from bisect import bisect_left, insort


def set_add(items: tuple, x) -> tuple:
    """``items`` (a sorted tuple without duplicates) with ``x`` added."""
    i = bisect_left(items, x)
    if i < len(items) and items[i] == x:
        return items
    return items[:i] + (x,) + items[i:]


def set_remove(items: tuple, x) -> tuple:
    """``items`` without ``x`` (unchanged when absent)."""
    i = bisect_left(items, x)
    if i < len(items) and items[i] == x:
        return items[:i] + items[i + 1:]
    return items


def set_union(items: tuple, more) -> tuple:
    out = items
    for x in more:
        out = set_add(out, x)
    return out


def bag_add(items: tuple, x) -> tuple:
    """Multiset insert into a sorted tuple (duplicates kept)."""
    lst = list(items)
    insort(lst, x)
    return tuple(lst)


def bag_remove(items: tuple, x) -> tuple:
    """Remove one occurrence of ``x``; ValueError when absent (a model bug)."""
    i = bisect_left(items, x)
    if i < len(items) and items[i] == x:
        return items[:i] + items[i + 1:]
    raise ValueError(f"{x!r} is not in the multiset")


def map_get(pairs: tuple, key, default=None):
    for k, v in pairs:
        if k == key:
            return v
    return default


def map_put(pairs: tuple, key, value) -> tuple:
    """``pairs`` with ``key`` mapped to ``value`` (keys kept sorted and unique)."""
    out = [(k, v) for k, v in pairs if k != key]
    out.append((key, value))
    out.sort(key=_first)
    return tuple(out)


def map_del(pairs: tuple, key) -> tuple:
    return tuple((k, v) for k, v in pairs if k != key)


def replace_at(items: tuple, i: int, value) -> tuple:
    """``items`` with position ``i`` replaced (the per-broker / per-partition update)."""
    return items[:i] + (value,) + items[i + 1:]


def keyed_put(items: tuple, item, key=lambda x: x[0]) -> tuple:
    """Sorted tuple of records keyed by ``key(record)`` (default: first field), with
    ``item`` inserted or replacing the record of the same key."""
    k = key(item)
    out = [x for x in items if key(x) != k]
    out.append(item)
    out.sort(key=key)
    return tuple(out)


def keyed_get(items: tuple, k, key=lambda x: x[0], default=None):
    for x in items:
        if key(x) == k:
            return x
    return default


def keyed_del(items: tuple, k, key=lambda x: x[0]) -> tuple:
    return tuple(x for x in items if key(x) != k)


def _first(pair):
    return pair[0]
