"""Visited keys and trace rows on disk (``explorers.spark.spill``) on a real embedded
local[2] Spark: with a memory bound of one byte per partition every level writes runs,
merges keep at most the fan-in per partition, and the run gives exactly the counts,
verdicts and counterexamples (states and actions) of the in-memory run and of BFS — on
a Kafka scenario (partition-key owners that move between levels) and on a packed model;
a checkpointed run with spill on resumes to the same answers; tasks that die after
writing their runs and are retried give the same answers too."""
from __future__ import annotations

import os

import pytest

from kmc.api import build
from kmc.explorers.bfs import bfs
from kmc.explorers.core import Core
from kmc.explorers.spark import spark_bfs, spill
from kmc.explorers.spark.placement import place_by_partition_key
from kmc.explorers.spark.run import Run
from kmc.model.validation.twophase import TwoPhase
from spark_answers import summary
from spark_partitions import SimulatedPartitions, explore_partitioned

pytestmark = pytest.mark.slow

FAN_IN = 2  # merges at nearly every level


def _traces(r) -> dict:
    return {n: (d.trace.init_index, d.trace.action_indices, d.trace.states)
            for n, d in r.discoveries.items()}


def _answers(r) -> tuple:
    return summary(r), r.coverage, _traces(r)


def _spark(make, mem, monkeypatch, **opts):
    monkeypatch.setattr(spill, "VISITED_MEM", mem)
    monkeypatch.setattr(spill, "FAN_IN", FAN_IN)
    return spark_bfs(make(), partitions=3, driver_level_max=0, **opts)


def _spark_levels(r) -> list:
    """The committed Spark levels (a level expanded at the depth bound adds nothing)."""
    return [lv for lv in r.extra["spark"]["levels"] if lv["mode"] == "spark" and lv["new"]]


@pytest.mark.parametrize("make, depth", [
    # a Kafka model spills in test_retried_tasks_reread_their_runs too: full tier (-m full)
    pytest.param(lambda: build("stale-read", "legacy", {}), 14, id="stale-read-legacy",
                 marks=pytest.mark.full),
    pytest.param(lambda: TwoPhase(5), None, id="twophase-rm5-packed"),
])
def test_spilled_runs_give_the_in_memory_answers(sc, monkeypatch, make, depth):
    want = bfs(make(), max_depth=depth)
    in_memory = _spark(make, 1 << 40, monkeypatch, max_depth=depth)
    spilled = _spark(make, 1, monkeypatch, max_depth=depth)
    assert _answers(spilled) == _answers(in_memory) == _answers(want)
    assert spilled.visited_bytes == in_memory.visited_bytes
    levels, kept = _spark_levels(spilled), _spark_levels(in_memory)
    assert len(levels) > 2 * FAN_IN  # more spills than one partition may keep runs
    # everything went to disk: nothing of the visited keys or rows stays in memory
    assert [lv["memory_bytes"] for lv in levels] == [0] * len(levels)
    assert [lv["disk_bytes"] for lv in levels] == [lv["memory_bytes"] for lv in kept]
    assert max(lv["runs"] for lv in levels) <= 3 * FAN_IN  # merged: bounded fan-in
    assert levels[-1]["runs"] >= 3 and not any(lv["runs"] for lv in kept)


def test_a_spilling_checkpointed_run_resumes_to_the_same_answers(sc, monkeypatch,
                                                                 tmp_path, key_dir):
    """A run stopped at a depth bound with its levels checkpointed, then resumed with
    spill on (to a larger bound): the checkpoint's blocks hold the keys and rows
    themselves, the resumed run spills again, and its answers are the uninterrupted
    run's. The resumed driver reads only the newest levels' trace rows: the
    counterexamples walk the older levels back through the executors' rows."""
    make = lambda: build("stale-read", "legacy", {})  # noqa: E731
    want = bfs(make(), max_depth=15)
    first = _spark(make, 1, monkeypatch, max_depth=8, checkpoint_dir=str(tmp_path / "c"))
    assert first.stopped_by == "max_depth"
    resumed = _spark(make, 1, monkeypatch, checkpoint_dir=str(tmp_path / "c"), resume=True,
                     max_depth=15)
    assert resumed.extra["spark"]["resumed_at_level"] == 8
    assert _answers(resumed) == _answers(want)
    assert any(len(d.trace) > 8 for d in resumed.discoveries.values())
    after = [lv for lv in _spark_levels(resumed) if lv["level"] > 8]
    assert after and all(lv["memory_bytes"] == 0 and lv["disk_bytes"] for lv in after)
    assert resumed.extra["trace_bytes_driver"] < resumed.extra["trace_bytes"] / 2


class _RetriedSpilling(SimulatedPartitions):
    """The executors' task played in one process (``test_spark_level``), spilling
    every key at every level, and each task attempted twice: the first attempt dies
    right after it wrote its runs, merged them and deleted the runs it may delete
    (once its block is out), and the second one runs from the same input."""

    def __init__(self, core, frontier, nparts):
        super().__init__(core, frontier, nparts, spooled=True)
        self._embedded, self.spill_bound = True, 1
        self._runs = spill.RunDirectory()

    def _launch(self, parent, task):
        for pid, records in enumerate(parent):
            for _dest, rec in task(pid, iter(records)):
                if rec[0] == "B":
                    break  # the first attempt dies here; its output is lost
        return super()._launch(parent, task)


@pytest.mark.parametrize("make", [lambda: build("stale-read", "kip516", {}),
                                  lambda: TwoPhase(4, broken=True)],
                         ids=["stale-read-kip516", "twophase-rm4-broken"])
def test_retried_tasks_reread_their_runs(monkeypatch, make):
    """A retried task never sees half a run nor a run its input block names deleted:
    the answers are BFS's, counterexamples included."""
    monkeypatch.setattr(spill, "FAN_IN", FAN_IN)
    core = Core(make())
    place_by_partition_key(core)
    run = Run(core, 0, False, None, None, None)
    frontiers = []
    got = explore_partitioned(run, lambda f: _RetriedSpilling(core, f, 3), frontiers)
    assert _answers(got) == _answers(bfs(make()))
    assert max(lv["runs"] for lv in _spark_levels(got)) >= 3
    assert not os.path.exists(frontiers[0]._runs.dir)  # removed with the frontier
