"""A real Spark standalone cluster on 127.0.0.1: one master and two workers started with
PySpark's bin/spark-class (explorers.spark.cluster, what `kmc cluster start` runs). A check
against spark://127.0.0.1:PORT gives BFS's answers; killing a worker by PID in the middle of
a run still gives them (Spark recomputes the lost partitions). Everything started here is
stopped by PID in the fixture's teardown."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from kmc.explorers.bfs import bfs
from kmc.explorers.spark import cluster, spark_bfs
from kmc.model.validation.twophase import TwoPhase

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    state = str(tmp_path_factory.mktemp("cluster"))
    try:
        c = cluster.start(state, workers=2, cores=1, memory="1g", port=0, wait_s=120)
        yield c
    finally:
        from kmc.explorers.spark.session import shutdown_gateway

        shutdown_gateway()
        cluster.stop(state)
        assert cluster.alive_pids(state) == {}
        assert cluster.executor_pids(state) == []


def test_cli_check_against_the_cluster(standalone):
    assert set(cluster.alive_pids(standalone.state_dir)) == {"master", "worker-0", "worker-1"}
    env = {**os.environ, "PYTHONPATH": ROOT, "KMC_SPARK_DRIVER_LEVEL": "200"}
    r = subprocess.run([sys.executable, "-m", "kmc", "check", "twophase", "-p", "rm=5",
                        "--explorer", "spark", "--master", standalone.master_url, "--json",
                        "--quiet"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout)
    want = bfs(TwoPhase(5))
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
        assert set(cluster.alive_pids(standalone.state_dir)) == \
            {"master", "worker-0", "worker-1"}
    finally:
        tree.kill()


def test_a_worker_killed_mid_run_changes_nothing(standalone):
    want = bfs(TwoPhase(5))
    killed = []

    def kill_at_level_6(_u, _g, depth, _q, _e):
        if depth == 6 and not killed:
            killed.append(cluster.kill_worker(standalone.state_dir, 0))
    got = spark_bfs(TwoPhase(5), master=standalone.master_url, driver_level_max=0,
                    progress=kill_at_level_6)
    assert killed and "worker-0" not in cluster.alive_pids(standalone.state_dir)
    assert (got.unique_states, got.generated_states, got.max_depth, got.verdicts()) == \
        (want.unique_states, want.generated_states, want.max_depth, want.verdicts())
    assert got.coverage == want.coverage
    assert {n: len(d.trace) for n, d in got.discoveries.items()} == \
        {n: len(d.trace) for n, d in want.discoveries.items()}
    assert len(got.extra["spark"]["levels"]) == want.max_depth - 1  # every level ran
