"""z3 mode: the same declarations as fast mode, decided by z3 (``kmc check --z3``).

    props = z3_properties(model.properties())   # same kinds and names
    ...explore with props...
    z3_stats(props)                              # memo hit rate, solver calls, which were z3's

For a property declared through ``invariants.declare`` (it carries ``formula`` and
``view``), ``check(state)`` computes the view, and z3 decides whether the view's facts
and the negated formula are satisfiable (``invariants.z3encode`` writes the problem):
unsat means the invariant holds. ``explain(state)`` returns z3's model of a violation:
the offending binding, e.g. ``{"r": "c1", "a": 1, "b": 2}``.

Verdicts are memoized per distinct view, in a canonical frozen form restricted to what
the formula can see: the relations it mentions (plus the active domain when a quantifier
is not guarded by a relation). Explored states share few distinct views, so z3 is asked
once per view, not once per state. Other properties pass through unchanged.
"""
from __future__ import annotations

import time

from kmc.invariants.compile import active_domain
from kmc.invariants.logic import Arith, Atom, BoolOp, Cmp, Quant, V
from kmc.invariants.properties import Property
from kmc.invariants.z3encode import Encoding, Z3ModeError, guard_atoms

__all__ = ["Z3Decider", "Z3ModeError", "z3_properties", "z3_stats"]

#: memoized views per property before the memo is emptied (bounds memory on huge runs;
#: each entry holds one frozen view)
MAX_MEMO = 200_000
#: inner quantifiers with at most this many instances on a view are instantiated in the
#: problem text; larger ones are left to z3's quantifier engine (slower, same verdict)
GROUND_LIMIT = 2000


class Z3Decider:
    """Decides one formula on the views of states, with z3, memoized per distinct view."""

    def __init__(self, name: str, formula, view, max_memo: int = MAX_MEMO,
                 session: "Z3Session | None" = None, ground_limit: int = GROUND_LIMIT):
        self.name = name
        self.formula = formula
        self.view = view
        self.max_memo = max_memo
        self.ground_limit = ground_limit
        self.session = session or Z3Session()
        self.encoding = Encoding(formula)  # the whole formula: explain() names every variable
        if self.encoding.domain_dependent:
            self.sliced, self.columns = self.encoding, None
        else:
            sliced, self.columns = slice_formula(formula)
            self.sliced = Encoding(sliced)
        #: view -> memo key (a canonical frozen form of what the formula can see)
        self.key = _freezer(self.encoding, self.columns)
        self.memo: dict = {}
        self.checks = self.hits = self.solver_calls = self.violating_views = 0
        self.evictions = 0
        self.solver_s = 0.0

    # ---- the Property interface ---------------------------------------------------------
    def check(self, state) -> bool:
        """True when the formula holds on the state's view."""
        view = self.view(state)
        key = self.key(view)
        self.checks += 1
        verdict = self.memo.get(key)
        if verdict is not None:
            self.hits += 1
            return verdict
        verdict = self.decide(view)
        if len(self.memo) >= self.max_memo:
            self.memo.clear()
            self.evictions += 1
        self.memo[key] = verdict
        return verdict

    def explain(self, state):
        """z3's model of the violation on this state's view (variable -> value), or None
        when the formula holds. A fresh z3 context, so the model does not depend on what
        was asked before (the same counterexample every run)."""
        return self.explain_view(self.view(state))

    def explain_view(self, view):
        import z3
        q = self.encoding.query(view, self.ground_limit)
        ctx = z3.Context()  # a used context can steer z3 to another model
        s = z3.SimpleSolver(ctx=ctx)
        s.add(z3.parse_smt2_string(q.text, ctx=ctx))
        r = s.check()
        if r == z3.unsat:
            return None
        if r != z3.sat:
            raise self._unknown(s)
        return _binding(q, s.model(), ctx)

    # ---- z3 -----------------------------------------------------------------------------
    def decide(self, view) -> bool:
        """Ask z3, without the memo: is ``not formula`` unsatisfiable on this view?"""
        import z3
        if self.columns is not None:  # the sliced formula, on the sliced view
            view = dict(zip(self.sliced.relations, self.key(view)))
        q = self.sliced.query(view, self.ground_limit)
        s, ctx = self.session.solver(), self.session.context()
        t0 = time.perf_counter()
        s.push()
        try:
            s.add(z3.parse_smt2_string(q.text, ctx=ctx))
            r = s.check()
            if r == z3.unknown:
                raise self._unknown(s)
        finally:
            s.pop()
            self.solver_s += time.perf_counter() - t0
            self.solver_calls += 1
        if r == z3.sat:
            self.violating_views += 1
        return r == z3.unsat

    def _unknown(self, s):
        return Z3ModeError(f"z3 could not decide {self.name} on a view "
                           f"({s.reason_unknown()}): report the formula and the view")

    # ---- figures ------------------------------------------------------------------------
    def stats(self) -> dict:
        return {"checks": self.checks, "memo_hits": self.hits,
                "hit_rate": round(self.hits / self.checks, 4) if self.checks else None,
                "solver_calls": self.solver_calls, "violating_views": self.violating_views,
                "solver_s": round(self.solver_s, 4), "distinct_views": len(self.memo),
                "memo_evictions": self.evictions,
                "view_columns": {r: list(c) for r, c in self.columns.items()}
                if self.columns is not None else None,
                "whole_domain_in_key": self.encoding.domain_dependent}

    # ---- shipping to another process (Spark executors) ----------------------------------
    def __getstate__(self):
        # the memo and figures stay behind; the Z3Session pickles without its z3 objects
        return {"name": self.name, "formula": self.formula, "view": self.view,
                "max_memo": self.max_memo, "session": self.session,
                "ground_limit": self.ground_limit}

    def __setstate__(self, d):
        self.__init__(**d)


