"""Starting (or reusing) the SparkContext for a check, with every start-up failure turned
into one ExplorerError line that says the fix.

- No master: embedded ``local[N,F]`` (N = --executors, default every core; F =
  LOCAL_TASK_ATTEMPTS), started and stopped here. Executors import the project from the
  driver's own source directory (``spark.executorEnv.PYTHONPATH``) with its interpreter.
- ``spark://``, ``yarn``, ``k8s://``: kmc zips its packages from the running source and
  ships them with ``addPyFile``, so workers need only PySpark and the same Python version.
- Under ``spark-submit`` (or in a notebook / test that already made a context), the active
  context is reused and left running.

Ctrl-C at any moment of a context started here (``CtrlC``) is acted on once the JVM is
up, between py4j calls, after the context stopped: no JVM or Python worker outlives it.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from urllib.parse import urlparse

from kmc.explorers.errors import ExplorerError
from kmc.explorers.spark.preflight import (check_java, check_master_reachable, explain_failure,
                                       require_pyspark, startup_failure)
from kmc.explorers.spark.interrupt import CtrlC
from kmc.explorers.spark.logfile import log_path, open_log
from kmc.explorers.spark.ship import package_zip, private_file, remove_private_dir, source_root
from kmc.explorers.spark.tuning import LOG_LEVELS, check as check_tuning, env_choice, \
    env_number, env_spark_value

#: seconds to wait for a cluster to grant executors before giving up with a hint
EXECUTOR_WAIT_S = env_number("KMC_SPARK_WAIT", 60.0)
# Measured (docs/spark.md): the Unix-domain socket between the JVM and Python workers cuts
# a Python task from ~51 ms to ~7 ms; the UI costs start-up time and a port.
BASE_CONF = {
    "spark.app.name": "kmc",
    "spark.python.unix.domain.socket.enabled": "true",
    "spark.python.worker.reuse": "true",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    # at most 9 digits: Spark reads the duration as a Java long, and fails a job on more
    "spark.locality.wait": env_spark_value("KMC_SPARK_LOCALITY_WAIT", "0s",
                                           r"[0-9]{1,9}(us|ms|s|m|min|h|d)?",
                                           "a Spark duration such as 0s, 500ms or 3s"),
    "spark.driver.memory": env_spark_value("KMC_SPARK_DRIVER_MEMORY", "2g",
                                           r"[0-9]+[kmgt]?b?", "a size such as 2g or 512m"),
    # A level's summary (its new keys and their parents, 16-32 bytes a state) reaches the
    # driver inside the task's result. Above 1 MiB (Spark's default) the result takes a
    # detour through the block manager: 20-150 ms more per level on TwoPhase rm=8, whose
    # tasks return 1-4 MiB (local[1]: 7.0 -> 6.55 s, local[2]: 4.45 -> 4.32 s, three
    # alternating runs each). Spark caps it at spark.rpc.message.maxSize (128 MiB).
    "spark.task.maxDirectResultSize": "128m",
}


#: The JVM only moves bytes here (shuffle files, cached blocks): its optimising compiler
#: (C2) kept recompiling through a whole run and burned 5.4 CPU s of TwoPhase rm=8's 8.7
#: JVM CPU s after warm-up; the quick compiler alone (C1) cut the JVM to 3.4 CPU s.
JIT_OPTS = os.environ.get("KMC_SPARK_JIT_OPTS", "-XX:TieredStopAtLevel=1")

#: The garbage collector of an embedded master's one JVM (driver and executors). G1, the
#: JVM's default, keeps pauses short in large heaps with concurrent threads and a barrier
#: on every reference the JVM writes; this heap is spark.driver.memory (2g) and the JVM
#: mostly moves bytes between Python and shuffle files. The serial collector cut the
#: JVM's CPU on TwoPhase rm=8 (local[2]) from 1.24-1.36 to 1.09-1.19 s and the run from
#: 3.80-4.21 to 3.69-3.92 s (three alternating runs each). Cluster JVMs keep their own.
GC_OPTS = os.environ.get("KMC_SPARK_GC_OPTS", "-XX:+UseSerialGC")

#: JVM log level (log4j2): Spark's own INFO/WARN lines would drown kmc's output; errors
#: that matter reach the user as ExplorerError lines. KMC_SPARK_LOG=info to debug.
LOG_LEVEL = env_choice("KMC_SPARK_LOG", "off", LOG_LEVELS)

#: attempts per task on an embedded master (``local[N,F]``; ``local[N]`` gives one): a
#: Python worker that dies costs a re-run of its task, as on a cluster, not the run
LOCAL_TASK_ATTEMPTS = 4


def _log4j_file() -> str:
    """The JVM's log4j2 configuration, written fresh into ``ship.private_dir()``."""
    text = ("rootLogger.level = %s\nrootLogger.appenderRef.stderr.ref = console\n"
            "appender.console.type = Console\nappender.console.name = console\n"
            "appender.console.target = SYSTEM_ERR\n"
            "appender.console.layout.type = PatternLayout\n"
            "appender.console.layout.pattern = %%d{HH:mm:ss} %%p %%c{1}: %%m%%n\n"
            % LOG_LEVEL)
    return private_file(f"kmc-log4j2-{LOG_LEVEL}.properties",
                        lambda f: f.write(text.encode()))


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
        conf["spark.master"] = master or f"local[{executors or '*'},{LOCAL_TASK_ATTEMPTS}]"
        opts = f"-Dlog4j2.configurationFile=file:{_log4j_file()} {JIT_OPTS}"
        gc_opts = f" {GC_OPTS}" if is_local(conf["spark.master"]) else ""
        conf["spark.driver.extraJavaOptions"] = opts + gc_opts
        conf["spark.executor.extraJavaOptions"] = opts
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
        # no network between map and reduce side, and keys do not compress: LZ4 only
        # cost the JVM ~0.25 CPU s per 200 MB shuffled (bench: 192 MB of random bytes
        # through partitionBy took 1.05-1.3 JVM CPU s with it, 0.78-0.96 s without)
        conf["spark.shuffle.compress"] = "false"
        conf["spark.broadcast.compress"] = "false"
        # a shuffle checksum only tells a network fault from a disk fault after a corrupt
        # fetch; it costs a checksum file per task and a pass over every byte: tiny
        # levels (TwoPhase rm=4, local[2]) used 46-52 JVM CPU ms each without it against
        # 51-62 ms with it (three alternating runs of 130 levels)
        conf["spark.shuffle.checksum.enabled"] = "false"
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
def spark_context(master: str | None = None, executors: int | None = None,
                  app_name: str | None = None):
    """Yield a SparkContext: the active one if any (left running), else a new one that is
    stopped on exit, named ``app_name`` (e.g. "kmc stale-read") unless spark-submit named
    it."""
    check_tuning()
    require_pyspark()
    from pyspark import SparkConf, SparkContext

    active = SparkContext._active_spark_context
    if active is not None:
        if master is not None and active.master != master:
            raise ExplorerError(f"this process already runs a Spark context on "
                                f"{active.master}: omit --master or use {active.master}")
        _ship(active)
        import_hot_classes(active)
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
    if app_name and not submitted:
        conf.set("spark.app.name", app_name)
    m = conf.get("spark.master", "local[*]")
    sc = None
    try:
        with CtrlC() as ctrl_c:  # a Ctrl-C while Spark starts is acted on once it is up
            sc = _create(conf, submitted, m, ctrl_c)
            quiet_hangup(sc)
            ctrl_c.check()
            sc.setLogLevel(LOG_LEVEL.upper())
            import_hot_classes(sc)
            if not is_local(m):
                wait_for_executors(sc, m, interrupted=ctrl_c.event.is_set)
            _ship(sc)
    except BaseException:
        if sc is not None:
            _stop(sc)
        raise
    try:
        yield sc
    finally:
        _stop(sc)


