"""A Spark standalone cluster on 127.0.0.1 (one master, N workers), for trying the Spark
explorer on one machine and for the tests. It runs PySpark's bundled ``bin/spark-class``
(no separate Spark install), records every PID in a state directory, and stops what it
started by PID — never by process name.

    from kmc.explorers.spark import cluster
    c = cluster.start("/tmp/kmc-cluster", workers=2)   # c.master_url: spark://127.0.0.1:PORT
    cluster.stop("/tmp/kmc-cluster")
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from kmc.explorers.errors import ExplorerError

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
STATE = "state.json"
#: the most workers ``start`` runs: each is a JVM on this one machine
MAX_WORKERS = 64


@dataclass
class Cluster:
    state_dir: str
    master_url: str
    ui_url: str
    master_pid: int
    worker_pids: list = field(default_factory=list)


def spark_home() -> str:
    import pyspark

    home = os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)
    if not os.access(os.path.join(home, "bin", "spark-class"), os.X_OK):
        raise ExplorerError(f"{home}/bin/spark-class is missing: reinstall pyspark or set "
                            "SPARK_HOME to a Spark distribution")
    return home


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _launch(home, args, log_path, env, launched: list) -> int:
    """Start one JVM; its PID goes into ``launched`` at once."""
    log = open(log_path, "ab")
    try:
        # spark-class execs java, so this PID is the JVM's; start_new_session keeps a
        # Ctrl-C in the terminal that started the cluster from reaching it
        pid = subprocess.Popen([os.path.join(home, "bin", "spark-class"), *args],
                               stdout=log, stderr=subprocess.STDOUT, env=env,
                               start_new_session=True).pid
        launched.append(pid)
        return pid
    finally:
        log.close()


def start(state_dir: str, workers: int = 2, cores: int = 1, memory: str = "1g",
          port: int = 7077, wait_s: float = 90.0) -> Cluster:
    from kmc.explorers.spark.session import check_java

    if not 1 <= workers <= MAX_WORKERS:
        raise ExplorerError(f"--workers {workers}: a cluster on one machine runs 1 to "
                            f"{MAX_WORKERS} workers (each a JVM of its own)")
    state = Path(state_dir).resolve()
    if load(str(state)) is not None and status(str(state))["alive"]:
        raise ExplorerError(f"a cluster from {state} is already running: "
                            f"`kmc cluster stop --dir {state}` first")
    check_java()
    home = spark_home()
    port = port or free_port()
    if _port_open(port):
        raise ExplorerError(f"port {port} on 127.0.0.1 is in use: pass --port 0 for a free "
                            "port, or stop what listens there")
    try:
        state.mkdir(parents=True, exist_ok=True)
        (state / "master.log").touch()
    except OSError as e:
        raise ExplorerError(f"--dir {state_dir} cannot hold the cluster's files "
                            f"({e.strerror or e}): name a directory you can write") from None
    env = {**os.environ, "SPARK_HOME": home, "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_MASTER_HOST": "127.0.0.1"}
    ui = free_port()
    url = f"spark://127.0.0.1:{port}"
    info = {"master_url": url, "ui_port": ui, "master": None, "workers": []}
    mlog = state / "master.log"
    launched: list = []  # every JVM started, known here before the state file has it
    try:
        info["master"] = {"pid": _launch(home, [MASTER, "--host", "127.0.0.1", "--port",
                                                str(port), "--webui-port", str(ui)],
                                         mlog, env, launched),
                          "log": str(mlog)}
        _save(state, info)  # PIDs are on disk before any wait: stop() works whatever happens
        _wait(lambda: _port_open(port), wait_s, f"the master did not listen on {port}", mlog)
        for i in range(workers):
            wdir = state / f"work-{i}"
            wdir.mkdir(exist_ok=True)
            wlog = state / f"worker-{i}.log"
            pid = _launch(home, [WORKER, url, "--host", "127.0.0.1", "--cores", str(cores),
                                 "--memory", memory, "--webui-port", str(free_port()),
                                 "--work-dir", str(wdir)], wlog, env, launched)
            info["workers"].append({"pid": pid, "log": str(wlog), "work_dir": str(wdir)})
            _save(state, info)
        _wait(lambda: _registered(mlog) >= workers, wait_s,
              f"{workers} workers did not register with the master", mlog)
    except BaseException as e:
        _abandon(state, launched)
        if isinstance(e, OSError):  # the state directory filled up or went away
            raise ExplorerError(f"--dir {state_dir} cannot hold the cluster's files "
                                f"({e.strerror or e}): free space there or name another "
                                "directory; nothing is left running") from None
        raise
    return load(str(state))


def _abandon(state: Path, launched: list) -> None:
    """A start that failed or was interrupted: stop every JVM it launched (its own
    children, so their PIDs are still theirs), then what the state file names, and
    remove the state files."""
    signalled: list = []
    for pid in launched:
        _signal(pid, signal.SIGTERM, signalled)
    _reap(signalled, 20.0)
    try:
        stop(str(state))
    except ExplorerError:
        pass  # a state file half-written: the launched JVMs are stopped already
    for name in (STATE, STATE + ".tmp"):
        (state / name).unlink(missing_ok=True)


def _registered(master_log: Path) -> int:
    try:
        return master_log.read_text(errors="replace").count("Registering worker")
    except OSError:
        return 0


def _wait(ok, wait_s, what, log):
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if ok():
            return
        time.sleep(0.25)
    raise ExplorerError(f"{what} within {wait_s:.0f} s: see {log}")


def _save(state: Path, info: dict) -> None:
    tmp = state / (STATE + ".tmp")
    tmp.write_text(json.dumps(info, indent=1))
    os.replace(tmp, state / STATE)


def _info(state_dir: str) -> dict | None:
    """The state file ``start`` wrote (None: there is none); one that is not of that
    shape is an ExplorerError: its PIDs cannot be trusted to signal."""
    if os.path.exists(state_dir) and not os.path.isdir(state_dir):
        raise ExplorerError(f"--dir {state_dir} is a file: name the cluster's directory")
    path = Path(state_dir) / STATE
    try:
        info = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise ExplorerError(f"{path} cannot be read ({e}): remove it if no cluster of "
                            "yours runs from that directory") from None
    if not _well_formed(info):
        raise ExplorerError(f"{path} is not a cluster state file kmc wrote: remove it if "
                            "no cluster of yours runs from that directory")
    return info


def _well_formed(info) -> bool:
    def pid_of(d, *keys):
        return isinstance(d, dict) and isinstance(d.get("pid"), int) and \
            all(isinstance(d.get(k), str) for k in keys)
    return isinstance(info, dict) and isinstance(info.get("master_url"), str) and \
        ":" in info["master_url"] and isinstance(info.get("ui_port"), int) and \
        (info.get("master") is None or pid_of(info["master"])) and \
        isinstance(info.get("workers"), list) and \
        all(pid_of(w, "work_dir") for w in info["workers"])


def load(state_dir: str) -> Cluster | None:
    info = _info(state_dir)
    if info is None:
        return None
    return Cluster(str(Path(state_dir).resolve()), info["master_url"],
                   f"http://127.0.0.1:{info['ui_port']}",
                   (info.get("master") or {}).get("pid", 0),
                   [w["pid"] for w in info["workers"]])


def _ours(pid: int, marker: str) -> bool:
    """The PID still runs the JVM we started (PIDs get reused after a process exits)."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return False
    return marker in cmd


