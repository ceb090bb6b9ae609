"""Ctrl-C at any moment of an embedded Spark run: before the JVM is up, while it starts,
while a level runs on Spark, while the context stops. Each time `kmc check` exits 130 with
the one line "kmc: interrupted" (no traceback, no py4j log), and within a few seconds no
process it started is left: not the JVM, not PySpark's Python daemon and workers (which
move to a process group of their own), found by their parent chain while the run lives.

Ctrl-C in a terminal signals the whole foreground process group, so the test starts kmc in
a group of its own and sends SIGINT to that group."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# TwoPhase rm=8: 26 levels, ~1.7 M states; with levels of over 1,000 states on Spark its
# Spark levels run from ~1 s after start-up to the end (~10 s on 2 cores)
CHECK = ["check", "twophase", "-p", "rm=8", "--explorer", "spark", "--quiet"]
SPARK_LEVELS = {"KMC_SPARK_DRIVER_LEVEL": "1000"}


def _stat(pid):
    """(parent PID, process group, start time) of a live process, else None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(") ", 1)[1].split()
    except OSError:
        return None
    if fields[0] in "ZX":  # exited, not yet reaped
        return None
    return int(fields[1]), int(fields[2]), fields[19]


def _table():
    return {int(e): st for e in os.listdir("/proc") if e.isdigit()
            and (st := _stat(int(e))) is not None}


