"""Spark options that Spark itself would refuse (or accept and then choke on) are checked
before Spark starts, as one line that says the fix: a ``--master`` spelling, a local
master of more threads than a machine runs, ``--executors`` beside a local master, a bad
KMC_SPARK_DRIVER_SECONDS whichever setting decides where levels run, a locality wait
beyond a Java long. A JVM that does not start says why (the JVM's own reason) rather than
only that its gateway exited."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kmc.explorers.errors import ExplorerError
from kmc.explorers.spark.preflight import MAX_LOCAL_THREADS, check_master, startup_failure

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("master", [
    None, "local", "local[1]", "local[*]", "local[2,4]", "local[*,4]", "local[2, 3]",
    f"local[{MAX_LOCAL_THREADS}]", "local-cluster[2,1,1024]",
    "spark://127.0.0.1:7077", "spark://a:7077,b:7077", "yarn", "k8s://https://api:6443"])
def test_masters_spark_accepts_pass(master):
    check_master(master)


@pytest.mark.parametrize("master,says", [
    ("bogus", "is not a Spark master URL"), ("LOCAL[2]", "is not a Spark master URL"),
    (" local[2]", "is not a Spark master URL"), ("local[abc]", "is not a Spark master URL"),
    ("local[-1]", "is not a Spark master URL"), ("local[2", "is not a Spark master URL"),
    ("local[0]", "1 or more"), ("local[2,0]", "1 or more"),
    ("local-cluster[0,1,512]", "1 or more"),
    # accepted by Spark, and then a JVM of 99999 task threads halts the machine
    ("local[99999]", f"at most {MAX_LOCAL_THREADS} task threads"),
    ("local-cluster[600,2,512]", f"at most {MAX_LOCAL_THREADS} task threads")])
def test_masters_spark_refuses_or_chokes_on_are_one_line(master, says):
    with pytest.raises(ExplorerError) as e:
        check_master(master)
    msg = str(e.value)
    assert says in msg and "\n" not in msg and msg.startswith("--master ")


def test_executors_beside_a_local_master_are_refused_not_ignored():
    with pytest.raises(ExplorerError, match="drop --executors"):
        check_master("local[2]", 4)
    check_master("spark://127.0.0.1:7077", 4)  # a cluster's executors: kmc asks for them
    check_master(None, MAX_LOCAL_THREADS)
    with pytest.raises(ExplorerError, match="at most"):
        check_master(None, MAX_LOCAL_THREADS + 1)  # the API, where argparse does not check


@pytest.mark.parametrize("jvm_output,reason", [
    ("Invalid maximum heap size: -Xmx0g\nError: Could not create the Java Virtual "
     "Machine.\nError: A fatal exception has occurred. Program will exit.\n",
     "Invalid maximum heap size: -Xmx0g"),
    ("Error occurred during initialization of VM\nToo small maximum heap\n",
     "Too small maximum heap"),
    ("WARNING: Using incubator modules: jdk.incubator.vector\nException in thread \"main\" "
     "org.apache.spark.SparkException: Master must either be yarn or start with spark\n"
     "\tat org.apache.spark.deploy.SparkSubmit.error(SparkSubmit.scala:1068)\n",
     "Master must either be yarn or start with spark")])
def test_a_jvm_that_exits_at_launch_says_why(tmp_path, jvm_output, reason):
    log = tmp_path / "spark.log"
    log.write_text(jvm_output)
    e = startup_failure(RuntimeError("[JAVA_GATEWAY_EXITED] Java gateway process exited "
                                     "before sending its port number."), str(log))
    assert f"Spark did not start ({reason})" in str(e)
    assert "KMC_SPARK_DRIVER_MEMORY" in str(e) and "\n" not in str(e)


def test_a_context_the_jvm_refuses_says_why(tmp_path):
    text = ("An error occurred while calling None.org.apache.spark.api.java.JavaSparkContext."
            "\n: org.apache.spark.SparkIllegalArgumentException: [INVALID_DRIVER_MEMORY."
            "SYSTEM_MEMORY] Insufficient driver memory: System memory 101384192 must be at "
            "least 471859200.\nPlease increase heap size\n\tat org.apache.spark.memory.X(Y)")
    msg = str(startup_failure(RuntimeError(text), str(tmp_path / "none.log")))
    assert "Insufficient driver memory: System memory 101384192 must be at least" in msg


def _kmc(tmp_path, *argv, **env):
    env = {**os.environ, **env, "TMPDIR": str(tmp_path),
           "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "kmc", "check", "diehard", "--explorer",
                           "spark", *argv], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("argv,says", [
    (("--master", "bogus"), "--master 'bogus' is not a Spark master URL"),
    (("--master", "local[0]"), "--master local[0]: every count"),
    (("--master", "local[2]", "--executors", "3"), "--executors 3 and --master local[2]")])
def test_the_command_refuses_a_bad_master_before_spark_starts(tmp_path, argv, says):
    out, tmp = tmp_path / "ckpt", tmp_path / "tmp"
    tmp.mkdir()
    r = _kmc(tmp, *argv, "--checkpoint-dir", str(out))
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], r.stderr
    assert not out.exists() and r.stdout == ""
    assert os.listdir(tmp) == []  # no JVM started: not even its log file


def test_a_bad_driver_budget_stops_a_check_whose_levels_are_fixed(tmp_path):
    """KMC_SPARK_DRIVER_LEVEL set, the budget is never asked for: its bad value is still
    named before Spark starts, as the docs promise for every number among the settings."""
    r = _kmc(tmp_path, KMC_SPARK_DRIVER_LEVEL="3", KMC_SPARK_DRIVER_SECONDS="fast")
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "KMC_SPARK_DRIVER_SECONDS='fast' is not a number" in lines[0]
    assert os.listdir(tmp_path) == []


def test_a_locality_wait_beyond_a_java_long_is_named_before_spark_starts(tmp_path):
    """Spark reads the duration as a Java long: more digits failed the first job with
    an internal error (exit 3)."""
    r = _kmc(tmp_path, KMC_SPARK_LOCALITY_WAIT="99999999999999999999999s")
    assert r.returncode == 2, r.stderr
    assert "KMC_SPARK_LOCALITY_WAIT='99999999999999999999999s' is not a Spark duration" \
        in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("raw", ["", "  "])
def test_an_empty_driver_budget_is_unset(tmp_path, raw):
    code = ("import kmc.explorers.spark.run as r; from kmc.explorers.spark import tuning;"
            "tuning.check(); print(r.driver_seconds(True, 2))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "KMC_SPARK_DRIVER_SECONDS": raw}, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "None", r.stderr
