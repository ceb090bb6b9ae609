"""z3 mode on hand-written formulas and views: it agrees with fast mode, its counterexample
is a real violation, its memo is keyed by what the formula can see, and it passes through
properties it cannot decide."""
import pickle

import pytest

from kmc.invariants.compile import compile_python
from kmc.invariants.declare import declare
from kmc.invariants.logic import C, Not, Rel, exists, forall, implies, variables
from kmc.invariants.properties import always
from kmc.invariants.z3mode import Z3Decider, Z3ModeError, z3_properties, z3_stats

Read = Rel("Read", 3, ("reader", "asked", "got"))
Delivered = Rel("Delivered", 4, ("key", "producer", "seq", "pos"))
Topic, TopicId = Rel("Topic", 1), Rel("TopicId", 2)
Epoch = Rel("Epoch", 2)

r, a, b = variables("r a b")
NO_STALE_READ = forall((r, a, b), implies(Read(r, a, b), a == b))

k, p, s1, q1, s2, q2 = variables("k p s1 q1 s2 q2")
IN_ORDER = forall((k, p, s1, q1, s2, q2),
                  implies(Delivered(k, p, s1, q1) & Delivered(k, p, s2, q2) & (s1 < s2),
                          q1 < q2))

t, i, u, j = variables("t i u j")
# every topic has an id, and no other topic has that id (nested quantifiers)
ID_UNIQUE = forall(t, implies(Topic(t), exists(i, TopicId(t, i) & forall(
    (u, j), implies(TopicId(u, j) & (j == i), u == t)))))

c, e, c2, e2 = variables("c e c2 e2")
# arithmetic: epochs seen by two controllers differ by at most one
EPOCH_GAP = forall((c, e, c2, e2), implies(Epoch(c, e) & Epoch(c2, e2), e2 - e <= 1))


def state_view(state):
    """Test states are already views (relation -> frozenset of tuples)."""
    return state


def frozen(**rels):
    return {name: frozenset(tuples) for name, tuples in rels.items()}


def both(formula, view):
    """(fast verdict, z3 verdict) on one view."""
    return compile_python(formula)(view), Z3Decider("f", formula, state_view).decide(view)


def assert_violation(formula, view, binding):
    """The binding z3 reported makes the quantified body false on the view."""
    body = formula.body
    for var in formula.vars:
        body = _subst(body, var.name, binding[var.name])
    assert compile_python(Not(body))(view), binding


def _subst(f, name, value):
    from kmc.invariants.logic import Arith, Atom, BoolOp, Cmp, Quant, V

    def term(x):
        if isinstance(x, V) and x.name == name:
            return C(value)
        if isinstance(x, Arith):
            return Arith(x.op, term(x.a), term(x.b))
        return x
    if isinstance(f, Atom):
        return Atom(f.rel, tuple(term(x) for x in f.args))
    if isinstance(f, Cmp):
        return Cmp(f.op, term(f.a), term(f.b))
    if isinstance(f, BoolOp):
        return BoolOp(f.op, tuple(_subst(x, name, value) for x in f.parts))
    if isinstance(f, Quant):
        return Quant(f.op, f.vars, _subst(f.body, name, value))
    return f


# ---- verdicts: z3 agrees with fast mode, and both with the meaning of the formula ------

def test_no_stale_read():
    fine = frozen(Read={("c1", 1, 1), ("c2", 2, 2)})
    stale = frozen(Read={("c1", 1, 1), ("c2", 1, 2)})
    assert both(NO_STALE_READ, fine) == (True, True)
    assert both(NO_STALE_READ, stale) == (False, False)
    assert both(NO_STALE_READ, frozen(Read=set())) == (True, True)
    assert both(NO_STALE_READ, {}) == (True, True)  # relation absent: no reads


def test_in_order_delivery():
    ordered = frozen(Delivered={("k1", 0, 0, 0), ("k1", 0, 1, 1), ("k2", 0, 0, 2),
                                ("k1", 1, 0, 3)})
    swapped = frozen(Delivered={("k1", 0, 0, 1), ("k1", 0, 1, 0), ("k2", 0, 0, 2)})
    assert both(IN_ORDER, ordered) == (True, True)
    assert both(IN_ORDER, swapped) == (False, False)


def test_nested_quantifiers():
    ok = frozen(Topic={("a",), ("b",)}, TopicId={("a", 1), ("b", 2)})
    reused = frozen(Topic={("a",), ("b",)}, TopicId={("a", 1), ("b", 1)})
    missing = frozen(Topic={("a",), ("b",)}, TopicId={("a", 1)})
    assert both(ID_UNIQUE, ok) == (True, True)
    assert both(ID_UNIQUE, reused) == (False, False)
    assert both(ID_UNIQUE, missing) == (False, False)