def _binding(q, model, ctx) -> dict:
    """z3's model as {variable: view value}; a repeated name gets a #2 suffix."""
    import z3
    out = {}
    for smt, name in q.skolems:
        val = model.get_interp(z3.Int(smt, ctx))
        if val is None:
            continue  # a branch of a disjunction the model did not need
        key, n = name, 1
        while key in out:
            n += 1
            key = f"{name}#{n}"
        out[key] = q.codes.decode(val.as_long())
    return out


class Z3Session:
    """One z3 context and solver shared by the deciders of a run: a context costs
    milliseconds to create, a push/pop scope on a live solver almost nothing. Each view's
    problem is asserted inside its own scope, so nothing leaks from one query to the next."""

    def __init__(self):
        self._ctx = self._solver = None

    def context(self):
        if self._ctx is None:
            import z3
            self._ctx = z3.Context()
        return self._ctx

    def solver(self):
        if self._solver is None:
            import z3
            self._solver = z3.SimpleSolver(ctx=self.context())
        return self._solver

    def __getstate__(self):
        return {}  # z3 objects do not pickle; each process makes its own

    def __setstate__(self, _d):
        self._ctx = self._solver = None


def _freezer(enc: Encoding, columns):
    """view -> hashable key; equal keys have equal verdicts. Only the relations the formula
    mentions, and of those only the columns it reads (``columns``), each as a frozenset
    (a frozenset view value is reused, not copied)."""
    rels = enc.relations
    if columns is None:  # unguarded quantifiers: every value of the view matters
        return lambda view: (tuple(frozenset(view.get(r, ())) for r in rels),
                             frozenset(active_domain(view)))
    parts = []
    for r in rels:
        keep, n = columns[r], enc.arity[r]
        if len(keep) == n:
            parts.append(lambda ts: frozenset(ts))
        elif not keep:
            parts.append(lambda ts, n=n: frozenset([()]) if any(len(t) == n for t in ts)
                         else frozenset())
        else:
            parts.append(lambda ts, n=n, keep=keep: frozenset(
                tuple(t[j] for j in keep) for t in ts if len(t) == n))
    if len(rels) == 1 and len(columns[rels[0]]) == enc.arity[rels[0]]:
        (r,) = rels
        return lambda view: (frozenset(view.get(r, ())),)
    pairs = tuple(zip(rels, parts))
    return lambda view: tuple(part(view.get(r, ())) for r, part in pairs)


