"""`kmc cluster`'s process bookkeeping without a JVM: what `status` counts as an executor
and what `stop` signals are the processes a worker launched, never another process that
happens to run in the cluster's directory (a shell, an editor, the command itself)."""
import errno
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from kmc.cli import main
from kmc.explorers.spark import cluster


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


@pytest.fixture
def state(tmp_path):
    work = tmp_path / "work-0" / "app-1" / "0"
    work.mkdir(parents=True)
    (tmp_path / "logs").mkdir()
    (tmp_path / "state.json").write_text(json.dumps({
        "master_url": "spark://127.0.0.1:1", "ui_port": 1, "master": None,
        "workers": [{"pid": 2 ** 22 + 1, "log": "w.log", "work_dir": str(tmp_path / "work-0")}]}))
    started = []

    def spawn(cwd, *marker):
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", *marker],
                             cwd=cwd)
        started.append(p)
        # until the child has exec'd, /proc shows the parent's command line, which the
        # bookkeeping rightly does not take for the process it recorded
        deadline = time.monotonic() + 30
        while b"time.sleep(60)" not in _cmdline(p.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        return p
    yield tmp_path, work, spawn
    for p in started:  # stop what the test started, by PID
        p.kill()
        p.wait()


def test_only_a_workers_launches_count_as_executors(state):
    root, work, spawn = state
    executor = spawn(work, "pyspark.daemon")
    bystanders = [spawn(work), spawn(root / "logs", "pyspark.daemon")]
    assert cluster.executor_pids(str(root)) == [executor.pid]
    assert all(p.poll() is None for p in bystanders)


def test_stop_signals_the_executors_and_nothing_else_even_from_inside(state, monkeypatch,
                                                                     capsys):
    root, work, spawn = state
    executor, bystander = spawn(work, "pyspark.daemon"), spawn(work)
    monkeypatch.chdir(work)  # this process (kmc cluster stop) runs inside a work dir
    assert main(["cluster", "stop", "--dir", str(root)]) == 0
    assert executor.wait(timeout=10) is not None
    assert bystander.poll() is None
    assert not (root / "state.json").exists()


def test_status_names_a_worker_that_is_not_running(state, capsys):
    root, _work, spawn = state
    master = spawn(root, "--port", "1")  # stands in for the master start recorded
    info = json.loads((root / "state.json").read_text())
    info["master"] = {"pid": master.pid, "log": "m.log"}
    (root / "state.json").write_text(json.dumps(info))
    assert main(["cluster", "status", "--dir", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"master: pid {master.pid}" in out
    assert "worker-0: NOT running (its log: worker-0.log)" in out


def test_a_stopped_clusters_leftover_executors_are_still_found(state):
    root, work, spawn = state
    (root / "state.json").unlink()  # as stop leaves it: the work dirs stay
    executor = spawn(work, "pyspark.daemon")
    assert cluster.executor_pids(str(root)) == [executor.pid]


@pytest.mark.parametrize("argv, words", [
    (["start", "--dir", "{dir}", "--memory", "512"], "'512' is not a size like 512m or 2g"),
    (["start", "--dir", "{dir}", "--memory", "1k"], "'1k' is below the 1m a Spark worker"),
    (["status", "--dir", "{file}"], "is a file: name the cluster's directory"),
    (["start", "--dir", "/proc/kmc-cluster", "--port", "0"], "cannot hold the cluster's"),
])
def test_a_cluster_that_cannot_be_is_one_line_and_exit_2(tmp_path, capsys, argv, words):
    (tmp_path / "f").write_text("")
    argv = [a.replace("{file}", str(tmp_path / "f")).replace("{dir}", str(tmp_path / "c"))
            for a in argv]
    assert main(["cluster", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err


@pytest.fixture
def stand_in_spark(tmp_path, monkeypatch):
    """A SPARK_HOME whose bin/spark-class execs a sleeping process in place of a JVM, and
    the PIDs `kmc cluster start` launches through it."""
    home = tmp_path / "spark"
    (home / "bin").mkdir(parents=True)
    script = home / "bin" / "spark-class"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'import time; time.sleep(60)'\n")
    script.chmod(0o755)
    monkeypatch.setenv("SPARK_HOME", str(home))
    monkeypatch.setattr("kmc.explorers.spark.session.check_java", lambda: None)
    launched = []
    launch = cluster._launch

    def spy(*args):
        pid = launch(*args)
        launched.append(pid)
        return pid
    monkeypatch.setattr(cluster, "_launch", spy)
    yield tmp_path / "c", launched
    for pid in launched:  # stop what the test started, by PID, should a check fail
        if cluster._running(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_start_that_is_interrupted_leaves_nothing_running(stand_in_spark, monkeypatch):
    state, launched = stand_in_spark
    waits = []

    def wait(ok, wait_s, what, log):  # the master listens; Ctrl-C while workers register
        waits.append(what)
        if len(waits) == 2:
            raise KeyboardInterrupt
    monkeypatch.setattr(cluster, "_wait", wait)
    with pytest.raises(KeyboardInterrupt):
        cluster.start(str(state), workers=3, port=0)
    assert len(launched) == 4  # the master and three workers were running
    assert not any(cluster._running(pid) for pid in launched)
    assert not (state / "state.json").exists()


def test_a_start_whose_directory_fills_up_says_so_and_leaves_nothing_running(
        stand_in_spark, monkeypatch, capsys):
    state, launched = stand_in_spark
    monkeypatch.setattr(cluster, "_wait", lambda *a: None)

    def save(path, info):  # as a full disk does: the temporary file, then ENOSPC
        (path / "state.json.tmp").write_text("")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(cluster, "_save", save)
    assert main(["cluster", "start", "--dir", str(state), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err, err
    assert "nothing is left running" in err
    assert len(launched) == 1 and not cluster._running(launched[0])
    assert not (state / "state.json.tmp").exists()


def test_workers_beyond_one_machines_share_are_refused(tmp_path, capsys):
    assert main(["cluster", "start", "--dir", str(tmp_path), "--workers",
                 str(cluster.MAX_WORKERS + 1)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"at most {cluster.MAX_WORKERS}" in err, err
