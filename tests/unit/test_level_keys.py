"""Every explorer tells states apart the same way, by key (the state's repr): two equal
states that print apart (1 and True), met in one BFS level beyond what validation
samples, are two states to the BFS as they are to the DFS and the visited set."""
from typing import NamedTuple

import pytest

from kmc import api
from kmc.invariants import always
from kmc.invariants.liveness import eventually
from kmc.model import Model

CHAIN = 100  # longer than validation's sample: the two states are never sampled


class Apart(Model):
    name = "apart"

    def init_states(self):
        return [(0, "")]

    def actions(self, s):
        if s[0] is True or s[1] == "x":
            return []
        return ["step"] if s[0] < CHAIN else ["p", "q"]

    def next_state(self, s, a):
        if a == "step":
            return (s[0] + 1, "")
        return (1, "x") if a == "p" else (True, "x")

    def properties(self):
        return [always("NeverTrue", lambda s: s[0] is not True)]


@pytest.mark.parametrize("explorer", ["bfs", "dfs"])
def test_equal_states_that_print_apart_are_two_states_to_every_explorer(explorer):
    r = api.check(Apart(), explorer=explorer)
    assert r.unique_states == CHAIN + 3
    assert r.verdict("NeverTrue") == "violated"


class Idle(NamedTuple):
    n: int


class Busy(NamedTuple):  # equal to Idle(n) as a tuple, another state
    n: int


class Phases(Model):
    """Idle(0) -> Busy(0) -> Idle(0) ...: "eventually Busy" holds when Go is fair."""
    name = "phases"
    weakly_fair = ("Go", "Rest")

    def init_states(self):
        return [Idle(0)]

    def actions(self, s):
        return ["Go"] if type(s) is Idle else ["Rest"]

    def next_state(self, s, a):
        return Busy(s.n) if a == "Go" else Idle(s.n)

    def action_name(self, a):
        return a

    def properties(self):
        return [eventually("SomeBusy", lambda s: type(s) is Busy)]


@pytest.mark.parametrize("explorer", ["bfs", "dfs"])
def test_states_of_two_record_types_are_two_states_to_the_liveness_check(explorer):
    r = api.check(Phases(), explorer=explorer)
    assert r.unique_states == 2
    assert r.verdict("SomeBusy") == "holds"
