"""`kmc cluster`'s process bookkeeping without a JVM: what `status` counts as an executor
and what `stop` signals are the processes a worker launched, never another process that
happens to run in the cluster's directory (a shell, an editor, the command itself)."""
import json
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
