"""A model with successors of its own (a fast path, as kmc's Kafka models have) is
recorded step by step through ``actions`` and ``next_state``, whose list the fast path
gives on the baseline's code. A mutant that changes what only the fast path runs, or
only a counterexample's rebuild asks, gets the outcome a full run gives it: the steps
cannot vouch for code they never ran."""
import pytest

from mutate_toy import both_ways, line_of

#: a counter whose run calls ``actions`` and ``next_state`` only to rebuild the witness
#: of ``Three``: the explorer expands states with ``successors``
FAST = '''from kmc import Model, always, sometimes


class Fast(Model):
    name = "fast-path"

    def init_states(self):
        return [(0,)]

    def successors(self, s):
        return [("inc", (s[0] + 1,))] if s[0] < 3 else []

    def actions(self, s):
        return ["inc"] if s[0] < 3 else []

    def next_state(self, s, a):
        return (s[0] + 1,)

    def properties(self):
        return [always("Small", lambda s: s[0] <= 3), sometimes("Three", lambda s: s[0] == 3)]


def make():
    return Fast()
'''


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return both_ways(tmp_path_factory, "mutate_fast_path_model", FAST)


def _key(row):
    return row["outcome"], row["killed_by"]


def test_every_mutant_gets_the_outcome_of_a_full_run(rows):
    fast, full = rows
    assert {k: _key(r) for k, r in fast.items()} == {k: _key(r) for k, r in full.items()}


def test_a_mutant_of_the_fast_path_alone_is_explored(rows):
    fast, _full = rows
    line = line_of('return [("inc", (s[0] + 1,))] if s[0] < 3 else []', FAST)
    own = {r["description"]: r for r in fast.values() if r["line"] == line}
    # no step runs the changed line: the fast path steps by 2, or once more, from (3,)
    # to (4,), where the counterexample of Small cannot be rebuilt by the steps
    for change in ("1 -> 2", "3 -> 4"):
        assert own[change]["outcome"] == "crash" and not own[change]["replayed"], change
        assert own[change]["killed_by"] == ["ReplayError"], change


def test_a_mutant_only_the_rebuild_asks_is_asked_again(rows):
    fast, _full = rows
    line = line_of("return (s[0] + 1,)", FAST)
    step = {r["description"]: r for r in fast.values() if r["line"] == line}
    # ``next_state`` steps by 2: the witness's path cannot be rebuilt
    assert step["1 -> 2"]["outcome"] == "crash" and not step["1 -> 2"]["replayed"]
