"""Where a mutation run's time goes: every Kth mutant of a suite tier, timed.

    python bench/mutate_bench.py                 # every 8th mutant of the smoke tier
    python bench/mutate_bench.py --every 4 --files model/kafka/zk/brokers.py
    python bench/mutate_bench.py --json out.json # also the rows and the baseline's runs
    python bench/mutate_bench.py --by-id         # 1 in K by a hash of each id: the same
                                                 # mutants after an edit elsewhere (A/B)
    python bench/mutate_bench.py --check --only zk/cluster.py:1
                                                 # also without replay: outcomes must agree

It plans the run exactly as ``kmc mutate --tier smoke`` does (the same files, mutants
and entries), runs the baseline on every entry and then every Kth mutant on ``--jobs``
workers, and prints: the baseline's wall time, the mutant phase's wall time, each
outcome's and each file's worker seconds, and the whole run's time extrapolated from the
sample (the mutant phase's wall time times the mutants per sampled one, plus the
baseline), and what the
mutants cost outside their own time (the parent forks every worker). The
slowest mutants follow, with how many of their runs a replay decided, and last the
worker seconds by how each run was decided (replayed, explored reusing the recorded
successors, explored in full and why; ``--json`` keeps it per mutant). Figures, never
assertions: the sample's mutants are spread over every file in plan order, so the
extrapolation holds as far as the sample is typical. ``--only TEXT`` adds every mutant
whose id contains TEXT to the sample (the extrapolation then counts them as typical
too). ``--check`` then runs the sample again without
replay (``kmc mutate --no-replay``) and lists every mutant whose outcome or
``killed_by`` differs: replay must change nothing but the time.
"""
from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=8, metavar="K")
    ap.add_argument("--tier", default="smoke", choices=("smoke", "full"))
    ap.add_argument("--files", nargs="*", default=None)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--by-id", action="store_true",
                    help="take the mutants whose id hashes to 0 modulo K, not every Kth "
                         "in plan order: an edit that adds or removes mutants in one "
                         "file leaves the sample of every other file as it was")
    ap.add_argument("--only", action="append", default=[], metavar="TEXT",
                    help="also every mutant whose id contains TEXT (repeatable)")
    ap.add_argument("--check", action="store_true",
                    help="run the sample again without replay and compare the outcomes")
    args = ap.parse_args(argv)
    if args.every < 1:
        ap.error("--every takes a positive number")

    from kmc.mutate.runner import make_plan, run_baseline, run_mutants
    from kmc.reports.regress.suite import builtin_suite, read_suite

    suite = read_suite(builtin_suite())
    plan = make_plan(suite.select(args.tier), args.files)
    total, every_mutant = len(plan.mutants), list(plan.mutants)
    if args.by_id:
        plan.mutants = [m for m in plan.mutants if _hashed(m.id) % args.every == 0]
    else:
        plan.mutants = plan.mutants[::args.every]
    chosen = {m.id for m in plan.mutants}
    plan.mutants += [m for m in every_mutant if m.id not in chosen
                     and any(text in m.id for text in args.only)]
    if not plan.mutants:
        raise SystemExit("mutate_bench: the sample is empty: give a smaller --every")
    how = f"1 in {args.every} by id" if args.by_id else f"every {args.every}th"
    print(f"{total:,} mutants of {len(plan.files)} files; running {how}: "
          f"{len(plan.mutants):,}, {args.jobs} workers", flush=True)
    t0 = time.perf_counter()
    base = run_baseline(plan, args.jobs)
    t_base = time.perf_counter() - t0
    print(f"baseline: {len(base['runs'])} entries in {t_base:.1f} s", flush=True)
    t0 = time.perf_counter()
    hows = collections.defaultdict(lambda: [0, 0.0])  # how a run was decided -> n, s
    per_mutant = {}

    def on_result(m, result):
        for eid, (how, took) in (result.get("how") or {}).items():
            hows[how][0] += 1
            hows[how][1] += took
        per_mutant[m.id] = result.get("how") or {}

    rows, _not_run = run_mutants(plan, base, args.jobs, on_result=on_result)
    t_mut = time.perf_counter() - t0
    _report(rows, total / len(plan.mutants), args.jobs, t_base, t_mut)
    spent = sum(s for _, s in hows.values()) or 1e-9
    print("\nworker seconds by how a run was decided:")
    for how, (n, s) in sorted(hows.items(), key=lambda kv: -kv[1][1]):
        print(f"  {how:54s} {n:6d} runs {s:8.1f} s ({100 * s / spent:4.1f}%)")
    if args.check:
        _check(plan, base, args.jobs, rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"every": args.every, "baseline_s": t_base, "mutants_s": t_mut,
                       "rows": rows, "how": per_mutant,
                       "runs": {k: {"states": v.get("states"), "elapsed": v.get("elapsed")}
                                for k, v in base["runs"].items()}}, f)
    return 0


