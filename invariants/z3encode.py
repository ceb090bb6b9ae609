"""A formula and a view, encoded as one SMT-LIB problem that z3 decides.

The problem is "the view's facts and the *negated* formula": unsat means the formula holds
on the view, sat means it is violated and z3's model names the offending binding.

Encoding (the same semantics as fast mode, ``invariants.compile``):
- every value is an integer: ints and bools are themselves (Python's ``True == 1``), every
  other value (str, None, enum member, tuple, ...) gets a code above any integer an
  arithmetic term of the formula can reach on this view, so a code never equals an
  integer result; codes follow Python's order within a type, so ``<`` on two strings
  agrees with Python (``<`` across types raises TypeError in fast mode and is left
  unspecified here);
- each relation R is ``(define-fun R (Int ... Int) Bool ...)`` whose extension is exactly
  the view's tuples (closed world); ``D`` is the active domain;
- every quantified variable ranges over ``D`` (as in fast mode, where quantifiers range
  over the view's active domain; guarded loops over a relation are the same thing);
- the negation is pushed inward, and the existential quantifiers that are not under a
  universal one become free constants (exact: each keeps its ``D`` guard in place), so
  the model of a violated ``forall x, y. ...`` is the offending ``x, y``.

The text is built in Python and parsed by z3's C parser: far cheaper than building the
terms one Python call at a time.
"""
from __future__ import annotations

import numbers

from invariants.compile import active_domain
from invariants.logic import Arith, Atom, BoolOp, C, Cmp, Const, Quant, V


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
        self._smt_rel = {r: f"R{i}" for i, r in enumerate(self.relations)}
        #: True when some quantified variable is not bound by a positive guard atom, so the
        #: verdict depends on values of relations the formula does not mention
        self.domain_dependent = not _guarded(formula)

    # ---- analysis -----------------------------------------------------------------------
    def _scan(self, f, scope):
        if isinstance(f, Atom):
            n = len(f.args)
            if n == 0:
                raise Z3ModeError(f"relation {f.rel} has no arguments: give it at least one")
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
        out = []
        for r in self.relations:
            params = " ".join(f"(x{i} Int)" for i in range(self.arity[r]))
            rows = ["(and " + " ".join(f"(= x{i} {_lit(v)})" for i, v in enumerate(t)) + ")"
                    for t in facts[r]]
            out.append(f"(define-fun {self._smt_rel[r]} ({params}) Bool {_or(rows)})")
        dom_codes = sorted({codes.of(v) for v in dom})
        out.append("(define-fun D ((x0 Int)) Bool "
                   f"{_or([f'(= x0 {_lit(c)})' for c in dom_codes])})")
        w = _Writer(self._smt_rel, codes, facts, dom_codes, ground_limit)
        goal = w.formula(self.formula, False, {}, True)
        out[:0] = [f"(declare-const {s} Int)" for s, _name in w.skolems]
        out.append(f"(assert {goal})")
        return Query("\n".join(out), w.skolems, codes)


