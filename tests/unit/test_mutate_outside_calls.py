"""A mutant of code that runs outside the successors (a property's helper, the
explorer's question whether an action is a fault) is explored reusing the recorded
successors, every state's key and answers its own: the outcomes of a full exploration.
Code a cached function calls is still explored in full."""
import pytest

from kmc.mutate.runner import make_plan, run_baseline, run_mutants
from kmc.reports.regress.suite import Entry

#: a counter to 3: ``small`` only a property calls, ``bump`` the step and a property,
#: ``is_fault`` only the explorer (asking which states are quiescent for ``Finished``),
#: ``memo_step`` runs inside an ``lru_cache``d step helper
SOURCE = '''from functools import lru_cache

from kmc import Model, always, quiescent, sometimes

LIMIT = 3


def small(x):
    return x <= LIMIT


def bump(x):
    return x + 1


def memo_step(x):
    return x + 1


@lru_cache(maxsize=None)
def cached_next(x):
    return memo_step(x)


class Outside(Model):
    name = "outside"

    def init_states(self):
        return [(0, 0)]

    def actions(self, s):
        out = []
        if s[0] < 3:
            out.append("inc")
        if s[1] < 1:
            out.append("crash")
        return out

    def next_state(self, s, a):
        if a == "crash":
            return (s[0], s[1] + 1)
        return (bump(s[0]) if s[0] < 2 else cached_next(s[0]), s[1])

    def is_fault(self, a):
        return a == "crash"

    def properties(self):
        return [always("Small", lambda s: small(s[0])),
                always("Bounded", lambda s: bump(s[0]) <= 4),
                quiescent("Finished", lambda s: s[0] == 3),
                sometimes("Three", lambda s: s[0] == 3)]


def make():
    return Outside()
'''



@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every mutant run twice: as ``kmc mutate`` runs it, and explored in full; with
    how each replayed run was decided."""
    path = tmp_path_factory.mktemp("outside") / "mutate_outside_model.py"
    path.write_text(SOURCE)
    plan = make_plan([Entry(id="outside", scenario=f"{path}:make")])
    base = run_baseline(plan, 2)
    hows = {}
    fast, _ = run_mutants(plan, base, 2,
                          on_result=lambda m, r: hows.update({m.id: r["how"]}))
    full, _ = run_mutants(plan, base, 2, replay=False)
    return fast, full, hows


def test_outcomes_are_those_of_a_full_exploration(runs):
    fast, full, _hows = runs
    key = lambda r: (r["id"], r["outcome"], r["killed_by"], r["evidence"])  # noqa: E731
    assert [key(r) for r in fast] == [key(r) for r in full]


def test_code_called_outside_the_successors_reuses_them(runs):
    fast, _full, hows = runs
    for name in ("small", "bump", "is_fault", "properties"):
        decided = [how for r in fast if r["function"] == name
                   for how, _s in hows[r["id"]].values()]
        assert decided and all(h.startswith(("reuse successors", "quiet"))
                               for h in decided), (name, decided)
        assert any(h.startswith("reuse successors") for h in decided), name
    # the recorded answers are not taken: `x <= LIMIT` -> `x < LIMIT` violates Small
    # on the state 3, which the baseline recorded as holding it
    strict = [r for r in fast if r["function"] == "small"
              and r["description"] == "`<=` -> `<`"]
    assert [(r["outcome"], r["killed_by"]) for r in strict] == [("property", ["Small"])]
    # nor the explorer's recorded quiescence: with a crash counted as a step, no state
    # is quiescent until the crash budget is spent, and Finished fails where it is
    faults = [r for r in fast if r["function"] == "is_fault"]
    assert [(r["outcome"], r["killed_by"]) for r in faults] == [("property", ["Finished"])]


def test_the_invariants_answers_are_taken_only_where_they_never_called_the_code(runs):
    """``is_fault`` no invariant or witness calls: their recorded answers hold on the
    recorded states; ``small`` and ``bump`` they call: every state is checked anew."""
    fast, _full, hows = runs

    def decided(name):
        return {how for r in fast if r["function"] == name
                for how, _s in hows[r["id"]].values() if how != "quiet"}
    assert decided("is_fault") == {"reuse successors: called outside successors, "
                                   "answers recorded"}
    assert decided("small") == decided("bump") == {
        "reuse successors: called outside successors"}


def test_code_a_cached_function_calls_is_explored_in_full(runs):
    fast, _full, hows = runs
    rows = [r for r in fast if r["function"] == "memo_step"]
    decided = [how for r in rows for how, _s in hows[r["id"]].values()]
    assert decided and all(h.startswith(("full", "quiet")) for h in decided), decided
    assert any(h.startswith("full") for h in decided)
