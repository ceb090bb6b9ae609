"""Starting (or reusing) the SparkContext for a check, with every start-up failure turned
into one ExplorerError line that says the fix.

- No master: embedded ``local[N]`` (N = --executors, default every core), started and
  stopped here. Executors import the project from the driver's own source directory
  (``spark.executorEnv.PYTHONPATH``) with the driver's interpreter.
- ``spark://``, ``yarn``, ``k8s://``: kmc zips its packages from the running source and
  ships them with ``addPyFile``, so workers need only PySpark and the same Python version.
- Under ``spark-submit`` (or in a notebook / test that already made a context), the active
  context is reused and left running.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlparse

from explorers.errors import ExplorerError
from explorers.spark.ship import package_zip, source_root

#: seconds to wait for a cluster to grant executors before giving up with a hint
EXECUTOR_WAIT_S = float(os.environ.get("KMC_SPARK_WAIT", "60"))
#: seconds to wait for a TCP connection to a spark:// master
CONNECT_WAIT_S = 5.0

# Measured (docs/spark.md): the Unix-domain socket between the JVM and Python workers cuts
# a Python task from ~51 ms to ~7 ms; the UI costs start-up time and a port.
BASE_CONF = {
    "spark.app.name": "kmc",
    "spark.python.unix.domain.socket.enabled": "true",
    "spark.python.worker.reuse": "true",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.locality.wait": os.environ.get("KMC_SPARK_LOCALITY_WAIT", "0s"),
    "spark.driver.memory": os.environ.get("KMC_SPARK_DRIVER_MEMORY", "2g"),
}


#: JVM log level (log4j2): Spark's own INFO/WARN lines would drown kmc's output; errors
#: that matter reach the user as ExplorerError lines. KMC_SPARK_LOG=info to debug.
LOG_LEVEL = os.environ.get("KMC_SPARK_LOG", "off")


def _log4j_file() -> str:
    path = os.path.join(tempfile.gettempdir(), f"kmc-log4j2-{LOG_LEVEL}.properties")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write("rootLogger.level = %s\nrootLogger.appenderRef.stderr.ref = console\n"
                    "appender.console.type = Console\nappender.console.name = console\n"
                    "appender.console.target = SYSTEM_ERR\n"
                    "appender.console.layout.type = PatternLayout\n"
                    "appender.console.layout.pattern = %%d{HH:mm:ss} %%p %%c{1}: %%m%%n\n"
                    % LOG_LEVEL)
        os.replace(tmp, path)
    return path


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


def is_local(master: str | None) -> bool:
    return master is None or master.startswith("local")


def loopback(master: str | None) -> bool:
    """A master on this machine: executors share the driver's filesystem and interpreter."""
    if is_local(master):
        return True
    host = urlparse(master.split(",")[0]).hostname if "://" in master else None
    return host in ("127.0.0.1", "localhost")


def build_conf(master: str | None, executors: int | None, submitted: bool) -> dict:
    conf = dict(BASE_CONF)
    if not submitted:
        conf["spark.master"] = master or (f"local[{executors}]" if executors else "local[*]")
        log = f"-Dlog4j2.configurationFile=file:{_log4j_file()}"
        conf["spark.driver.extraJavaOptions"] = log
        conf["spark.executor.extraJavaOptions"] = log
    m = conf.get("spark.master", master) or ""
    if executors and not m.startswith("local"):
        if m.startswith("spark://"):
            conf["spark.executor.cores"] = "1"
            conf["spark.cores.max"] = str(executors)
        else:
            conf["spark.executor.instances"] = str(executors)
    if loopback(m or None):
        # executors on this machine import the driver's source tree (the interpreter is
        # set through PYSPARK_PYTHON below); the hostname may resolve to an address the
        # loopback workers do not listen on
        conf["spark.executorEnv.PYTHONPATH"] = executor_path()
        if not m.startswith("local"):
            conf["spark.driver.host"] = "127.0.0.1"
            conf["spark.driver.bindAddress"] = "127.0.0.1"
    return conf


