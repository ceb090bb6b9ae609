"""BFS and Spark return the identical counterexample (and witness) for every property, not
only one of the same length: both follow the core's one rule (``explorers.core``): of the
violating states of the shallowest level, the one with the smallest state key, reached
through the parent with the smallest key at each level.

Every level of the Spark runs is forced onto Spark (driver_level_max=0), so the levels are
split over several owner partitions and the discoveries of several partitions compete.
"""
from __future__ import annotations

import pytest

from kmc import catalog
from kmc.explorers.bfs import bfs
from kmc.explorers.core import Core
from kmc.explorers.keyarrays import to_ints
from kmc.explorers.spark import spark_bfs
from kmc.explorers.spark.placement import place_by_partition_key
from kmc.explorers.visited import keys_array
from kmc.invariants import quiescent
from kmc.model import Model
from kmc.model.validation.twophase import TwoPhase

pytestmark = pytest.mark.slow

CASES = [("stale-read", "legacy", {}), ("stale-state", "kip516-no-fetch-id", {}),
         ("expand", "linear-no-fencing", {}), ("shrink", "linear-no-fencing", {}),
         ("twophase", "broken-commit", {"rm": 4})]
#: a second case of each model family, in the full tier (`-m full`)
FULL_TIER = {("stale-state", "kip516-no-fetch-id"), ("shrink", "linear-no-fencing")}
#: every level of a Spark run here is a Spark job, so each run stops at a depth bound:
#: stale-state's 23 levels are cut to the 12 that hold its two violations and four
#: witnesses (11,934 of its 25,874 states); the others to the levels that hold every one
#: of their discoveries (shrink 18 of 31 levels, 5,799 of 17,466 states; stale-read 14
#: of 19; expand 17 of 23)
BOUNDS = {("stale-state", "kip516-no-fetch-id"): {"max_depth": 12},
          ("shrink", "linear-no-fencing"): {"max_depth": 18},
          ("stale-read", "legacy"): {"max_depth": 14},
          ("expand", "linear-no-fencing"): {"max_depth": 17}}


def _make(name, variant, params):
    scenario = catalog.scenarios()[name]
    return scenario.make(variant, params)[0], scenario.options.get("deadlock", False)


def _traces(r) -> dict:
    return {n: (d.kind, d.trace.init_index, tuple(d.trace.action_indices))
            for n, d in r.discoveries.items()}


@pytest.mark.parametrize("name,variant,params", [
    pytest.param(*c, marks=[pytest.mark.full] if c[:2] in FULL_TIER else []) for c in CASES],
                         ids=[f"{n}-{v}" for n, v, _p in CASES])
def test_bfs_and_spark_pick_the_same_counterexample(sc, name, variant, params):
    model, deadlock = _make(name, variant, params)
    bounds = BOUNDS.get((name, variant), {})
    want = bfs(model, deadlock=deadlock, **bounds)
    got = spark_bfs(_make(name, variant, params)[0], deadlock=deadlock, driver_level_max=0,
                    **bounds)
    assert (got.unique_states, got.generated_states) == \
        (want.unique_states, want.generated_states)
    assert got.verdicts() == want.verdicts()
    assert len(want.discoveries) >= 2  # more than the headline is compared
    assert _traces(got) == _traces(want)
    assert list(got.discoveries) == list(want.discoveries)  # both in declaration order


def test_the_rule_is_the_smallest_key_of_the_shallowest_level():
    """Among all violating states of the level where TCConsistent first fails, BFS keeps
    the one with the smallest key, and every step of its trace comes from the parent
    with the smallest key (what Spark computes per partition and merges)."""
    model = TwoPhase(4, broken=True)
    core = Core(model)
    got = bfs(TwoPhase(4, broken=True)).discoveries["TCConsistent"].trace
    prop = next(p for p in model.properties() if p.name == "TCConsistent")
    levels = _levels(core, len(got))
    violators = [s for s in levels[-1] if not prop.check(s)]
    assert len(violators) > 1  # a real tie to break
    assert core.rkey(got.last) == min(map(core.rkey, violators))
    for d in range(len(got) - 1, 0, -1):
        parents = [p for p in levels[d - 1] if any(t == got.states[d]
                                                  for _a, t in core.successors(p))]
        assert core.rkey(got.states[d - 1]) == min(map(core.rkey, parents))


def test_the_order_key_is_the_spark_key():
    """The local engines order states by the Spark explorer's keys: the state key, or for a
    model that names a partition key, the locality-preserving key Spark uses."""
    for name, variant, params in CASES:
        model = _make(name, variant, params)[0]
        local, spark = Core(model), Core(model)
        place_by_partition_key(spark)
        states = [s for _i, s in local.initial()]
        for s in list(states):
            states += [t for _a, t in local.successors(s)]
        assert len(states) > 1
        assert [local.order_key(s) for s in states] == [spark.rkey(s) for s in states]
        keys = keys_array(map(local.rkey, states), len(states), local.key_dtype)
        assert to_ints(local.order_keys(keys, states)) == [spark.rkey(s) for s in states]
        assert local.by_partition_key == (name.startswith("stale")), name


class Fan(Model):
    """One step from the root to one of six dead ends: six deadlocks, and three quiescent
    violations, all in one level."""
    name = "fan"

    def init_states(self):
        return [0]

    def actions(self, s):
        return list(range(6)) if s == 0 else []

    def next_state(self, s, a):
        return ("leaf", a)

    def properties(self):
        return [quiescent("EvenLeaf", lambda s: s == 0 or s[1] % 2 == 0)]


def test_quiescent_and_deadlock_follow_the_same_rule():
    """Properties checked on expanded states keep the smallest key of their level too,
    whichever order the model generates the states in."""
    core = Core(Fan(), deadlock=True)
    r = bfs(Fan(), deadlock=True)
    leaves = [("leaf", a) for a in range(6)]
    assert core.rkey(r.discoveries["Deadlock"].trace.last) == min(map(core.rkey, leaves))
    odd = [("leaf", a) for a in (1, 3, 5)]
    assert core.rkey(r.discoveries["EvenLeaf"].trace.last) == min(map(core.rkey, odd))
    assert list(r.discoveries) == ["EvenLeaf", "Deadlock"]  # declaration order


def _levels(core, n) -> list:
    """The first ``n`` BFS levels as lists of states (plain breadth-first search)."""
    seen, level = set(), []
    for _i, s in core.initial():
        seen.add(core.rkey(s))
        level.append(s)
    out = [level]
    for _ in range(n - 1):
        nxt = []
        for s in out[-1]:
            for _a, t in core.successors(s):
                if core.rkey(t) not in seen:
                    seen.add(core.rkey(t))
                    nxt.append(t)
        out.append(nxt)
    return out
