"""Invariants declared once, as first-order formulas over a small relational *view*.

A view is a mapping from relation name to a set of tuples (the facts of one state), e.g.
``{"Read": {("consumer", 1, 2)}}``. A formula is built from relations, variables and
constants with ``forall``/``exists``/``implies``/``And``/``Or``/``Not`` and comparisons::

    r, a, b = V("r"), V("a"), V("b")
    NO_STALE_READ = forall((r, a, b), implies(Read(r, a, b), a == b))

Two deciders come from the one declaration:
- fast mode: ``compile_python(formula)`` turns the AST into one Python function over the
  view (quantifiers range over the tuples of the relation they guard, or the active domain);
- z3 mode (``invariants.z3mode``): the facts become ground z3 constraints and z3 decides
  whether the negated formula is satisfiable; a model is the offending tuple.

Quantifier semantics: a variable ranges over the *active domain* — every value occurring
in the view — which is what z3 mode's ground encoding quantifies over too.
"""
from __future__ import annotations

from dataclasses import dataclass


class Term:
    def __eq__(self, other):  # builds a formula, not a bool
        return Cmp("==", self, lift(other))

    def __ne__(self, other):
        return Cmp("!=", self, lift(other))

    def __lt__(self, other):
        return Cmp("<", self, lift(other))

    def __le__(self, other):
        return Cmp("<=", self, lift(other))

    def __gt__(self, other):
        return Cmp("<", lift(other), self)

    def __ge__(self, other):
        return Cmp("<=", lift(other), self)

    def __add__(self, other):
        return Arith("+", self, lift(other))

    def __sub__(self, other):
        return Arith("-", self, lift(other))

    __hash__ = object.__hash__


class V(Term):
    """A bound variable."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return self.name


class C(Term):
    """A constant (int, str, bool or None)."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return repr(self.value)


class Arith(Term):
    def __init__(self, op, a, b):
        self.op, self.a, self.b = op, a, b

    def __repr__(self):
        return f"({self.a!r} {self.op} {self.b!r})"


def lift(x) -> Term:
    return x if isinstance(x, Term) else C(x)


class Formula:
    def __and__(self, other):
        return And(self, other)

    def __or__(self, other):
        return Or(self, other)

    def __invert__(self):
        return Not(self)


@dataclass(eq=False)
class Atom(Formula):
    rel: str
    args: tuple

    def __repr__(self):
        return f"{self.rel}({', '.join(map(repr, self.args))})"


@dataclass(eq=False)
class Cmp(Formula):
    op: str
    a: Term
    b: Term

    def __repr__(self):
        return f"{self.a!r} {self.op} {self.b!r}"


@dataclass(eq=False)
class BoolOp(Formula):
    op: str  # "and" | "or" | "not" | "implies"
    parts: tuple

    def __repr__(self):
        if self.op == "not":
            return f"¬({self.parts[0]!r})"
        sym = {"and": " ∧ ", "or": " ∨ ", "implies": " ⇒ "}[self.op]
        return "(" + sym.join(map(repr, self.parts)) + ")"


@dataclass(eq=False)
class Quant(Formula):
    op: str  # "forall" | "exists"
    vars: tuple
    body: Formula

    def __repr__(self):
        q = "∀" if self.op == "forall" else "∃"
        return f"{q}{','.join(v.name for v in self.vars)}. {self.body!r}"


@dataclass(eq=False)
class Const(Formula):
    value: bool

    def __repr__(self):
        return "⊤" if self.value else "⊥"


class Rel:
    """A relation symbol of fixed arity: ``Read = Rel("Read", 3)``; ``Read(r, a, b)``."""

    def __init__(self, name: str, arity: int, fields: tuple = ()):
        self.name, self.arity = name, arity
        self.fields = tuple(fields) or tuple(f"x{i}" for i in range(arity))

    def __call__(self, *args) -> Atom:
        if len(args) != self.arity:
            raise ValueError(f"{self.name} takes {self.arity} arguments, got {len(args)}")
        return Atom(self.name, tuple(lift(a) for a in args))

    def __repr__(self):
        return f"{self.name}/{self.arity}"


def And(*parts) -> Formula:
    return BoolOp("and", tuple(parts)) if parts else Const(True)


def Or(*parts) -> Formula:
    return BoolOp("or", tuple(parts)) if parts else Const(False)


def Not(f) -> Formula:
    return BoolOp("not", (f,))


def implies(a, b) -> Formula:
    return BoolOp("implies", (a, b))


def forall(vs, body) -> Formula:
    return Quant("forall", tuple(vs) if isinstance(vs, (tuple, list)) else (vs,), body)


def exists(vs, body) -> Formula:
    return Quant("exists", tuple(vs) if isinstance(vs, (tuple, list)) else (vs,), body)


def variables(names: str):
    return tuple(V(n) for n in names.split())


def relations_of(f) -> set:
    """Relation names a formula mentions (views need only those)."""
    if isinstance(f, Atom):
        return {f.rel}
    if isinstance(f, BoolOp):
        return set().union(*(relations_of(p) for p in f.parts))
    if isinstance(f, Quant):
        return relations_of(f.body)
    return set()

