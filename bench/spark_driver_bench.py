"""The Spark driver's peak memory against the number of states: two runs whose state
counts differ 10x or more, each in a fresh process on an embedded local[2] master, with
the driver's trace rows all in memory and with them limited to KMC_SPARK_ROWS_MEMORY
(older levels in the driver's files, ``explorers/spark/rows.py``). Prints the driver's
peak resident size (the Python process: the JVM is a child process and not counted),
its growth over the state counts' ratio, and the trace rows' bytes. Figures, never
assertions.

    python bench/spark_driver_bench.py                 # TwoPhase rm=6 and rm=8
    python bench/spark_driver_bench.py --small 5 --large 7 --rows-memory 1m
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

_CHILD = """
import json, resource, sys
from kmc.api import build
from kmc.explorers.spark import spark_bfs

rm = json.loads(sys.argv[1])
r = spark_bfs(build("twophase", None, {"rm": rm}), master="local[2]")
print(json.dumps({"states": r.unique_states, "trace": r.extra["trace_bytes"],
                  "levels": len(r.extra["spark"]["levels"]),
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(rm: int, rows_memory: str | None) -> dict:
    env = dict(os.environ)
    env.pop("KMC_SPARK_ROWS_MEMORY", None)
    if rows_memory is not None:
        env["KMC_SPARK_ROWS_MEMORY"] = rows_memory
    out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(rm)], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def size(text: str) -> str:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower()
    return str(int(t[:-1]) * units[t[-1]] if t[-1] in units else int(t))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=6, help="TwoPhase rm of the small run")
    ap.add_argument("--large", type=int, default=8, help="TwoPhase rm of the large run")
    ap.add_argument("--rows-memory", default="4m",
                    help="KMC_SPARK_ROWS_MEMORY of the bounded runs (default 4m)")
    a = ap.parse_args(argv)
    for label, rows_memory in (("rows in memory", None),
                               (f"rows memory {a.rows_memory}", size(a.rows_memory))):
        small, large = run(a.small, rows_memory), run(a.large, rows_memory)
        print(f"{label}:")
        for rm, m in ((a.small, small), (a.large, large)):
            print(f"  TwoPhase rm={rm}: {m['states']:>9,} states, {m['levels']} levels, "
                  f"trace rows {m['trace'] / 2**20:6.1f} MiB, driver peak "
                  f"{m['peak'] / 2**20:6.1f} MiB")
        print(f"  states x{large['states'] / small['states']:.1f}, driver peak "
              f"x{large['peak'] / small['peak']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
