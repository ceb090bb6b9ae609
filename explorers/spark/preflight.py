"""Checks before and after Spark starts, each failure turned into one ExplorerError line
that says what is wrong and the fix: PySpark and Java present, the master reachable, and a
failed Spark job explained (the executors cannot import the model, another Python)."""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from urllib.parse import urlparse

from kmc.explorers.errors import ExplorerError

#: seconds to wait for a TCP connection to a spark:// master
CONNECT_WAIT_S = 5.0


def require_pyspark():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise ExplorerError("the Spark explorer needs PySpark: pip install pyspark "
                            "(or use --explorer bfs)") from None


def check_java() -> None:
    """Spark 4 needs Java 17+; say so before PySpark fails with a gateway error."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        where = f"JAVA_HOME={home} has no bin/java" if home else "no `java` on PATH"
        raise ExplorerError(f"the Spark explorer needs Java 17 or newer, but {where}: install "
                            "a JRE (e.g. apt-get install openjdk-17-jre-headless) or set "
                            "JAVA_HOME")
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True,
                             timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ExplorerError(f"cannot run {java} -version ({e}): fix the Java install or "
                            "JAVA_HOME") from None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if m:
        major = int(m.group(1)) if m.group(1) != "1" else int(m.group(2) or 0)
        if major < 17:
            raise ExplorerError(f"the Spark explorer needs Java 17 or newer, found Java "
                                f"{major} at {java}: install Java 17+ or point JAVA_HOME at it")


#: the most task threads an embedded master runs (more is a typo, not a machine: each is
#: a thread of the JVM and a Python worker, and local[99999] brings the machine to a halt)
MAX_LOCAL_THREADS = 1024
#: the masters Spark itself accepts (SparkSubmit: "Master must either be yarn or start
#: with spark, k8s, or local"; SparkContext's local regular expressions)
LOCAL_MASTER = re.compile(r"local(?:\[([0-9]+|\*)(?:\s*,\s*([0-9]+))?\])?")
LOCAL_CLUSTER = re.compile(r"local-cluster\[\s*([0-9]+)\s*,\s*([0-9]+)\s*,\s*([0-9]+)\s*\]")


def check_master(master: str | None, executors: int | None = None) -> None:
    """A ``--master`` Spark would refuse, or a local one that would start more task
    threads than this machine can run, as one line before Spark starts: Spark's own
    refusal comes as a Java gateway error that names neither, and local[99999] is
    accepted and runs the machine out of threads. ``--executors`` sets a local master's
    threads only when kmc makes the master, so beside an explicit local one it is
    refused rather than silently ignored."""
    if master is None:
        if executors is not None and executors > MAX_LOCAL_THREADS:
            raise ExplorerError(f"--executors {executors}: an embedded master runs at most "
                                f"{MAX_LOCAL_THREADS} task threads on this machine; for more, "
                                "start a cluster and pass --master")
        return
    usage = ("write local[N] (N threads), local[*], spark://HOST:PORT, yarn or "
             "k8s://https://HOST:PORT")
    if not master.startswith(("local", "spark://", "k8s://")) and master != "yarn":
        raise ExplorerError(f"--master {master!r} is not a Spark master URL: {usage}")
    if not master.startswith("local"):
        return
    m, c = LOCAL_MASTER.fullmatch(master), LOCAL_CLUSTER.fullmatch(master)
    if m:
        threads = m.group(1)
        counts = [int(g) for g in (threads, m.group(2)) if g and g != "*"]
    elif c:
        counts = [int(g) for g in c.groups()]
        threads = str(counts[0] * counts[1])
    else:
        raise ExplorerError(f"--master {master!r} is not a Spark master URL: {usage}")
    if 0 in counts:
        raise ExplorerError(f"--master {master}: every count in it must be 1 or more: "
                            f"{usage}")
    if threads and threads != "*" and int(threads) > MAX_LOCAL_THREADS:
        raise ExplorerError(f"--master {master}: an embedded master runs at most "
                            f"{MAX_LOCAL_THREADS} task threads on this machine; for more, "
                            "start a cluster and pass its URL")
    if executors is not None:
        raise ExplorerError(f"--executors {executors} and --master {master}: a local master "
                            "sets its own threads; drop --executors, or drop --master for "
                            f"local[{executors}]")


def check_master_reachable(master: str, wait_s: float = CONNECT_WAIT_S) -> None:
    """A spark:// master must accept TCP connections within ``wait_s`` seconds."""
    if not master.startswith("spark://"):
        return
    hosts = master[len("spark://"):].split(",")
    deadline = time.monotonic() + wait_s
    last = None
    while True:
        for hp in hosts:
            u = urlparse(f"spark://{hp}")
            try:
                with socket.create_connection((u.hostname, u.port or 7077), timeout=1.0):
                    return
            except OSError as e:
                last = e
        if time.monotonic() >= deadline:
            break
        time.sleep(0.25)
    raise ExplorerError(f"cannot reach the Spark master {master} ({last}; waited "
                        f"{wait_s:.0f} s): start it (e.g. `kmc cluster start`) or fix --master")