class Tree:
    """Every process seen below ``root`` while it ran, with its start time (a PID
    reused later is not taken for it), and their process groups."""

    def __init__(self, root):
        self.root = root
        self.seen = {root.pid: _stat(root.pid)[2]} if _stat(root.pid) else {}

    def scan(self):
        table = _table()
        grew = True
        while grew:
            grew = False
            for pid, (ppid, _g, start) in table.items():
                if ppid in self.seen and pid not in self.seen:
                    self.seen[pid] = start
                    grew = True

    def groups(self):
        return {self.root.pid} | {st[1] for p in self.seen if (st := _stat(p))}

    def left(self):
        """Live processes of the tree, or of its process groups."""
        groups = self.groups()
        return sorted(pid for pid, (_pp, g, start) in _table().items()
                      if self.seen.get(pid) == start or g in groups)

    def kill(self):
        for pid in self.left():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def workers(self):
        """PySpark's Python workers: forked by its daemon, the same command line."""
        table = _table()
        daemon = {p for p in self.seen if p in table and "pyspark.daemon" in _cmdline(p)}
        return [p for p in daemon if table[p][0] in daemon]


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _start(argv, tmp_path, env_extra=None):
    env = {**os.environ, "TMPDIR": str(tmp_path), **(env_extra or {}),
           "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    env.pop("KMC_DEBUG", None)
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    return proc, Tree(proc)


class KmcStarted:
    """Reads the stderr of a kmc run under ``python -X importtime``: notes the moment
    Python has imported ``kmc.interrupt`` (kmc's Ctrl-C handler is installed right after)
    and keeps every line that is not an import timing. Before that moment a SIGINT lands
    in the interpreter's own start-up (site-packages' .pth files), which no program can
    handle: CPython ends with "Fatal Python error: init_import_site"."""

    def __init__(self, proc):
        self.at = None
        self.lines = []
        self._thread = threading.Thread(target=self._read, args=(proc.stderr,), daemon=True)
        self._thread.start()

    def _read(self, stream):
        for line in stream:
            if not line.startswith("import time:"):
                self.lines.append(line)
            elif self.at is None and line.rstrip().endswith("| kmc.interrupt"):
                self.at = time.monotonic()

    def text(self):
        self._thread.join(timeout=10)
        return "".join(self.lines)


def _wait_exit(proc, tree, timeout=60.0, stderr=None):
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        tree.scan()
        time.sleep(0.05)
    if proc.poll() is None:
        pytest.fail(f"kmc did not exit within {timeout:.0f} s of SIGINT")
    if stderr is not None:
        return proc.stdout.read(), stderr.text()
    out, err = proc.communicate(timeout=10)
    return out, err


def _assert_clean_interrupt(proc, tree, err, tmp_path):
    assert proc.returncode == 130, err[-2000:]
    assert err.strip() == "kmc: interrupted", err[-2000:]
    deadline = time.monotonic() + 5.0
    while tree.left() and time.monotonic() < deadline:
        time.sleep(0.1)
    left = tree.left()
    assert not left, "left running: " + "; ".join(f"{p} {_cmdline(p)[:80]}" for p in left)
    leftovers = [n for n in os.listdir(tmp_path) if n.startswith("kmc-")
                 and os.path.isdir(os.path.join(tmp_path, n))]
    assert not leftovers, f"temporary directories left behind: {leftovers}"


def _interrupt(proc, tree, when, stderr=None):
    """SIGINT to kmc's process group once ``when()`` is true (polled as the tree is
    scanned); fails if kmc exits first."""
    while not when():
        if proc.poll() is not None:
            err = stderr.text() if stderr is not None else proc.stderr.read()
            pytest.fail(f"kmc exited ({proc.returncode}) before the interrupt: {err[-2000:]}")
        tree.scan()
        time.sleep(0.02)
    tree.scan()
    os.killpg(proc.pid, signal.SIGINT)


# the exact moments (the JVM launched, the context stopping) and a level running on Spark
# have tests of their own below
@pytest.mark.parametrize("delay", [0.3, 2.0])
def test_ctrl_c_while_spark_starts_and_runs(delay, tmp_path):
    """``delay`` seconds after kmc's own code began to run (0.3 s: still importing;
    2 s: PySpark starting the JVM or the context)."""
    proc, tree = _start([sys.executable, "-X", "importtime", "-m", "kmc", *CHECK],
                        tmp_path, SPARK_LEVELS)
    try:
        started = KmcStarted(proc)
        _interrupt(proc, tree, lambda: started.at is not None
                   and time.monotonic() - started.at >= delay, started)
        _out, err = _wait_exit(proc, tree, stderr=started)
        _assert_clean_interrupt(proc, tree, err, tmp_path)
    finally:
        tree.kill()


def test_ctrl_c_during_a_spark_level(tmp_path):
    """Once PySpark's workers run tasks (a Spark level), plus a moment."""
    proc, tree = _start([sys.executable, "-m", "kmc", *CHECK], tmp_path, SPARK_LEVELS)
    try:
        seen = {}

        def busy():
            if tree.workers() and "t" not in seen:
                seen["t"] = time.monotonic()
            return "t" in seen and time.monotonic() - seen["t"] >= 1.0
        _interrupt(proc, tree, busy)
        assert tree.workers(), "no Python worker was running at the interrupt"
        _out, err = _wait_exit(proc, tree)
        _assert_clean_interrupt(proc, tree, err, tmp_path)
    finally:
        tree.kill()


# Ctrl-C at exact moments, by hooks run in the kmc process before its CLI: right after
# PySpark spawned the JVM (while it starts and before it reported its port), and in the
# middle of SparkContext.stop at the end of a run
HOOKS = {
    "jvm-launch": """
import pyspark.java_gateway as g
spawn = g.Popen
def popen(*args, **kwargs):
    p = spawn(*args, **kwargs)
    os.killpg(0, signal.SIGINT)
    return p
g.Popen = popen
""",
    "context-stop": """
from pyspark import SparkContext
stop = SparkContext.stop
def stopping(self):
    os.killpg(0, signal.SIGINT)
    time.sleep(0.2)
    stop(self)
SparkContext.stop = stopping
""",
}


# the context-stop moment (~17 s) is in the full tier (`-m full`)
@pytest.mark.parametrize("moment", [
    pytest.param(m, marks=[pytest.mark.full] if m == "context-stop" else [])
    for m in sorted(HOOKS)])
def test_ctrl_c_at_a_given_moment(moment, tmp_path):
    argv = ["check", "twophase", "-p", "rm=4", "--explorer", "spark", "--quiet"]
    code = (f"import os, signal, sys, time\n{HOOKS[moment]}\n"
            f"from kmc.cli import main\nsys.exit(main({argv!r}))\n")
    proc, tree = _start([sys.executable, "-c", code], tmp_path)
    try:
        _out, err = _wait_exit(proc, tree, timeout=90)
        _assert_clean_interrupt(proc, tree, err, tmp_path)
    finally:
        tree.kill()
