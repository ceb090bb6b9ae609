"""A run's digest tells apart states that Python's hash does not (``hash(-1) ==
hash(-2)``): a mutant that turns a ``-1`` into a ``-2`` inside every state reaches other
states, as many, and is not equivalent; a mutant that changes no state still is."""
import pytest

from kmc.mutate.runner import make_plan, mutate
from kmc.reports.regress.suite import Entry

#: a counter beside a sentinel -1 that no step reads
SENTINEL = '''from kmc import Model, always


class Sentinel(Model):
    name = "sentinel"

    def init_states(self):
        return [(0, -1)]

    def actions(self, s):
        if s[0] > 100:
            return []
        return ["step"] if s[0] < 2 else []

    def next_state(self, s, a):
        return (s[0] + 1, s[1])

    def properties(self):
        return [always("Small", lambda s: s[0] <= 2)]


def make():
    return Sentinel()
'''


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    path = tmp_path_factory.mktemp("sentinel") / "mutate_sentinel_model.py"
    path.write_text(SENTINEL)
    return path


@pytest.mark.parametrize("explorer", ["bfs", "dfs"])
def test_a_sentinel_turned_from_minus_one_to_minus_two_is_not_equivalent(sentinel,
                                                                         explorer):
    """The mutant reaches (0, -2), (1, -2), (2, -2): as many states as the baseline,
    every verdict the same, other states: survived. BFS digests its own state keys,
    DFS the printed forms of the states it expanded."""
    plan = make_plan([Entry(id="s", scenario=f"{sentinel}:make", explorer=explorer)])
    line = SENTINEL.splitlines().index("        return [(0, -1)]") + 1
    plan.mutants = [m for m in plan.mutants
                    if m.line == line and m.description == "1 -> 2"]
    (row,) = mutate(plan, jobs=1, replay=False)["mutants"]
    assert row["outcome"] == "survived", row
    assert row["evidence"] == ["s: other states reached, as many as before"]


@pytest.mark.parametrize("explorer", ["bfs", "dfs"])
def test_a_mutant_that_changes_no_state_is_still_equivalent(sentinel, explorer):
    """``s[0] > 100`` -> ``s[0] >= 100`` never fires either: explored in full (no
    replay), the mutant's runs give the baseline's digest."""
    plan = make_plan([Entry(id="s", scenario=f"{sentinel}:make", explorer=explorer)])
    line = SENTINEL.splitlines().index("        if s[0] > 100:") + 1
    plan.mutants = [m for m in plan.mutants
                    if m.line == line and m.operator == "cmp" and m.n == 0]
    (row,) = mutate(plan, jobs=1, replay=False)["mutants"]
    assert (row["description"], row["outcome"]) == ("`>` -> `>=`", "equivalent"), row
