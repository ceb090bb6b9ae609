"""Simulation: bounds hold inside a walk, a walk costs time linear in its length, and a
seed still gives the same run (counts, coverage, discoveries and their traces)."""
from __future__ import annotations

import time

import pytest

from kmc import Model, always, api
from kmc.explorers.simulate import simulate
from kmc.model.validation.diehard import DieHard

# (scenario, variant, params, options) -> what that seeded run gives: distinct and
# generated states, deepest walk, coverage, and per discovery (kind, initial state,
# action indices of its trace)
SEEDED = [
    (("twophase", "broken-commit", {"rm": 4}, dict(seed=0, walks=200, walk_length=40)),
     dict(unique=759, generated=36731, depth=40,
          coverage={"RMChooseToAbort": 2783, "RMPrepare": 2783, "RMRcvAbortMsg": 13252,
                    "RMRcvCommitMsg": 15968, "TMAbort": 695, "TMCommit": 695,
                    "TMRcvPrepared": 555},
          found={"SomeCommit": ["sometimes", 0, [6, 0]],
                 "TCConsistent": ["always", 0, [6, 0, 4, 7]]})),
    (("stale-read", "legacy", {}, dict(seed=11, walks=40, walk_length=80)),
     dict(unique=240, generated=1799, depth=24,
          coverage={"crash": 162, "create": 493, "delete": 98, "deliver-FetchResponse": 50,
                    "deliver-LeaderAndIsr": 288, "deliver-StopReplica": 272,
                    "deliver-StopReplicaResponse": 189, "fetch": 69, "reassign": 24,
                    "restart": 83, "retry-stop": 71},
          found={"DeletionCompletes": ["quiescent", 0, [1, 0, 4, 0, 2, 0]],
                 "NameRecreated": ["sometimes", 0, [3, 1, 1, 2, 2, 0, 0, 2, 1, 2]],
                 "NoStaleRead": ["always", 0, [3, 1, 1, 2, 2, 0, 0, 2, 1, 2, 0, 0, 1, 1,
                                               0, 0, 0]],
                 "NoStaleReplication": ["always", 0, [3, 1, 1, 2, 2, 0, 0, 2, 1, 2, 0, 0,
                                                      1, 1, 0]],
                 "RecreateAfterDelete": ["always", 0, [3, 1, 1, 2, 2]],
                 "RestartWithStaleReplica": ["sometimes", 0, [3, 1, 1, 2]],
                 "StaleFetchAttempted": ["sometimes", 0, [3, 1, 1, 2, 2, 0, 0, 2, 1, 2, 0,
                                                         0, 1]],
                 "StaleReplicasCleaned": ["quiescent", 0, [3, 1, 1, 2, 2, 0, 0, 2, 1, 2, 0,
                                                           0, 1, 1, 0, 0, 0]]})),
    (("diehard", "standard", {}, dict(seed=5, walks=300, walk_length=20)),
     dict(unique=15, generated=36000, depth=20,
          coverage={"BigToSmall": 6000, "EmptyBigJug": 6000, "EmptySmallJug": 6000,
                    "FillBigJug": 6000, "FillSmallJug": 6000, "SmallToBig": 6000},
          found={"NotSolved": ["always", 0, [2, 2, 2, 0, 0, 1, 0, 3, 1, 3, 1, 0, 0, 2, 5,
                                             2, 5, 1, 5]]})),
    (("tcommit", "standard", {"rm": 3}, dict(seed=2, walks=50, walk_length=30,
                                             deadlock=True)),
     dict(unique=32, generated=829, depth=7,
          coverage={"DecideAbort": 484, "DecideCommit": 21, "Prepare": 324},
          found={"Deadlock": ["Deadlock", 0, [0, 0, 2, 0, 1, 0]]})),
    (("twophase", "standard", {"rm": 5}, dict(seed=3, walks=100, walk_length=60)),
     dict(unique=605, generated=32266, depth=60,
          coverage={"RMChooseToAbort": 1894, "RMPrepare": 1894, "RMRcvAbortMsg": 27135,
                    "TMAbort": 573, "TMRcvPrepared": 770, "TMCommit": 0,
                    "RMRcvCommitMsg": 0},
          found={})),
]


