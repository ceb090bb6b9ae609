"""Benchmark and differential check: every Kafka liveness case of the regression suite on
Spark against BFS.

    python bench/liveness_spark_diff.py                 # every case, local[2]
    python bench/liveness_spark_diff.py --master 'local[1]'
    python bench/liveness_spark_diff.py --only kraft-crash-window

The cases are the suite's Kafka entries (regressions/regressions.toml) whose model
declares a liveness property: those run with ``-p liveness=true`` and the KRaft scenarios
that check liveness by default. Each distinct (scenario, variant, params, bounds) runs
once on BFS and once on Spark with one embedded SparkContext; the table gives the state
count, whether every verdict agrees, whether every lasso (initial state, actions, loop
start, detail) is the same, and both wall times. Exit 1 on any disagreement. Every graph
is decided on the executors unless ``--driver-graph`` says otherwise.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from kmc import api  # noqa: E402
from kmc.invariants.liveness import split  # noqa: E402
from kmc.reports.regress.suite import builtin_suite, read_suite  # noqa: E402

VALIDATION = ("peterson", "counter", "lossy", "twophase", "tcommit", "diehard")


def lassos(result) -> dict:
    """Every discovery as (kind, initial state, actions, loop start, detail)."""
    return {n: (d.kind, d.trace.init_index, tuple(d.trace.action_indices),
                getattr(d.trace, "loop_start", None), d.detail)
            for n, d in result.discoveries.items()}


def cases(only: str | None):
    """(id, scenario, variant, params, bounds) of each distinct Kafka liveness run."""
    seen = set()
    for e in read_suite(builtin_suite()).entries:
        if e.scenario in VALIDATION or e.explorer == "simulate" or e.options:
            continue
        if only and only not in e.id:
            continue
        key = (e.scenario, e.variant, tuple(sorted(e.params.items())),
               tuple(sorted(e.bounds.items())))
        if key in seen:
            continue
        seen.add(key)
        if split(api.build(e.scenario, e.variant, e.params).properties())[1]:
            yield e.id, e.scenario, e.variant, dict(e.params), dict(e.bounds)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    ap.add_argument("--only", help="only the entries whose id contains this text")
    ap.add_argument("--driver-graph", type=int, default=0, metavar="N",
                    help="decide graphs of at most N states on the driver (default 0: "
                         "every graph on the executors, the algorithm this compares)")
    args = ap.parse_args(argv)
    from kmc.explorers.spark import liveness_driver

    liveness_driver.DRIVER_GRAPH_MAX = args.driver_graph
    from kmc.explorers.spark.session import shutdown_gateway, spark_context

    bad = 0
    print(f"{'entry':<52} {'states':>7} {'edges':>7} {'verdicts':>8} {'lassos':>6} "
          f"{'bfs s':>7} {'spark s':>8} {'check s':>7}", flush=True)
    with spark_context(args.master if args.master.startswith("spark://") else None,
                       int(args.master[6:-1]) if args.master.startswith("local[") else 2):
        for ident, scenario, variant, params, bounds in cases(args.only):
            t0 = time.perf_counter()
            b = api.check(scenario, variant, params, **bounds)
            t1 = time.perf_counter()
            s = api.check(scenario, variant, params, explorer="spark", **bounds)
            t2 = time.perf_counter()
            same_v = s.verdicts() == b.verdicts()
            same_l = lassos(s) == lassos(b)
            bad += not (same_v and same_l)
            lv = s.extra.get("liveness", {})
            print(f"{ident:<52} {b.unique_states:>7} {lv.get('graph_edges', 0):>7} "
                  f"{'equal' if same_v else 'DIFFER':>8} {'equal' if same_l else 'DIFFER':>6} "
                  f"{t1 - t0:>7.2f} {t2 - t1:>8.2f} {lv.get('check_s', 0):>7.2f}",
                  flush=True)
            if not same_v:
                print("   bfs  ", b.verdicts(), "\n   spark", s.verdicts())
            if not same_l:
                bl, sl = lassos(b), lassos(s)
                for n in sorted(set(bl) | set(sl)):
                    if bl.get(n) != sl.get(n):
                        print(f"   {n}: bfs {bl.get(n)}\n   {' ' * len(n)}  spark {sl.get(n)}")
    shutdown_gateway()
    print(f"{'all equal' if not bad else f'{bad} case(s) disagree'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
