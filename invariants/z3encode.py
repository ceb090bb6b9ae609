"""A formula and a view, encoded as one SMT-LIB problem that z3 decides.

The problem is "the view's facts and the *negated* formula": unsat means the formula holds
on the view, sat means it is violated and z3's model names the offending binding.
Semantics are fast mode's (``invariants.compile``):
- values are integers: ints and bools are themselves (Python's ``True == 1``); any other
  value (str, None, enum member, tuple) gets a code above every integer an arithmetic term
  of the formula can reach on this view, so a code never equals an integer result; codes
  follow Python's order within a type, so ``<`` on two strings agrees with Python (``<``
  across types is a TypeError in fast mode, and unspecified here);
- a relation is exactly the view's tuples (closed world): an atom whose arguments are not
  all known becomes the disjunction of the tuples that agree with the known ones;
- quantified variables range over the view's active domain, as in fast mode;
- the negation is pushed inward; an existential quantifier no universal one encloses
  becomes free constants (exact: each keeps its domain guard in place), so the model of a
  violated ``forall x, y. ...`` is the offending ``x, y``; inner quantifiers are
  instantiated over the tuples of their guard atoms, or over the domain (as fast mode's
  loops do), up to a limit beyond which z3's own quantifier engine takes them.

The text is built in Python and parsed by z3's C parser: far cheaper than building terms
one Python call at a time. Measured: ``define-fun`` relations made parsing ~5x slower
than writing their extension inline.
"""
from __future__ import annotations

import numbers
from typing import NamedTuple

from kmc.invariants.compile import active_domain
from kmc.invariants.logic import Arith, Atom, BoolOp, C, Cmp, Const, Quant, V


class Z3ModeError(ValueError):
    """A formula or view z3 mode cannot encode; the message says why and the fix."""


_CMP = {"==": "=", "<": "<", "<=": "<="}


class Encoding:
    """One formula, analysed once: its relations and arities, its constants, whether its
    truth depends on the whole active domain, and the arithmetic bound for value codes."""

    def __init__(self, formula):
        self.formula = formula
        self.arity: dict[str, int] = {}
        self.constants: list = []
        self._terms: list[tuple[int, int]] = []  # (variable count, |constants| sum) per term
        self._scan(formula, frozenset())
        self.relations = tuple(sorted(self.arity))
        #: True when some quantified variable is not bound by a positive guard atom, so the
        #: verdict depends on values of relations the formula does not mention
        self.domain_dependent = not _guarded(formula)

    # ---- analysis -----------------------------------------------------------------------
    def _scan(self, f, scope):
        if isinstance(f, Atom):
            n = len(f.args)  # 0 only in a sliced formula: "the relation is not empty"
            if self.arity.setdefault(f.rel, n) != n:
                raise Z3ModeError(f"relation {f.rel} is used with {self.arity[f.rel]} and "
                                  f"{n} arguments: use one arity")
            for a in f.args:
                self._scan_term(a, scope, top=True)
        elif isinstance(f, Cmp):
            if f.op not in ("==", "!=", "<", "<="):
                raise Z3ModeError(f"comparison {f.op!r} is unknown: use == != < <= > >=")
            self._scan_term(f.a, scope, top=True)
            self._scan_term(f.b, scope, top=True)
        elif isinstance(f, BoolOp):
            for p in f.parts:
                self._scan(p, scope)
        elif isinstance(f, Quant):
            names = [v.name for v in f.vars]
            for n in names:
                if n in scope or names.count(n) > 1:
                    raise Z3ModeError(f"variable {n} is quantified again inside its own scope:"
                                      " rename the inner one (fast mode would not rebind it)")
            self._scan(f.body, scope | set(names))
        elif not isinstance(f, Const):
            raise Z3ModeError(f"not a formula: {f!r}")

    def _scan_term(self, t, scope, top=False):
        if isinstance(t, V):
            if t.name not in scope:
                raise Z3ModeError(f"variable {t.name} is not bound by a quantifier")
            counts = (1, 0)
        elif isinstance(t, C):
            self.constants.append(t.value)
            counts = (0, abs(int(t.value))) if _is_int(t.value) else (0, 0)
        elif isinstance(t, Arith):
            if t.op not in ("+", "-"):
                raise Z3ModeError(f"arithmetic {t.op!r} is unknown: use + or -")
            a, b = self._scan_term(t.a, scope), self._scan_term(t.b, scope)
            counts = (a[0] + b[0], a[1] + b[1])
        else:
            raise Z3ModeError(f"not a term: {t!r}")
        if top:
            self._terms.append(counts)
        return counts

    # ---- one query ----------------------------------------------------------------------
    def query(self, view, ground_limit: int = 2000) -> "Query":
        """The SMT-LIB problem deciding this formula on ``view`` (relation -> tuples).

        Inner quantifiers (those that do not become constants) are instantiated over the
        view's tuples or domain when that takes at most ``ground_limit`` instances, and are
        left to z3's quantifier engine otherwise."""
        if not self.domain_dependent:  # the other relations cannot matter: leave them out
            view = {r: view.get(r, ()) for r in self.relations}
        dom = active_domain(view)
        codes = Codes(dom, self.constants, self._terms)
        facts = {r: [tuple(codes.of(v) for v in t) for t in view.get(r, ())
                     if len(t) == self.arity[r]]  # another arity can never match an atom
                 for r in self.relations}
        w = _Writer(codes, facts, sorted({codes.of(v) for v in dom}), ground_limit)
        goal = w.formula(self.formula, False, {}, True)
        decls = "".join(f"(declare-const {s} Int)" for s, _name in w.skolems)
        return Query(f"{decls}(assert {goal})", w.skolems, codes)


