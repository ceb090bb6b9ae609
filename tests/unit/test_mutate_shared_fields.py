"""A recorded graph's states hold one object per equal field value, so that the explorer
of a reusing run tells a successor's changed fields from its parent's by identity."""
from typing import NamedTuple

from kmc.mutate.graph import Graph, shared


class W(NamedTuple):
    a: tuple
    b: int
    c: list | None = None


def test_equal_fields_become_one_object_and_every_state_stays_equal():
    first, second = W((1, (2, 3)), 7), W((1, (2, 3)), 8)
    third = W(tuple([1, (2, 3)]), 7)  # equal to ``first``, built apart
    assert first.a is not third.a
    states = [first, second, third]
    copies = list(states)
    shared(states)
    assert states == copies and all(type(s) is W for s in states)
    assert states[0] is first  # nothing to share yet: the object itself is kept
    assert states[1].a is states[0].a and states[2].a is states[0].a
    assert states[2] is not third and states[2].b is states[0].b


def test_a_state_with_an_unhashable_field_or_of_another_type_is_left_alone():
    odd = W((1,), 2, [3])
    other = ("x", 1)
    states = [W((1,), 2), odd, other]
    shared(states)
    assert states[1] is odd and states[2] is other
    plain = [("x", (1,)), ("x", tuple([1]))]
    kept = list(plain)
    shared(plain)  # not records: nothing is rebuilt
    assert all(a is b for a, b in zip(plain, kept))


def test_a_frozen_graph_holds_the_shared_states():
    g = Graph()
    s0 = W((0,), 0)
    s1, s1_again = W((1,), 1), W(tuple([1]), 1)
    g.add(s0, [("up", s1)])
    g.add(s1, [("stay", s1_again)])
    states = g.frozen()[0]
    assert states[0] == s0 and states[1] == s1 and len(states) == 2
    s2 = W(tuple([0]), 5)
    g2 = Graph()
    g2.add(s0, [("jump", s2)])
    states2 = g2.frozen()[0]
    assert states2[1] == s2 and states2[1].a is states2[0].a
