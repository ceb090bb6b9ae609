"""KIP-253 partitioners as z3 bit-vector terms: what `kmc prove` quantifies over.

The same functions on plain ints belong to the model (``kmc.model.kafka.kip253.partitioners``,
what its producers call, with the KIP-253 section 5 text they follow); this module does not
import them. tests/unit/test_proofs.py checks that the two agree on random hashes; theorem
c0-split-pointer proves linear_partition and Wikipedia's split-pointer form the same
function for every 32-bit hash.
"""
from __future__ import annotations

from dataclasses import dataclass

import z3

HASH_BITS = 32
MAX_LEVEL = 4  # counts n < N*2^(MAX_LEVEL+1) = 32N, i.e. every n in [N, 16N] (and 16N+1)


def shrink_bound(N: int, n: int, m: int) -> int:
    """Most deleted partitions any one survivor receives keys from when shrinking n -> m.

    ceil((n - m) / K) with K = N*2^L(m); theorems c3-shrink-bound and c3-shrink-tight.
    """
    if not N <= m < n:
        raise ValueError(f"need N <= m < n, got N={N}, n={n}, m={m}")
    k = N << ((m // N).bit_length() - 1)  # N*2^L(m): L(m) the largest L with N*2^L <= m
    return -(-(n - m) // k)


# --- z3 terms -----------------------------------------------------------------------------

def _bv(x, width: int):
    return z3.BitVecVal(x, width) if isinstance(x, int) else x


def _width(*xs) -> int:
    return next((x.size() for x in xs if z3.is_bv(x)), HASH_BITS)


def z3_level(N, n, max_level: int = MAX_LEVEL):
    """L as a term: an if-then-else chain over the few possible levels (needs n < N*2^(max+1))."""
    width = _width(n, N)
    N, n = _bv(N, width), _bv(n, width)
    lvl = z3.BitVecVal(0, width)
    for k in range(1, max_level + 1):
        lvl = z3.If(z3.ULE(N << k, n), z3.BitVecVal(k, width), lvl)
    return lvl


def z3_base(N, n, max_level: int = MAX_LEVEL):
    """N*2^L as a term."""
    width = _width(n, N)
    return _bv(N, width) << z3_level(N, n, max_level)


def _times_small(N, x, bits: int):
    # N * x for x < 2^bits by shift-and-add: far cheaper for the SAT back end than a
    # full 32x32 multiplier when N is symbolic.
    width = x.size()
    acc = z3.BitVecVal(0, width)
    for i in range(bits):
        acc = acc + z3.If(z3.Extract(i, i, x) == 1, N << i, z3.BitVecVal(0, width))
    return acc


def z3_mod_level(h, N, lvl, max_level: int = MAX_LEVEL):
    """h mod N*2^lvl as a term, lvl <= max_level + 1 a term or int.

    Why not URem(h, N*2^lvl): with q = h div N and r = h mod N,
    h mod N*2^k = N*(q mod 2^k) + r, so one division by N serves every level and the rest is
    masking; with a symbolic N that is ~15x faster than one URem per level. Theorem
    c0-split-pointer proves the identity against z3's URem for every N and level in bounds.
    """
    width = h.size()
    N, lvl = _bv(N, width), _bv(lvl, width)
    q, r = z3.UDiv(h, N), z3.URem(h, N)
    mask = (z3.BitVecVal(1, width) << lvl) - 1
    return _times_small(N, q & mask, max_level + 1) + r


def z3_linear_partition(h, N, n, max_level: int = MAX_LEVEL):
    """linear_partition as a term; h, n bit-vectors (or ints), N an int or a bit-vector.

    Requires n < N*2^(max_level+1), i.e. the level L of n is at most max_level.
    """
    n = _bv(n, h.size())
    lvl = z3_level(N, n, max_level)
    high = z3_mod_level(h, N, lvl + 1, max_level)
    return z3.If(z3.ULT(high, n), high, z3_mod_level(h, N, lvl, max_level))


def z3_split_pointer_partition(h, N, n, max_level: int = MAX_LEVEL):
    """Wikipedia's split-pointer form as a term: its decision (a < S) on the same residues."""
    n = _bv(n, h.size())
    lvl = z3_level(N, n, max_level)
    a = z3_mod_level(h, N, lvl, max_level)
    split = n - z3_base(N, n, max_level)
    return z3.If(z3.ULT(a, split), z3_mod_level(h, N, lvl + 1, max_level), a)


def z3_modulo_partition(h, n):
    return z3.URem(h, _bv(n, h.size()))


# --- the proof space: what `kmc prove` quantifies over -------------------------------------

def bv_var(name: str):
    return z3.BitVec(name, HASH_BITS)


def bv_const(x: int):
    return z3.BitVecVal(x, HASH_BITS)


@dataclass(frozen=True)
class Bounds:
    """N in [lo, hi]; partition counts in [N, growth*N]."""
    lo: int = 1
    hi: int = 16
    growth: int = 16

    @property
    def max_level(self) -> int:  # levels needed for counts up to growth*N + 1
        return (self.growth + 1).bit_length() - 1

    def describe(self) -> str:
        return f"N in {self.lo}..{self.hi}, n in [N, {self.growth}N]"


n_var, m_var = bv_var("n"), bv_var("m")


@dataclass(frozen=True)
class Space:
    """What a solver call quantifies over: N (symbolic, constrained to [lo, hi]) and counts."""
    b: Bounds
    N: object

    @property
    def lmax(self) -> int:
        return self.b.max_level

    def counts(self, lo_n=None, hi_n=None):
        """N in bounds and lo_n <= n <= hi_n (defaults N and growth*N)."""
        N = self.N
        lo_n = N if lo_n is None else lo_n
        hi_n = N * self.b.growth if hi_n is None else hi_n
        return [z3.ULE(bv_const(self.b.lo), N), z3.ULE(N, bv_const(self.b.hi)),
                z3.ULE(lo_n, n_var), z3.ULE(n_var, hi_n)]

    def shrink(self):
        """N <= m < n <= growth*N."""
        return self.counts(lo_n=self.N + 1) + [z3.ULE(self.N, m_var), z3.ULT(m_var, n_var)]

    def lin(self, x, count):
        return z3_linear_partition(x, self.N, count, self.lmax)

    def base(self, count):
        return z3_base(self.N, count, self.lmax)


def modulus_sound(b: Bounds) -> int:
    """N*2^(Lmax+1) / N with Lmax = L(growth*N): the key-class modulus of c5-key-classes (32
    for 16)."""
    return 2 << (b.growth.bit_length() - 1)


def modulus_tight(b: Bounds) -> int:
    """Smallest power-of-two multiple of N covering growth*N (16 for 16)."""
    return 1 << (b.growth - 1).bit_length()
