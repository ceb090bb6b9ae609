"""A real Spark standalone cluster on 127.0.0.1: one master and three one-core workers
started with PySpark's bin/spark-class (explorers.spark.cluster, what `kmc cluster start`
runs), all stopped by PID in the fixture's teardown.

- A check against spark://127.0.0.1:PORT gives BFS's answers; a Ctrl-C leaves nothing of
  kmc's behind and the cluster up; a liveness check gives BFS's verdicts and lassos.
- Spill on a cluster of several machines, played with the executors treated as being on
  other machines (``spill_dir.ASSUME_REMOTE``), so only ``KMC_SPARK_SPILL_DIR`` turns
  spill on. With one byte of visited keys per partition in memory, every level writes its
  runs and row files into the run's private subdirectory of the shared directory, its
  lineage is cut there, runs that merges replaced are deleted after a cut, a worker killed
  mid-run sends its partitions' tasks to the other executors, which read the runs the dead
  one wrote — and the answers are BFS's, counterexamples included. Without the setting the
  same run keeps visited sets in memory and says so; an executor that does not see the
  directory stops the check before any level. The two spilling runs, with and without
  the setting, are in the full tier (`-m full`).
- Killing a second worker by PID in the middle of a run still gives BFS's answers (Spark
  recomputes the lost partitions).

The tests run in file order: the command-line runs first (an application each, on the
cluster's free cores), then the in-process runs in one application (``app``), which holds
the cores until the module ends; each of the two killed workers stays down."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time

import pytest

from kmc.api import build, check
from kmc.explorers.bfs import bfs
from kmc.explorers.errors import ExplorerError
from kmc.explorers.spark import cluster, explore, spark_bfs, spill, spill_dir
from kmc.model.validation.twophase import TwoPhase
from spark_answers import summary

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ALL = {"master", "worker-0", "worker-1", "worker-2"}


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    state = str(tmp_path_factory.mktemp("cluster"))
    try:
        c = cluster.start(state, workers=3, cores=1, memory="1g", port=0, wait_s=120)
        yield c
    finally:
        from kmc.explorers.spark.session import shutdown_gateway

        shutdown_gateway()
        cluster.stop(state)
        assert cluster.alive_pids(state) == {}
        assert cluster.executor_pids(state) == []


def _make():
    return build("stale-read", "legacy", {})


def _answers(r) -> tuple:
    traces = {n: (d.trace.init_index, d.trace.action_indices, d.trace.states)
              for n, d in r.discoveries.items()}
    return summary(r), r.coverage, traces


def _spark_levels(r) -> list:
    return [lv for lv in r.extra["spark"]["levels"] if lv["mode"] == "spark" and lv["new"]]


def _files(root) -> dict:
    """Every file under ``root``: relative path -> kind (run, rows, lineage)."""
    out = {}
    for d, _dirs, names in os.walk(root):
        for n in names:
            rel = os.path.relpath(os.path.join(d, n), root)
            kind = "lineage" if "/lineage/" in f"/{rel}" else n.split("-", 1)[0]
            out[rel] = kind
    return out


def _stages_run_again(sc) -> int:
    """Stages of the application with a task that failed (on the lost executor) or that
    Spark attempted again (to recompute the lost executor's outputs): both run tasks
    again on another executor."""
    tracker, again, misses, sid = sc.statusTracker(), 0, 0, 0
    while misses < 50:
        info = tracker.getStageInfo(sid)
        misses = 0 if info is not None else misses + 1
        again += info is not None and (info.currentAttemptId > 0 or info.numFailedTasks > 0)
        sid += 1
    return again


def _wait_for_executors(sc, n, wait_s=30.0) -> None:
    """Until the driver counts ``n`` executors (its block managers, less its own)."""
    deadline = time.monotonic() + wait_s
    while sc._jsc.sc().getExecutorMemoryStatus().size() - 1 != n:
        assert time.monotonic() < deadline, "the lost executor was never noticed"
        time.sleep(0.05)


def test_cli_check_against_the_cluster(standalone):
    assert set(cluster.alive_pids(standalone.state_dir)) == ALL
    env = {**os.environ, "PYTHONPATH": ROOT, "KMC_SPARK_DRIVER_LEVEL": "100"}
    r = subprocess.run([sys.executable, "-m", "kmc", "check", "twophase", "-p", "rm=4",
                        "--explorer", "spark", "--master", standalone.master_url, "--json",
                        "--quiet"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout)
    want = bfs(TwoPhase(4))
    assert (got["unique_states"], got["generated_states"], got["max_depth"]) == \
        (want.unique_states, want.generated_states, want.max_depth)
    assert {n: p["verdict"] for n, p in got["properties"].items()} == want.verdicts()
    spark = got["spark"]
    assert spark["master"] == standalone.master_url
    assert "spark" in {lv["mode"] for lv in spark["levels"]}


def test_ctrl_c_during_a_cluster_run_leaves_nothing_behind(standalone, tmp_path):
    """SIGINT to kmc's process group while its executors run on the loopback cluster: exit
    130 with one line, no process of kmc's left (driver JVM included), the application's
    executors gone from the workers, the cluster itself still up."""
    from test_spark_signals import _assert_clean_interrupt, _interrupt, _start, _wait_exit

    argv = [sys.executable, "-m", "kmc", "check", "twophase", "-p", "rm=8", "--explorer",
            "spark", "--master", standalone.master_url, "--quiet"]
    proc, tree = _start(argv, tmp_path, {"KMC_SPARK_DRIVER_LEVEL": "1000"})
    try:
        seen = {}

        def executors_busy():
            if cluster.executor_pids(standalone.state_dir) and "t" not in seen:
                seen["t"] = time.monotonic()
            return "t" in seen and time.monotonic() - seen["t"] >= 2.0
        _interrupt(proc, tree, executors_busy)
        _out, err = _wait_exit(proc, tree)
        _assert_clean_interrupt(proc, tree, err, tmp_path)
        deadline = time.monotonic() + 30
        while cluster.executor_pids(standalone.state_dir) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert cluster.executor_pids(standalone.state_dir) == []
        assert set(cluster.alive_pids(standalone.state_dir)) == ALL
    finally:
        tree.kill()


@pytest.fixture(scope="module")
def app(standalone):
    """One application on the cluster for the module's in-process runs (a check reuses
    the active context), so its executors start once."""
    from kmc.explorers.spark.session import spark_context

    with spark_context(standalone.master_url, None, "kmc on a loopback cluster") as sc:
        yield sc


@pytest.fixture
def remote(monkeypatch):
    """Executors treated as on other machines; one byte in memory per partition; merges
    at nearly every level; a lineage cut every third Spark level."""
    monkeypatch.setattr(spill_dir, "ASSUME_REMOTE", True)
    monkeypatch.setattr(spill_dir, "SPILL_DIR", None)
    monkeypatch.setattr(spill, "VISITED_MEM", 1)
    monkeypatch.setattr(spill, "FAN_IN", 2)
    monkeypatch.setattr(explore, "LINEAGE_EVERY", 3)


def test_liveness_on_the_standalone_cluster(standalone, app):
    b = check("lossy", "weak")
    s = check("lossy", "weak", explorer="spark", master=standalone.master_url)
    assert s.extra["spark"]["master"] == standalone.master_url
    # a small run's liveness is decided on the driver; the executors' algorithm, a Spark
    # job per propagation step (about 40 s on this cluster), is compared with bfs on
    # local[2] (tests/differential/test_liveness_spark.py)
    assert s.extra["liveness"]["on"] == "driver"
    assert s.verdicts() == b.verdicts() == {"EventuallyDelivered": "violated"}
    assert {n: (d.trace.action_indices, d.trace.loop_start)
            for n, d in s.discoveries.items()} == \
        {n: (d.trace.action_indices, d.trace.loop_start) for n, d in b.discoveries.items()}


@pytest.mark.full  # ~18 s; without the setting, remote executors keep visited sets in memory
# and the summary says so: tests/unit/test_spark_spill_dir.py
def test_without_a_shared_directory_visited_sets_stay_in_memory(standalone, app, remote):
    got = spark_bfs(_make(), master=standalone.master_url, driver_level_max=0,
                    max_depth=8)
    assert summary(got) == summary(bfs(_make(), max_depth=8))
    spark = got.extra["spark"]
    assert spark["spill"] is None and spark["visited_note"] == spill_dir.IN_MEMORY_NOTE
    levels = _spark_levels(got)
    assert levels and all(lv["disk_bytes"] == 0 and lv["memory_bytes"] for lv in levels)


def test_executors_that_do_not_see_the_directory_stop_the_check(standalone, app,
                                                                 remote, tmp_path,
                                                                 monkeypatch):
    """The probe job, before any level: an executor that does not see the run's
    directory (as on a machine where the setting's path is a local disk) is one line."""
    monkeypatch.setattr(spill_dir, "SPILL_DIR", str(tmp_path))
    elsewhere = str(tmp_path / "kmc-spill-on-another-disk")
    monkeypatch.setattr(spill_dir.SpillSpace, "probe_target", lambda _self: elsewhere)
    with pytest.raises(ExplorerError) as e:
        spark_bfs(_make(), master=standalone.master_url, driver_level_max=0)
    assert str(e.value).startswith(f"KMC_SPARK_SPILL_DIR={str(tmp_path)!r}: an executor on ")
    assert f"does not see {elsewhere}: mount it at the same path" in str(e.value)
    assert os.listdir(tmp_path) == []  # the run's directory went with it


@pytest.mark.full  # ~32 s: spill is tested locally (test_spark_spill.py), a lost worker below
def test_spill_to_a_shared_directory_survives_a_lost_executor(standalone, app,
                                                              remote, tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    monkeypatch.setattr(spill_dir, "SPILL_DIR", str(shared))
    want = bfs(_make())
    seen, modes, killed = [], set(), []

    def watch(_u, _g, depth, _q, _e):
        seen.append(_files(shared))
        modes.update(stat.S_IMODE(os.stat(shared / d).st_mode) for d in os.listdir(shared))
        if depth == 9 and not killed:  # a level without a lineage cut: its outputs count
            killed.append(cluster.kill_worker(standalone.state_dir, 0))
            _wait_for_executors(app, 2)  # the next level finds the lost outputs missing
    got = spark_bfs(_make(), master=standalone.master_url, driver_level_max=0,
                    progress=watch)
    assert killed and "worker-0" not in cluster.alive_pids(standalone.state_dir)
    assert _stages_run_again(app) >= 1  # the lost executor's outputs were computed anew
    assert _answers(got) == _answers(want)
    assert got.extra["spark"]["spill"] == {"dir": str(shared), "bound": 1}
    assert got.extra["spark"]["visited_note"] is None
    levels = _spark_levels(got)
    assert len(levels) == want.max_depth - 1
    assert all(lv["memory_bytes"] == 0 and lv["disk_bytes"] for lv in levels)
    # the runs, the row files and the lineage cuts were written in the run's private
    # subdirectory of the shared directory, which went with the run
    every = {p: k for files in seen for p, k in files.items()}
    assert {"run", "rows", "lineage"} <= set(every.values())
    assert {p.split(os.sep)[0] for p in every} == {p.split(os.sep)[0] for p in seen[-1]}
    assert len({p.split(os.sep)[0] for p in every}) == 1 and modes == {0o700}
    assert os.listdir(shared) == []
    # runs replaced by merges were deleted while the run went on (after a lineage cut)
    runs = [{p for p, k in files.items() if k == "run"} for files in seen]
    assert any(runs[i] - runs[j] for i in range(len(runs)) for j in range(i + 1, len(runs)))


def test_a_worker_killed_mid_run_changes_nothing(standalone, app):
    want = bfs(TwoPhase(5))
    killed = []

    def kill_at_level_6(_u, _g, depth, _q, _e):
        if depth == 6 and not killed:
            killed.append(cluster.kill_worker(standalone.state_dir, 1))
    got = spark_bfs(TwoPhase(5), master=standalone.master_url, driver_level_max=0,
                    progress=kill_at_level_6)
    assert killed and "worker-1" not in cluster.alive_pids(standalone.state_dir)
    assert (got.unique_states, got.generated_states, got.max_depth, got.verdicts()) == \
        (want.unique_states, want.generated_states, want.max_depth, want.verdicts())
    assert got.coverage == want.coverage
    assert {n: len(d.trace) for n, d in got.discoveries.items()} == \
        {n: len(d.trace) for n, d in want.discoveries.items()}
    assert len(got.extra["spark"]["levels"]) == want.max_depth - 1  # every level ran
