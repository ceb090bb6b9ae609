"""Checking a list of properties on a state at once: ``Checker(props).false_at(state)``.

Properties declared as formulas over a view (``invariants.declare``) share that view:
it is computed once per state for all of them, not once per property. When the view
names the fields each relation reads (``invariants.fieldview.FieldView.sources``) and
gives a group of them on its own (``getter_of``), a
property's verdict is a function of the values of the fields its relations read, and
is memoised by them: the properties reading the same fields form one group with one
memo, whose entry is the tuple of the group's properties that fail. A state of the
Kafka models shares most fields with states checked before, so most checks are one
look-up per group. The memo is keyed by the fields' reprs when the caller has them
(the BFS expander's ``Level.pieces``: strings keep their hashes, where a field's value
is hashed anew at each look-up), else by their values. On a miss the group's relations
are computed from the view's parts that give them alone (``FieldView.getter_of``), and
the verdicts are memoised by the relations' values as well: a group whose fields change
on most steps (the messages in flight) mostly finds its relations seen before.

A formula that quantifies over the view's active domain (a variable no relation binds)
reads every relation, and so does a view without ``sources``: such properties are
evaluated on each state's view. Any other property (z3 mode's, a hand-written check) is
called as it is. Every answer equals ``p.check(state)``.
"""
from __future__ import annotations

from kmc.invariants.fieldview import field_positions, getter, keep

#: entries per group's memo before it starts over
MEMO_LIMIT = 1 << 13


class Checker:
    def __init__(self, props):
        self.props = list(props)
        self._plan = None

    def __getstate__(self):  # the plan holds memos: rebuilt where the checker lands
        return {"props": self.props, "_plan": None}

    def false_at(self, state, pieces=None) -> list:
        """Indices (into ``props``, ascending) of the properties false in ``state``.
        ``pieces``: the reprs of the state's fields, when the caller has them
        (``model.encoding.FieldReprs``): the verdicts are then looked up by them, whose
        hashes strings keep, instead of by the fields' values, hashed anew each time."""
        plan = self._plan
        if plan is None:
            plan = self._plan = _plan(self.props, state)
        groups, by_view, singles = plan
        out = []
        for get, pget, memos, rget, names, rmemo, members in groups:
            if pieces is None or pget is None:
                memo, key = memos[0], get(state)
            else:  # memoised apart: a field's value and another's repr may be equal
                memo, key = memos[1], pget(pieces)
            bad = memo.get(key)
            if bad is None:
                rels = rget(state, pieces)
                bad = rmemo.get(rels)
                if bad is None:
                    v = dict(zip(names, rels))
                    bad = keep(rmemo, rels, tuple(i for i, fast in members if not fast(v)),
                               MEMO_LIMIT)
                keep(memo, key, bad, MEMO_LIMIT)
            if bad:
                out.extend(bad)
        for view, members in by_view:
            v = view(state)
            out.extend(i for i, fast in members if not fast(v))
        if singles:
            out.extend(i for i, p in singles if not p.check(state))
        if len(out) > 1:
            out.sort()
        return out

    def true_at(self, state, pieces=None) -> list:
        """Indices of the properties true in ``state``."""
        bad = set(self.false_at(state, pieces))
        return [i for i in range(len(self.props)) if i not in bad]


def _plan(props, state):
    sources: dict = {}  # id(view) -> relation -> fields, or None
    groups: dict = {}
    by_view: dict = {}
    singles = []
    for i, p in enumerate(props):
        d = getattr(p.check, "declared", None)
        if d is None:
            singles.append((i, p))
            continue
        fast, view, relations, uses_domain = d
        if id(view) not in sources:  # a view that names its fields gives their relations
            src = getattr(view, "sources", None)
            sources[id(view)] = src(state) if callable(src) and \
                hasattr(view, "getter_of") else None
        src = sources[id(view)]
        if src is None or uses_domain or not relations or \
                not all(r in src for r in relations):
            by_view.setdefault(id(view), (view, []))[1].append((i, fast))
            continue
        fields = tuple(sorted({f for r in relations for f in src[r]}))
        group = groups.setdefault((id(view), fields), (view, fields, set(), []))
        group[2].update(relations)
        group[3].append((i, fast, (p.name, repr(p.formula))))
    plan = []
    for view, fields, relations, members in groups.values():
        names = tuple(sorted(relations))
        memo, pmemo, rmemo = _memo(view, fields, members)
        plan.append((getter(fields), field_positions(fields, state), (memo, pmemo),
                     view.getter_of(names, state), names, rmemo,
                     [(i, fast) for i, fast, _n in members]))
    return plan, list(by_view.values()), singles


#: (id of a view, fields, the group's properties by index, name and formula) -> (view,
#: memo by the fields' values, memo by their reprs, memo by the relations' values):
#: a checker unpickled again (a Spark executor gets the core anew for each level) finds
#: its memos warm; the view is kept with its memo, so an id is never reused meanwhile
_MEMOS: dict = {}


def _memo(view, fields, members) -> tuple:
    # the memo's entries are indices into one checker's properties: the key holds them
    key = (id(view), fields, tuple((m[0], m[2]) for m in members))
    got = _MEMOS.get(key)
    if got is None or got[0] is not view:
        got = _MEMOS[key] = (view, {}, {}, {})
    return got[1], got[2], got[3]
