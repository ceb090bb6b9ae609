"""Random formulas from a small grammar, on random views: z3 mode and fast mode agree, and
z3's counterexample is a real violation. Seeded (derandomize) so every run is the same."""
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from kmc.invariants.compile import compile_python
from kmc.invariants.logic import (And, Arith, Atom, C, Cmp, Const, Not, Or, Quant, V, exists,
                              forall, implies)
from kmc.invariants.z3mode import Z3Decider
from test_z3mode import assert_violation  # pytest puts this directory on sys.path

ARITY = {"P": 1, "Q": 2, "R": 3}
INTS = st.integers(-2, 3)
MIXED = st.one_of(INTS, st.sampled_from(["a", "b", None, True]))


@st.composite
def views(draw):
    value = MIXED if draw(st.integers(0, 3)) == 0 else INTS  # mostly ints: '<' and '+'
    view = {}
    for rel, n in ARITY.items():
        if draw(st.booleans()) or rel == "Q":
            view[rel] = frozenset(draw(st.lists(st.tuples(*[value] * n), max_size=5)))
    return view


@st.composite
def terms(draw, scope):
    kind = draw(st.integers(0, 5))
    if scope and kind <= 3:
        return V(draw(st.sampled_from(scope)))
    if scope and kind == 4:
        op = draw(st.sampled_from("+-"))
        other = V(draw(st.sampled_from(scope))) if draw(st.booleans()) else C(draw(INTS))
        return Arith(op, V(draw(st.sampled_from(scope))), other)
    return C(draw(MIXED))


@st.composite
def formulas(draw, depth, scope, fresh, guarded=False):
    """``guarded``: every quantifier has a guard atom binding its variables (the shape of
    the Kafka invariants, whose views z3 mode slices)."""
    quantifiers = ["gforall", "gexists"] + ([] if guarded else ["forall", "exists"])
    kinds = ["atom", "cmp", "const"] + (["and", "or", "not", "implies"] + quantifiers
                                        if depth else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "atom":
        rel = draw(st.sampled_from(sorted(ARITY)))
        return Atom(rel, tuple(draw(terms(scope)) for _ in range(ARITY[rel])))
    if kind == "cmp":
        return Cmp(draw(st.sampled_from(["==", "!=", "<", "<="])), draw(terms(scope)),
                   draw(terms(scope)))
    if kind == "const":
        return Const(draw(st.booleans()))
    sub = lambda sc=scope: formulas(depth - 1, sc, fresh, guarded)  # noqa: E731
    if kind in ("and", "or"):  # And()/Or() of nothing are the constants
        parts = [draw(sub()) for _ in range(draw(st.integers(0, 3)))]
        return (And if kind == "and" else Or)(*parts)
    if kind == "not":
        return Not(draw(sub()))
    if kind == "implies":
        return implies(draw(sub()), draw(sub()))
    names = [f"v{next(fresh)}" for _ in range(draw(st.integers(1, 2)))]
    inner = scope + names
    if kind in ("forall", "exists"):
        return (forall if kind == "forall" else exists)([V(n) for n in names], draw(sub(inner)))
    # guarded: the shape fast mode turns into loops over a relation's tuples
    rel = draw(st.sampled_from([r for r, n in ARITY.items() if n >= len(names)]))
    args = [V(n) for n in names] + [draw(terms(inner)) for _ in range(ARITY[rel] - len(names))]
    guard = Atom(rel, tuple(draw(st.permutations(args))))
    if kind == "gforall":
        return forall([V(n) for n in names], implies(guard, draw(sub(inner))))
    return exists([V(n) for n in names], guard & draw(sub(inner)))


@st.composite
def closed_formulas(draw, guarded=False):
    counter = iter(range(10_000))
    return draw(formulas(3, [], counter, guarded))


def fast_verdict(formula, view):
    fast = compile_python(formula)  # every closed formula compiles
    try:
        return fast(view)
    except TypeError:  # '<' or '+' across types: fast mode has no verdict to compare
        assume(False)


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(closed_formulas(), st.lists(views(), min_size=1, max_size=3))
def test_z3_mode_agrees_with_fast_mode(formula, vs):
    d = Z3Decider("random", formula, lambda v: v)
    # inner quantifiers left to z3's quantifier engine instead of instantiated
    native = Z3Decider("random", formula, lambda v: v, ground_limit=0)
    for view in vs:
        fast = fast_verdict(formula, view)
        assert d.check(view) == fast, (formula, view)
        assert native.check(view) == fast, (formula, view)
        # coverage of the interesting cases (--hypothesis-show-statistics)
        event(f"holds={fast}")
        event(f"view sliced to fewer columns={d.sliced.arity != d.encoding.arity}")
        text = native.encoding.query(view, 0).text
        event(f"z3 problem keeps a quantifier={'forall' in text or 'exists' in text}")
        if not fast and isinstance(formula, Quant) and formula.op == "forall":
            assert_violation(formula, view, d.explain(view))



@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(closed_formulas(guarded=True), views(), st.data())
def test_sliced_columns_never_change_a_verdict(formula, view, data):
    """z3 mode keys its memo on the columns a guarded formula reads: rewriting the other
    columns must leave the key, the fast verdict and the z3 verdict unchanged."""
    d = Z3Decider("random", formula, lambda v: v)
    fast = fast_verdict(formula, view)
    assert d.check(view) == fast, (formula, view)
    if d.columns is None:
        return
    other = {}
    for rel, tuples in view.items():
        keep = d.columns.get(rel, range(ARITY[rel]))
        other[rel] = frozenset(tuple(x if j in keep else data.draw(MIXED) for j, x in enumerate(t))
                               for t in tuples)
    other["Unmentioned"] = frozenset({(data.draw(MIXED),)})
    event(f"columns dropped={sum(ARITY[r] - len(c) for r, c in d.columns.items())}")
    assert d.key(other) == d.key(view)
    assert fast_verdict(formula, other) == fast
    assert d.check(other) == fast and d.hits == 1
