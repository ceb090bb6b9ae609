"""The exit code and the output when the environment hands kmc odd standard streams or
an odd place to run: output onto a full device, a descriptor closed by the shell, an
encoding that cannot spell the output, a working directory deleted under the shell and
an --out path that is not UTF-8. The verdict's exit code stays, or the one line says
what went wrong: never an internal error, a traceback or Python's own exit code."""
import json
import os
import subprocess
import sys

import pytest


needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")


def kmc(*args, env=None, stdout=subprocess.PIPE, stderr=subprocess.PIPE, close=None):
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    environ.update(env or {})
    p = subprocess.run([sys.executable, "-m", "kmc", *args], stdout=stdout, stderr=stderr,
                       env=environ, timeout=120,
                       preexec_fn=(lambda: os.close(close)) if close is not None else None)
    out = p.stdout.decode() if isinstance(p.stdout, bytes) else ""
    err = p.stderr.decode() if isinstance(p.stderr, bytes) else ""
    return p.returncode, out, err


@needs_dev_full
@pytest.mark.parametrize("unbuffered", [None, "1"])
@pytest.mark.parametrize("args", [["check", "diehard", "--quiet"], ["--help"]])
def test_output_onto_a_full_device_is_exit_2_in_one_line(args, unbuffered):
    with open("/dev/full", "w") as full:
        code, _, err = kmc(*args, stdout=full,
                           env={"PYTHONUNBUFFERED": unbuffered} if unbuffered else None)
    assert code == 2, err
    assert err.count("\n") == 1 and "standard output could not be written" in err
    assert "Traceback" not in err


@needs_dev_full
def test_a_full_standard_error_keeps_the_exit_code_of_a_usage_error():
    with open("/dev/full", "w") as full:
        code, out, _ = kmc("check", "no-such-scenario", stderr=full)
    assert code == 2 and out == ""


def test_json_onto_a_closed_standard_output_keeps_the_verdicts_exit_code():
    code, _, err = kmc("check", "twophase", "--json", "--quiet", stdout=None, close=1)
    assert code == 0, err
    assert err == ""


def test_with_standard_error_closed_nothing_meant_for_it_lands_in_standard_output():
    code, out, _ = kmc("check", "no-such-scenario", "--json", stderr=None, close=2)
    assert code == 2 and out == ""


def test_an_encoding_that_cannot_spell_the_output_keeps_the_verdict():
    code, out, err = kmc("check", "diehard", "--quiet", env={"PYTHONIOENCODING": "ascii"})
    assert code == 1, err
    assert "NotSolved" in out and err == ""


def test_a_deleted_working_directory_is_exit_2_in_one_line(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    # a shell left in a folder that was removed, then running kmc there
    p = subprocess.run(["sh", "-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh",
                        str(gone), sys.executable, "-m", "kmc", "check", "diehard",
                        "--quiet", "--out", "out"], capture_output=True, timeout=120)
    err = p.stderr.decode()
    assert p.returncode == 2, err
    assert err.count("\n") == 1 and "current directory no longer exists" in err


def test_an_out_path_that_is_not_utf8_gets_its_files_and_the_verdict(tmp_path):
    out = os.path.join(os.fsencode(tmp_path), b"out\xff")
    code, text, err = kmc("check", "diehard", "--quiet", "--out", os.fsdecode(out))
    assert code == 1, err
    assert "NotSolved" in text and err == ""
    with open(os.path.join(out, b"summary.json"), encoding="utf-8") as f:
        assert json.load(f)["scenario"] == "diehard"


def test_a_home_that_cannot_hold_matplotlibs_cache_adds_no_output(tmp_path):
    env = {"HOME": "/proc/kmc-no-home", "XDG_CONFIG_HOME": "", "XDG_CACHE_HOME": "",
           "MPLCONFIGDIR": ""}
    code, text, err = kmc("check", "diehard", "--quiet", "--out", str(tmp_path), env=env)
    assert code == 1 and "NotSolved" in text, err
    assert err == ""
    assert (tmp_path / "sequence-NotSolved.svg").exists()  # the pictures were drawn
