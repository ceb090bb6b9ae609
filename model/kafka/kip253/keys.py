"""Key classes and the partitioners (KIP-253 §5: linear hashing; today's Kafka: modulo).

Key classes. The model does not enumerate key hashes; it uses a few *key classes*. A key class
stands for every key hash with the same residue modulo ``M``, and is written as its smallest
member ``h`` (0 <= h < M). With ``N`` the initial partition count and ``Lmax`` the largest
``L`` with ``N*2^L <= nmax`` (nmax: the largest partition count the scenario can reach),
linear hashing sends a hash to a partition that depends only on ``hash mod N*2^(Lmax+1)`` for
every count ``n <= nmax``; modulo hashing depends on ``hash mod n``. So with
``M = lcm(N*2^(Lmax+1), every count in bounds)`` all hashes of one class go to the same
partition under every count and both partitioners: the class is a sound abstraction (the z3
proof of this lives with the hashing proofs, not here). The parent and feeder sets below range
over *all* ``M`` residues, so they are the protocol's sets for every possible key, not just the
scenario's key classes.
"""
from __future__ import annotations

from functools import lru_cache
from math import lcm

from kmc.model.kafka.kip253.partitioners import level, linear_partition, modulo_partition
from kmc.model.kafka.kip253.variants import LINEAR, MODULO


def class_modulus(N: int, counts) -> int:
    """M: key hashes congruent modulo M are indistinguishable under every count in bounds."""
    counts = tuple(counts)
    return lcm(N << (level(N, max(counts)) + 1), *counts)


class KeySpace:
    """Partition of a key class under a count, plus the KIP's parent / feeder sets."""

    def __init__(self, hashing: str, N: int, counts, keys):
        if hashing not in (LINEAR, MODULO):
            raise ValueError(f"unknown hashing {hashing!r}")  # pragma: no mutate
        self.hashing, self.N = hashing, N
        self.nmax = max(counts)
        self.M = class_modulus(N, counts)
        bad = [h for h in keys if not 0 <= h < self.M]
        if bad:
            raise ValueError(  # pragma: no mutate
                f"key class {bad[0]} is not a residue modulo {self.M}: use "
                f"0..{self.M - 1}")
        self.keys = tuple(keys)
        # the hot path (Produce) only looks partitions up
        self.counts = tuple(counts)
        self._table = {(h, n): self._compute(h, n) for h in range(self.M) for n in self.counts}

    def _compute(self, h: int, n: int) -> int:
        if self.hashing == LINEAR:
            return linear_partition(h, self.N, n)
        return modulo_partition(h, n)

    def partition(self, h: int, n: int) -> int:
        return self._table[(h, n)]

    @lru_cache(maxsize=None)
    def parents(self, p: int, old: int, new: int) -> tuple:
        """Partitions (of ``old``) whose keys go to ``p`` under ``new`` (KIP-253 §8 step 4.2:
        linear hashing promises exactly one for a new partition ``p >= old``)."""
        return tuple(sorted({self._table[(h, old)] for h in range(self.M)
                             if self._table[(h, new)] == p} - {p}))

    @lru_cache(maxsize=None)
    def feeders(self, p: int, undeleted: int, total: int) -> tuple:
        """Marked partitions (>= undeleted) whose keys go to ``p`` once only ``undeleted``
        partitions are used (KIP-253 §8 step 5.1)."""
        return tuple(sorted({q for h in range(self.M)
                             if self._table[(h, undeleted)] == p
                             for q in (self._table[(h, total)],) if q >= undeleted}))

    def __hash__(self):  # lru_cache keys on self; a KeySpace is immutable
        return id(self)
