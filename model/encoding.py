"""Canonical state encoding and the stable fingerprints (128-bit state keys, 64-bit labels).

Why ``repr``: for the value types a state may contain (None, bool, int, str, bytes, tuples,
NamedTuples, frozen dataclasses, enums) CPython's ``repr`` is deterministic — it never
depends on PYTHONHASHSEED, the process or the machine — and it runs in C. Sets, dicts and
lists are refused by ``check_canonical`` because their order (sets) or mutability (lists)
would break that. A state's key is ``fingerprint128``, xxh3-128 of those bytes (never
Python's salted ``hash()``): wide enough that TLC's collision estimate stays below 1e-6 at
10^9 distinct and 4x10^9 generated states (``collision_probability``). ``fingerprint``,
xxh3-64 of the same bytes, labels states in trace files.

Packed models (``model.packed``) have integer states below 2**64; their fingerprint is a
bijective 64-bit mix of the integer, so distinct states never collide.
"""
from __future__ import annotations

import dataclasses
import enum
import math

try:  # xxhash is a declared dependency; blake2b keeps the fallback identical in meaning
    import xxhash

    _xxh = xxhash.xxh3_64_intdigest
    hash128 = xxhash.xxh3_128_intdigest  # xxh3-128 of bytes, an int below 2**128

    def hash64(data: bytes) -> int:
        """xxh3-64 of ``data``: the label of a canonical encoding."""
        return _xxh(data)
except ImportError:  # pragma: no cover - exercised only without the dependency
    import hashlib

    def hash64(data: bytes) -> int:
        return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")

    def hash128(data: bytes) -> int:
        return int.from_bytes(hashlib.blake2b(data, digest_size=16).digest(), "little")

MASK64 = (1 << 64) - 1
#: bits of a generic state's key (``fingerprint128``)
KEY_BITS = 128
#: a run whose collision estimate exceeds this is reported with a warning
COLLISION_WARN = 1e-6


class NonCanonicalState(TypeError):
    pass


def encode(state) -> bytes:
    """Canonical bytes of a state (see module docstring)."""
    return repr(state).encode()


def fingerprint(state) -> int:
    """Stable 64-bit fingerprint of a state: its label in trace files."""
    return hash64(repr(state).encode())


def fingerprint128(state) -> int:
    """Stable 128-bit fingerprint of a generic (non-packed) state: its key in every
    explorer's visited set."""
    return hash128(repr(state).encode())


def mix64(x: int) -> int:
    """SplitMix64 finaliser: a bijection on 64-bit integers that spreads bits evenly.

    Used as the fingerprint of packed integer states (collision-free) and for owner
    partitioning in distributed explorers.
    """
    x &= MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def collision_probability(distinct: int, generated: int, bits: int = KEY_BITS) -> float:
    """TLC's optimistic estimate of a fingerprint collision for a run: each of the
    ``generated`` look-ups could collide with any of ``distinct`` stored fingerprints,
    p ~= distinct * generated / 2**bits."""
    return min(1.0, distinct * max(generated, 1) / 2.0 ** bits)


_ATOMS = (type(None), bool, int, str, bytes)


def check_canonical(value, _path: str = "state") -> None:
    """Raise NonCanonicalState naming the first offending part of ``value``."""
    if isinstance(value, _ATOMS) or isinstance(value, enum.Enum):
        return
    if isinstance(value, float):
        if math.isnan(value):
            raise NonCanonicalState(f"{_path} is NaN: NaN != NaN breaks deduplication")
        return
    if isinstance(value, tuple):
        for i, v in enumerate(value):
            check_canonical(v, f"{_path}[{i}]")
        return
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if not value.__dataclass_params__.frozen:
            raise NonCanonicalState(f"{_path} is a mutable dataclass {type(value).__name__}: "
                                    "declare it @dataclass(frozen=True)")
        for f in dataclasses.fields(value):
            check_canonical(getattr(value, f.name), f"{_path}.{f.name}")
        return
    kind = type(value).__name__
    if isinstance(value, (set, frozenset, dict)):
        hint = "use a sorted tuple (of pairs, for a mapping)"
    elif isinstance(value, list):
        hint = "use a tuple"
    else:
        hint = "use ints, strs, bools, enums, tuples, NamedTuples or frozen dataclasses"
    raise NonCanonicalState(f"{_path} is a {kind}, whose encoding is not canonical: {hint}")


def to_jsonable(value):
    """A JSON-ready rendering: NamedTuples and dataclasses become objects, tuples lists."""
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {k: to_jsonable(v) for k, v in zip(value._fields, value)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    return value
