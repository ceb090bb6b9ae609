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

from operator import itemgetter

from kmc.invariants.fieldview import field_positions, getter, keep, positions

#: entries per group's memo before it starts over
MEMO_LIMIT = 1 << 13


#: calls with field reprs after which the groups that rarely miss are merged
WARMUP = 4096
#: a group that missed its memo on fewer than this share of the warm-up calls is steady
STEADY = 0.5
#: a group that missed on more than this share of the warm-up calls is volatile
VOLATILE = 0.85
#: entries of the merged groups' memo before it starts over
MERGED_LIMIT = 1 << 16


class Checker:
    def __init__(self, props):
        self.props = list(props)
        self._plan = None
        self._merger = None  # the plan's _Merger (process-wide)
        self._merged = None  # ``_Merger.merged``: how the groups are looked up, once decided

    def __getstate__(self):  # the plan holds memos: rebuilt where the checker lands
        return {"props": self.props, "_plan": None, "_merger": None, "_merged": None}

    def false_at(self, state, pieces=None) -> list:
        """Indices (into ``props``, ascending) of the properties false in ``state``.
        ``pieces``: the reprs of the state's fields, when the caller has them
        (``model.encoding.FieldReprs``): the verdicts are then looked up by them, whose
        hashes strings keep, instead of by the fields' values, hashed anew each time."""
        plan = self._plan
        if plan is None:
            plan = self._plan = _plan(self.props, state)
            self._merger = _merger(plan[0])
        groups, by_view, singles = plan
        out = []
        if pieces is not None:
            merged = self._merged
            if merged is None:
                merger = self._merger
                if merger.steady is None:
                    merger.warm(groups, pieces)
                if merger.steady or merger.volatile:
                    merged = self._merged = merger.merged(groups, state)
            if merged is not None:
                get, memo, steady, volatile, groups, probe = merged
                if steady:
                    key = get(pieces)
                    bad = memo.get(key)
                    if bad is None:
                        bad = keep(memo, key, tuple(_group_bad(steady, state, pieces)),
                                   MERGED_LIMIT)
                        if probe:
                            self._probe(1)
                    elif probe:
                        self._probe(0)
                    out.extend(bad)
                for rget, each in volatile:
                    every = rget(state, pieces)
                    for take, names, rmemo, members in each:
                        rels = take(every)
                        bad = rmemo.get(rels)  # the hot path: mostly a hit
                        if bad is None:
                            bad = _by_relations(rels, names, rmemo, members)
                        out.extend(bad)
        for get, pget, memos, rget, names, rmemo, members, _at, _view in groups:
            if pieces is None or pget is None:
                memo, key = memos[0], get(state)
            else:  # memoised apart: a field's value and another's repr may be equal
                memo, key = memos[1], pget(pieces)
            bad = memo.get(key)
            if bad is None:
                bad = keep(memo, key, _by_relations(rget(state, pieces), names, rmemo,
                                                    members), MEMO_LIMIT)
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

    def _probe(self, missed: int) -> None:
        """The merged memo on trial (``_Merger.trial``); once decided, this checker
        takes the decision at its next call."""
        merger = self._merger
        if merger.on_trial:
            merger.trial(missed)
        if not merger.on_trial:
            self._merged = None

    def true_at(self, state, pieces=None) -> list:
        """Indices of the properties true in ``state``."""
        bad = set(self.false_at(state, pieces))
        return [i for i in range(len(self.props)) if i not in bad]


