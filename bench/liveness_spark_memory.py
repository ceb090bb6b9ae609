"""Benchmark: the Spark driver's memory while it decides liveness, on graphs of different
sizes.

    python bench/liveness_spark_memory.py                       # the default pair below
    python bench/liveness_spark_memory.py offline-delete:kip516 kraft-crash-window:kraft
    python bench/liveness_spark_memory.py kraft-crash-window:kraft:deletes=2,incarnations=3

Each scenario:variant[:key=value,...] (``-p liveness=true`` when the scenario takes it) runs
in a fresh Python process with an embedded local[2] SparkContext. The driver is that
Python process (the executors are the JVM and its Python workers, not counted): a thread samples its
resident set (/proc/self/statm) every 5 ms, and the table gives its size just before the
liveness check starts, its peak during the check, the growth, the process's peak over the
whole run (VmHWM) and the check's time. If the driver held the graph, the growth would
follow the graph's size.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

DEFAULT = ("offline-delete:kip516", "kraft-crash-window:kraft")
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def hwm() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def one(name: str, variant: str, given: str) -> dict:
    """Run one check in this process; the driver's memory around its liveness check."""
    from kmc import api, catalog
    from kmc.explorers.spark import liveness

    params = dict(kv.split("=", 1) for kv in given.split(",")) if given else {}
    params = {k: int(v) if v.isdigit() else v for k, v in params.items()}
    if "liveness" in catalog.load(name, variant, params)["params"]:
        params["liveness"] = True
    seen = {"peak": 0}
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            seen["peak"] = max(seen["peak"], rss())
            time.sleep(0.005)

    inner = liveness.finish

    def finish(*args, **kw):
        seen["before"] = seen["peak"] = rss()
        t = threading.Thread(target=sample, daemon=True)
        t.start()
        t0 = time.perf_counter()
        try:  # on the executors, whatever the graph's size
            return inner(*args, **{**kw, "driver_max": 0})
        finally:
            seen["check_s"] = time.perf_counter() - t0
            stop.set()
            t.join()

    liveness.finish = finish
    r = api.check(name, variant, params, explorer="spark")
    lv = r.extra.get("liveness", {})
    return {"states": lv.get("graph_states"), "edges": lv.get("graph_edges"),
            "before": seen["before"], "peak": seen["peak"], "hwm": hwm(),
            "check_s": seen["check_s"], "verdicts": r.verdicts()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="*", metavar="SCENARIO:VARIANT",
                    help=f"what to run (default: {' '.join(DEFAULT)})")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        name, _, rest = args.one.partition(":")
        variant, _, given = rest.partition(":")
        print(json.dumps(one(name, variant, given)))
        return 0
    mib = 2 ** 20
    print(f"{'scenario:variant[:params]':<48} {'states':>7} {'edges':>7} {'before MiB':>10} "
          f"{'peak MiB':>8} {'growth MiB':>10} {'run peak MiB':>12} {'check s':>7}")
    for item in args.runs or DEFAULT:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", item],
                             capture_output=True, text=True, check=True).stdout
        d = json.loads(out.strip().splitlines()[-1])
        print(f"{item:<48} {d['states']:>7} {d['edges']:>7} {d['before'] / mib:>10.1f} "
              f"{d['peak'] / mib:>8.1f} {(d['peak'] - d['before']) / mib:>10.1f} "
              f"{d['hwm'] / mib:>12.1f} {d['check_s']:>7.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
