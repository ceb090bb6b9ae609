"""Benchmark: z3 mode against fast mode on every Kafka scenario and variant.

    python bench/z3_bench.py                 # every Kafka scenario, default parameters
    python bench/z3_bench.py expand shrink   # only these scenarios
    python bench/z3_bench.py --repeat 5 --cli
    python bench/z3_bench.py lifecycle-large --variant kip516 --repeat 1   # the big one

For each scenario and variant it explores the whole state space twice with the BFS
explorer — properties decided by the compiled evaluator (fast mode), then by z3 — and
prints both wall times (best of ``--repeat``, each run on a freshly built model, z3
already imported), their ratio, the CPU-time ratio of the same runs (steadier than wall
time on a shared machine), the z3 memo's hit rate, the number of solver calls, and
whether the two runs gave the same verdicts. ``--cli`` adds the wall time of the whole
`kmc check` command (interpreter start and imports included) and its CPU-time ratio.

The goal (docs/invariants.md): z3 mode within 2x of fast mode on each default scenario.
"""
from __future__ import annotations

import argparse
import importlib
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from kmc.explorers.bfs import bfs  # noqa: E402
from kmc.invariants.z3mode import z3_properties, z3_stats  # noqa: E402
from kmc import api, catalog  # noqa: E402

KAFKA_PACKAGES = ("kmc.model.kafka.zk", "kmc.model.kafka.kip253")


def kafka_scenarios() -> list:
    out = []
    for pkg in KAFKA_PACKAGES:
        try:
            out.extend(getattr(importlib.import_module(pkg), "SCENARIOS", ()))
        except ModuleNotFoundError as e:
            print(f"# {pkg} is not there yet ({e}); skipped")
    return out


def run(name: str, variant: str, z3: bool):
    """(wall s, cpu s, result, z3 stats or None) for one full BFS of the scenario."""
    info = catalog.load(name, variant, {})
    model = api.build(name, variant)
    opts = {"deadlock": info["scenario"].options.get("deadlock", False)}
    t0, c0 = time.perf_counter(), time.process_time()
    props = z3_properties(model.properties()) if z3 else None
    result = bfs(model, properties=props, **opts)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return wall, cpu, result, (z3_stats(props) if z3 else None)


def cli_seconds(name: str, variant: str, z3: bool) -> tuple[float, float]:
    """(wall s, cpu s) of one `kmc check` command, interpreter start included."""
    cmd = [sys.executable, "-m", "kmc", "check", name, "--variant", variant, "--quiet",
           "--json"] + (["--z3"] if z3 else [])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr.decode().strip()}")
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenarios", nargs="*", help="scenario names (default: every Kafka one)")
    ap.add_argument("--variant", action="append", default=[], metavar="V",
                    help="only these variants (repeatable; default: every variant)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per mode; the best counts")
    ap.add_argument("--cli", action="store_true", help="also time the `kmc check` command")
    args = ap.parse_args(argv)
    import z3  # noqa: F401  (the import is paid once per process, not per check)

    scs = [s for s in kafka_scenarios() if not args.scenarios or s.name in args.scenarios]
    if not scs:
        print("no Kafka scenario to benchmark (see `python -m kmc list`)")
        return 1
    head = (f"{'scenario':<20} {'variant':<29} {'states':>7} {'fast s':>7} {'z3 s':>7} "
            f"{'ratio':>6} {'cpu':>6} {'hit rate':>8} {'solver':>6} {'agree':>5}")
    if args.cli:
        head += f" {'cli fast':>8} {'cli z3':>7} {'ratio':>6} {'cpu':>6}"
    print(head)
    worst = 0.0
    for sc in scs:
        for variant in [v for v in sc.variants if not args.variant or v in args.variant]:
            fast = min((run(sc.name, variant, False) for _ in range(args.repeat)),
                       key=lambda x: x[0])
            slow = min((run(sc.name, variant, True) for _ in range(args.repeat)),
                       key=lambda x: x[0])
            ratio = slow[0] / fast[0]
            worst = max(worst, ratio)
            st = slow[3]
            agree = fast[2].verdicts() == slow[2].verdicts()
            line = (f"{sc.name:<20} {variant:<29} {fast[2].unique_states:>7} "
                    f"{fast[0]:>7.3f} {slow[0]:>7.3f} {ratio:>5.2f}x {slow[1] / fast[1]:>5.2f}x "
                    f"{_pct(st['hit_rate']):>8} {st['solver_calls']:>6} "
                    f"{'yes' if agree else 'NO':>5}")
            if args.cli:
                cf = min((cli_seconds(sc.name, variant, False) for _ in range(args.repeat)))
                cz = min((cli_seconds(sc.name, variant, True) for _ in range(args.repeat)))
                line += (f" {cf[0]:>8.2f} {cz[0]:>7.2f} {cz[0] / cf[0]:>5.2f}x "
                         f"{cz[1] / cf[1]:>5.2f}x")
            print(line, flush=True)
    print(f"worst ratio z3/fast: {worst:.2f}x (goal <= 2x)")
    return 0


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


if __name__ == "__main__":
    sys.exit(main())