class _Merger:
    """How the groups of a plan are looked up, decided once per process for the groups
    that share memos (a Spark executor's checker, unpickled for each task, finds it
    decided): each group's memo misses are counted over the first ``WARMUP`` calls with
    field reprs. Then the steady groups (missing on fewer than ``STEADY`` of them: their
    fields change seldom) are looked up by the reprs of all their fields, in one memo
    whose entry is every failing property of theirs; the volatile ones (missing on more
    than ``VOLATILE``: they read a field that changes on most steps, the messages in
    flight) skip their memo by fields and go to their relations at once, computed for
    all of them by one call per view. The merged memo is then on trial for another
    ``WARMUP`` calls: when it misses so often that it costs more look-ups than it
    saves (the steady fields together take nearly as many values as there are states),
    the steady groups go back to their own memos. Same answers: an entry is what the
    groups give for those fields."""
    __slots__ = ("memos", "misses", "calls", "steady", "volatile", "memo", "on_trial",
                 "tried", "tried_misses")

    def __init__(self, memos):
        self.memos = memos  # the groups' memos by reprs: held, so their ids stay theirs
        self.misses = [0] * len(memos)
        self.calls = 0
        self.steady = None  # indices of the steady groups once decided (() for none)
        self.volatile = ()  # indices of the volatile groups
        self.memo: dict = {}
        self.on_trial = True  # the merged memo's trial is not over
        self.tried = self.tried_misses = 0

    def trial(self, missed: int) -> None:
        self.tried += 1
        self.tried_misses += missed
        if self.tried >= WARMUP:
            self.on_trial = False
            n = len(self.steady)
            # a hit saves n look-ups, a miss costs one and a store more than before
            if self.tried_misses * (n + 1) > (n - 1) * WARMUP:
                self.steady = ()
                self.memo.clear()

    def warm(self, groups, pieces) -> None:
        misses = self.misses
        for j, g in enumerate(groups):
            if g[1] is None or g[2][1].get(g[1](pieces)) is None:
                misses[j] += 1
        self.calls += 1
        if self.calls >= WARMUP:
            steady = tuple(j for j, g in enumerate(groups)
                           if g[1] is not None and misses[j] < STEADY * WARMUP)
            self.volatile = tuple(j for j, g in enumerate(groups)
                                  if g[1] is not None and misses[j] > VOLATILE * WARMUP)
            self.steady = steady if len(steady) > 1 else ()

    def merged(self, groups, state) -> tuple:
        """(get, memo, steady groups, volatile groups, the others, whether the merged
        memo is on trial) for a checker whose plan has ``groups`` (the groups this
        merger was made for, with the same memos).
        The volatile groups of one view have their relations computed by one call
        (``FieldView.getter_of`` of all their names): ``(get, [(take, names, rmemo,
        members)])``, ``take`` picking a group's relations from all of them."""
        steady = [groups[j] for j in self.steady]
        by_view: dict = {}
        for j in self.volatile:
            by_view.setdefault(id(groups[j][8]), []).append(groups[j])
        volatile = []
        for gs in by_view.values():
            every = tuple(sorted({n for g in gs for n in g[4]}))
            at = {n: k for k, n in enumerate(every)}
            volatile.append((gs[0][8].getter_of(every, state),
                             [(_picker([at[n] for n in g[4]]), g[4], g[5], g[6])
                              for g in gs]))
        rest = [g for j, g in enumerate(groups)
                if j not in self.steady and j not in self.volatile]
        positions = sorted({i for g in steady for i in g[7]})
        # no steady group: the getter is never called
        return (_picker(positions or [0]), self.memo, steady, volatile, rest,
                self.on_trial and bool(steady))


def _picker(positions):
    """``take(values) -> tuple of values at positions`` (a tuple even for one)."""
    if len(positions) == 1:
        return lambda values, i=positions[0]: (values[i],)
    return itemgetter(*positions)


#: the groups' memos by reprs (their ids) -> their _Merger; at most ``MERGERS`` kept (a
#: mutation run's worker builds its views anew for many mutants)
_MERGERS: dict = {}
MERGERS = 8


def _merger(groups) -> _Merger:
    memos = tuple(g[2][1] for g in groups)
    key = tuple(map(id, memos))
    got = _MERGERS.get(key)
    if got is None or any(a is not b for a, b in zip(got.memos, memos)):
        if len(_MERGERS) >= MERGERS:
            _MERGERS.clear()
        got = _MERGERS[key] = _Merger(memos)
    return got


def _group_bad(groups, state, pieces):
    """The failing properties of ``groups`` in ``state`` (its field reprs ``pieces``), as
    ``false_at`` finds them, each group through its own memos."""
    for get, pget, memos, rget, names, rmemo, members, _at, _view in groups:
        key = pget(pieces)
        bad = memos[1].get(key)
        if bad is None:
            bad = keep(memos[1], key, _by_relations(rget(state, pieces), names, rmemo,
                                                    members), MEMO_LIMIT)
        yield from bad


def _by_relations(rels, names, rmemo, members) -> tuple:
    """The failing properties (``members``: (index, compiled check)) given the values
    ``rels`` of the relations ``names`` they read, memoised by those values."""
    bad = rmemo.get(rels)
    if bad is None:
        v = dict(zip(names, rels))
        bad = keep(rmemo, rels, tuple(i for i, fast in members if not fast(v)), MEMO_LIMIT)
    return bad


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
                     [(i, fast) for i, fast, _n in members], positions(fields, state),
                     view))
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
