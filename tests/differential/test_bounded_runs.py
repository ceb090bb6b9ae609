"""One stopping rule for every explorer: a run stopped by a bound gives the same verdicts
(and so the same exit code) on BFS, Spark and, for a depth bound, DFS.

- ``--max-states N``: BFS and Spark keep the same states of the level that crosses N (the
  smallest keys, ``explorers.visited.smallest``), the initial states' level included, so
  they agree on counts and verdicts; DFS visits its first N states in its own order,
  which is a different set by nature (docs/architecture.md says so): it is compared on
  depth bounds, and only its count is pinned under a state bound.
- ``--max-depth D``: every explorer explores exactly the states within D steps.
"""
from __future__ import annotations

import pytest

from kmc import Model, always, api, sometimes
from spark_answers import summary

pytestmark = pytest.mark.slow

# (scenario, variant, params, bounds): small bounds that stop each run mid-way, on models
# where a violation lies inside, at, or beyond the bound
STATE_BOUNDED = [
    ("stale-read", "legacy", {}, {"max_states": 866}),
    ("stale-read", "kip516", {}, {"max_states": 900}),
    ("expand", "modulo", {}, {"max_states": 250}),
    ("twophase", "broken-commit", {"rm": 4}, {"max_states": 120}),
    ("twophase", "standard", {"rm": 5}, {"max_states": 3000}),
]
DEPTH_BOUNDED = [
    ("stale-read", "legacy", {}, {"max_depth": 9}),
    ("stale-read", "kip516", {}, {"max_depth": 8}),
    ("expand", "modulo", {}, {"max_depth": 7}),
    ("twophase", "broken-commit", {"rm": 4}, {"max_depth": 5}),
    ("twophase", "standard", {"rm": 5}, {"max_depth": 8}),
]


#: the same bounds on kip516 (no violation within them) are in the full tier (`-m full`):
#: twophase standard is the default tier's run without one
def _tiered(cases):
    return [pytest.param(c, marks=[pytest.mark.full] if c[1] == "kip516" else [])
            for c in cases]


def _run(case, explorer, **extra):
    scenario, variant, params, bounds = case
    return api.check(scenario, variant, params, explorer=explorer, **bounds, **extra)


def _ids(cases):
    return [f"{c[0]}.{c[1]}.{next(iter(c[3].items()))}" for c in cases]


@pytest.mark.parametrize("case", _tiered(STATE_BOUNDED + DEPTH_BOUNDED),
                         ids=_ids(STATE_BOUNDED + DEPTH_BOUNDED))
def test_bfs_and_spark_stop_alike(sc, case):
    want = _run(case, "bfs")
    assert not want.complete  # the bound really stopped the run
    got = _run(case, "spark", driver_level_max=0, partitions=3)
    assert summary(got) == summary(want)
    assert got.exit_code() == want.exit_code()


@pytest.mark.parametrize("case", _tiered(DEPTH_BOUNDED), ids=_ids(DEPTH_BOUNDED))
def test_dfs_gives_bfs_verdicts_on_a_depth_bound(case):
    want, got = _run(case, "bfs"), _run(case, "dfs")
    assert got.verdicts() == want.verdicts()
    assert got.exit_code() == want.exit_code()
    if got.stopped_by == want.stopped_by == "max_depth":  # neither stopped early, decided
        assert got.unique_states == want.unique_states


def test_a_bounded_run_with_nothing_violated_exits_4_and_a_violation_exits_1():
    quiet = _run(("twophase", "standard", {"rm": 5}, {"max_states": 3000}), "bfs")
    assert "unknown" in quiet.verdicts().values() and quiet.exit_code() == 4
    found = _run(("stale-read", "legacy", {}, {"max_states": 866}), "bfs")
    assert found.verdict("NoStaleReplication") == "violated" and found.exit_code() == 1
    complete = api.check("twophase", "standard", {"rm": 3})
    assert complete.complete and complete.exit_code() == 0


class ManyStarts(Model):
    """Ten initial states, each listed twice; every state s < 40 steps to s + 10 by two
    actions. ``by_parity``: a partition key (the order key is then not the state key)."""
    name = "many-starts"

    def __init__(self, bad=7, by_parity=False):
        self.bad = bad
        if by_parity:
            self.partition_key = lambda s: s % 2

    def init_states(self):
        return list(range(10)) * 2

    def actions(self, s):
        return [] if s >= 40 else ["A", "B"]

    def next_state(self, s, a):
        return s + 10

    def properties(self):
        return [always("NotBad", lambda s: s != self.bad),
                sometimes("Big", lambda s: s >= 30)]


@pytest.mark.parametrize("by_parity", [False, True], ids=["state-keys", "partition-keys"])
def test_the_initial_states_obey_max_states_alike_on_bfs_and_spark(sc, by_parity):
    from kmc.explorers.core import Core

    core = Core(ManyStarts(by_parity=by_parity))
    smallest = sorted(range(10), key=core.order_key)[:3]
    want = api.check(ManyStarts(by_parity=by_parity), max_states=3)
    assert (want.unique_states, want.generated_states, want.max_depth) == (3, 10, 1)
    assert want.stopped_by == "max_states" and not want.complete
    # the kept initial states are the three smallest order keys: 7 is violated only
    # when it is one of them
    verdict = "violated" if 7 in smallest else "unknown"
    assert want.verdicts() == {"NotBad": verdict, "Big": "unknown"}
    assert want.exit_code() == (1 if 7 in smallest else 4)
    for bad in smallest + [s for s in range(10) if s not in smallest]:
        r = api.check(ManyStarts(bad, by_parity), max_states=3)
        assert r.verdict("NotBad") == ("violated" if bad in smallest else "unknown"), bad
    got = api.check(ManyStarts(by_parity=by_parity), explorer="spark", max_states=3,
                    driver_level_max=0, partitions=3)
    assert summary(got) == summary(want)
    for bad in (smallest[0], next(s for s in range(10) if s not in smallest)):
        pair = [api.check(ManyStarts(bad, by_parity), explorer=e, max_states=3,
                          **({"partitions": 3} if e == "spark" else {}))
                for e in ("bfs", "spark")]
        assert summary(pair[0]) == summary(pair[1]), bad
    # exactly as many as the initial states: the next level keeps none
    full = api.check(ManyStarts(by_parity=by_parity), max_states=10)
    assert (full.unique_states, full.stopped_by) == (10, "max_states")
    assert full.verdict("NotBad") == "violated"
    # DFS stays within the bound too, in its own order: depth first from the first
    # initial state listed (0, 10, 20), never looking at the others
    r = api.check(ManyStarts(20, by_parity), explorer="dfs", max_states=3)
    assert (r.unique_states, r.stopped_by) == (3, "max_states")
    assert r.discoveries["NotBad"].trace.states == [0, 10, 20]
