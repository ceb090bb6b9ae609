"""The product's BFS with its levels expanded over numbered states by ``step_tables.py``:
what ``step_tables_bench.py --product`` measures. Not part of the product.

Inside ``installed(run)`` the product's BFS expands its levels over ``run``'s tables.
A level's answer is the field-wise expander's (``kmc.explorers.level``): the same
distinct candidates in the order of their first occurrence, the same first parents,
keys (made from reprs kept per number) and field reprs; coverage and the quiescence and
deadlock checks see the same actions. What changes is the cost: a successor is made of
table look-ups, and candidates are told apart by their numbers (a tuple of ints) before
any key is made, so a level makes one key per distinct candidate where the field-wise
expander makes one per successor. A frontier state carries its numbers with its field
reprs (``Numbered``); a state from elsewhere (an initial state, one numbered by tables
that have since started over) is numbered when it is expanded.

The tables keep every value and answer they met. Past ``run.limit`` entries the
expander starts new ones, between two frontier states: the candidates found so far
are keyed and set apart, and the level drops from later candidates those an earlier
part holds (by key, as every explorer tells states apart), so its answer is the same.
"""
from __future__ import annotations

import contextlib

import numpy as np

import kmc.explorers.bfs as bfs_module
from kmc.explorers.level import TICK, Level, _counter
from kmc.explorers.visited import keys_array


class Numbered(list):
    """A state's field reprs (``Level.pieces``), with its numbers in ``tables``."""
    __slots__ = ("nums", "tables")


class _Reprs(dict):
    """number -> the repr of the value it numbers, in one field's ``vals``."""
    __slots__ = ("vals",)

    def __init__(self, vals: list):
        super().__init__()
        self.vals = vals

    def __missing__(self, x: int) -> str:
        got = self[x] = repr(self.vals[x])
        return got


class Run:
    """The tables of the BFS runs inside ``installed``: ``make()`` makes new ones (at the
    first level, unless ``tables`` is given, and at each start over), ``limit`` is the
    entries past which they start over, ``made`` counts the tables made."""

    def __init__(self, make, tables=None, limit: int = 1 << 20):
        self.make, self.tables, self.limit, self.made = make, tables, limit, 0

    def new(self):
        self.tables = self.make()
        self.made += 1
        return self.tables


def expander(core, coverage, run):
    """``expand(frontier, level_id, tick, pieces=None) -> Level`` over ``run``'s tables."""
    fields = core.field_keys()
    if core.symmetry or core.bounded or core.successors != core.model.successors or \
            fields is None:
        raise ValueError("the tabled expander runs a plain BFS of a cluster model")
    key, count = fields[2], _counter(coverage)
    check_settled, needs_settled = core.check_settled, core.needs_settled
    current: list = []  # [tables, per field its _Reprs]

    def start(tables):
        current[:] = [tables, [_Reprs(v) for v in tables.vals]]

    def part(index, tables, reprs) -> tuple:
        """(keys, parents, states, pieces) of the candidates ``index`` holds."""
        keys, states, pieces = [], [], []
        get, decode = dict.__getitem__, tables.decode
        for nums in index:
            p = Numbered(map(get, reprs, nums))
            p.nums, p.tables = nums, tables
            keys.append(key(p))
            states.append(decode(nums))
            pieces.append(p)
        return keys, list(index.values()), states, pieces

    def expand(frontier, level_id, tick, pieces=None):
        if not current:
            start(run.tables or run.new())
        elif current[0].entries() > run.limit:
            start(run.new())
        tables, reprs = current
        index: dict = {}  # numbered candidate -> its first parent
        first = index.setdefault
        parts = []
        generated = 0
        for pi, s in enumerate(frontier):
            sp = None if pieces is None else pieces[pi]
            if type(sp) is Numbered and sp.tables is tables:
                nums = sp.nums
            else:
                nums = tables.encode(s)
            succ = tables.successors(nums)
            generated += len(succ)
            if needs_settled:
                check_settled(s, succ, (level_id, pi), sp)
            count(succ)
            for _a, t in succ:
                first(t, pi)
            if not pi & TICK and pi:
                if tick(pi):
                    return Level(_EMPTY, _EMPTY_I, [], generated, True)
                if tables.entries() > run.limit:
                    parts.append(part(index, tables, reprs))
                    index = {}
                    first = index.setdefault
                    start(run.new())
                    tables, reprs = current
        parts.append(part(index, tables, reprs))
        keys, parents, states, cpieces = parts[0] if len(parts) == 1 else _joined(parts)
        return Level(keys_array(keys, len(keys), core.key_dtype),
                     np.array(parents, dtype=np.int64), states, generated, False, cpieces)
    return expand


def _joined(parts) -> tuple:
    """The parts' candidates in order, each key once (its first part's)."""
    seen: set = set()
    out: tuple = ([], [], [], [])
    for keys, parents, states, pieces in parts:
        for j, k in enumerate(keys):
            if k not in seen:
                seen.add(k)
                for col, x in zip(out, (k, parents[j], states[j], pieces[j])):
                    col.append(x)
    return out


@contextlib.contextmanager
def installed(run: Run):
    """Inside this block ``kmc.explorers.bfs.bfs`` expands its levels over ``run``'s
    tables."""
    before = bfs_module.level_expander

    def level_expander(core, coverage, known=None):
        return expander(core, coverage, run)
    bfs_module.level_expander = level_expander
    try:
        yield run
    finally:
        bfs_module.level_expander = before


_EMPTY = np.empty(0, dtype=np.uint64)
_EMPTY_I = np.empty(0, dtype=np.int64)