def test_arithmetic_with_negative_numbers():
    assert both(EPOCH_GAP, frozen(Epoch={("c0", -1), ("c1", 0)})) == (True, True)
    assert both(EPOCH_GAP, frozen(Epoch={("c0", -1), ("c1", 1)})) == (False, False)


def test_constants_strings_none_and_bools():
    x, y = variables("x y")
    State = Rel("State", 2)
    not_deleted = forall((x, y), implies(State(x, y), y != "deleted"))
    has_id = forall((x, y), implies(State(x, y), y != None))  # noqa: E711 (builds a formula)
    view = frozen(State={("t1", "live"), ("t2", None)})
    assert both(not_deleted, view) == (True, True)
    assert both(not_deleted, frozen(State={("t1", "deleted")})) == (False, False)
    assert both(has_id, view) == (False, False)
    # Python's True == 1 holds in both modes
    flag = forall((x, y), implies(State(x, y), y == 1))
    assert both(flag, frozen(State={("t1", True)})) == (True, True)


def test_string_order_agrees_with_python():
    x, y = variables("x y")
    Pair = Rel("Pair", 2)
    ascending = forall((x, y), implies(Pair(x, y), x < y))
    assert both(ascending, frozen(Pair={("apple", "banana"), ("a", "b")})) == (True, True)
    assert both(ascending, frozen(Pair={("pear", "banana")})) == (False, False)


def test_unguarded_quantifier_sees_the_whole_active_domain():
    x = variables("x")[0]
    P = Rel("P", 1)
    everything_in_p = forall(x, P(x))  # over every value of the view, not only P's
    small = frozen(P={(1,)}, Other={(1,)})
    large = frozen(P={(1,)}, Other={(2,)})
    assert both(everything_in_p, small) == (True, True)
    assert both(everything_in_p, large) == (False, False)
    # the memo key includes the domain, so the two views are not confused
    d = Z3Decider("f", everything_in_p, state_view)
    assert (d.check(small), d.check(large)) == (True, False)
    assert d.encoding.domain_dependent


# ---- counterexamples: z3's model is a real offending tuple -----------------------------

def test_explain_returns_the_offending_tuple():
    stale = frozen(Read={("c1", 1, 1), ("c2", 1, 2)})
    d = Z3Decider("NoStaleRead", NO_STALE_READ, state_view)
    assert d.explain(stale) == {"r": "c2", "a": 1, "b": 2}  # the only stale read
    assert d.explain(frozen(Read={("c1", 1, 1)})) is None


def test_explain_in_order_gives_a_violating_pair():
    swapped = frozen(Delivered={("k1", 0, 0, 1), ("k1", 0, 1, 0), ("k1", 0, 2, 2)})
    binding = Z3Decider("InOrder", IN_ORDER, state_view).explain(swapped)
    assert set(binding) == {"k", "p", "s1", "q1", "s2", "q2"}
    assert_violation(IN_ORDER, swapped, binding)


def test_explain_is_deterministic_whatever_was_asked_before():
    views = [frozen(Delivered={("k1", 0, 0, 1), ("k1", 0, 1, 0), ("k2", 1, 0, 3),
                               ("k2", 1, 1, 2)})]
    d = Z3Decider("InOrder", IN_ORDER, state_view)
    first = d.explain(views[0])
    d.check(frozen(Delivered={("k3", 2, 0, 5), ("k3", 2, 1, 4)}))  # other queries between
    assert Z3Decider("InOrder", IN_ORDER, state_view).explain(views[0]) == first
    assert d.explain(views[0]) == first


# ---- memo --------------------------------------------------------------------------------

def test_memo_is_keyed_by_the_relations_the_formula_mentions():
    d = Z3Decider("NoStaleRead", NO_STALE_READ, state_view)
    v1 = frozen(Read={("c1", 1, 1)}, Broker={("b1", "up")})
    v2 = frozen(Read={("c1", 1, 1)}, Broker={("b1", "down")})  # differs elsewhere only
    v3 = {"Read": {("c1", 1, 1), ("c2", 2, 1)}, "Broker": set()}  # plain sets are fine
    assert [d.check(v) for v in (v1, v2, v1, v3, v3)] == [True, True, True, False, False]
    st = d.stats()
    assert (st["checks"], st["memo_hits"], st["solver_calls"]) == (5, 3, 2)
    assert st["hit_rate"] == 0.6 and st["distinct_views"] == 2 and st["violating_views"] == 1


