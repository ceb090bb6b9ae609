"""The memory guard (``explorers.memory``): BFS and DFS stop cleanly when the process grows
past ``max_memory`` and end like any bounded run (verdicts unknown, exit code 4)."""
import json
import subprocess
import sys
import textwrap

import pytest

from kmc.explorers.bfs import bfs
from kmc.explorers.dfs import dfs
from kmc.explorers.level import TICK
from kmc.explorers.memory import (MemoryGuard, default_max_memory, resident_bytes,
                                  total_memory)
from kmc.model.validation.twophase import TwoPhase


def _meminfo_total():
    with open("/proc/meminfo") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemTotal:"))


def test_the_default_is_a_share_of_the_machine():
    d = default_max_memory()
    assert d is not None and 0 < d < total_memory() <= _meminfo_total()
    assert d == int(total_memory() * 0.8)
    assert 0 < resident_bytes() < d


def test_the_guard_trips_once_past_its_limit():
    assert not MemoryGuard(None).exceeded()
    assert not MemoryGuard(1 << 60).exceeded()
    g = MemoryGuard(1)
    assert g.exceeded() and g.tripped_at == pytest.approx(resident_bytes(), rel=0.5)
    with pytest.raises(ValueError, match="positive"):
        MemoryGuard(0)


def test_bfs_stops_at_the_first_level_boundary_past_the_limit():
    r = bfs(TwoPhase(4), max_memory=1)
    assert r.stopped_by == "max_memory" and not r.complete
    assert r.unique_states == 1 and r.max_depth == 1  # the initial level, nothing expanded
    assert r.verdict("TCConsistent") == "unknown" and r.exit_code() == 4
    assert r.extra["max_memory"] == 1 and r.extra["resident_bytes_at_stop"] > 1
    assert bfs(TwoPhase(4), max_memory=1 << 60).complete  # a limit never reached


def test_dfs_stops_at_once_past_the_limit():
    r = dfs(TwoPhase(5), max_memory=1)
    # the guard is read every TICK + 1 steps: the first read stops the run
    assert r.stopped_by == "max_memory" and r.unique_states == TICK + 2
    assert r.verdict("TCConsistent") == "unknown" and r.exit_code() == 4


def test_a_violation_found_before_the_limit_still_counts():
    r = bfs(TwoPhase(3, broken=True), max_memory=1)
    assert r.stopped_by == "max_memory" and r.exit_code() == 4  # found nothing yet
    r = dfs(TwoPhase(3, broken=True), max_memory=1)  # found at the 14th state
    assert r.verdict("TCConsistent") == "violated" and r.exit_code() == 1


_GROWING_RUN = textwrap.dedent("""
    import json, sys
    from kmc.explorers.{engine} import {engine}
    from kmc.explorers.memory import resident_bytes
    from kmc.model.validation.twophase import TwoPhase
    from kmc.reports.summary import render_text
    limit = resident_bytes() + 24 * 2**20
    r = {engine}(TwoPhase(8), max_memory=limit)
    print(json.dumps({{"stopped_by": r.stopped_by, "unique": r.unique_states,
                      "exit": r.exit_code(), "limit": limit,
                      "at_stop": r.extra.get("resident_bytes_at_stop"),
                      "text": render_text(r)}}))
""")


@pytest.mark.parametrize("engine", ["bfs", "dfs"])
def test_a_growing_run_stops_a_few_megabytes_above_where_it_started(engine):
    """A fresh process (memory freed by other tests would hide the growth here): the full
    run holds 1.7 million states; a limit 24 MB above the start stops it early."""
    out = subprocess.run([sys.executable, "-c", _GROWING_RUN.format(engine=engine)],
                         capture_output=True, text=True, timeout=120, check=True)
    got = json.loads(out.stdout)
    assert got["stopped_by"] == "max_memory" and got["exit"] == 4
    assert 0 < got["unique"] < 1745408 and got["at_stop"] > got["limit"]
    assert "stopped by max_memory" in got["text"]
