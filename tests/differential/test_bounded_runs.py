"""One stopping rule for every explorer: a run stopped by a bound gives the same verdicts
(and so the same exit code) on BFS, Spark and, for a depth bound, DFS.

- ``--max-states N``: BFS and Spark keep the same states of the level that crosses N (the
  smallest keys, ``explorers.visited.smallest``), so they agree on counts and verdicts;
  DFS visits its first N states in its own order, which is a different set by nature
  (docs/architecture.md says so), and is compared on depth bounds only.
- ``--max-depth D``: every explorer explores exactly the states within D steps.
"""
from __future__ import annotations

import pytest

from kmc import api
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
