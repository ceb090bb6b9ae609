"""Sorted visited keys, smaller for the shuffle: each partition's visited keys go through
every level's shuffle (Python -> JVM -> shuffle file -> JVM -> Python), so their size is
paid twice per level.

A packed model's keys are its states, small integers close together: TwoPhase rm=8 has
36-bit keys, and 98% of the gaps between one partition's sorted keys (2 partitions) fit in
16 bits. Those arrays travel as their first key and 16-bit gaps, with the larger gaps
apart: ~2.2 bytes per key instead of 8. Fingerprint keys (128 bits, spread evenly) have
large gaps and travel as they are.
"""
from __future__ import annotations

import numpy as np

#: a gap of this size or more is kept apart, at full width
_ESCAPE = 0xFFFF
#: arrays shorter than this travel as they are (nothing to gain)
MIN_KEYS = 4096
#: ... and so do arrays with more than one large gap in this many (then >= 3.5 bytes/key)
_MAX_ESCAPES = 8


def pack(keys: np.ndarray):
    """``keys`` (ascending, distinct uint64) as they are, or as (first key, 16-bit gaps,
    positions of the large gaps, the large gaps)."""
    if keys.size < MIN_KEYS or keys.dtype != np.uint64:
        return keys
    gaps = np.diff(keys)
    large = np.flatnonzero(gaps >= _ESCAPE)
    if large.size * _MAX_ESCAPES > keys.size:
        return keys
    small = gaps.astype(np.uint16)  # a large gap wraps: it is restored from the exceptions
    return int(keys[0]), small, large.astype(np.int32), gaps[large]


def unpack(packed) -> np.ndarray:
    """The inverse of ``pack``."""
    if isinstance(packed, np.ndarray):
        return packed
    first, small, large, gaps = packed
    steps = small.astype(np.uint64)
    steps[large] = gaps
    out = np.empty(steps.size + 1, dtype=np.uint64)
    out[0] = first
    np.cumsum(steps, out=out[1:])
    out[1:] += np.uint64(first)
    return out