def _check(plan, base, jobs, rows) -> None:
    """The sample again, every run explored in full: the mutants whose outcome or
    ``killed_by`` differs from the replayed run's."""
    from kmc.mutate.runner import run_mutants

    t0 = time.perf_counter()
    full, _not_run = run_mutants(plan, base, jobs, replay=False)
    t_full = time.perf_counter() - t0
    got = {r["id"]: (r["outcome"], r["killed_by"]) for r in full}
    differ = [r for r in rows if (r["outcome"], r["killed_by"]) != got.get(r["id"])]
    print(f"\nwithout replay: {len(full)} mutants in {t_full:.1f} s wall; "
          f"{len(differ)} with another outcome or killed_by")
    for r in differ:
        print(f"  {r['id']}: replayed {r['outcome']} {r['killed_by']}, "
              f"explored {got.get(r['id'])}")


def _hashed(mutant_id: str) -> int:
    """A number of ``mutant_id`` alone, the same in every process and run."""
    return int.from_bytes(hashlib.sha256(mutant_id.encode()).digest()[:8], "big")


def _rss_gib() -> float:
    from kmc.explorers.memory import resident_bytes

    rss = resident_bytes()
    return float("nan") if rss is None else rss / 2 ** 30


def _report(rows, every, jobs, t_base, t_mut) -> None:
    by_outcome, by_file = collections.defaultdict(list), collections.defaultdict(list)
    for r in rows:
        by_outcome[r["outcome"]].append(r["elapsed_s"] or 0.0)
        by_file[r["file"]].append(r["elapsed_s"] or 0.0)
    worker = sum(sum(v) for v in by_outcome.values())
    print(f"mutant phase: {len(rows)} mutants in {t_mut:.1f} s wall, {worker:.1f} worker s")
    outside = (t_mut * jobs - worker) / max(len(rows), 1)
    print(f"outside the mutants' own time (forking, loading, waiting): {outside:.3f} "
          f"worker s per mutant; this process holds {_rss_gib():.2f} GiB")
    whole = t_mut * every + t_base
    print(f"whole run, extrapolated: {whole / 60:.1f} min on {jobs} workers "
          f"(the mutant phase's wall time times {every:.4g}, plus the baseline)")
    print("\nworker seconds by outcome:")
    for k, v in sorted(by_outcome.items(), key=lambda kv: -sum(kv[1])):
        print(f"  {k:12s} {len(v):5d} mutants {sum(v):8.1f} s "
              f"({100 * sum(v) / max(worker, 1e-9):4.1f}%)  {sum(v) / len(v):5.2f} s each")
    print("\nworker seconds by file (top 20):")
    for k, v in sorted(by_file.items(), key=lambda kv: -sum(kv[1]))[:20]:
        print(f"  {k:44s} {len(v):4d} {sum(v):8.1f} s  {sum(v) / len(v):5.2f} s each")
    print("\nslowest mutants:")
    for r in sorted(rows, key=lambda r: -(r["elapsed_s"] or 0))[:10]:
        print(f"  {r['elapsed_s']:6.2f} s  {r['outcome']:11s} replayed {r['replayed']:3d}  "
              f"{r['id']}")


if __name__ == "__main__":
    sys.exit(main())