def test_memo_ignores_columns_the_formula_does_not_read():
    # the partition a record was delivered from is bound but never read: sliced away
    Deliv = Rel("Deliv", 5, ("key", "producer", "seq", "pos", "partition"))
    k, p, s1, q1, x1, s2, q2, x2 = variables("k p s1 q1 x1 s2 q2 x2")
    f = forall((k, p, s1, q1, x1, s2, q2, x2),
               implies(Deliv(k, p, s1, q1, x1) & Deliv(k, p, s2, q2, x2) & (s1 < s2), q1 < q2))
    d = Z3Decider("InOrder", f, state_view)
    assert d.columns == {"Deliv": (0, 1, 2, 3)}
    from_p0 = frozen(Deliv={("k", 0, 0, 0, "p0"), ("k", 0, 1, 1, "p0")})
    from_p1 = frozen(Deliv={("k", 0, 0, 0, "p1"), ("k", 0, 1, 1, "p0")})
    assert (d.check(from_p0), d.check(from_p1)) == (True, True)
    assert (d.solver_calls, d.hits) == (1, 1)
    swapped = frozen(Deliv={("k", 0, 0, 1, "p0"), ("k", 0, 1, 0, "p1")})
    assert d.check(swapped) is False
    # the counterexample comes from the whole formula: it names the partitions too
    assert d.explain(swapped) == {"k": "k", "p": 0, "s1": 0, "q1": 1, "x1": "p0",
                                  "s2": 1, "q2": 0, "x2": "p1"}


def test_memo_is_bounded():
    d = Z3Decider("NoStaleRead", NO_STALE_READ, state_view, max_memo=2)
    for n in range(5):
        d.check(frozen(Read={("c", n, n)}))
    assert d.stats()["memo_evictions"] == 2 and len(d.memo) == 1


# ---- properties ----------------------------------------------------------------------------

def test_z3_properties_keep_kind_and_name_and_pass_others_through():
    packed_like = always("Packed", lambda s: True)
    props = [declare("always", "NoStaleRead", NO_STALE_READ, state_view),
             declare("sometimes", "StaleReadSeen", exists((r, a, b), Read(r, a, b) & (a != b)),
                     state_view),
             packed_like]
    zs = z3_properties(props)
    assert [(p.kind, p.name) for p in zs] == [(p.kind, p.name) for p in props]
    assert zs[2] is packed_like
    stale = frozen(Read={("c2", 1, 2)})
    assert [p.check(stale) for p in zs[:2]] == [False, True]
    assert zs[0].explain(stale) == {"r": "c2", "a": 1, "b": 2}
    st = z3_stats(zs)
    assert st["decided_by_z3"] == ["NoStaleRead", "StaleReadSeen"]
    assert st["passed_through"] == ["Packed"]
    assert st["checks"] == 2 and st["solver_calls"] == 2


def test_decider_pickles_for_other_processes():
    d = Z3Decider("NoStaleRead", NO_STALE_READ, state_view)
    d.check(frozen(Read={("c", 1, 1)}))
    copy = pickle.loads(pickle.dumps(d))
    assert copy.checks == 0 and not copy.memo  # runtime state stays behind
    assert copy.check(frozen(Read={("c", 1, 2)})) is False


def test_properties_survive_cloudpickle_as_spark_ships_them():
    cloudpickle = pytest.importorskip("pyspark.cloudpickle")
    props = z3_properties([declare("always", "NoStaleRead", NO_STALE_READ, lambda s: s),
                           declare("always", "InOrder", IN_ORDER, lambda s: s)])
    props[0].check(frozen(Read={("c", 1, 1)}))  # a live solver must not travel
    shipped = cloudpickle.loads(cloudpickle.dumps(props))
    a, b = (p.check.__self__ for p in shipped)
    assert a.session is b.session  # still one z3 context per process
    stale = frozen(Read={("c", 1, 2)})
    assert shipped[0].check(stale) is False
    assert shipped[0].explain(stale) == {"r": "c", "a": 1, "b": 2}


# ---- bad formulas and views --------------------------------------------------------------

def test_shadowed_variable_is_refused():
    x = variables("x")[0]
    P = Rel("P", 1)
    with pytest.raises(Z3ModeError, match="quantified again"):
        Z3Decider("f", forall(x, implies(P(x), exists(x, P(x)))), state_view)


def test_unbound_variable_is_refused():
    x, y = variables("x y")
    with pytest.raises(Z3ModeError, match="not bound"):
        Z3Decider("f", forall(x, Rel("P", 1)(y)), state_view)


def test_fractional_value_is_refused_with_the_fix():
    d = Z3Decider("f", NO_STALE_READ, state_view)
    with pytest.raises(Z3ModeError, match="use integers"):
        d.check(frozen(Read={("c", 1.5, 1.5)}))
