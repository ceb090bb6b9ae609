"""--checkpoint-dir / --resume: a run whose driver is killed outright, resumed, interrupted
by SIGINT, and resumed again ends with exactly the counts of an uninterrupted run; a
checkpoint directory is checked against the scenario that wrote it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from cli_checks import one_line_error

from kmc.explorers.bfs import bfs
from kmc.explorers.errors import ExplorerError
from kmc.explorers.spark import checkpoint as ckpt
from kmc.explorers.spark import spark_bfs
from kmc.model.validation.twophase import TwoPhase

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("key_dir")]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RM = 5  # 17 BFS levels: room to interrupt a run twice in the middle


def _start_check(ckpt, *extra):
    """`kmc check twophase -p rm=RM --explorer spark` in a child process, every level on
    Spark (KMC_SPARK_DRIVER_LEVEL=0) so that each level is checkpointed slowly enough."""
    env = {**os.environ, "KMC_SPARK_DRIVER_LEVEL": "0",
           "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "kmc", "check", "twophase", "-p", f"rm={RM}", "--explorer",
           "spark", "--quiet", "--json", "--checkpoint-dir", str(ckpt), *extra]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _wait_for_level(proc, ckpt, level, timeout=180.0):
    marker = os.path.join(str(ckpt), "levels", f"{level}.json")
    deadline = time.monotonic() + timeout
    while not os.path.exists(marker):
        if proc.poll() is not None:
            pytest.fail(f"kmc exited ({proc.returncode}) before level {level}: "
                        f"{proc.stderr.read()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"level {level} was not checkpointed within {timeout:.0f} s")
        time.sleep(0.05)


def _descendants(pid):
    kids, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        ppid = int(f.read().rsplit(") ", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                if ppid == parent:
                    kids.append(int(entry))
                    frontier.append(int(entry))
    return kids


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def _reap(pids, timeout=60.0):
    """Wait for processes this test started (by PID) to exit; SIGKILL stragglers."""
    deadline = time.monotonic() + timeout
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    for p in pids:
        if _alive(p):
            os.kill(p, signal.SIGKILL)


def _completed(ckpt):
    return sorted(int(n[:-5]) for n in os.listdir(os.path.join(str(ckpt), "levels"))
                  if n.endswith(".json"))


def test_kill_interrupt_and_resume_give_the_uninterrupted_counts(sc, tmp_path, capsys):
    want = bfs(TwoPhase(RM))
    ckpt = tmp_path / "ckpt"
    # 1. a `kmc check` whose driver is killed outright (SIGKILL: no chance to clean up)
    proc = _start_check(ckpt)
    try:
        _wait_for_level(proc, ckpt, 3)
        jvm = _descendants(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
    finally:
        proc.kill()
    _reap(jvm)  # the orphaned JVM exits once its driver's pipe closes
    first = _completed(ckpt)[-1]
    assert 3 <= first < want.max_depth - 1
    # 2. resume here; a real SIGINT (Ctrl-C) arrives while a later level runs
    def ctrl_c():
        deadline = time.monotonic() + 120
        while not os.path.exists(ckpt / "levels" / f"{first + 3}.json") and \
                time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)
    watcher = threading.Thread(target=ctrl_c, daemon=True)
    watcher.start()
    with pytest.raises(KeyboardInterrupt):
        spark_bfs(TwoPhase(RM), checkpoint_dir=str(ckpt), resume=True, driver_level_max=0)
    watcher.join()
    assert "rerun with --resume" in capsys.readouterr().err
    second = _completed(ckpt)[-1]
    assert first + 3 <= second < want.max_depth - 1
    # 3. resume to the end (a driver threshold brings the small levels back to the
    # driver: a Spark checkpoint resumes in driver mode too)
    got = spark_bfs(TwoPhase(RM), checkpoint_dir=str(ckpt), resume=True,
                    driver_level_max=1000)
    assert got.extra["spark"]["levels"][-1]["mode"] == "driver"
    assert got.extra["spark"]["resumed_at_level"] == second + 1
    assert (got.unique_states, got.generated_states, got.max_depth, got.verdicts()) == \
        (want.unique_states, want.generated_states, want.max_depth, want.verdicts())
    assert got.coverage == want.coverage
    assert {n: len(d.trace) for n, d in got.discoveries.items()} == \
        {n: len(d.trace) for n, d in want.discoveries.items()}


def test_resume_from_a_driver_level_and_with_a_discovery(sc, tmp_path):
    """Checkpoints written while levels ran on the driver resume too, and a violation
    found before the interruption keeps its (replayable) counterexample."""
    model = lambda: TwoPhase(4, broken=True)  # noqa: E731
    want = bfs(model())
    stop_at = 4

    def interrupt(_u, _g, depth, _q, _e):
        if depth == stop_at:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        spark_bfs(model(), checkpoint_dir=str(tmp_path), progress=interrupt)
    assert _completed(tmp_path)[-1] == stop_at - 2
    got = spark_bfs(model(), checkpoint_dir=str(tmp_path), resume=True)
    assert (got.unique_states, got.generated_states, got.max_depth, got.verdicts()) == \
        (want.unique_states, want.generated_states, want.max_depth, want.verdicts())
    trace = got.discoveries["TCConsistent"].trace
    assert len(trace) == len(want.discoveries["TCConsistent"].trace)
    assert not model().properties()[0].check(trace.last)


def test_checkpoint_dir_must_match_the_scenario(sc, tmp_path):
    spark_bfs(TwoPhase(3), checkpoint_dir=str(tmp_path), max_depth=3)
    with pytest.raises(ExplorerError, match="different scenario.*rm=3"):
        spark_bfs(TwoPhase(4), checkpoint_dir=str(tmp_path), resume=True)
    with pytest.raises(ExplorerError, match="already holds a run.*--resume"):
        spark_bfs(TwoPhase(3), checkpoint_dir=str(tmp_path))
    with pytest.raises(ExplorerError, match="written with 2 partitions"):
        spark_bfs(TwoPhase(3), checkpoint_dir=str(tmp_path), resume=True, partitions=5)
    with pytest.raises(ExplorerError, match="holds no checkpoint"):
        spark_bfs(TwoPhase(3), checkpoint_dir=str(tmp_path / "empty"), resume=True)
    with pytest.raises(ExplorerError, match="needs --checkpoint-dir"):
        spark_bfs(TwoPhase(3), resume=True)
    # the same scenario resumes (bounds may change between runs)
    r = spark_bfs(TwoPhase(3), checkpoint_dir=str(tmp_path), resume=True)
    assert r.complete and r.unique_states == 288


def refuse_over_bounds(path, held):
    with pytest.raises(ExplorerError, match=rf"already holds {held} states, more than "
                                            r"--max-states 10: resume without it"):
        spark_bfs(TwoPhase(3), checkpoint_dir=str(path), resume=True, max_states=10)
    with pytest.raises(ExplorerError, match=r"already 3 levels deep, more than "
                                            r"--max-depth 2: resume without it"):
        spark_bfs(TwoPhase(3), checkpoint_dir=str(path), resume=True, max_depth=2)


def test_resume_past_a_smaller_bound_is_refused(sc, tmp_path, monkeypatch):
    """A checkpoint already past --max-states or --max-depth is refused (a resumed run
    would report the states it holds, beyond the bound); up to the bound it resumes as a
    fresh bounded run ends."""
    spark_bfs(TwoPhase(3), checkpoint_dir=str(tmp_path), max_depth=3)
    held = bfs(TwoPhase(3), max_depth=3).unique_states
    def unreached(*_a):
        raise AssertionError("the bound was not checked before Spark started")
    with monkeypatch.context() as m:  # a local directory: checked before Spark starts
        m.setattr(ckpt, "open_store", unreached)
        refuse_over_bounds(tmp_path, held)
    with monkeypatch.context() as m:  # as for a remote one: once its last level is read
        m.setattr(ckpt, "precheck", lambda *_a: None)
        refuse_over_bounds(tmp_path, held)
    got = spark_bfs(TwoPhase(3), checkpoint_dir=str(tmp_path), resume=True,
                    max_states=held, max_depth=3)
    want = bfs(TwoPhase(3), max_states=held, max_depth=3)
    assert (got.unique_states, got.max_depth, got.stopped_by) == \
        (want.unique_states, want.max_depth, want.stopped_by)


def test_resume_with_other_partitions_is_refused_before_spark_starts(sc, tmp_path,
                                                                     monkeypatch):
    spark_bfs(TwoPhase(3), checkpoint_dir=str(tmp_path), max_depth=3)

    def unreached(*_a):
        raise AssertionError("the partitions were not checked before Spark started")
    for stage, name, stand_in in ((ckpt, "open_store", unreached),  # a local directory
                                  (ckpt, "precheck", lambda *_a: None)):  # a remote one
        with monkeypatch.context() as m:
            m.setattr(stage, name, stand_in)
            with pytest.raises(ExplorerError, match="written with 2 partitions: drop "
                                                    "--partitions or pass --partitions 2"):
                spark_bfs(TwoPhase(3), checkpoint_dir=str(tmp_path), resume=True,
                          partitions=5)


def test_cli_refuses_a_smaller_bound_in_one_line(sc, tmp_path):
    spark_bfs(TwoPhase(3), checkpoint_dir=str(tmp_path), max_depth=3)
    r = subprocess.run([sys.executable, "-m", "kmc", "check", "twophase", "-p", "rm=3",
                        "--explorer", "spark", "--resume", "--checkpoint-dir", str(tmp_path),
                        "--max-states", "10"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": ROOT})
    one_line_error(r, "already holds", "more than --max-states 10")


def test_cli_reports_checkpoint_errors_in_one_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "kmc", "check", "twophase", "--explorer",
                        "spark", "--resume", "--checkpoint-dir", str(tmp_path / "none")],
                       cwd=ROOT, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": ROOT})
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "holds no checkpoint" in lines[0], r.stderr