def slice_formula(f):
    """(sliced formula, columns kept per relation): a column is dropped when, in every
    atom of its relation, it holds a variable that occurs nowhere else and whose
    quantifier's guard is that atom. Then ``Q xs, y. R(.., y, ..) & G => phi`` is
    ``Q xs. R'(..) & G => phi`` with R' the projection of R: the same verdict on a smaller
    view, which more states share. Only for guarded formulas (see Encoding)."""
    uses: dict = {}  # (quantifier id, variable) -> occurrences
    atoms = []  # (atom, binder of each argument or None, ids of the quantifiers it guards)

    def term(t, scope):
        if isinstance(t, V):
            uses[scope[t.name]] = uses.get(scope[t.name], 0) + 1
        elif isinstance(t, Arith):
            term(t.a, scope)
            term(t.b, scope)

    def walk(g, scope, guards):
        if isinstance(g, Atom):
            for a in g.args:
                term(a, scope)
            atoms.append((g, [scope[a.name] if isinstance(a, V) else None for a in g.args],
                          {q for q, ids in guards.items() if id(g) in ids}))
        elif isinstance(g, Cmp):
            term(g.a, scope)
            term(g.b, scope)
        elif isinstance(g, BoolOp):
            for p in g.parts:
                walk(p, scope, guards)
        elif isinstance(g, Quant):
            inner = {**scope, **{v.name: (id(g), v.name) for v in g.vars}}
            walk(g.body, inner, {**guards, id(g): {id(a) for a in guard_atoms(g)}})

    walk(f, {}, {})
    droppable: dict = {}
    for atom, binders, guarded_by in atoms:
        flags = [b is not None and uses[b] == 1 and b[0] in guarded_by for b in binders]
        old = droppable.get(atom.rel, [True] * len(flags))
        droppable[atom.rel] = [x and y for x, y in zip(old, flags)]
    columns = {r: tuple(j for j, d in enumerate(flags) if not d)
               for r, flags in droppable.items()}
    gone = {b for atom, binders, _ in atoms for j, b in enumerate(binders)
            if j not in columns[atom.rel]}

    def rebuild(g):
        if isinstance(g, Atom):
            return Atom(g.rel, tuple(g.args[j] for j in columns[g.rel]))
        if isinstance(g, BoolOp):
            return BoolOp(g.op, tuple(rebuild(p) for p in g.parts))
        if isinstance(g, Quant):
            return Quant(g.op, tuple(v for v in g.vars if (id(g), v.name) not in gone),
                         rebuild(g.body))
        return g
    return rebuild(f), columns


def z3_properties(props) -> list:
    """The same properties (kind, name, description), with every formula-declared one
    decided by z3; the others (no formula, e.g. packed validation models) unchanged."""
    out, session = [], Z3Session()
    for p in props:
        if hasattr(p, "map_parts"):  # liveness: each state predicate decided by z3
            out.append(p.map_parts(lambda part: z3_properties([part])[0]))
            continue
        if getattr(p, "formula", None) is None or getattr(p, "view", None) is None:
            out.append(p)
            continue
        d = Z3Decider(p.name, p.formula, p.view, session=session)
        out.append(Property(p.kind, p.name, d.check, d.explain, p.description,
                            formula=p.formula, view=p.view, sentence=p.sentence))
    return out


def deciders(props) -> list:
    """The Z3Deciders behind properties built by ``z3_properties``."""
    return [p.check.__self__ for p in props
            if isinstance(getattr(p.check, "__self__", None), Z3Decider)]


def z3_stats(props) -> dict:
    """What z3 mode did: which properties it decided (the rest passed through), the memo
    hit rate over all of them and per property, solver calls and solver time."""
    ds = {d.name: d for d in deciders(props)}
    checks = sum(d.checks for d in ds.values())
    hits = sum(d.hits for d in ds.values())
    return {
        "decided_by_z3": sorted(ds),
        "passed_through": sorted(p.name for p in props if p.name not in ds),
        "checks": checks, "memo_hits": hits,
        "hit_rate": round(hits / checks, 4) if checks else None,
        "solver_calls": sum(d.solver_calls for d in ds.values()),
        "solver_s": round(sum(d.solver_s for d in ds.values()), 4),
        "per_property": {n: d.stats() for n, d in sorted(ds.items())},
    }
