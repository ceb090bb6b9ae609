"""Engine benchmark: TwoPhase through the public Model API (kmc.api.build + explorers.bfs).

Prints wall and CPU time, distinct states/s and memory per state for BFS, then DFS and a
generic tuple-state model for comparison. Targets: >= 250,000 distinct states/s on one
core for rm=8, <= 16 bytes/state in the visited set. Figures, never assertions.

    python bench/engine_bench.py            # rm=8, 3 runs, medians
    python bench/engine_bench.py --rm 6 --runs 1
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kmc.explorers.bfs import bfs  # noqa: E402
from kmc.explorers.dfs import dfs  # noqa: E402
from kmc.api import build  # noqa: E402


def measure(fn, runs):
    walls, cpus, result = [], [], None
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus), result


def line(label, wall, cpu, r):
    print(f"{label:<28} {r.unique_states:>10,} states {r.generated_states:>11,} generated  "
          f"wall {wall:6.2f}s ({r.unique_states / wall:>9,.0f}/s)  "
          f"cpu {cpu:6.2f}s ({r.unique_states / cpu:>9,.0f}/s)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rm", type=int, default=8)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.2f} (other processes slow wall time; cpu time is steadier)")
    model = build("twophase", params={"rm": args.rm})
    wall, cpu, r = measure(lambda: bfs(model), args.runs)
    line(f"bfs twophase rm={args.rm}", wall, cpu, r)
    print(f"{'':<28} visited set {r.visited_bytes / r.unique_states:.1f} B/state, "
          f"parent pointers {r.extra['trace_bytes'] / r.unique_states:.1f} B/state "
          f"(key + uint32 parent per level), depth {r.max_depth}")
    wall, cpu, r = measure(lambda: dfs(model), 1)
    line(f"dfs twophase rm={args.rm}", wall, cpu, r)
    sym = build("twophase", params={"rm": args.rm})
    wall, cpu, r = measure(lambda: bfs(sym, symmetry=True), 1)
    line(f"bfs twophase rm={args.rm} sym", wall, cpu, r)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "tests"))
    from toymodels import Workers
    wall, cpu, r = measure(lambda: bfs(Workers(5, 3)), 1)
    line("bfs generic tuples (workers)", wall, cpu, r)


if __name__ == "__main__":
    main()
