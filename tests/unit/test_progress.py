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


def test_a_bound_adds_percent_and_eta():
    buf = io.StringIO()
    p = Progress("kmc test", stream=buf, interval=0.0).bounds(max_states=5000)
    bfs(TwoPhase(5), progress=p, max_states=5000)
    lines = buf.getvalue().splitlines()
    assert "% of the bound, ETA " in lines[0]
    assert "5,000 distinct" in lines[-1] and "100% of the bound, ETA 0:00" in lines[-1]
    p2 = Progress(stream=io.StringIO()).bounds(max_depth=10, time_limit=100.0)
    assert p2.towards_bound(10, 5, 20.0) == (0.5, None)      # depth is nearer than time
    assert p2.towards_bound(10, 1, 80.0) == (0.8, 20.0)
    assert Progress(stream=io.StringIO()).towards_bound(10, 1, 1.0) is None


def test_kmc_cluster_start_prints_the_master_and_web_ui(monkeypatch, capsys):
    from kmc.cli import main
    from kmc.explorers.spark import cluster

    fake = cluster.Cluster("/tmp/c", "spark://127.0.0.1:7077", "http://127.0.0.1:8080", 11,
                           [12, 13])
    monkeypatch.setattr(cluster, "start", lambda *a, **k: fake)
    assert main(["cluster", "start", "--dir", "/tmp/c"]) == 0
    out = capsys.readouterr().out
    assert "master spark://127.0.0.1:7077 (pid 11), web UI http://127.0.0.1:8080" in out


def test_a_terminal_nobody_sized_still_shows_the_bar():
    """A pseudo-terminal of 0 x 0 (a CI runner's, `script`'s) is a terminal: the bar is
    drawn at 100 columns, where tqdm alone would hide it below a screen of no rows."""
    import os
    import select

    master, slave = os.openpty()
    with os.fdopen(slave, "w") as stream:
        assert os.get_terminal_size(slave) == (0, 0)
        p = Progress("kmc x", stream=stream)
        p(1234, 5678, 3, 9, 1.0)
        p.close()
        stream.flush()
        shown = b""
        while select.select([master], [], [], 0.5)[0]:
            shown += os.read(master, 65536)
    os.close(master)
    assert b"kmc x: 1234 states" in shown
