"""A counterexample's rebuild asks the model's ``actions`` only for the steps they take:
a mutant that lists one more candidate with no effect rebuilds the same trace, so its
run is still decided by the replay. A property that reads the list itself still sees
the difference."""
from kmc.mutate.runner import make_plan, mutate
from kmc.reports.regress.suite import Entry
from mutate_toy import outcome

#: a counter with a budget that starts empty: ``spend`` is listed only while
#: ``has_budget``, and does nothing without one. ``Small`` is violated (x reaches 3), so
#: the run rebuilds a counterexample through ``actions``
LISTING = '''from kmc import Model, always


def has_budget(b):
    return b > 0


class Listing(Model):
    name = "listing"

    def init_states(self):
        return [(0, 0)]

    def actions(self, s):
        out = []
        if s[0] < 3:
            out.append("inc")
        if has_budget(s[1]):
            out.append("spend")
        return out

    def next_state(self, s, a):
        if a == "inc":
            return (s[0] + 1, s[1])
        return None if s[1] <= 0 else (s[0], s[1] - 1)

    def properties(self):
        return [always("Small", lambda s: s[0] < 3)%s]


def make():
    return Listing()
'''

#: the same counter with a property that reads the list of actions itself
LISTED = ',\n                always("OneListed", lambda s: len(self.actions(s)) <= 1)'


def _runs(tmp_path, stem: str, text: str, explorer: str = "bfs"):
    """The model ``text``'s mutants on one entry of ``explorer``, with replay and
    explored in full."""
    path = tmp_path / f"{stem}.py"
    path.write_text(text)
    plan = lambda: make_plan([Entry(id="toy", scenario=f"{path}:make",  # noqa: E731
                                    explorer=explorer)])
    return mutate(plan(), jobs=2), mutate(plan(), jobs=2, replay=False)


def _guard(report):
    """The mutant ``b > 0`` -> ``b >= 0``: ``spend`` listed on every state."""
    rows = [r for r in report["mutants"] if r["function"] == "has_budget"
            and r["operator"] == "cmp" and r["description"] == "`>` -> `>=`"]
    assert len(rows) == 1
    return rows[0]


def test_a_candidate_without_effect_is_replayed_through_the_rebuild(tmp_path):
    fast, full = _runs(tmp_path, "mutate_listing_model", LISTING % "")
    assert [outcome(r) for r in fast["mutants"]] == [outcome(r) for r in full["mutants"]]
    row = _guard(fast)
    assert row["outcome"] == "equivalent" and row["replayed"] == 1
    assert _guard(full)["replayed"] == 0


def test_a_property_reading_the_list_still_sees_the_candidate(tmp_path):
    fast, full = _runs(tmp_path, "mutate_listed_model", LISTING % LISTED)
    assert [outcome(r) for r in fast["mutants"]] == [outcome(r) for r in full["mutants"]]
    row = _guard(fast)
    assert row["outcome"] == "property" and row["killed_by"] == ["OneListed"]
    assert row["replayed"] == 0


#: a counter with two actions that take the same step (``inc`` and, while ``both_ways``,
#: ``inc-again``); ``Small`` is violated. A mutant that drops ``inc-again`` changes the
#: actions but no state any state leads to; ``Settles`` (a liveness property) makes
#: the run read the actions
TWICE = '''from kmc import Model, always, eventually


def both_ways(x):
    return x < 3


class Twice(Model):
    name = "twice"
    weakly_fair = ("inc", "inc-again")

    def init_states(self):
        return [(0,)]

    def actions(self, s):
        out = []
        if s[0] < 3:
            out.append("inc")
            if both_ways(s[0]):
                out.append("inc-again")
        return out

    def next_state(self, s, a):
        return (s[0] + 1,) if s[0] < 3 else None

    def action_names(self):
        return ["inc", "inc-again"]

    def properties(self):
        return [always("Small", lambda s: s[0] < 3)%s]


def make():
    return Twice()
'''
SETTLES = ',\n                eventually("Settles", lambda s: s[0] == 3)'


def _dropped(report):
    """The mutant that drops ``out.append("inc-again")``."""
    rows = [r for r in report["mutants"] if r["operator"] == "drop-stmt"
            and "inc-again" in r["description"]]
    assert len(rows) == 1
    return rows[0]


def test_a_breadth_first_run_compares_successors_by_their_states(tmp_path):
    fast, full = _runs(tmp_path, "mutate_twice_bfs", TWICE % "", "bfs")
    assert [outcome(r) for r in fast["mutants"]] == [outcome(r) for r in full["mutants"]]
    row = _dropped(fast)
    assert row["outcome"] == "equivalent" and row["replayed"] == 1


def test_runs_that_read_the_actions_compare_them_exactly(tmp_path):
    """A depth-first run (its order) and a liveness check (fairness) read the
    actions: the same mutant is explored there."""
    for stem, text, explorer in (("mutate_twice_dfs", TWICE % "", "dfs"),
                                 ("mutate_twice_live", TWICE % SETTLES, "bfs")):
        fast, full = _runs(tmp_path, stem, text, explorer)
        assert [outcome(r) for r in fast["mutants"]] == [outcome(r) for r in full["mutants"]]
        assert _dropped(fast)["replayed"] == 0, explorer
