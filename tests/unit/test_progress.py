"""Progress: plain periodic lines when stderr is not a terminal (CI logs)."""
import io

from kmc.explorers.bfs import bfs
from kmc.explorers.progress import Progress
from kmc.model.validation.twophase import TwoPhase


def test_plain_progress_lines_carry_the_figures():
    buf = io.StringIO()
    p = Progress("kmc test", stream=buf, interval=0.0)
    bfs(TwoPhase(5), progress=p)
    p.close()
    lines = buf.getvalue().splitlines()
    assert lines, "a BFS with progress must report at least once per level"
    last = lines[-1]
    for word in ("distinct", "generated", "depth", "queue", "states/s"):
        assert word in last
    assert "8,832 distinct" in last
