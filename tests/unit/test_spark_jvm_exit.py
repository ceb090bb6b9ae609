"""`kmc check --explorer spark` stops the JVM it launched before it exits, and so do
`kmc regress`'s worker processes after a Spark entry: no process of the run is left
behind, not even for the moment a JVM takes to notice its parent is gone."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid


def _processes_with(marker: bytes) -> list[int]:
    """PIDs of live processes whose environment holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if marker in f.read():
                    found.append(int(entry))
        except OSError:  # gone meanwhile, or not ours to read
            pass
    return found


def _run(*argv, cwd=None):
    """(the finished command, PIDs of the processes it left running)."""
    token = uuid.uuid4().hex
    env = dict(os.environ, KMC_TEST_RUN=token)
    r = subprocess.run([sys.executable, "-m", "kmc", *argv], env=env, cwd=cwd,
                       capture_output=True, text=True, timeout=300)
    return r, _processes_with(f"KMC_TEST_RUN={token}".encode())


def test_no_spark_process_outlives_the_command():
    r, left = _run("check", "diehard", "--explorer", "spark", "--quiet")
    assert r.returncode == 1 and "NotSolved" in r.stdout, r.stderr[-2000:]
    assert "on Spark" in r.stdout  # the run did start a JVM
    assert left == [], left


SUITE = """traces = "stored"

[[entry]]
id = "on-spark"
scenario = "diehard"
explorer = "spark"

[[entry]]
id = "local"
scenario = "twophase"
params = { rm = 2 }
"""


def test_no_spark_process_outlives_a_regress_worker(tmp_path):
    (tmp_path / "s.toml").write_text(SUITE)
    r, left = _run("regress", "s.toml", "--jobs", "2", cwd=tmp_path)
    assert "on-spark" in r.stdout and "2 workers" in r.stdout, r.stdout + r.stderr[-2000:]
    assert "violates NotSolved (7)" in r.stdout  # recorded as new: the entry did run
    assert left == [], left
