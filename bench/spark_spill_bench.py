"""What spilling visited keys to disk costs on Spark: one scenario run with its visited
keys and trace rows in memory and with ``KMC_SPARK_VISITED_MEM`` set (every key on disk
by default), alternately (A B B A ...) in fresh processes on an embedded master. Prints,
per run, the wall time, the state count, and the executors' bytes per visited state at
the widest point of the run (visited keys and trace rows, summed over the partitions'
blocks) in memory and on disk. Figures, never assertions.

    python bench/spark_spill_bench.py                              # lifecycle-large, local[2]
    python bench/spark_spill_bench.py --scenario stale-read --variant kip516 --pairs 1
    python bench/spark_spill_bench.py --mem 1048576                 # 1 MiB per partition
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

_CHILD = """
import json, sys, time
from kmc.api import build
from kmc.explorers.spark import spark_bfs

scenario, variant, executors = json.loads(sys.argv[1])
t = time.perf_counter()
r = spark_bfs(build(scenario, variant, {}), master=f"local[{executors}]")
wall = time.perf_counter() - t
levels = [lv for lv in r.extra["spark"]["levels"] if lv["mode"] == "spark" and lv["new"]]
peak = max(levels, key=lambda lv: lv["memory_bytes"] + lv["disk_bytes"])
last = levels[-1]
print(json.dumps({"states": r.unique_states, "wall": wall,
                  "verdicts": r.verdicts(),
                  "memory": last["memory_bytes"], "disk": last["disk_bytes"],
                  "runs": last["runs"], "peak_memory": max(lv["memory_bytes"] for lv in levels),
                  "peak_total": peak["memory_bytes"] + peak["disk_bytes"]}))
"""

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(args, mem) -> dict:
    env = dict(os.environ)
    env.pop("KMC_SPARK_VISITED_MEM", None)
    if mem is not None:
        env["KMC_SPARK_VISITED_MEM"] = str(mem)
    out = subprocess.run([sys.executable, "-c", _CHILD,
                          json.dumps([args.scenario, args.variant, args.executors])],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="lifecycle-large")
    ap.add_argument("--variant", default="kip516")
    ap.add_argument("--executors", type=int, default=2)
    ap.add_argument("--mem", type=int, default=1, help="KMC_SPARK_VISITED_MEM of the "
                    "spilling runs (bytes per partition)")
    ap.add_argument("--pairs", type=int, default=2, help="ABBA pairs")
    a = ap.parse_args(argv)
    order = []
    for i in range(a.pairs):
        order += [None, a.mem] if i % 2 == 0 else [a.mem, None]
    rows = {None: [], a.mem: []}
    for mem in order:
        m = run(a, mem)
        rows[mem].append(m)
        label = "in memory" if mem is None else f"spill at {mem} B"
        n = m["states"]
        print(f"{label:>18}: {n:,} states in {m['wall']:.1f} s; executors at the end: "
              f"{m['memory'] / n:.1f} B/state in memory, {m['disk'] / n:.1f} B/state on "
              f"disk, {m['runs']} runs; peak in memory {m['peak_memory'] / n:.1f} B/state",
              flush=True)
    base = sorted(r["wall"] for r in rows[None])
    spilled = sorted(r["wall"] for r in rows[a.mem])
    same = all(r["verdicts"] == rows[None][0]["verdicts"] and r["states"] ==
               rows[None][0]["states"] for r in rows[None] + rows[a.mem])
    ratio = spilled[len(spilled) // 2] / base[len(base) // 2]
    print(f"wall: in memory {base[0]:.1f}-{base[-1]:.1f} s, spilled {spilled[0]:.1f}-"
          f"{spilled[-1]:.1f} s (upper medians x{ratio:.2f}); same states and verdicts: "
          f"{same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
