"""SIGTERM (a CI job's timeout, `kill`) and SIGHUP (the terminal closed) end a run as a
Ctrl-C does, through the same clean-up, with their own line and exit code 128 + N."""
import os
import signal
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# the signal arrives while the command line is read, once the handlers are in place
SIGNALLED = """
import os, signal, sys
import kmc.cli as cli

SIG = getattr(signal, sys.argv[1])
plain = cli.build_parser
def build_parser():
    os.kill(os.getpid(), SIG)
    for _ in range(10000):  # the handlers run here
        pass
    return plain()
cli.build_parser = build_parser
sys.argv = ["kmc", "list"]
cli.entry()
"""


@pytest.mark.parametrize("name, words", [("SIGTERM", "terminated"), ("SIGHUP", "hung up")])
def test_a_signal_that_ends_kmc_is_one_line_and_128_plus_its_number(tmp_path, name, words):
    (tmp_path / "signalled.py").write_text(SIGNALLED)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), ROOT])}
    out = subprocess.run([sys.executable, "-m", "signalled", name], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stderr) == (128 + getattr(signal, name), f"kmc: {words}\n")


def test_a_terminated_run_leaves_no_half_written_output(tmp_path):
    """Sent once the run shows progress: it is exploring, and --out is not written."""
    out_dir = tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-m", "kmc", "check", "lifecycle-large",
                          "--max-states", "2000000", "--out", str(out_dir)], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = p.stderr.readline()  # the first progress line (after 5 s)
        assert "distinct" in first, first
        p.send_signal(signal.SIGTERM)
        _out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 143 and err == "kmc: terminated\n"
    assert not out_dir.exists()
