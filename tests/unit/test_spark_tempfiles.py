"""Files kmc hands to Spark (the code zip for cluster executors, the JVM's log4j2
configuration) are written fresh into a private directory of the process, never taken
over by name from the shared temporary directory, and removed with it; KMC_SPARK_LOG is
checked before Spark starts."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import zipfile

import pytest

from kmc.explorers.errors import ExplorerError
from kmc.explorers.spark import session, ship, tuning

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def tmp(tmp_path, monkeypatch):
    """The temporary directory is tmp_path; the private directory starts afresh."""
    ship.remove_private_dir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    yield tmp_path
    ship.remove_private_dir()


def _private(path):
    d = os.path.dirname(path)
    st = os.stat(d)
    assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.getuid()
    return d


def test_the_zip_is_made_fresh_in_a_private_directory(tmp):
    made = ship.package_zip()
    name = os.path.basename(made)
    planted = tmp / name  # where earlier versions looked for it, by name
    planted.write_bytes(b"not a zip of kmc")
    again = ship.package_zip()
    assert again == made != str(planted)
    d = _private(made)
    assert os.path.dirname(d) == str(tmp) and os.listdir(d) == [name]
    with zipfile.ZipFile(made) as z:
        names = z.namelist()
    assert "kmc/__init__.py" in names and "kmc/explorers/spark/ship.py" in names
    ship.remove_private_dir()
    assert not os.path.exists(d) and planted.exists()
    fresh = ship.package_zip()  # a new directory, with a new random name
    assert os.path.dirname(fresh) != d and os.path.basename(fresh) == name


def test_the_log4j_configuration_is_made_fresh_in_the_private_directory(tmp):
    planted = tmp / f"kmc-log4j2-{session.LOG_LEVEL}.properties"
    planted.write_text("rootLogger.level = all\n")
    conf = session.build_conf(None, 2, False)
    path = session._log4j_file()
    assert path != str(planted) and os.path.dirname(path) == ship.private_dir()
    _private(path)
    with open(path) as f:
        assert f.readline() == f"rootLogger.level = {session.LOG_LEVEL}\n"
    assert f"-Dlog4j2.configurationFile=file:{path} " in conf["spark.driver.extraJavaOptions"]


def test_an_embedded_master_retries_a_failed_task():
    tries = session.LOCAL_TASK_ATTEMPTS
    assert tries > 1
    assert session.build_conf(None, 2, False)["spark.master"] == f"local[2,{tries}]"
    assert session.build_conf(None, None, False)["spark.master"] == f"local[*,{tries}]"
    assert session.build_conf("local[3]", None, False)["spark.master"] == "local[3]"
    ship.remove_private_dir()


def test_the_private_directory_goes_at_interpreter_exit(tmp):
    code = "from kmc.explorers.spark import ship; print(ship.package_zip())"
    env = {**os.environ, "TMPDIR": str(tmp),
           "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=60, check=True).stdout.strip()
    assert out.startswith(str(tmp)) and out.endswith(".zip")
    assert not os.path.exists(os.path.dirname(out))
    assert os.listdir(tmp) == []


def test_a_forked_child_leaves_its_parents_directory_alone(tmp):
    d = ship.private_dir()
    pid = os.fork()
    if pid == 0:  # the child: what its exit would do
        try:
            ship.remove_private_dir()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert os.path.isdir(d)


@pytest.mark.parametrize("raw,want", [("", "off"), ("WARN", "warn"), (" info ", "info"),
                                      ("off", "off"), ("All", "all")])
def test_kmc_spark_log_takes_log4j_levels(raw, want, monkeypatch):
    monkeypatch.setenv("KMC_SPARK_LOG", raw)
    monkeypatch.setattr(tuning, "_BAD", {})
    assert tuning.env_choice("KMC_SPARK_LOG", "off", tuning.LOG_LEVELS) == want
    tuning.check()


@pytest.mark.parametrize("raw", ["a/b", "verbose", "warn,info", "../../x"])
def test_kmc_spark_log_rejects_anything_else(raw, monkeypatch):
    monkeypatch.setenv("KMC_SPARK_LOG", raw)
    monkeypatch.setattr(tuning, "_BAD", {})
    assert tuning.env_choice("KMC_SPARK_LOG", "off", tuning.LOG_LEVELS) == "off"
    with pytest.raises(ExplorerError) as e:
        tuning.check()
    msg = str(e.value)
    assert msg.startswith(f"KMC_SPARK_LOG={raw!r} is not one of off, fatal, error, warn")
    assert "\n" not in msg


def test_a_bad_kmc_spark_log_stops_kmc_check_before_spark_starts(tmp_path):
    env = {**os.environ, "KMC_SPARK_LOG": "a/b", "TMPDIR": str(tmp_path),
           "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-m", "kmc", "check", "twophase", "--explorer",
                        "spark"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "KMC_SPARK_LOG='a/b' is not one of" in lines[0], r.stderr
    assert os.listdir(tmp_path) == []  # no JVM started: not even its log file
