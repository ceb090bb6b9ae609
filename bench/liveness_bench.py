"""Benchmark: the cost of checking liveness against the safety-only run of a scenario.

    python bench/liveness_bench.py                          # the default set below
    python bench/liveness_bench.py stale-state:kip516 shrink:kip253 --repeat 5
    python bench/liveness_bench.py lifecycle-large:kip516 --repeat 1
    /usr/bin/time -v python bench/liveness_bench.py twophase-live:9 --repeat 1 --no-safety

``twophase-live:RM`` is TwoPhase with RM resource managers, every action but none weakly
fair, and one liveness property, TMDecides: eventually the transaction manager commits
or aborts (it holds: TMAbort stays enabled until it decides). It is the scalable graph
(RM=8: 1.7 M states, RM=9: 10.3 M); ``--no-safety`` skips the safety-only run (the
ratio is then not measured) to see the liveness run's own time and memory.

For each scenario:variant it explores the whole state space twice with the BFS explorer,
on one core: once with the model's safety properties only (always, quiescent, sometimes),
once with every property, liveness included (``-p liveness=true`` for the Kafka
scenarios), so the run also records the state graph and
searches it for fair lassos. It prints both wall and CPU times (best of ``--repeat``,
each on a freshly built model), their ratio, how long the lasso search took, and the
graph's size (states, edges, bytes recorded during the run and bytes of the finished
graph), and checks that both runs agree on every safety verdict.

The goal (docs/invariants.md, "Liveness"): a liveness run within 2x of the safety-only
run of the same scenario.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from kmc import api, catalog  # noqa: E402
from kmc.explorers.bfs import bfs  # noqa: E402
from kmc.invariants.liveness import split  # noqa: E402

DEFAULT = ("stale-read:kip516", "stale-state:kip516", "stale-state:legacy",
           "failover-mid-delete:legacy", "expand:kip253", "shrink:kip253",
           "shrink:linear-no-fencing", "peterson:standard")


def live_twophase(rm: int):
    """TwoPhase with its actions weakly fair and the property TMDecides."""
    from kmc.invariants.liveness import eventually
    from kmc.model import packed_codegen as codegen
    from kmc.model.validation.twophase import TwoPhase

    class LiveTwoPhase(TwoPhase):
        weakly_fair = ("TMRcvPrepared", "TMCommit", "TMAbort", "RMPrepare",
                       "RMChooseToAbort", "RMRcvCommitMsg", "RMRcvAbortMsg")

        def properties(self):
            expr = "tmState != 'init'"
            fn = eval(f"lambda s: {codegen.src(self.spec, expr, {})}",  # noqa: S307
                      {"_chk": codegen.chk})
            return super().properties() + [eventually("TMDecides", fn, description=expr)]

    return LiveTwoPhase(rm)


def run(name: str, variant: str, liveness: bool):
    """(wall s, cpu s, result) of one complete BFS."""
    if name == "twophase-live":
        model, opts = live_twophase(int(variant)), {}
    else:
        info = catalog.load(name, variant, {})
        # the Kafka scenarios check liveness when asked to (-p liveness=true)
        params = {"liveness": True} if "liveness" in info["params"] else {}
        model = api.build(name, variant, params)
        opts = {"deadlock": info["scenario"].options.get("deadlock", False)}
    safety, _live = split(model.properties())
    t0, c0 = time.perf_counter(), time.process_time()
    result = bfs(model, properties=None if liveness else safety, **opts)
    return time.perf_counter() - t0, time.process_time() - c0, result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="*", metavar="SCENARIO:VARIANT",
                    help=f"what to run (default: {' '.join(DEFAULT)})")
    ap.add_argument("--repeat", type=int, default=3, help="runs per mode; the best counts")
    ap.add_argument("--no-safety", action="store_true",
                    help="run with every property only (no ratio)")
    args = ap.parse_args(argv)
    print(f"{'scenario':<28} {'variant':<19} {'states':>7} {'edges':>7} {'safety s':>8} "
          f"{'all s':>7} {'ratio':>6} {'cpu':>6} {'search s':>8} {'rec MiB':>7} "
          f"{'graph MiB':>9} {'agree':>5}  liveness verdicts")
    worst = 0.0
    for item in args.runs or DEFAULT:
        name, _, variant = item.partition(":")
        if name != "twophase-live":
            variant = variant or catalog.load(name, None, {})["variant"]
        full = min((run(name, variant, True) for _ in range(args.repeat)),
                   key=lambda x: x[0])
        safe = full if args.no_safety else \
            min((run(name, variant, False) for _ in range(args.repeat)), key=lambda x: x[0])
        r, lv = full[2], full[2].extra.get("liveness", {})
        ratio = full[0] / safe[0]
        worst = max(worst, ratio)
        agree = all(r.verdict(n) == v for n, v in safe[2].verdicts().items())
        live = {n: r.verdict(n) for n in r.properties
                if args.no_safety and n == "TMDecides" or n not in safe[2].properties}
        print(f"{name:<28} {variant:<19} {r.unique_states:>7} "
              f"{lv.get('graph_edges', 0):>7} {safe[0]:>8.3f} {full[0]:>7.3f} "
              f"{ratio:>5.2f}x {full[1] / safe[1]:>5.2f}x {lv.get('check_s', 0):>8.3f} "
              f"{lv.get('record_bytes', 0) / 2**20:>7.2f} "
              f"{lv.get('graph_bytes', 0) / 2**20:>9.2f} {'yes' if agree else 'NO':>5}  "
              + ", ".join(f"{n} {v}" for n, v in live.items()), flush=True)
    print(f"worst ratio liveness/safety: {worst:.2f}x (goal <= 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