def alive_pids(state_dir: str) -> dict:
    info = _info(state_dir) or {"master": None, "workers": []}
    url = info.get("master_url", "")
    port = url.rsplit(":", 1)[-1]
    out = {}
    m = info.get("master")
    if m and _ours(m["pid"], f"--port {port}"):
        out["master"] = m["pid"]
    for i, w in enumerate(info["workers"]):
        if _ours(w["pid"], w["work_dir"]):
            out[f"worker-{i}"] = w["pid"]
    return out


#: what a worker launches, in its command line: the executor JVM and its Python workers
EXECUTOR_MARKERS = ("CoarseGrainedExecutorBackend", "pyspark.daemon", "pyspark/daemon")


def executor_pids(state_dir: str) -> list[int]:
    """Executors the workers launched, found by PID through /proc, not by name: an
    executor JVM or one of its Python workers, running in a work dir of this cluster's
    workers. Any other process there (a shell, an editor, this command) is not one."""
    info = _info(state_dir)  # after a stop, the work dirs start makes are still there
    dirs = [w["work_dir"] for w in info["workers"]] if info is not None else \
        [str(p) for p in Path(state_dir).glob("work-*")]
    roots = tuple(str(Path(d).resolve()) + os.sep for d in dirs)
    ours = _ancestors(os.getpid())
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in ours:
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if roots and cwd.startswith(roots) and \
                any(_ours(int(entry.name), m) for m in EXECUTOR_MARKERS):
            pids.append(int(entry.name))
    return pids


def _ancestors(pid: int) -> set:
    out = set()
    while pid > 1 and pid not in out:
        out.add(pid)
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            break
    return out


def kill_worker(state_dir: str, i: int) -> int:
    """SIGKILL worker ``i`` (a fault for tests); its executor exits when it notices."""
    pid = alive_pids(state_dir).get(f"worker-{i}")
    if pid is None:
        raise ExplorerError(f"worker {i} of {state_dir} is not running")
    os.kill(pid, signal.SIGKILL)
    _reap([pid], 10.0)  # collect the exit status: no zombie left behind
    return pid


def status(state_dir: str) -> dict:
    info = _info(state_dir)
    if info is None:
        return {"running": False, "alive": {}}
    alive = alive_pids(state_dir)
    return {"running": "master" in alive, "alive": alive, "master_url": info["master_url"],
            "ui_url": f"http://127.0.0.1:{info['ui_port']}",
            "workers": len(info["workers"]), "executors": executor_pids(state_dir)}


def stop(state_dir: str, wait_s: float = 20.0) -> list[int]:
    """SIGTERM workers, then the master, then leftover executors; SIGKILL what is still
    alive after ``wait_s``. Returns the PIDs signalled."""
    if _info(state_dir) is None:
        return []
    alive = alive_pids(state_dir)
    order = [p for k, p in alive.items() if k != "master"]  # workers first
    order += [alive["master"]] if "master" in alive else []
    signalled = []
    for pid in order:
        _signal(pid, signal.SIGTERM, signalled)
    _reap(order, wait_s)
    for pid in executor_pids(state_dir):
        _signal(pid, signal.SIGTERM, signalled)
        _reap([pid], 5.0)
    (Path(state_dir) / STATE).unlink(missing_ok=True)
    return signalled


def _signal(pid, sig, record):
    try:
        os.kill(pid, sig)
        record.append(pid)
    except ProcessLookupError:
        pass


def _reap(pids, wait_s):
    deadline = time.monotonic() + wait_s
    for pid in pids:
        while time.monotonic() < deadline and _running(pid):
            time.sleep(0.1)
        if _running(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            end = time.monotonic() + 10.0
            while _running(pid) and time.monotonic() < end:
                time.sleep(0.05)


def _running(pid) -> bool:
    """Alive and not a zombie; reaps our own exited children."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return False
    except ChildProcessError:
        pass
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except (OSError, IndexError):
        return False
    return state != "Z"