def executor_path() -> str:
    """PYTHONPATH for executors on this machine: kmc's source, then the driver's own
    sys.path, so they import exactly what the driver imports (a model module included)."""
    parts = [source_root()] + [os.path.abspath(p) for p in sys.path if p and os.path.isdir(p)]
    return os.pathsep.join(dict.fromkeys(parts))


@contextlib.contextmanager
def spark_context(master: str | None = None, executors: int | None = None):
    """Yield a SparkContext: the active one if any (left running), else a new one that is
    stopped on exit."""
    require_pyspark()
    from pyspark import SparkConf, SparkContext

    active = SparkContext._active_spark_context
    if active is not None:
        if master is not None and active.master != master:
            raise ExplorerError(f"this process already runs a Spark context on "
                                f"{active.master}: omit --master or use {active.master}")
        _ship(active)
        yield active
        return
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # launched by spark-submit
    if not submitted:
        check_java()
    if master is not None:
        check_master_reachable(master)
    conf = SparkConf()
    for k, v in build_conf(master, executors, submitted).items():
        if k == "spark.master" or not conf.contains(k):
            conf.set(k, v)
    m = conf.get("spark.master", "local[*]")
    saved_env = {k: os.environ.get(k) for k in ("PYSPARK_PYTHON", "SPARK_LOCAL_IP")}
    if loopback(m):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        if not is_local(m):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    old_sigint = signal.getsignal(signal.SIGINT)
    try:
        sc = SparkContext(conf=conf, gateway=_gateway(conf, submitted))
    except Exception as e:
        raise ExplorerError(f"Spark did not start ({_first_line(e)}): check Java 17+ and "
                            "the --master URL") from None
    finally:
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    try:
        sc.setLogLevel(LOG_LEVEL.upper())
        if not is_local(m):
            wait_for_executors(sc, m)
        _ship(sc)
        yield sc
    finally:
        sc.stop()
        with contextlib.suppress(Exception):
            signal.signal(signal.SIGINT, old_sigint)


def log_path() -> str:
    """Where the JVM's (and the Python workers') own output goes."""
    return os.environ.get("KMC_SPARK_LOG_FILE") or os.path.join(
        tempfile.gettempdir(), f"kmc-spark-{os.getuid()}.log")


def _gateway(conf, submitted):
    """Launch the JVM with its stdout/stderr in log_path(): Spark's banners and the
    Python daemon's shutdown noise stay out of kmc's output."""
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway

    if submitted or SparkContext._gateway is not None:
        return None  # spark-submit's JVM, or one this process already started
    log = open(log_path(), "wb")
    try:
        return launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
    finally:
        log.close()


def wait_for_executors(sc, master: str, wait_s: float | None = None) -> None:
    """Block until the cluster granted at least one executor, at most ``wait_s`` seconds."""
    wait_s = EXECUTOR_WAIT_S if wait_s is None else wait_s
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        # the driver itself is one entry of this map; executors are the others
        if sc._jsc.sc().getExecutorMemoryStatus().size() > 1:
            return
        time.sleep(0.2)
    sc.stop()
    raise ExplorerError(f"the Spark master {master} granted no executor within "
                        f"{wait_s:.0f} s: check that workers are registered with free cores "
                        "and memory (`kmc cluster status`), or raise KMC_SPARK_WAIT")


def _ship(sc) -> None:
    """On a real cluster, ship kmc's packages (built from the running source) once."""
    if is_local(sc.master) or getattr(sc, "_kmc_shipped", False):
        return
    sc.addPyFile(package_zip())
    sc._kmc_shipped = True


def probe_executors(sc, core_bc, tasks: int) -> None:
    """One tiny job: each task imports kmc and loads the shared Core (which imports the
    model's modules), so a cluster that cannot run the model fails before any work."""
    from explorers.spark import level_tasks

    try:
        sc.parallelize(range(tasks), tasks).mapPartitions(level_tasks.probe(core_bc)).collect()
    except Exception as e:
        raise explain_failure(e) from None


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
    return RuntimeError(f"a Spark job failed: {_first_line(e)} (KMC_SPARK_LOG=warn and "
                        f"{log_path()} have the details)")


def _first_line(e: BaseException) -> str:
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
