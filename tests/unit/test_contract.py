"""Eager model validation and trace replay errors say what is wrong and how to fix it."""
import pytest

from kmc.invariants import always
from kmc.model import Model, ModelError, validate_model
from kmc.model.packed import Int, PackedModel
from kmc.model.trace import ReplayError, Trace
from toymodels import Workers


class Base(Model):
    name = "t"

    def __init__(self, inits=((0,),), props=(), succ=None):
        self._inits, self._props, self._succ = list(inits), list(props), succ

    def init_states(self):
        return self._inits

    def actions(self, s):
        return [0]

    def next_state(self, s, a):
        return self._succ(s) if self._succ else None

    def properties(self):
        return self._props


def test_no_initial_states():
    with pytest.raises(ModelError, match="no initial states"):
        validate_model(Base(inits=()))


def test_unhashable_state():
    with pytest.raises(ModelError, match="unhashable.*tuples"):
        validate_model(Base(inits=([1, 2],)))


def test_non_canonical_successor():
    with pytest.raises(ModelError, match="non-canonical.*frozenset"):
        validate_model(Base(succ=lambda s: (frozenset({1}),)))


def test_duplicate_property_names():
    p = always("P", lambda s: True)
    with pytest.raises(ModelError, match="two properties named 'P'"):
        validate_model(Base(props=[p, always("P", lambda s: False)]))


def test_property_must_be_a_property_value():
    with pytest.raises(ModelError, match="invariants.always"):
        validate_model(Base(props=[lambda s: True]))


def test_missing_init_states_method():
    class Empty(Model):
        pass
    with pytest.raises(ModelError, match="init_states"):
        validate_model(Empty())


def test_replay_detects_non_deterministic_actions():
    m = Workers(2, 1)
    t = Trace.replay(m, 0, [0, 0])
    assert len(t) == 3

    class Shuffled(Workers):
        def actions(self, s):
            return list(reversed(super().actions(s)))
    with pytest.raises(ReplayError, match="not deterministic|differs") as e:
        Trace.replay(Shuffled(2, 1), 0, [0, 0], expect_keys=[m.init_states()[0],
                                                              *t.states[1:]],
                     key=lambda s: s)
    assert e.value.step == 1


def test_replay_of_a_disabled_action_names_the_step():
    with pytest.raises(ReplayError, match="step 1: action #99"):
        Trace.replay(Workers(2, 1), 0, [99])


def test_packed_model_errors_are_explained():
    class TooWide(PackedModel):
        def declare(self, spec):
            for i in range(9):
                spec.var(f"x{i}", Int(0, 255))
    with pytest.raises(ModelError, match="at most 64"):
        TooWide()

    class Overflow(PackedModel):
        name = "overflow"

        def declare(self, spec):
            spec.var("x", Int(0, 3))
            spec.init(x=3)
            spec.rule("Inc", then={"x": "x + 1"})
    with pytest.raises(ModelError, match="leaves its domain 0..3"):
        Overflow().successors(Overflow().init_states()[0])

    class BadExpr(PackedModel):
        def declare(self, spec):
            spec.var("x", Int(0, 3))
            spec.init(x=0)
            spec.rule("Bad", when="x ==")
    with pytest.raises(ModelError, match="cannot parse"):
        BadExpr()


class Two(Base):
    """Two actions from the initial state, to the states ``a`` and ``b``."""

    def __init__(self, a, b, acts=("p", "q")):
        super().__init__(inits=[("start",)])
        self._to, self._acts = {"p": a, "q": b}, acts

    def actions(self, s):
        return self._acts if s == ("start",) else []

    def next_state(self, s, a):
        return self._to[a]


def test_different_states_that_print_alike_are_refused():
    class S(tuple):
        def __repr__(self):
            return "S"  # leaves the fields out
    with pytest.raises(ModelError, match="two different states print alike"):
        validate_model(Two(S((1,)), S((2,))))


def test_actions_answered_as_a_string_are_refused():
    with pytest.raises(ModelError, match=r"actions\(state\) returned str"):
        validate_model(Two((1,), (2,), acts="pq"))


def test_an_action_that_cannot_be_hashed_is_named():
    class Listed(Two):
        def actions(self, s):
            return [["p"]] if s == ("start",) else []

        def next_state(self, s, a):
            return (1,)
    with pytest.raises(ModelError, match="action of type list, which cannot be hashed"):
        validate_model(Listed((1,), (2,)))


def test_a_state_nested_past_the_recursion_limit_is_refused_in_words():
    deep = (0,)
    for _ in range(5000):
        deep = (deep,)
    with pytest.raises(ModelError, match="nested deeper than kmc can check"):
        validate_model(Base(inits=[deep]))