class Query(NamedTuple):
    """An SMT-LIB text, its free constants (smt name, variable name), the value codes."""
    text: str
    skolems: list
    codes: "Codes"


class Codes:
    """Values <-> integers for one query (see the module docstring)."""

    def __init__(self, dom, constants, terms):
        ints, others = [], {}
        for v in list(dom) + list(constants):
            if _is_int(v):
                ints.append(abs(int(v)))
            else:
                others.setdefault(v, None)  # dedup by Python equality, as the view does
        m = max(ints, default=0)
        reach = max((n * m + c for n, c in terms), default=0)
        base = max(m, reach) + 1
        self.code = {v: base + i for i, v in enumerate(_ordered(others))}
        self.back = {c: v for v, c in self.code.items()}
        for v in dom:
            if _is_int(v):
                self.back.setdefault(int(v), v)

    def of(self, v) -> int:
        return int(v) if _is_int(v) else self.code[v]

    def decode(self, c: int):
        return self.back.get(c, c)


class _Writer:
    """The negation normal form of a formula, as SMT-LIB text, with outer existentials
    turned into free constants (``skolems``) and inner quantifiers instantiated.

    A scope maps a variable to its value: an int (a value code: the variable was
    instantiated) or a str (the SMT name of a constant or of a z3-bound variable). Parts
    whose values are all known are decided while writing, with the same integer
    semantics z3 would apply, so the text stays small."""

    def __init__(self, codes, facts, dom, ground_limit):
        self.codes, self.facts, self.dom = codes, facts, dom
        self.fact_sets = {r: set(ts) for r, ts in facts.items()}
        self.limit = ground_limit
        self.skolems: list[tuple[str, str]] = []
        self.n = 0
        self.assumed: frozenset = frozenset()  # ids of atoms an instance makes true

    def formula(self, f, pos, scope, outer) -> str:
        """Text equivalent to ``f`` when ``pos``, to ``not f`` otherwise. ``outer``: no
        universal quantifier encloses this position (an existential may become a constant)."""
        if isinstance(f, Const):
            return _tf(f.value == pos)
        if isinstance(f, (Atom, Cmp)):
            t = self.atom(f, scope)
            return t if pos else _not(t)
        if isinstance(f, BoolOp):
            if f.op == "not":
                return self.formula(f.parts[0], not pos, scope, outer)
            if f.op == "implies":
                a, b = f.parts
                parts = [self.formula(a, not pos, scope, outer), self.formula(b, pos, scope, outer)]
                return _or(parts) if pos else _and(parts)
            parts = [self.formula(p, pos, scope, outer) for p in f.parts]
            return _and(parts) if (f.op == "and") == pos else _or(parts)
        if isinstance(f, Quant):
            return self.quant(f, pos, scope, outer)
        raise Z3ModeError(f"not a formula: {f!r}")

    def quant(self, f, pos, scope, outer) -> str:
        if not f.vars:  # a sliced formula can quantify over nothing
            return self.formula(f.body, pos, scope, outer)
        is_exists = (f.op == "exists") == pos
        if is_exists and outer:  # a free constant per variable; z3's model gives its value
            inner = dict(scope)
            for v in f.vars:
                self.n += 1
                inner[v.name] = f"s{self.n}"
                self.skolems.append((f"s{self.n}", v.name))
            # a variable a guard atom binds is in the domain already
            free = [inner[v.name] for v in f.vars if v.name not in _guard_vars(f)]
            body = self.formula(f.body, pos, inner, True)
            return _and([self.in_domain(c) for c in free] + [body])
        instances = self.instances(f, scope)
        if instances is None:  # too many: z3's own quantifier instantiation
            inner = dict(scope)
            for v in f.vars:
                self.n += 1
                inner[v.name] = f"q{self.n}"
            names = [inner[v.name] for v in f.vars]
            binders = " ".join(f"({q} Int)" for q in names)
            guard = _and([self.in_domain(q) for q in names])
            body = self.formula(f.body, pos, inner, False)
            if is_exists:
                return f"(exists ({binders}) {_and([guard, body])})"
            return f"(forall ({binders}) {_or([_not(guard), body])})"
        parts = []
        saved = self.assumed
        for sc, conds, used in instances:
            self.assumed = saved | used
            body = self.formula(f.body, pos, sc, False)
            parts.append(_and(conds + [body]) if is_exists
                         else _or([_not(c) for c in conds] + [body]))
        self.assumed = saved
        return _or(parts) if is_exists else _and(parts)

    def in_domain(self, x: str) -> str:
        return _or([f"(= {x} {_lit(c)})" for c in self.dom])

    def instances(self, f, scope):
        """Every binding of f's variables that can make its guard true, as (scope,
        remaining symbolic conditions, ids of the guard atoms the binding makes true):
        guard atoms bind variables to the columns of their relation's tuples (as fast
        mode's loops do), the rest range over the domain. None when over the limit."""
        want = {v.name for v in f.vars}
        bindings = [({}, [])]
        bound: set = set()
        used = set()
        for atom in guard_atoms(f):
            new = {a.name for a in atom.args if isinstance(a, V) and a.name in want} - bound
            if not new:
                continue
            used.add(id(atom))
            nxt = []
            for vals, conds in bindings:
                for t in self.facts[atom.rel]:
                    v2, c2 = dict(vals), list(conds)
                    for arg, x in zip(atom.args, t):
                        if isinstance(arg, V) and arg.name in new and \
                                v2.setdefault(arg.name, x) == x:
                            continue
                        c2.append((arg, x))  # checked once every variable has a value
                    nxt.append((v2, c2))
            bindings = nxt
            bound |= new
            if len(bindings) > self.limit:
                return None
        for v in f.vars:
            if v.name not in bound:
                bindings = [({**vals, v.name: d}, conds) for vals, conds in bindings
                            for d in self.dom]
                if len(bindings) > self.limit:
                    return None
        out, seen, used = [], set(), frozenset(used)
        for vals, conds in bindings:
            sc = {**scope, **vals}
            texts = []
            for arg, x in conds:
                v = self.value(arg, sc)
                if isinstance(v, int):
                    if v != x:
                        break
                else:
                    texts.append(f"(= {v} {_lit(x)})")
            else:
                key = (tuple(sorted(vals.items())), tuple(texts))
                if key not in seen:
                    seen.add(key)
                    out.append((sc, texts, used))
        return out

    def atom(self, f, scope) -> str:
        if isinstance(f, Atom):
            if id(f) in self.assumed:
                return "true"
            args = [self.value(a, scope) for a in f.args]
            if all(isinstance(a, int) for a in args):
                return _tf(tuple(args) in self.fact_sets[f.rel])
            # the relation's closed-world extension, restricted to the tuples that agree
            # with the arguments already known
            rows = []
            for t in self.facts[f.rel]:
                eqs = []
                for a, x in zip(args, t):
                    if isinstance(a, int):
                        if a != x:
                            break
                    else:
                        eqs.append(f"(= {a} {_lit(x)})")
                else:
                    rows.append(_and(eqs))
            return _or(rows)
        a, b = self.value(f.a, scope), self.value(f.b, scope)
        if isinstance(a, int) and isinstance(b, int):
            return _tf({"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b}[f.op])
        if f.op == "!=":
            return f"(not (= {_text(a)} {_text(b)}))"
        return f"({_CMP[f.op]} {_text(a)} {_text(b)})"

    def value(self, t, scope):
        """An int when the term's value is known, else its SMT text."""
        if isinstance(t, V):
            return scope[t.name]
        if isinstance(t, C):
            return self.codes.of(t.value)
        a, b = self.value(t.a, scope), self.value(t.b, scope)
        if isinstance(a, int) and isinstance(b, int):
            return a + b if t.op == "+" else a - b
        return f"({t.op} {_text(a)} {_text(b)})"


def _lit(c: int) -> str:
    return str(c) if c >= 0 else f"(- {-c})"


def _text(v) -> str:
    return _lit(v) if isinstance(v, int) else v


def _tf(b: bool) -> str:
    return "true" if b else "false"


def _not(t: str) -> str:
    return {"true": "false", "false": "true"}.get(t) or f"(not {t})"


def _and(parts) -> str:
    return _join("and", parts, "true", "false")


def _or(parts) -> str:
    return _join("or", parts, "false", "true")


def _join(op, parts, unit, zero) -> str:
    parts = [p for p in parts if p != unit]
    if zero in parts:
        return zero
    return parts[0] if len(parts) == 1 else (f"({op} {' '.join(parts)})" if parts else unit)


def _is_int(v) -> bool:
    if type(v) is int or isinstance(v, numbers.Integral):
        return True
    if isinstance(v, float):
        if v.is_integer():
            return True  # 2.0 == 2 in Python
        raise Z3ModeError(f"view value {v!r} is a fraction: z3 mode encodes integers, "
                          "strings and other values compared by equality; use integers")
    return False


def _ordered(values) -> list:
    """Python's order within each type (so '<' on strings agrees), types by name."""
    try:
        return sorted(values, key=lambda v: (type(v).__name__, v))
    except TypeError:  # values of one type without an order (None, enum members, ...)
        return sorted(values, key=lambda v: (type(v).__name__, repr(v)))


def guard_atoms(f) -> list:
    """The positive atoms of a quantifier's guard: the antecedent of ``forall xs. G => phi``,
    the body of ``exists xs. G`` (its conjuncts)."""
    body = f.body
    if f.op == "forall":
        if not (isinstance(body, BoolOp) and body.op == "implies"):
            return []
        body = body.parts[0]
    return [c for c in _conjuncts(body) if isinstance(c, Atom)]


def _guard_vars(f) -> set:
    return {a.name for atom in guard_atoms(f) for a in atom.args if isinstance(a, V)}


def _guarded(f) -> bool:
    """Every quantified variable is bound by a positive atom of its quantifier's guard:
    such a formula only looks at the values of the relations it mentions."""
    if isinstance(f, BoolOp):
        return all(_guarded(p) for p in f.parts)
    if not isinstance(f, Quant):
        return True
    return {v.name for v in f.vars} <= _guard_vars(f) and _guarded(f.body)


def _conjuncts(f):
    if isinstance(f, BoolOp) and f.op == "and":
        return [c for p in f.parts for c in _conjuncts(p)]
    return [f]
