"""Kafka model speed per core: distinct states per second of CPU time, memory per state.

    python bench/kafka_bench.py                 # lifecycle-large kip516, kraft-stray and
                                                # split-merge-spark kip253, BFS
    python bench/kafka_bench.py --spark         # also lifecycle-large on Spark local[2]
    python bench/kafka_bench.py --case kraft-stray
    python bench/kafka_bench.py --bounded       # a run stopped by --max-states, on the BFS
                                                # and on Spark local[1]
    python bench/kafka_bench.py --dfs --case lifecycle-large   # also on DFS
    python bench/kafka_bench.py --simulate      # also 20,000 seeded walks of each case

Each case runs in a fresh process (one core: a local BFS is single-threaded) and prints
the state count, CPU seconds (``time.process_time``: other users of the machine do not
distort it), distinct states per CPU second, and the peak resident size over distinct
states. The Spark case runs ``spark_bfs`` on ``local[2]`` with every level on Spark and
counts the CPU time of the whole process tree (driver, JVM, Python workers) once Spark
has started, so its rate is states per CPU second summed over the executors: the
per-executor speed. Figures, never assertions.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CASES = {
    "lifecycle-large": ("lifecycle-large", "kip516", {}),
    "kraft-stray": ("kraft-stray", None, {}),
    "split-merge-spark": ("split-merge-spark", "kip253", {}),
}
#: (scenario, variant, params, max_states): a state space far larger than its bound
BOUNDED = ("lifecycle-large", "kip516", {"crashes": 2, "failovers": 2}, 1_500_000)

_LOCAL = """
import json, resource, sys, time
from kmc.api import build
from kmc.explorers import engine

scenario, variant, params, bound = (json.loads(sys.argv[1]) + [None])[:4]
explorer = sys.argv[3]
model = build(scenario, variant, params)
options = {"walks": 20000, "seed": 0} if explorer == "simulate" else {"max_states": bound}
t0 = time.process_time()
r = engine(explorer)(model, **options)
cpu = time.process_time() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
print(json.dumps({"states": r.unique_states, "generated": r.generated_states,
                  "depth": r.max_depth, "cpu": cpu, "peak": peak,
                  "verdicts": {p: r.verdict(p) for p in r.properties}}))
"""

_SPARK = """
import json, os, sys, time
sys.path.insert(0, os.path.join(sys.argv[2], "bench"))
from spark_bench import tree_cpu
from kmc.api import build
from kmc.explorers.spark import spark_bfs
from kmc.explorers.spark.session import spark_context

scenario, variant, params, bound = (json.loads(sys.argv[1]) + [None])[:4]
model = build(scenario, variant, params)
with spark_context(None, int(sys.argv[3])) as sc:
    sc.parallelize(range(2), 2).collect()  # the JVM and the Python workers are up
    spark_bfs(build("twophase", None, {"rm": 4}), driver_level_max=0)  # warm-up
    cpu0 = tree_cpu()
    r = spark_bfs(model, driver_level_max=0, max_states=bound)
    cpu = tree_cpu() - cpu0
print(json.dumps({"states": r.unique_states, "generated": r.generated_states,
                  "depth": r.max_depth, "cpu": cpu, "elapsed": r.elapsed_s,
                  "verdicts": {p: r.verdict(p) for p in r.properties}}))
"""


def run(child: str, case: str, arg: str) -> dict:
    """``arg``: the explorer of a local run, the cores of a Spark one."""
    spec = BOUNDED if case == "bounded" else CASES[case]
    out = subprocess.run([sys.executable, "-c", child, json.dumps(spec), ROOT, arg],
                         capture_output=True, text=True, cwd=os.sep)  # kmc as installed
    if out.returncode != 0:
        raise SystemExit(f"{case} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=sorted(CASES), action="append")
    ap.add_argument("--spark", action="store_true",
                    help="also lifecycle-large kip516 on Spark local[2]")
    ap.add_argument("--bounded", action="store_true",
                    help="also lifecycle-large kip516 -p crashes=2 -p failovers=2 stopped at "
                         "1,500,000 states, on the BFS and on Spark local[1]")
    ap.add_argument("--dfs", action="store_true", help="also each case on DFS")
    ap.add_argument("--simulate", action="store_true",
                    help="also 20,000 seeded random walks (seed 0) of each case")
    ap.add_argument("--json", action="store_true", help="one JSON object per line")
    a = ap.parse_args(argv)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.2f}")
    cases = a.case or list(CASES)
    runs = [(e, c) for c in cases
            for e in ("bfs", "dfs" if a.dfs else "", "simulate" if a.simulate else "") if e]
    if a.spark:
        runs.append(("spark local[2]", "lifecycle-large"))
    if a.bounded:
        runs += [("bfs", "bounded"), ("spark local[1]", "bounded")]
    for engine, case in runs:
        spark = engine.startswith("spark")
        m = run(_SPARK if spark else _LOCAL, case,
                ("1" if "[1]" in engine else "2") if spark else engine)
        if a.json:
            print(json.dumps({"case": case, "engine": engine, **m}))
            continue
        label = "lifecycle-large -p crashes=2 -p failovers=2 --max-states 1500000" \
            if case == "bounded" else case
        line = (f"{label} ({engine}): {m['states']:,} states, {m['generated']:,} generated, "
                f"depth {m['depth']}, {m['cpu']:.1f} CPU s = "
                f"{m['states'] / m['cpu']:,.0f} distinct states/s of CPU")
        if "peak" in m:
            line += f", peak {m['peak'] / 2 ** 20:.0f} MiB = {m['peak'] / m['states']:,.0f} B/state"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