@pytest.mark.parametrize("run,want", SEEDED, ids=[f"{r[0]}-{r[1]}" for r, _ in SEEDED])
def test_a_seed_gives_the_same_run(run, want):
    scenario, variant, params, options = run
    r = api.check(scenario, variant, params, explorer="simulate", **options)
    got = dict(unique=r.unique_states, generated=r.generated_states, depth=r.max_depth,
               coverage=r.coverage,
               found={n: [d.kind, d.trace.init_index, d.trace.action_indices]
                      for n, d in sorted(r.discoveries.items())})
    assert got == want
    assert r.stopped_by == "simulation" and not r.complete


def test_the_last_state_of_a_walk_is_checked_for_deadlock():
    """As BFS and DFS check the states at their depth bound: tcommit deadlocks at its
    fourth state, which a walk bounded to four states must still see."""
    bfs = api.check("tcommit", deadlock=True, max_depth=4)
    r = api.check("tcommit", deadlock=True, max_depth=4, explorer="simulate", walks=200)
    assert bfs.verdict("Deadlock") == r.verdict("Deadlock") == "violated"
    assert len(r.discoveries["Deadlock"].trace.states) == 4


def test_a_long_walk_stops_at_the_memory_limit():
    """A walk's keys grow with its length (and the states seen with the walks): the
    guard stops it cleanly, as it stops BFS and DFS."""
    from kmc.explorers.memory import resident_bytes

    class Cycle(Model):  # three states round and round: a walk never ends by itself
        def init_states(self):
            return [0]

        def actions(self, s):
            return ["next"]

        def next_state(self, s, a):
            return (s + 1) % 3

        def properties(self):
            return [always("Small", lambda s: s < 3)]

    limit = resident_bytes() + (32 << 20)
    r = simulate(Cycle(), walks=1, walk_length=10 ** 8, max_memory=limit, time_limit=120)
    assert r.stopped_by == "max_memory" and r.exit_code() == 4
    assert r.extra["resident_bytes_at_stop"] > limit == r.extra["max_memory"]


def test_a_long_walk_stops_at_the_time_limit():
    t = time.monotonic()
    r = simulate(DieHard(), walks=1, walk_length=3_000_000, time_limit=1)
    took = time.monotonic() - t
    assert r.stopped_by == "time_limit"
    assert 1 <= took < 4, f"a 1 s time limit took {took:.1f} s"
    assert 0 < r.max_depth < 3_000_000


def test_a_long_walk_stops_at_max_states():
    r = simulate(DieHard(), walks=1, walk_length=3_000_000, max_states=10)
    assert r.stopped_by == "max_states" and r.unique_states == 10
    assert r.max_depth < 10_000  # the walk ended when the 10th state appeared


def test_a_walk_costs_time_linear_in_its_length():
    """200,000 steps in one walk: about a second. Copying the walk at every step (as a
    trace locator) would cost 2 x 10^10 element copies, minutes."""
    t = time.monotonic()
    r = simulate(DieHard(), walks=1, walk_length=200_000, seed=4)
    took = time.monotonic() - t
    assert r.max_depth == 200_000 and r.stopped_by == "simulation"
    assert took < 10, f"a 200,000-step walk took {took:.1f} s"
    # the discovery's trace is the walk's own prefix up to the violating state
    model = DieHard()
    solved = next(p for p in model.properties() if p.name == "NotSolved")
    trace = r.discoveries["NotSolved"].trace
    assert not solved.check(trace.states[-1])
    assert all(solved.check(s) for s in trace.states[:-1])
