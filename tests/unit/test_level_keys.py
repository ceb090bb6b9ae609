"""Every explorer tells states apart the same way, by key (the state's repr): two equal
states that print apart (1 and True), met in one BFS level beyond what validation
samples, are two states to the BFS as they are to the DFS and the visited set."""
import pytest

from kmc import api
from kmc.invariants import always
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
