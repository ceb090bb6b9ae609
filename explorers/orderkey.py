"""The layout of the order key (``explorers.core``'s module docstring): for a model that
names a partition key, the key's top 16 bits (from ``ORDER_SHIFT`` up) are the partition
key's fingerprint and the 112 bits below it the state's own; owners are read from the
same bits of the key's high 64-bit word (``OWNER_SHIFT``). Also the same key made from a
state's field reprs (``partitioned_key``), as the level expander keys successors."""
from __future__ import annotations

from operator import itemgetter

import numpy as np

from kmc.model.encoding import KEY_BITS, hash128, join_fields, key_of_fields

#: a partition key's fingerprint fills the order key's bits from here up (the Spark
#: explorer's placement uses the same layout for its keys and owners)
ORDER_SHIFT = KEY_BITS - 16
LOW = (1 << ORDER_SHIFT) - 1
HIGH = ((1 << KEY_BITS) - 1) ^ LOW
#: the same bits within a key's high 64-bit word (``keyarrays.high_word``), which owners
#: are read from
OWNER_SHIFT = ORDER_SHIFT - 64
LOW_WORD = np.uint64((1 << OWNER_SHIFT) - 1)
#: distinct partition keys whose fingerprints are cached (the Kafka models have a few
#: hundred; the cache starts over when a model has more)
PK_CACHE = 1 << 16


def partitioned_key(fields, whole):
    """The partition-keyed order key (module docstring) from a state's field reprs, the
    partition key being the tuple of the fields ``fields``; ``whole(pieces)`` is the
    state's own fingerprint. Called for every successor a Spark task keys: the partition
    key's bits and (for a plain-printing record, ``key_of_fields``) the fingerprint are
    made inline, not by two more calls."""
    pick, cache = _picker(fields), {}
    if whole is not key_of_fields:
        def key(pieces):
            part = pick(pieces)
            high = cache.get(part)
            if high is None:
                high = _high(cache, part)
            return (whole(pieces) & LOW) | high
        return key

    def key_plain(pieces):
        part = pick(pieces)
        high = cache.get(part)
        if high is None:
            high = _high(cache, part)
        if len(pieces) == 1:
            return (key_of_fields(pieces) & LOW) | high
        return (hash128(("(" + ", ".join(pieces) + ")").encode()) & LOW) | high
    return key_plain


def partition_high(fields):
    """``high(pieces)``: the top bits of the fingerprint of a partition key that is the
    tuple of the fields ``fields``, from a state's field reprs (the key's repr is the
    plain tuple of theirs), cached per distinct key."""
    pick, cache = _picker(fields), {}

    def high(pieces):
        part = pick(pieces)
        got = cache.get(part)
        return _high(cache, part) if got is None else got
    return high


def _picker(fields):
    """``pick(pieces)``: the reprs of the fields ``fields``, as a tuple."""
    return itemgetter(*fields) if len(fields) > 1 else (lambda p: (p[fields[0]],))


def _high(cache: dict, part: tuple) -> int:
    """The top bits of the fingerprint of the partition key whose fields print as
    ``part``, kept in ``cache`` (which starts over at ``PK_CACHE`` entries)."""
    if len(cache) >= PK_CACHE:
        cache.clear()
    got = cache[part] = hash128(join_fields(list(part)).encode()) & HIGH
    return got
