"""The formula layer's fast mode: guarded quantifiers, active-domain fallback, offending
tuples; the same formula must give the same answer however it is evaluated."""
import itertools

from hypothesis import given, strategies as st

from kmc.invariants.compile import active_domain, compile_counterexample, compile_python
from kmc.invariants.declare import declare
from kmc.invariants.logic import And, C, Not, Or, Rel, exists, forall, implies, variables

Read = Rel("Read", 3)
Up = Rel("Up", 1)
r, a, b, x, y = variables("r a b x y")
NO_STALE = forall((r, a, b), implies(Read(r, a, b), a == b))


def test_guarded_forall_and_offending_tuple():
    ok = {"Read": {("c1", 1, 1), ("c2", 2, 2)}}
    bad = {"Read": {("c1", 1, 1), ("c2", 1, 2)}}
    assert compile_python(NO_STALE)(ok) is True
    assert compile_python(NO_STALE)(bad) is False
    assert compile_counterexample(NO_STALE)(bad) == {"r": "c2", "a": 1, "b": 2}
    assert "in view.get('Read'" in compile_python(NO_STALE).source  # no domain scan


def test_exists_with_constants_and_unguarded_variables():
    f = forall((x,), implies(Up(x), exists((y,), And(Read("c", x, y), y > x))))
    assert compile_python(f)({"Up": {(1,)}, "Read": {("c", 1, 5)}})
    assert not compile_python(f)({"Up": {(1,)}, "Read": {("d", 1, 5)}})
    g = forall((x,), Or(Up(x), Not(Up(x))))  # x ranges over the active domain
    assert compile_python(g)({"Read": {("c", 1, 2)}})


def _naive(f, view, env=None):
    """Reference semantics by brute force over the active domain (slow, obviously right)."""
    from kmc.invariants.logic import Arith, Atom, BoolOp, Cmp, Const, Quant, V
    env = env or {}
    dom = active_domain(view)

    def term(t):
        if isinstance(t, V):
            return env[t.name]
        if isinstance(t, C):
            return t.value
        if isinstance(t, Arith):
            return term(t.a) + term(t.b) if t.op == "+" else term(t.a) - term(t.b)

    if isinstance(f, Const):
        return f.value
    if isinstance(f, Atom):
        return tuple(term(t) for t in f.args) in view.get(f.rel, ())
    if isinstance(f, Cmp):
        return {"==": lambda p, q: p == q, "!=": lambda p, q: p != q,
                "<": lambda p, q: p < q, "<=": lambda p, q: p <= q}[f.op](term(f.a), term(f.b))
    if isinstance(f, BoolOp):
        vals = (_naive(p, view, env) for p in f.parts)  # lazy: short-circuits like Python
        if f.op == "and":
            return all(vals)
        if f.op == "or":
            return any(vals)
        if f.op == "not":
            return not next(vals)
        return not next(vals) or next(vals)
    if isinstance(f, Quant):
        names = [v.name for v in f.vars]
        results = (_naive(f.body, view, {**env, **dict(zip(names, combo))})
                   for combo in itertools.product(sorted(dom, key=repr), repeat=len(names)))
        return all(results) if f.op == "forall" else any(results)


FORMULAS = [
    NO_STALE,
    forall((r, a, b), implies(And(Read(r, a, b), Up(a)), a < b + 1)),
    exists((x, y), And(Read("c", x, y), Not(Up(y)))),
    forall((x,), implies(Up(x), exists((r, y), Read(r, x, y)))),
]


@given(st.sets(st.tuples(st.sampled_from(["c", "d"]), st.integers(0, 3), st.integers(0, 3)),
               max_size=6),
       st.sets(st.tuples(st.integers(0, 3)), max_size=3))
def test_compiled_mode_matches_brute_force_semantics(reads, ups):
    view = {"Read": reads, "Up": ups}
    for f in FORMULAS:
        assert compile_python(f)(view) == _naive(f, view), repr(f)


def test_declare_keeps_formula_and_view_for_z3_mode():
    p = declare("always", "NoStaleRead", NO_STALE, view=lambda s: {"Read": set(s)})
    assert p.formula is NO_STALE and p.check(()) and not p.check((("c", 1, 2),))
    assert p.explain((("c", 1, 2),)) == {"r": "c", "a": 1, "b": 2}


def test_atom_argument_using_a_variable_bound_later_compiles():
    Q = Rel("Q", 2)
    f = exists((x, y), Q(x, y + 0))  # y is not bound by a plain position of the atom
    assert compile_python(f)({"Q": {(1, 1)}}) == _naive(f, {"Q": {(1, 1)}}) is True
    assert compile_python(f)({"Q": {(1, 5)}, "Up": {(9,)}}) is True  # y=5 from the domain
    assert compile_python(f)({"Q": set(), "Up": {(9,)}}) is False


def test_inner_quantifier_rebinds_a_shadowed_name():
    # ∀x. Up(x) ⇒ ∃x. Read("c", x, x): the inner x is a new variable
    f = forall((x,), implies(Up(x), exists((x,), Read("c", x, x))))
    view = {"Up": {(1,)}, "Read": {("c", 2, 2)}}
    assert compile_python(f)(view) is True  # the outer x=1 must not leak inward


def test_empty_boolean_operators_are_constants():
    from kmc.invariants.logic import BoolOp
    assert compile_python(BoolOp("and", ()))({}) is True
    assert compile_python(BoolOp("or", ()))({}) is False