def quiet_hangup(sc) -> None:
    """The driver's accumulator server (pyspark.accumulators) reads the tasks' updates from
    the JVM over a socket. A context stopped mid-level (Ctrl-C) closes that socket while the
    server's handler reads: the read ends in EOFError, and socketserver prints its traceback
    on stderr after "kmc: interrupted". The JVM hanging up ends the updates; it is not an
    error to print. Any other error of the server still is."""
    server = getattr(sc, "_accumulatorServer", None)
    if server is None:
        return
    printer = server.handle_error

    def handle_error(request, client_address):
        if not isinstance(sys.exc_info()[1], (EOFError, ConnectionError)):
            printer(request, client_address)
    server.handle_error = handle_error


def _stop(sc) -> None:
    """Stop a context started here and remove the private files, shielded from Ctrl-C
    (a stop cut short leaves workers behind); a Ctrl-C meanwhile is raised after."""
    with CtrlC():
        try:
            sc.stop()
        finally:
            remove_private_dir()


#: JVM classes PySpark finds by their short names on every BFS level (RDD.partitionBy,
#: its Python function, broadcasts). py4j tries each package PySpark imported in turn, and
#: each miss searches every jar: 40% of the py4j threads' samples in a Java Flight
#: Recording of TwoPhase rm=3 (every level on Spark). Imported by full name, no misses.
HOT_CLASSES = ("PythonRDD", "PairwiseRDD", "PythonPartitioner", "SimplePythonFunction",
               "PythonUtils")


def import_hot_classes(sc) -> None:
    from py4j.java_gateway import java_import

    for name in HOT_CLASSES:
        java_import(sc._jvm, f"org.apache.spark.api.python.{name}")


