"""Canonical state encoding and the stable fingerprints (128-bit state keys, 64-bit labels).

Why ``repr``: for the value types a state may contain (None, bool, int, str, bytes, tuples,
NamedTuples, frozen dataclasses, enums) CPython's ``repr`` is deterministic — it never
depends on PYTHONHASHSEED, the process or the machine — and it runs in C. Sets, dicts and
lists are refused by ``check_canonical`` because their order (sets) or mutability (lists)
would break that. A state's key is ``fingerprint128``, xxh3-128 of those bytes (never
Python's salted ``hash()``): wide enough that TLC's collision estimate stays below 1e-6 at
10^9 distinct and 4x10^9 generated states (``collision_probability``). ``fingerprint``,
xxh3-64 of the same bytes, labels states in trace files.

A NamedTuple state whose repr is made of its fields' reprs (``fieldwise``) can be keyed
from memoised field reprs instead (``FieldReprs``, ``fields_key``): the same bytes, so the
same key, at a third of the cost; the explorers use it (``explorers.core.Core.field_keys``).

Packed models (``model.packed``) have integer states below 2**64; their fingerprint is a
bijective 64-bit mix of the integer, so distinct states never collide.
"""
from __future__ import annotations

import dataclasses
import enum
import math
from itertools import compress
from operator import concat, is_not

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


class _Memo(dict):
    """value -> its repr, for the values found at one position of a record state; a
    value missing is encoded on the spot (``__missing__``), so a hit costs one C-level
    look-up. ``inner`` (when given) memoises the elements of a value that is itself a
    tuple printed as the plain tuple of its elements. ``first`` maps the id of each repr
    the memo holds to the value it was made from: the first of the equal values met,
    which a caller may keep in place of an equal one (``shared``). The memo starts over
    once it holds ``limit`` values."""
    __slots__ = ("inner", "first", "limit")

    def __init__(self, inner=None, limit: int | None = None):
        super().__init__()
        self.inner = inner
        self.first: dict = {}
        self.limit = MEMO_LIMIT if limit is None else limit

    def __missing__(self, value):
        if len(self) >= self.limit:
            self.clear()  # a bound on memory; the encoding never depends on the memo
            self.first.clear()  # with the reprs it names: no id outlives its string
        inner = self.inner
        if inner is not None and type(value).__repr__ is _TUPLE_REPR and value:
            out = join_fields(list(map(inner.__getitem__, value)))
        else:
            out = repr(value)
        self[value] = out
        self.first[id(out)] = value
        return out


_TUPLE_REPR = tuple.__repr__
#: entries per position memo before it starts over, unless a ``FieldReprs`` is given its
#: own bound: room for every value of lifecycle-large's busiest field (the messages in
#: flight, 59,874 values), whose reprs a smaller memo makes again and again, and whose
#: states then hold fewer copies of equal values (``shared``)
MEMO_LIMIT = 1 << 16


def fieldwise(cls) -> bool:
    """True for a NamedTuple class whose repr is made of its fields' reprs: the plain
    tuple repr (``__repr__ = tuple.__repr__``) or the one ``namedtuple`` generates
    (``Name(field=..., ...)``)."""
    if cls is tuple or not issubclass(cls, tuple) or not hasattr(cls, "_fields"):
        return False
    r = cls.__repr__
    return r is _TUPLE_REPR or (getattr(r, "__module__", None) == "collections" and
                                getattr(r, "__name__", None) == "__repr__")


def fields_key(cls):
    """``key(pieces) == fingerprint128(s)`` for the states ``s`` of the ``fieldwise``
    class ``cls``, ``pieces`` being the reprs of their fields."""
    if cls.__repr__ is _TUPLE_REPR:
        return key_of_fields
    head = cls.__name__ + "("
    labels = [f + "=" for f in cls._fields]

    def key(pieces):
        return hash128((head + ", ".join(map(concat, labels, pieces)) + ")").encode())
    return key


def join_fields(reprs: list) -> str:
    """The repr of a plain-printing tuple from its elements' reprs."""
    if len(reprs) == 1:
        return "(" + reprs[0] + ",)"
    return "(" + ", ".join(reprs) + ")"


