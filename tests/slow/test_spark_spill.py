"""Visited keys and trace rows on disk (``explorers.spark.spill``) on a real embedded
local[2] Spark: with a memory bound of one byte per partition every level writes runs,
merges keep at most the fan-in per partition, and the run gives exactly the counts,
verdicts and counterexamples (states and actions) of the in-memory run and of BFS — on
a Kafka scenario (partition-key owners that move between levels) and on a packed model;
a checkpointed run with spill on resumes to the same answers."""
from __future__ import annotations

import pytest

from kmc.api import build
from kmc.explorers.bfs import bfs
from kmc.explorers.spark import spark_bfs, spill
from kmc.model.validation.twophase import TwoPhase
from spark_answers import summary

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
    pytest.param(lambda: build("stale-read", "legacy", {}), 14, id="stale-read-legacy"),
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
    spill on (to a larger bound): the checkpoint's blocks hold the keys and rows themselves, the resumed run
    spills again, and its answers are the uninterrupted run's. The resumed driver reads
    only the newest levels' trace rows: the counterexamples walk the older levels back
    through the executors' rows."""
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
