"""`kmc cluster start|stop|status`: a Spark standalone cluster on 127.0.0.1 to try
`kmc check ... --explorer spark --master spark://127.0.0.1:PORT` on one machine.

The master and workers are PySpark's own JVMs (bin/spark-class); their PIDs and logs live
in the state directory, and `stop` signals exactly those PIDs.
"""
from __future__ import annotations

import os

from kmc.errors import UsageError

NAME = "cluster"
HELP = "start/stop/inspect a local Spark standalone cluster (master + workers on 127.0.0.1)"


def default_dir() -> str:
    return os.environ.get("KMC_CLUSTER_DIR") or os.path.join(os.path.expanduser("~"), ".kmc",
                                                             "cluster")


def add_arguments(p):
    p.add_argument("action", choices=["start", "stop", "status"])
    p.add_argument("--dir", default=None, metavar="DIR",
                   help="state directory: PIDs, logs, work dirs (default: $KMC_CLUSTER_DIR "
                        "or ~/.kmc/cluster)")
    p.add_argument("--workers", type=_workers, default=2, metavar="N",
                   help="worker JVMs, 1 to 64 (default 2)")
    p.add_argument("--cores", type=_positive, default=1, metavar="N",
                   help="cores per worker (default 1)")
    p.add_argument("--memory", type=_memory, default="1g",
                   help="memory per worker (default 1g)")
    p.add_argument("--port", type=_port, default=7077,
                   help="master port (default 7077; 0 picks a free port)")


def _positive(text):
    from kmc.commands.check import positive

    return positive(int)(text)


def _workers(text):
    import argparse

    from kmc.explorers.spark.cluster import MAX_WORKERS

    v = _positive(text)
    if v > MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"{v} workers: a cluster on one machine runs at "
                                         f"most {MAX_WORKERS} (each a JVM of its own)")
    return v


def _memory(text):
    import argparse
    import re

    m = re.fullmatch(r"(\d+)([kmgtKMGT])", text)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size like 512m or 2g (a "
                                         "number and its unit: k, m, g or t)")
    if int(m[1]) * 1024 ** "kmgt".index(m[2].lower()) < 1024:  # Spark's workers need 1m
        raise argparse.ArgumentTypeError(f"{text!r} is below the 1m a Spark worker needs: "
                                         "give e.g. 1g (an executor takes 1g by default)")
    return text


def _port(text):
    import argparse

    try:
        v = int(text)
    except ValueError:
        v = -1
    if not 0 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)")
    return v


def run(args) -> int:
    from kmc.explorers.errors import ExplorerError
    from kmc.explorers.spark import cluster

    if args.dir is not None and not args.dir.strip():
        raise UsageError("--dir needs a directory path, got an empty one")
    state_dir = args.dir or default_dir()
    try:
        if args.action == "start":
            c = cluster.start(state_dir, workers=args.workers, cores=args.cores,
                              memory=args.memory, port=args.port)
            print(f"master {c.master_url} (pid {c.master_pid}), web UI {c.ui_url}")
            print(f"{len(c.worker_pids)} workers (pids "
                  f"{', '.join(map(str, c.worker_pids))}); logs in {c.state_dir}")
            print(f"try: kmc check twophase -p rm=6 --explorer spark --master {c.master_url}")
            print(f"stop: kmc cluster stop{'' if args.dir is None else ' --dir ' + state_dir}")
            return 0
        if args.action == "stop":
            pids = cluster.stop(state_dir)
            print(f"stopped {len(pids)} processes ({', '.join(map(str, pids)) or 'none'})")
            return 0
        st = cluster.status(state_dir)
    except ExplorerError as e:
        raise UsageError(str(e)) from None
    if not st["running"] and not st["alive"]:
        print(f"no cluster running from {state_dir}")
        return 0
    print(f"master {st['master_url']} {'running' if st['running'] else 'NOT running'}; "
          f"web UI {st['ui_url']}")
    for name, pid in sorted(st["alive"].items()):
        print(f"  {name}: pid {pid}")
    for i in range(st["workers"]):
        if f"worker-{i}" not in st["alive"]:
            print(f"  worker-{i}: NOT running (its log: worker-{i}.log)")
    print(f"  executors: {len(st['executors'])} running")
    return 0