def from_spark(e: BaseException) -> bool:
    """An error raised by a Spark job (as opposed to the driver's own code)."""
    names = {c.__name__ for c in type(e).__mro__}
    return bool(names & {"Py4JJavaError", "Py4JError", "PySparkException"})


def explain_failure(e: BaseException) -> Exception:
    """A failed Spark job as one line: ExplorerError when the setup is at fault (the
    executors cannot import the model, another Python version), else RuntimeError."""
    text = str(e)
    m = re.search(r"(ModuleNotFoundError|ImportError): ([^\n]*)", text)
    if m:
        return ExplorerError(f"Spark executors cannot import the model ({m.group(2).strip()}): "
                             "install kafka-model-checker and the model's package on every "
                             "worker, or run kmc from its source tree so it ships them")
    m = re.search(r"PYTHON_VERSION_MISMATCH[^\n]*|Python in worker has different "
                  r"version[^\n]*", text)
    if m:
        return ExplorerError(f"Spark executors run another Python version ({m.group(0)}): "
                             "set PYSPARK_PYTHON to the same Python on every worker")
    return RuntimeError(f"a Spark job failed: {first_line(e)} (rerun with KMC_SPARK_LOG=warn "
                        "for Spark's own log)")


def first_line(e: BaseException) -> str:
    """The most telling line of a (Java-wrapped) error: a Python exception line if the
    failure came from a Python worker, else the first non-stack line."""
    text = str(e).strip()
    py = re.findall(r"^\s*(\w+(?:Error|Exception): .*)$", text, re.M)
    py = [p for p in py if not p.startswith(("py4j", "org.", "java."))]
    if py:
        return py[-1].strip()[:300]
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("at "):
            return line[:300]
    return type(e).__name__


#: a Java exception line: its message is the reason (``...SparkException: Master must
#: either be yarn ...``, ``...: [INVALID_DRIVER_MEMORY...] Insufficient driver memory``)
JAVA_EXCEPTION = re.compile(r"(?:^|\s)(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error): "
                            r"(.+)$", re.M)
#: the JVM's own lines around its reason, which say nothing of it
JVM_NOISE = ("WARNING", "Error occurred during initialization", "Error: Could not create",
             "Error: A fatal exception", "Usage:")


def startup_failure(e: BaseException, log: str) -> ExplorerError:
    """A SparkContext that did not start, as one line with the reason. PySpark says only
    "Java gateway process exited" when the JVM refused its options (a heap size such as
    KMC_SPARK_DRIVER_MEMORY=0, an unquoted KMC_SPARK_JIT_OPTS): the JVM wrote why into
    ``log``, the file its output goes to. A JVM that started and refused the context
    (driver memory below Spark's 450 MiB floor) says why in the Java exception."""
    text = str(e)
    m = JAVA_EXCEPTION.search(text)
    reason = m.group(1).strip() if m else None
    if reason is None and "JAVA_GATEWAY_EXITED" in text:
        try:
            with open(log, errors="replace") as f:
                jvm = f.read()[-8192:]
        except OSError:
            jvm = ""
        m = JAVA_EXCEPTION.search(jvm)
        lines = [ln.strip() for ln in jvm.splitlines()
                 if ln.strip() and not ln.strip().startswith(JVM_NOISE)]
        reason = m.group(1).strip() if m else lines[0] if lines else None
    return ExplorerError(f"Spark did not start ({(reason or first_line(e))[:300]}): check "
                         "KMC_SPARK_DRIVER_MEMORY (at least 512m), KMC_SPARK_JIT_OPTS, "
                         f"KMC_SPARK_GC_OPTS and Java 17+ (the JVM's output: {log})")
