"""Expanding one BFS level: shared by the local BFS and the Spark explorer.

Returns the level's distinct successor *candidates* (keys, parent indices, states); the
caller drops those already visited. Two strategies, same answers:
- packed models (integer states, no quiescent/deadlock checks, no boundary): the
  generated ``make_successor_states`` counts coverage itself and returns bare states; the
  loop does one C-level ``extend`` per state, and dedup + first-parent recovery happen in
  numpy (stable ``unique`` -> first occurrence -> ``searchsorted`` over the cumulative
  successor counts). 30% faster than a per-successor dict on TwoPhase rm=8.
- record states (``model.encoding.fieldwise``, the Kafka models): every successor is
  keyed as it is generated, its fingerprint made from memoised field reprs and from the
  reprs of the fields it shares with its parent (``Core.field_keys``), and a dict keyed by
  fingerprint keeps each candidate's first parent;
- any other model: every successor is fingerprinted and a dict keyed by fingerprint keeps
  each candidate's first parent (states are told apart by key, as the visited set and
  every explorer tell them apart).
Both keep a candidate's first parent in frontier order; the engines hand in frontiers in
ascending order-key order (``Core.order_key``), so that is the parent with the smallest key.
"""
from __future__ import annotations

try:  # Counter.update's C helper (CPython)
    from collections import _count_elements
except ImportError:  # pragma: no cover - another interpreter: the same counts in Python
    def _count_elements(mapping, iterable):
        for x in iterable:
            mapping[x] = mapping.get(x, 0) + 1
from itertools import compress
from operator import is_not, itemgetter
from typing import NamedTuple, Optional

import numpy as np

from kmc.explorers.visited import keys_array
from kmc.model.encoding import fingerprint128, shared


class Level(NamedTuple):
    keys: np.ndarray        # uint64 distinct candidate keys
    parents: np.ndarray     # int64 index of each candidate's parent in the frontier
    states: Optional[list]  # candidate states aligned with keys; None: the keys are states
    generated: int
    aborted: bool
    #: the reprs of each candidate's fields (``model.encoding.FieldReprs``), aligned with
    #: ``states``, when the expander keyed them field-wise; None otherwise
    pieces: Optional[list] = None


def level_expander(core, coverage, known=None):
    """``expand(frontier, level_id, tick, pieces=None) -> Level``. ``tick(i)`` is called
    every ``TICK + 1`` frontier states (a packed model's: every 1024, each takes about a
    microsecond) and aborts the level when it returns True (time limits, progress).
    ``pieces``: the frontier's ``Level.pieces``, if the caller kept them (the field-wise
    expander then does not look its states' fields up again). ``known``: the model's
    ``known_keys`` (id of a state object -> its ``fingerprint128``), for a caller whose
    successors are the very objects the model handed out, in this process."""
    m = core.model
    fast = core.packed and not core.needs_settled and not core.bounded and \
        not core.check_symmetry and \
        m.make_successor_states is not None and isinstance(coverage, list)
    if fast:
        return _packed(core, m.make_successor_states(coverage))
    return _generic(core, coverage, known)


def _packed(core, succ_states):
    rep = core.model.representative if core.symmetry else None

    def expand(frontier, level_id, tick, pieces=None):
        flat: list = []
        ext = flat.extend
        counts: list = []
        count = counts.append
        for i, s in enumerate(frontier):
            ss = succ_states(s)
            ext(ss if rep is None else map(rep, ss))
            count(len(ss))
            if not i & 1023 and i and tick(i):
                return Level(_EMPTY, _EMPTY_I, None, len(flat), True)
        keys = np.array(flat, dtype=np.uint64)
        uniq, first = np.unique(keys, return_index=True)  # stable: first occurrence
        parents = np.searchsorted(np.cumsum(np.array(counts, dtype=np.int64)), first,
                                  side="right")
        return Level(uniq, parents, None, len(flat), False)
    return expand


def _generic(core, coverage, known=None):
    fields = core.field_keys()
    if fields is not None:
        known = known.get if known and core.rkey is fingerprint128 else None
        return _by_fields(core, coverage, *fields, known)
    successors, rkey = core.successors, core.rkey
    check_settled, needs_settled = core.check_settled, core.needs_settled
    count = _counter(coverage)

    def expand(frontier, level_id, tick, pieces=None):
        index: dict = {}  # key -> first parent (frontier order)
        cand: list = []
        add = cand.append
        generated = 0
        for pi, s in enumerate(frontier):
            succ = successors(s)
            generated += len(succ)
            if needs_settled:
                check_settled(s, succ, (level_id, pi))
            count(succ)
            for _a, t in succ:
                # told apart by key, as the visited set and every other explorer tell
                # states apart: two equal states that print apart are two states
                hash(t)  # a state that is no value (a list in it) is named, as in dfs
                k = rkey(t)
                if k not in index:
                    index[k] = pi
                    add(t)
            if not pi & TICK and pi and tick(pi):
                return Level(_EMPTY, _EMPTY_I, [], generated, True)
        keys = keys_array(list(index), len(cand), core.key_dtype)
        parents = np.fromiter(index.values(), dtype=np.int64, count=len(cand))
        return Level(keys, parents, cand, generated, False)
    return expand


