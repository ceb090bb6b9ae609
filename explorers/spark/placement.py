"""Which partition owns a state: the top 16 bits of its Spark key.

By default a Spark key is the Core's key (the packed state, or the xxh3 fingerprint of the
canonical encoding) and its owner is ``mix64(key) mod P``: uniform, but a state reached
from parents in P partitions is generated, fingerprinted and shipped up to P times. When
the model names a partition key (``Model.partition_key``, the part most actions leave
unchanged), the key's top 16 bits become the partition key's fingerprint and the owner is
``mix64(key >> 48) mod P``, so neighbouring states share an owner. On lifecycle-large
with 2 partitions that ships 1.15 candidates per new state (uniform owners: 1.9).

Keys stay a function of the state alone, so answers do not change; the owner is a
function of the key (and of the level's owner table, below), so the visited set can be
split without the states.

The price of locality is balance: a level's states fall into a few hundred partition-key
values of unequal weight, so two owners do not split a level 50:50 by hashing. Spark
levels therefore route by an owner table (``balanced_owners``) that the driver weighs on
the frontier's keys, level by level. The default is still one owner partition per core
(``default_partitions``): more partitions even out the cores but multiply the
candidates two owners both ship, and on lifecycle-large (local[2]) two partitions beat
four in four of five alternating runs.
"""
from __future__ import annotations

import heapq

import numpy as np

from explorers.spark.level import owners
from model.contract import Model
from model.encoding import fingerprint, hash64

SHIFT = 48  # owner bits: key >> SHIFT
_LOW = (1 << SHIFT) - 1
_HIGH = ((1 << 64) - 1) ^ _LOW


def place_by_partition_key(core) -> None:
    """Give ``core`` locality-preserving keys when its model has a partition key (in
    place: the Spark explorer owns its Core). Packed models keep their keys (the key
    is the state)."""
    m = core.model
    if core.packed or type(m).partition_key is Model.partition_key:
        return
    pk = m.partition_key

    def rkey(s):  # s is already its own representative
        return (fingerprint(s) & _LOW) | (fingerprint(pk(s)) & _HIGH)
    if m.partition_fields:
        fast = fieldwise_key(m.partition_fields)
        # the model's word that its partition key is these fields, checked where it is
        # cheap: on the initial states, both ways must give the very same keys
        if all(fast(s) == rkey(s) for _i, s in core.initial()):
            rkey = fast
    core.rkey = rkey
    if core.symmetry:
        rep = m.representative
        core.key = lambda s: rkey(rep(s))
    else:
        core.key = rkey
    core.owner_shift = SHIFT
    core.key_bits = SHIFT  # states with one partition key differ in these bits only


def fieldwise_key(fields):
    """The partition-key Spark key of a tuple state with the plain tuple repr whose
    partition key is the fields ``fields``, from one repr per field: the state's repr is
    "(" + ", ".join(field reprs) + ")", and so is the key's. Fingerprinting both took
    16.3 us per lifecycle-large state; this takes 13.0 us (the state alone: 12.7 us)."""
    idx = tuple(fields)

    def rkey(s):
        parts = list(map(repr, s))
        whole = hash64(("(" + ", ".join(parts) + ")").encode())
        part = hash64(("(" + ", ".join([parts[i] for i in idx]) + ")").encode())
        return (whole & _LOW) | (part & _HIGH)
    return rkey


def balanced_owners(keys: np.ndarray, nparts: int, shift: int = SHIFT) -> np.ndarray:
    """The owner of each partition-key value (a table indexed by ``key >> shift``) that
    splits ``keys`` evenly: the heaviest value first, each to the least loaded owner
    (ties: the lowest partition). Values absent from ``keys`` keep their hashed owner.

    A function of ``keys`` alone, so a re-run task routes exactly as the first run did.
    The Spark levels weigh the frontier's keys to place the states two levels on: on
    lifecycle-large (2 partitions), hashing gave the larger owner 54.5-57.6% of every
    level of 10,000 states or more, this table 51.2-54.2%."""
    hashed = owners(np.arange(1 << (64 - shift), dtype=np.uint64), nparts)
    table = hashed.astype(np.uint16 if nparts <= 1 << 16 else np.uint32)
    counts = np.bincount((keys >> np.uint64(shift)).astype(np.int64),
                         minlength=table.size)
    values = np.flatnonzero(counts)
    loads = [(0, p) for p in range(nparts)]
    for v in values[np.lexsort((values, -counts[values]))].tolist():
        load, p = heapq.heappop(loads)
        table[v] = p
        heapq.heappush(loads, (load + int(counts[v]), p))
    return table


def default_partitions(parallelism: int) -> int:
    """Owner partitions when --partitions is not given: one per core. Each extra owner
    adds the candidates that two owners both ship; lumpy owners (a partition key) were
    given two per core until the key left out a field that changes often: lifecycle-large
    then shipped 1.15 candidates per new state with 2 partitions and 1.23 with 4, and 2
    took 21.5-26.5 s on local[2] where 4 took 22.4-27.7 s (five alternating runs; JVM
    2.7-2.8 against 3.4-4.1 CPU s, workers 35-43 against 36-46 CPU s)."""
    return max(1, parallelism)