def _create(conf, submitted, master, ctrl_c):
    """A new SparkContext, started in a helper thread while the main thread waits, so a
    Ctrl-C only marks ``ctrl_c``: KeyboardInterrupt in the JVM's launch makes PySpark
    remove the file the JVM reports its port in, and that JVM lives on without a driver;
    in a py4j call, it logs a traceback. After a Ctrl-C in the launch no context is made
    and the JVM is stopped. A cluster master that accepts the connection but never the
    application blocks the constructor: the driver gives up after EXECUTOR_WAIT_S."""
    from pyspark import SparkContext

    saved_env = {k: os.environ.get(k) for k in ("PYSPARK_PYTHON", "SPARK_LOCAL_IP")}
    if loopback(master):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        if not is_local(master):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    box: dict = {}

    def make():
        try:
            box["gateway"] = _gateway(conf, submitted)
            if not ctrl_c.event.is_set():
                box["sc"] = SparkContext(conf=conf, gateway=box["gateway"])
        except BaseException as e:  # handed to the main thread below
            box["error"] = e
    t = threading.Thread(target=make, name="kmc-spark-start", daemon=True)
    try:
        t.start()
        deadline = None if is_local(master) else time.monotonic() + EXECUTOR_WAIT_S
        while t.is_alive() and (deadline is None or time.monotonic() < deadline):
            t.join(0.1)
    finally:
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    gateway = box.get("gateway")
    if "sc" not in box:
        if gateway is not None and gateway is not SparkContext._gateway:
            shutdown_gateway(gw=gateway)  # launched for a context that was not made
        ctrl_c.check()
    if t.is_alive():
        raise ExplorerError(f"the Spark master {master} did not accept the application "
                            f"within {EXECUTOR_WAIT_S:.0f} s: check that it is a Spark "
                            "master of the same version (its log, or `kmc cluster "
                            "status`), or raise KMC_SPARK_WAIT")
    if "error" in box:
        e = box["error"]
        if isinstance(e, ExplorerError):
            raise e
        raise startup_failure(e, log_path()) from None
    return box["sc"]


def shutdown_gateway(wait_s: float = 30.0, gw=None) -> None:
    """Stop a JVM this process launched for Spark (by its PID): ``gw``, or by default
    PySpark's once no context uses it. A process that exits takes its JVM along anyway;
    tests call this to leave nothing running behind them."""
    from pyspark import SparkContext

    if gw is None:
        gw = SparkContext._gateway
        if gw is None or SparkContext._active_spark_context is not None:
            return
        SparkContext._gateway = SparkContext._jvm = None
    proc = getattr(gw, "proc", None)
    with contextlib.suppress(Exception):
        gw.shutdown()
    if proc is None:
        return
    with contextlib.suppress(Exception):
        proc.stdin.close()  # the JVM exits when its stdin closes
    try:
        proc.wait(timeout=wait_s)
    except BaseException as e:  # too slow, or a Ctrl-C while waiting: killed
        proc.kill()
        proc.wait(timeout=wait_s)
        if not isinstance(e, Exception):
            raise


def _gateway(conf, submitted):
    """Launch the JVM with its stdout/stderr in log_path(): Spark's banners and the
    Python daemon's shutdown noise stay out of kmc's output."""
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway

    if submitted or SparkContext._gateway is not None:
        return None  # spark-submit's JVM, or one this process already started
    log = open_log(log_path())
    try:
        return launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
    finally:
        log.close()


def executor_count(sc) -> int:
    """The executors the driver has now (its own block manager is one entry of the map)."""
    return sc._jsc.sc().getExecutorMemoryStatus().size() - 1


def wait_for_executors(sc, master: str, wait_s: float | None = None,
                       interrupted=None) -> None:
    """Block until the cluster granted at least one executor, at most ``wait_s`` seconds
    (KeyboardInterrupt as soon as ``interrupted()`` is true)."""
    wait_s = EXECUTOR_WAIT_S if wait_s is None else wait_s
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if interrupted is not None and interrupted():
            raise KeyboardInterrupt()
        try:
            # the driver itself is one entry of this map; executors are the others
            if executor_count(sc) > 0:
                return
        except Exception:  # Spark stopped the context: the master gave up on it
            raise ExplorerError(f"the Spark master {master} dropped the application: see "
                                f"{log_path()} (KMC_SPARK_LOG=warn)") from None
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


def probe_executors(sc, core_bc, tasks: int, space=None) -> None:
    """One tiny job: each task imports kmc and loads the shared Core (which imports the
    model's modules), so a cluster that cannot run the model fails before any work; and
    sees and writes the run's spill directory, given ``space`` (``spill_dir``)."""
    from kmc.explorers.spark import level_tasks

    shared = space.probe_target() if space is not None else None
    try:
        answers = sc.parallelize(range(tasks), tasks) \
            .mapPartitions(level_tasks.probe(core_bc, shared)).collect()
    except Exception as e:
        raise explain_failure(e) from None
    if shared is not None:
        space.check_reached(answers)



