"""Fast mode: a formula compiled once into a Python function over a view.

Quantifiers are *guarded* where the formula allows it: ``forall x. R(x..) => phi`` loops
over the tuples of R (not the whole domain), ``exists x. R(x..) and phi`` likewise. Any
variable no atom binds ranges over the view's active domain, the same domain z3 mode uses.
"""
from __future__ import annotations

import itertools

from kmc.invariants.logic import And, Arith, Atom, BoolOp, C, Cmp, Const, Quant, V

_counter = itertools.count()


class _Gen:
    def __init__(self):
        self.uses_dom = False

    def term(self, t, bound) -> str:
        if isinstance(t, V):
            if t.name not in bound:
                raise ValueError(f"variable {t.name} is not bound by a quantifier")
            return f"v_{t.name}"
        if isinstance(t, C):
            return repr(t.value)
        if isinstance(t, Arith):
            return f"({self.term(t.a, bound)} {t.op} {self.term(t.b, bound)})"
        raise TypeError(f"not a term: {t!r}")

    def formula(self, f, bound) -> str:
        if isinstance(f, Const):
            return repr(f.value)
        if isinstance(f, Cmp):
            return f"({self.term(f.a, bound)} {f.op} {self.term(f.b, bound)})"
        if isinstance(f, Atom):
            args = ", ".join(self.term(a, bound) for a in f.args)
            return f"(({args},) in view.get({f.rel!r}, ()))"
        if isinstance(f, BoolOp):
            parts = [self.formula(p, bound) for p in f.parts]
            if f.op == "not":
                return f"(not {parts[0]})"
            if f.op == "implies":
                return f"(not {parts[0]} or {parts[1]})"
            if not parts:  # an empty conjunction is true, an empty disjunction false
                return "True" if f.op == "and" else "False"
            return "(" + f" {f.op} ".join(parts) + ")"
        if isinstance(f, Quant):
            clauses, guard, body, newly = self.quant(f, bound)
            inner = bound | newly
            g = self.formula(guard, inner) if guard is not None else "True"
            b = self.formula(body, inner)
            if f.op == "forall":
                return f"all((not {g} or {b}) {clauses})"
            return f"any(({g} and {b}) {clauses})"
        raise TypeError(f"not a formula: {f!r}")

    def quant(self, f, bound):
        """For-clauses binding f's variables: atoms of the guard first, then the domain.
        Returns (clauses, remaining guard, body, names bound)."""
        body = f.body
        if f.op == "forall" and isinstance(body, BoolOp) and body.op == "implies":
            guard, conclusion = body.parts
        elif f.op == "exists":
            guard, conclusion = body, Const(True)
        else:
            guard, conclusion = None, body
        conj = _conjuncts(guard) if guard is not None else []
        want = {v.name for v in f.vars}
        # the quantifier's variables are fresh here, even if an outer scope bound the name
        have = set(bound) - want
        clauses, used = [], []
        progress = True
        while progress:  # bind through atoms whose other arguments are already bound
            progress = False
            for atom in conj:
                if any(atom is u for u in used) or not isinstance(atom, Atom) or \
                        not (want - have) & _vars(atom):
                    continue
                binds = {a.name for a in atom.args if isinstance(a, V) and a.name in want
                         and a.name not in have}
                needs = set().union(*(_term_vars(a) for a in atom.args
                                      if not (isinstance(a, V) and a.name in binds)))
                if not needs <= have | binds:
                    continue
                clauses.append(self._atom_clause(atom, want, have))
                used.append(atom)
                progress = True
        for v in f.vars:
            if v.name not in have:
                self.uses_dom = True
                clauses.append(f"for v_{v.name} in _dom")
                have.add(v.name)
        rest = [c for c in conj if not any(c is u for u in used)]
        g = (And(*rest) if len(rest) > 1 else rest[0]) if rest else None
        return " ".join(clauses), g, conclusion, {v.name for v in f.vars}

    def _atom_clause(self, atom, want, have) -> str:
        """``for (...) in view[R] if ...``: binds the atom's new variables (adding them to
        ``have``) and checks its other arguments against what is bound."""
        names, checks = [], []
        for a in atom.args:
            if isinstance(a, V) and a.name in want and a.name not in have:
                names.append(f"v_{a.name}")
                have.add(a.name)
            else:
                tmp = f"_t{next(_counter)}"
                names.append(tmp)
                checks.append((tmp, a))
        clause = f"for ({', '.join(names)},) in view.get({atom.rel!r}, ())"
        for tmp, a in checks:
            clause += f" if {tmp} == {self.term(a, have)}"
        return clause


def _term_vars(t) -> set:
    if isinstance(t, V):
        return {t.name}
    if isinstance(t, Arith):
        return _term_vars(t.a) | _term_vars(t.b)
    return set()


def _conjuncts(f):
    if isinstance(f, BoolOp) and f.op == "and":
        return [c for p in f.parts for c in _conjuncts(p)]
    return [f]


def _vars(f) -> set:
    if isinstance(f, Atom):
        return {a.name for a in f.args if isinstance(a, V)}
    return set()


def active_domain(view) -> set:
    return {x for tuples in view.values() for t in tuples for x in t}


def compile_python(f):
    """``fn(view) -> bool`` deciding ``f`` on a view."""
    g = _Gen()
    expr = g.formula(f, frozenset())
    pre = "_dom = _active(view)\n    " if g.uses_dom else ""
    src = f"def decide(view):\n    {pre}return {expr}\n"
    ns = {"_active": active_domain}
    exec(compile(src, f"<formula {f!r:.60}>", "exec"), ns)  # noqa: S102
    fn = ns["decide"]
    fn.source = src
    fn.uses_domain = g.uses_dom
    return fn


def compile_counterexample(f):
    """``fn(view) -> dict | None``: for a top-level ∀, the first binding that falsifies the
    body (the offending tuple), else None."""
    if not isinstance(f, Quant) or f.op != "forall":
        return lambda view: None
    g = _Gen()
    clauses, guard, body, names = g.quant(f, frozenset())
    gs = g.formula(guard, names) if guard is not None else "True"
    bs = g.formula(body, names)
    binding = "{" + ", ".join(f"{v.name!r}: v_{v.name}" for v in f.vars) + "}"
    pre = "_dom = _active(view)\n    " if g.uses_dom else ""
    src = (f"def find(view):\n    {pre}return next(({binding} {clauses} "
           f"if {gs} and not {bs}), None)\n")
    ns = {"_active": active_domain}
    exec(compile(src, "<counterexample>", "exec"), ns)  # noqa: S102
    return ns["find"]
