"""The Spark driver's peak memory against the number of states: two runs whose state
counts differ 10x or more, each in a fresh process on an embedded local[2] master. The
trace rows of levels explored on Spark stay with the visited keys in the executors'
blocks (the driver keeps its newest levels only), so the driver's peak should not follow
the state count. Prints, per run, the driver's peak resident size (the Python process:
the JVM is a child process and not counted), the trace rows the driver still holds at
the end against all of them, and the executors' bytes per visited state (visited keys
and trace rows in the blocks); then the peaks' ratio against the states'. Figures, never
assertions.

    python bench/spark_driver_bench.py                 # TwoPhase rm=6 and rm=8
    python bench/spark_driver_bench.py --small 5 --large 7
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
                  "trace_driver": r.extra["trace_bytes_driver"],
                  "visited": r.visited_bytes,
                  "levels": len(r.extra["spark"]["levels"]),
                  "spark_levels": sum(lv["mode"] == "spark"
                                      for lv in r.extra["spark"]["levels"]),
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(rm: int) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(rm)], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=6, help="TwoPhase rm of the small run")
    ap.add_argument("--large", type=int, default=8, help="TwoPhase rm of the large run")
    a = ap.parse_args(argv)
    small, large = run(a.small), run(a.large)
    for rm, m in ((a.small, small), (a.large, large)):
        mib = 2 ** 20
        print(f"TwoPhase rm={rm}: {m['states']:>9,} states, {m['levels']} levels "
              f"({m['spark_levels']} on Spark), driver peak {m['peak'] / mib:6.1f} MiB, "
              f"trace rows on the driver {m['trace_driver'] / mib:5.2f} of "
              f"{m['trace'] / mib:5.1f} MiB, executors "
              f"{(m['visited'] + m['trace']) / m['states']:.0f} B/state")
    print(f"states x{large['states'] / small['states']:.1f}, driver peak "
          f"x{large['peak'] / small['peak']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
