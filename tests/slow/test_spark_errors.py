"""Bad Spark set-ups give one clear line and exit code 2, within a bounded time: no Java,
an unreachable master, a master that never accepts the application, executors that cannot
import the model, a busy port for `kmc cluster start`."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from cli_checks import one_line_error

from kmc.explorers.errors import ExplorerError
from kmc.explorers.spark import spark_bfs
from kmc.model.validation.twophase import TwoPhase

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def kmc(*args, env=None, timeout=300):
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "kmc", *args], cwd=ROOT, capture_output=True,
                       text=True, timeout=timeout,
                       env={**os.environ, "PYTHONPATH": ROOT, **(env or {})})
    return r, time.monotonic() - t0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_java_missing(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path)  # no java there
    r = subprocess.run([sys.executable, "-m", "kmc", "check", "diehard", "--explorer", "spark"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env={**env, "PYTHONPATH": ROOT})
    one_line_error(r, "Java 17", "no `java` on PATH")
    r, _ = kmc("check", "diehard", "--explorer", "spark", env={"JAVA_HOME": str(tmp_path)})
    one_line_error(r, f"JAVA_HOME={tmp_path} has no bin/java")


@pytest.mark.parametrize("name, value", [("KMC_SPARK_WINDOW_MAX", "lots"),
                                         ("KMC_SPARK_DRIVER_LEVEL", "1e4"),
                                         ("KMC_SPARK_WAIT", "-5"),
                                         ("KMC_SPARK_LINEAGE_BYTES", "256M"),
                                         ("KMC_SPARK_DRIVER_SECONDS", "nan"),
                                         ("KMC_SPARK_AFFINITY", "inf"),
                                         ("KMC_SPARK_DRIVER_GRAPH", "abc"),
                                         ("KMC_SPARK_LOCALITY_WAIT", "soon"),
                                         ("KMC_SPARK_DRIVER_MEMORY", "lots")])
def test_a_tuning_variable_that_is_not_a_number(name, value, tmp_path):
    """Caught before Spark starts (no checkpoint written), named, one line."""
    ckpt = tmp_path / "ckpt"
    r, _ = kmc("check", "diehard", "--explorer", "spark", "--checkpoint-dir", str(ckpt),
               env={name: value})
    one_line_error(r, f"{name}={value!r} is not", "unset it")
    assert not ckpt.exists()


def test_unreachable_master_fails_fast():
    url = f"spark://127.0.0.1:{free_port()}"  # nothing listens there
    r, took = kmc("check", "diehard", "--explorer", "spark", "--master", url)
    one_line_error(r, "cannot reach the Spark master", url, "kmc cluster start")
    assert took < 60


def test_a_master_that_never_accepts_the_application():
    """Something listens on the port but is no Spark master: a bounded wait, then a hint."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held = []

    def accept():
        while True:
            try:
                held.append(srv.accept()[0])
            except OSError:
                return
    threading.Thread(target=accept, daemon=True).start()
    try:
        url = f"spark://127.0.0.1:{srv.getsockname()[1]}"
        r, took = kmc("check", "diehard", "--explorer", "spark", "--master", url,
                      env={"KMC_SPARK_WAIT": "5"})
    finally:
        srv.close()
        for c in held:
            c.close()
    one_line_error(r, "did not accept the application within 5 s", "KMC_SPARK_WAIT")
    assert took < 120


def test_executors_that_cannot_import_the_model(sc, tmp_path):
    """The model's module is importable on the driver only (added to sys.path after the
    executors' path was fixed): the first Spark level says what is missing and the fix."""
    (tmp_path / "outside_model.py").write_text(textwrap.dedent('''
        from kmc.model.contract import Model

        class Counter(Model):
            name = "counter"
            def init_states(self): return [0]
            def actions(self, s): return ["inc"] if s < 5 else []
            def next_state(self, s, a): return s + 1
    '''))
    sys.path.insert(0, str(tmp_path))
    try:
        import outside_model
        with pytest.raises(ExplorerError, match="cannot import the model .*outside_model.*"
                                                 "install"):
            spark_bfs(outside_model.Counter(), driver_level_max=0)
        # the same model is fine while it stays on the driver
        assert spark_bfs(outside_model.Counter()).unique_states == 6
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("outside_model", None)


def test_another_master_while_a_context_runs(sc):
    with pytest.raises(ExplorerError, match="already runs a Spark context on local"):
        spark_bfs(TwoPhase(3), master="spark://127.0.0.1:7077")


def test_cluster_start_on_a_busy_port_and_stop_of_nothing(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        r, _ = kmc("cluster", "start", "--dir", str(tmp_path), "--port", str(port))
    one_line_error(r, f"port {port}", "--port 0")
    r, _ = kmc("cluster", "stop", "--dir", str(tmp_path))
    assert r.returncode == 0 and "stopped 0 processes" in r.stdout
    r, _ = kmc("cluster", "status", "--dir", str(tmp_path))
    assert r.returncode == 0 and "no cluster running" in r.stdout