class Query:
    """An SMT-LIB text, its free constants (smt name, variable name), and the value codes."""

    def __init__(self, text, skolems, codes):
        self.text, self.skolems, self.codes = text, skolems, codes

    def binding(self, model, ctx) -> dict:
        """z3's model as {variable: view value}; a repeated name gets a #2 suffix."""
        import z3
        out = {}
        for smt, name in self.skolems:
            val = model.get_interp(z3.Int(smt, ctx))
            if val is None:
                continue  # a branch of a disjunction the model did not need
            key, n = name, 1
            while key in out:
                n += 1
                key = f"{name}#{n}"
            out[key] = self.codes.decode(val.as_long())
        return out


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

    def __init__(self, rel_names, codes, facts, dom, ground_limit):
        self.rel, self.codes, self.facts, self.dom = rel_names, codes, facts, dom
        self.fact_sets = {r: set(ts) for r, ts in facts.items()}
        self.limit = ground_limit
        self.skolems: list[tuple[str, str]] = []
        self.n = 0

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
        is_exists = (f.op == "exists") == pos
        if is_exists and outer:  # a free constant per variable; z3's model gives its value
            inner = dict(scope)
            names = []
            for v in f.vars:
                self.n += 1
                inner[v.name] = f"s{self.n}"
                names.append(f"s{self.n}")
                self.skolems.append((f"s{self.n}", v.name))
            body = self.formula(f.body, pos, inner, True)
            return _and([f"(D {s})" for s in names] + [body])
        instances = self.instances(f, scope)
        if instances is None:  # too many: z3's own quantifier instantiation
            inner = dict(scope)
            names = []
            for v in f.vars:
                self.n += 1
                inner[v.name] = f"q{self.n}"
                names.append(f"q{self.n}")
            binders = " ".join(f"({s} Int)" for s in names)
            guard = _and([f"(D {s})" for s in names])
            body = self.formula(f.body, pos, inner, False)
            if is_exists:
                return f"(exists ({binders}) {_and([guard, body])})"
            return f"(forall ({binders}) (=> {guard} {body}))"
        parts = []
        for sc, conds in instances:
            body = self.formula(f.body, pos, sc, False)
            parts.append(_and(conds + [body]) if is_exists
                         else _or([_not(c) for c in conds] + [body]))
        return _or(parts) if is_exists else _and(parts)

    def instances(self, f, scope):
        """Every binding of f's variables that can make its guard true, as (scope,
        remaining symbolic conditions): guard atoms bind variables to the columns of their
        relation's tuples (as fast mode's loops do), the rest range over the domain.
        None when there would be more than the limit."""
        want = [v.name for v in f.vars]
        body = f.body
        if f.op == "forall":
            guard = body.parts[0] if isinstance(body, BoolOp) and body.op == "implies" else None
        else:
            guard = body
        bindings = [({}, [])]
        bound: set = set()
        for atom in _conjuncts(guard) if guard is not None else ():
            if not isinstance(atom, Atom):
                continue
            new = {a.name for a in atom.args if isinstance(a, V) and a.name in want} - bound
            if not new:
                continue
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
        for name in want:
            if name not in bound:
                bindings = [({**vals, name: d}, conds) for vals, conds in bindings
                            for d in self.dom]
                if len(bindings) > self.limit:
                    return None
        out, seen = [], set()
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
                    out.append((sc, texts))
        return out

    def atom(self, f, scope) -> str:
        if isinstance(f, Atom):
            args = [self.value(a, scope) for a in f.args]
            if all(isinstance(a, int) for a in args):
                return _tf(tuple(args) in self.fact_sets[f.rel])
            return f"({self.rel[f.rel]} " + " ".join(map(_text, args)) + ")"
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
    parts = [p for p in parts if p != "true"]
    if "false" in parts:
        return "false"
    return parts[0] if len(parts) == 1 else (f"(and {' '.join(parts)})" if parts else "true")


def _or(parts) -> str:
    parts = [p for p in parts if p != "false"]
    if "true" in parts:
        return "true"
    return parts[0] if len(parts) == 1 else (f"(or {' '.join(parts)})" if parts else "false")


def _is_int(v) -> bool:
    if isinstance(v, numbers.Integral):
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


def _guarded(f) -> bool:
    """Every quantified variable is bound by a positive atom of its quantifier's guard
    (``forall xs. A(..) and .. => phi`` / ``exists xs. A(..) and ..``): such a formula
    only looks at the values of the relations it mentions."""
    if isinstance(f, BoolOp):
        return all(_guarded(p) for p in f.parts)
    if not isinstance(f, Quant):
        return True
    body = f.body
    if f.op == "forall":
        if not (isinstance(body, BoolOp) and body.op == "implies"):
            return False
        guard = body.parts[0]
    else:
        guard = body
    bound = set()
    for c in _conjuncts(guard):
        if isinstance(c, Atom):
            bound |= {a.name for a in c.args if isinstance(a, V)}
    return {v.name for v in f.vars} <= bound and _guarded(body)


def _conjuncts(f):
    if isinstance(f, BoolOp) and f.op == "and":
        return [c for p in f.parts for c in _conjuncts(p)]
    return [f]
