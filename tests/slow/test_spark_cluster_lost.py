"""A cluster that loses its only worker in the middle of a run: `kmc check` ends with one
line and exit 2 once the cluster has had no executor for KMC_SPARK_WAIT seconds, instead
of waiting for resources forever. The loopback cluster is started and stopped here, by
PID."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from kmc.explorers.spark import cluster

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_a_run_whose_cluster_lost_every_worker_stops_with_one_line(tmp_path):
    state = str(tmp_path / "cluster")
    c = cluster.start(state, workers=1, cores=1, memory="1g", port=0, wait_s=120)
    proc = None
    try:
        env = {**os.environ, "PYTHONPATH": ROOT, "KMC_SPARK_WAIT": "15",
               "KMC_SPARK_DRIVER_LEVEL": "1000"}
        proc = subprocess.Popen([sys.executable, "-m", "kmc", "check", "twophase", "-p",
                                 "rm=8", "--explorer", "spark", "--master", c.master_url,
                                 "--quiet"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not any(cluster._ours(p, "pyspark.daemon")  # a task of a level runs there
                      for p in cluster.executor_pids(state)):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.2)
        time.sleep(2)
        cluster.kill_worker(state, 0)
        _out, err = proc.communicate(timeout=180)
        assert proc.returncode == 2, err[-2000:]
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "has had no executor for 15 s" in lines[0], err[-2000:]
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        cluster.stop(state)
        assert cluster.alive_pids(state) == {} and cluster.executor_pids(state) == []