class FieldReprs:
    """The reprs of a record state's fields, memoised per position: the fields of a
    state's successors are mostly the very objects of the state, or values seen before
    (lifecycle-large's 325,289 states: 59,874 distinct values of the messages in flight,
    a few thousand or fewer of every other field). ``key(pieces)`` is ``fingerprint128``
    of the state, bit for bit, at a third of its cost.

    A memo answers by equality, so it relies on what ``fieldwise`` types promise
    already: the type of each position is fixed, and values that compare equal print
    alike there (never ``True`` where ``1`` may occur)."""

    def __init__(self, nfields: int, limit: int | None = None):
        """``limit``: values per position memo (default ``MEMO_LIMIT``)."""
        self.memos = [_Memo(_Memo(None, limit), limit) for _ in range(nfields)]
        self.positions = range(nfields)

    def of(self, state) -> list:
        """The reprs of ``state``'s fields."""
        return list(map(dict.__getitem__, self.memos, state))

    def of_child(self, child, parent, pieces) -> list:
        """The reprs of ``child``'s fields, given its parent's (``pieces``): a field the
        child shares with the parent (the same object) is not looked up. The positions
        that differ are found in C (``compress`` over ``is_not``): a successor changes a
        few of a record's fields, and a loop over all of them costs more than the
        look-ups it saves."""
        out = pieces.copy()
        memos = self.memos
        for i in compress(self.positions, map(is_not, child, parent)):
            out[i] = memos[i][child[i]]
        return out


def shared(cls, memos, positions):
    """``share(child, parent, pieces) -> child``, or a record equal to it whose fields
    that differ from ``parent``'s are the objects the memos met first for those values
    (``pieces``: the child's field reprs, as ``FieldReprs.of_child`` gives them). A
    state the explorer keeps then holds the values it shares with states seen before as
    one object each (docs/architecture.md, "Shared field values", gives what it saves).
    The Spark explorer's tasks do without it (``Core.share_fields``)."""
    firsts = [m.first for m in memos]
    new = tuple.__new__

    def share(child, parent, pieces):
        fields = None
        for i in compress(positions, map(is_not, child, parent)):
            got = firsts[i].get(id(pieces[i]))
            if got is not None and got is not child[i]:
                if fields is None:
                    fields = list(child)
                fields[i] = got
        return child if fields is None else new(cls, fields)
    return share


def key_of_fields(pieces: list) -> int:
    """``fingerprint128`` of a ``fieldwise`` state, from its fields' reprs."""
    if len(pieces) == 1:
        return hash128(("(" + pieces[0] + ",)").encode())
    return hash128(("(" + ", ".join(pieces) + ")").encode())


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
#: the atoms told by their exact type, before any ``isinstance``
_EXACT_ATOMS = frozenset({type(None), bool, int, str})


def check_canonical(value, _path: str = "state", seen: dict | None = None) -> None:
    """Raise NonCanonicalState naming the first offending part of ``value``.

    ``seen``: id -> object of the values found canonical before, which the check skips
    and adds to (``validate_model`` passes one for all the states it samples: a
    successor shares most of its parts with its parent). The dict holds the objects, so
    no other object takes their ids while it lives. The path is built only to name a
    part that fails."""
    bad = _first_bad(value, {} if seen is None else seen)
    if bad is not None:
        steps, why = bad
        raise NonCanonicalState(_path + "".join(
            f"[{x}]" if isinstance(x, int) else f".{x}" for x in reversed(steps)) + why)


def _first_bad(value, seen: dict):
    """None when ``value`` is canonical (each container found so goes into ``seen``);
    else (the indices and field names down to its first offending part, innermost
    first; what is wrong with that part)."""
    if type(value) in _EXACT_ATOMS or id(value) in seen:
        return None
    if isinstance(value, _ATOMS) or isinstance(value, enum.Enum):
        return None
    if isinstance(value, float):
        return ([], " is NaN: NaN != NaN breaks deduplication") if math.isnan(value) else None
    if isinstance(value, tuple):
        for i, v in enumerate(value):
            bad = _first_bad(v, seen)
            if bad is not None:
                bad[0].append(i)
                return bad
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        if not value.__dataclass_params__.frozen:
            return [], (f" is a mutable dataclass {type(value).__name__}: "
                        "declare it @dataclass(frozen=True)")
        for f in dataclasses.fields(value):
            bad = _first_bad(getattr(value, f.name), seen)
            if bad is not None:
                bad[0].append(f.name)
                return bad
    else:
        if isinstance(value, (set, frozenset, dict)):
            hint = "use a sorted tuple (of pairs, for a mapping)"
        elif isinstance(value, list):
            hint = "use a tuple"
        else:
            hint = "use ints, strs, bools, enums, tuples, NamedTuples or frozen dataclasses"
        return [], f" is a {type(value).__name__}, whose encoding is not canonical: {hint}"
    seen[id(value)] = value
    return None


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
