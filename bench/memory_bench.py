"""Memory benchmark: the whole footprint of a BFS run per state, and what it is made of.

Each case runs in a fresh process (memory freed by an earlier case would otherwise be
reused without showing), and prints: the resident size before the run and at its peak
(``ru_maxrss``), the peak per distinct state, the growth per state, the compact parts
(visited set and parent pointers, bytes per state) and what remains per state of the
widest level: the frontier's Python states, that level's candidate dictionary and the
allocator's slack. Figures, never assertions. ``explorers.memory`` uses them: a
``max_memory`` guard stops a run before the operating system kills it.

    python bench/memory_bench.py                  # lifecycle-large kip516, TwoPhase rm=8
    python bench/memory_bench.py --case twophase-8
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CASES = {
    "lifecycle-large-kip516": ("lifecycle-large", "kip516", {}),
    "twophase-8": ("twophase", None, {"rm": 8}),
}

_CHILD = """
import json, resource, sys, time
from kmc.api import build
from kmc.explorers.bfs import bfs
from kmc.explorers.memory import resident_bytes

scenario, variant, params = json.loads(sys.argv[1])
model = build(scenario, variant, params)
before = resident_bytes()
levels = []
r = bfs(model, progress=lambda u, g, d, f, t: levels.append(f))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
print(json.dumps({"states": r.unique_states, "depth": r.max_depth, "before": before,
                  "peak": peak, "widest": max(levels + [1]), "visited": r.visited_bytes,
                  "trace": r.extra["trace_bytes"], "elapsed": r.elapsed_s}))
"""


def measure(case: str) -> dict:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(CASES[case])],
                         capture_output=True, text=True, check=True, cwd=root)
    return json.loads(out.stdout)


def report(case: str, m: dict) -> None:
    n, mib = m["states"], 2 ** 20
    growth = m["peak"] - m["before"]
    compact = m["visited"] + m["trace"]
    print(f"{case}: {n:,} states, depth {m['depth']}, widest level {m['widest']:,} "
          f"states, {m['elapsed']:.1f}s")
    print(f"  resident before the run {m['before'] / mib:7.1f} MiB, peak "
          f"{m['peak'] / mib:7.1f} MiB")
    print(f"  peak / states           {m['peak'] / n:7.1f} B/state  "
          f"(growth / states {growth / n:.1f} B/state)")
    print(f"  visited set             {m['visited'] / n:7.1f} B/state")
    print(f"  parent pointers         {m['trace'] / n:7.1f} B/state")
    print(f"  the rest, per state of the widest level (frontier states, candidates, "
          f"slack): {(growth - compact) / m['widest']:.0f} B")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", choices=sorted(CASES), action="append")
    args = ap.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    for case in args.case or list(CASES):
        report(case, measure(case))


if __name__ == "__main__":
    main()