def _by_fields(core, coverage, cls, reprs, key, known=None):
    """The generic expander for record states (``Core.field_keys``): every successor is
    keyed as it is generated, from its parent's field reprs and the memoised reprs of the
    fields it changed, and candidates are told apart by key (an int) instead of by
    hashing and comparing whole states. Same candidates, keys and first parents.
    Each candidate's field reprs come with it (``Level.pieces``): the caller hands them to
    the property checks and back with the next frontier. ``known`` (id of a successor
    object -> its key, or None): such a successor's key is taken as it is and its reprs
    are left out (None in ``Level.pieces``); a state without reprs then has its own
    looked up only when one of its successors' keys is not known."""
    successors, rkey = core.successors, core.rkey
    check_settled, needs_settled = core.check_settled, core.needs_settled
    of, of_child = reprs.of, reprs.of_child
    # ``of_child`` inlined on the hot path (a frontier state with reprs, a successor of
    # the record type, no known keys): one Python call less per successor
    memos, positions = reprs.memos, reprs.positions
    share = shared(cls, memos, positions) if core.share_fields else None
    count = _counter(coverage)

    def expand(frontier, level_id, tick, pieces=None):
        index: dict = {}
        cand: list = []
        cand_pieces: list = []
        add, add_pieces = cand.append, cand_pieces.append
        generated = 0
        for pi, s in enumerate(frontier):
            succ = successors(s)
            generated += len(succ)
            sp = None if pieces is None else pieces[pi]
            if sp is None and known is None and type(s) is cls:
                sp = of(s)
            if needs_settled:
                check_settled(s, succ, (level_id, pi), sp)
            count(succ)
            for _a, t in succ:
                if known is None and sp is not None and type(t) is cls:
                    tp = sp.copy()  # a field the successor shares with its parent is kept
                    for i in compress(positions, map(is_not, t, s)):
                        tp[i] = memos[i][t[i]]
                    k = key(tp)
                    if k not in index:  # kept: its new fields as the memos' objects
                        index[k] = pi
                        add(t if share is None else share(t, s, tp))
                        add_pieces(tp)
                    continue
                k = None if known is None else known(id(t))
                if k is not None:
                    tp = None
                elif type(t) is not cls:
                    k, tp = rkey(t), None
                else:
                    if sp is None and type(s) is cls:  # with known keys: when needed
                        sp = of(s)
                    tp = of(t) if sp is None else of_child(t, s, sp)
                    k = key(tp)
                if k not in index:
                    index[k] = pi
                    add(t)
                    add_pieces(tp)
            if not pi & TICK and pi and tick(pi):
                return Level(_EMPTY, _EMPTY_I, [], generated, True)
        keys = keys_array(list(index), len(cand), core.key_dtype)
        parents = np.fromiter(index.values(), dtype=np.int64, count=len(cand))
        return Level(keys, parents, cand, generated, False, cand_pieces)
    return expand


def _counter(coverage):
    """``count(succ)``: one more fire of each action of the (action, state) pairs
    ``succ`` in ``coverage``; a dict of counts is updated with the C helper
    ``Counter.update`` uses (each action hashed once), a list (a packed model's
    coverage, indexed by action) item by item."""
    if isinstance(coverage, dict):
        return lambda succ: _count_elements(coverage, map(_action, succ))

    def count(succ):
        for a, _t in succ:
            coverage[a] += 1
    return count


#: record states are ticked every ``TICK + 1`` frontier states: a time limit holds within
#: a fraction of a second even when a model's step takes tens of milliseconds, and a tick
#: (a clock read) costs nothing beside 16 expansions
TICK = 15
#: a successor pair's action
_action = itemgetter(0)
_EMPTY = np.empty(0, dtype=np.uint64)
_EMPTY_I = np.empty(0, dtype=np.int64)


def keyer(core):
    """``keyed(t, s=None, sp=None) -> (key, reprs or None)``, for explorers that key one
    state at a time (DFS, simulation): the key of state ``t`` (``Core.rkey``), a successor
    of ``s`` whose field reprs are ``sp``, or an initial state, with the reprs of its own
    fields when the run's keys are made from them (``Core.field_keys``). A successor's
    key then costs the memoised reprs of the fields it changed, not a print of the whole
    state, and its reprs serve its property checks (``Core.check_new``)."""
    rkey = core.rkey
    fields = core.field_keys()
    if fields is None:
        return lambda t, s=None, sp=None: (rkey(t), None)
    cls, reprs, key = fields
    of, of_child = reprs.of, reprs.of_child

    def keyed(t, s=None, sp=None):
        if type(t) is not cls:
            return rkey(t), None
        tp = of_child(t, s, sp) if sp is not None and type(s) is cls else of(t)
        return key(tp), tp
    return keyed
