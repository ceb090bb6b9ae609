"""An embedded master re-runs the task of a Python worker that died: `kmc check` loses
one of PySpark's workers (SIGKILL, found by its parent chain) in the middle of a run and
still ends with exactly BFS's answers, as a cluster recomputes a lost executor's work."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from kmc.explorers.bfs import bfs
from kmc.model.validation.twophase import TwoPhase

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _procs():
    """PID -> (parent PID, state, command line) of every process."""
    out = {}
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/stat") as f:
                fields = f.read().rsplit(") ", 1)[1].split()
            with open(f"/proc/{e}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        out[int(e)] = (int(fields[1]), fields[0], cmd)
    return out


def _descendants(root, table):
    found, grew = {root}, True
    while grew:
        grew = False
        for pid, (ppid, _s, _c) in table.items():
            if ppid in found and pid not in found:
                found.add(pid)
                grew = True
    return found - {root}


def _workers(root):
    """PySpark's Python workers below ``root``: forked by its daemon (the same command
    line), running ones (state R) first."""
    table = _procs()
    daemon = {p for p in _descendants(root, table) if "pyspark.daemon" in table[p][2]}
    workers = [p for p in daemon if table[p][0] in daemon]
    return sorted(workers, key=lambda p: table[p][1] != "R")


def _state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1].split()[0]
    except OSError:
        return None


def test_a_killed_python_worker_costs_a_task_not_the_run(tmp_path):
    log = tmp_path / "spark.log"
    env = {**os.environ, "TMPDIR": str(tmp_path), "KMC_SPARK_LOG": "warn",
           "KMC_SPARK_LOG_FILE": str(log),
           # TwoPhase rm=8 (1,745,408 states): its levels of over 1,000 states run on
           # Spark, from ~1 s after start-up to the end (~5 s of Spark levels on 2 cores;
           # rm=7's take under a second, and the run could end before a kill)
           "KMC_SPARK_DRIVER_LEVEL": "1000",
           "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "kmc", "check", "twophase", "-p", "rm=8", "--explorer",
           "spark", "--executors", "2", "--json", "--quiet"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    seen, kills = set(), 0
    try:
        first = None
        deadline = time.monotonic() + 150
        # A worker seen running may finish its task before the signal lands (it is then
        # an idle worker the daemon discards and nothing is lost): kill running workers
        # until Spark reports a lost task or the run ends.
        while proc.poll() is None and time.monotonic() < deadline:
            workers = _workers(proc.pid)
            seen.update(workers)
            if workers and first is None:
                first = time.monotonic()
            running = [p for p in workers if _state(p) == "R"]
            if first is not None and time.monotonic() - first >= 1.5 and running:
                os.kill(running[0], signal.SIGKILL)
                kills += 1
                time.sleep(1.0)
                if log.exists() and "Lost task" in log.read_text(errors="replace"):
                    break
            time.sleep(0.02)
        assert kills, f"kmc ended ({proc.poll()}) before a Python worker ran long " \
                      f"enough to be killed"
        out, err = proc.communicate(timeout=180)
    finally:
        seen.update(_workers(proc.pid))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        for pid in seen:  # PySpark's daemon and workers live in a group of their own
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    spark_log = log.read_text(errors="replace")
    assert proc.returncode == 0, f"{err[-2000:]}\n{spark_log[-3000:]}"
    assert "Lost task" in spark_log, "the killed worker cost no task: it hit nothing"
    r = json.loads(out)
    want = bfs(TwoPhase(8))
    assert (r["unique_states"], r["generated_states"], r["max_depth"], r["complete"]) == \
        (want.unique_states, want.generated_states, want.max_depth, True)
    assert {n: p["verdict"] for n, p in r["properties"].items()} == want.verdicts()
    assert {n: p["trace_length"] for n, p in r["properties"].items() if p["trace_length"]} \
        == {n: len(d.trace) for n, d in want.discoveries.items()}
