"""`kmc prove`: z3 proofs of KIP-253's hashing claims for every 32-bit key hash.

The theorems live in invariants/proofs.py and are explained in docs/proofs.md.
"""
from __future__ import annotations

import argparse
import json
import time

from kmc.invariants import proofs
from kmc.errors import UsageError

NAME = "prove"
HELP = "prove (or refute) KIP-253's hashing claims with z3 for every 32-bit key hash"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--only", action="append", default=[], metavar="ID",
                   help="run this theorem and the ones it relies on (repeatable); "
                        "ids: " + ", ".join(t.id for t in proofs.THEOREMS))
    p.add_argument("--quick", action="store_true",
                   help=f"N in {proofs.QUICK.lo}..{proofs.QUICK.hi} only; the default is "
                        f"the full range N in {proofs.FULL.lo}..{proofs.FULL.hi}")
    p.add_argument("--twins", action="store_true",
                   help="also run each theorem's deliberately false twin (must be refuted)")


def _hash(v: int) -> str:
    return f"{v} (0x{v:08x})"


def describe_values(values: dict) -> str:
    """One line for a counterexample or witness: key hashes in decimal and hex."""
    parts = []
    for k, v in values.items():
        if "hash" in k:
            v = "[" + ", ".join(map(_hash, v)) + "]" if isinstance(v, list) else _hash(v)
            parts.append(f"key {k} {v}")
        else:
            parts.append(f"{k}={v}")
    return ", ".join(parts)


def _print_result(r: proofs.Result) -> None:
    mark = "ok" if r.ok else "FAIL"
    print(f"[{mark}] {r.id}: {r.verdict} in {r.solver_s:.2f}s (expected {r.expected})")
    print(f"     {r.statement}")
    print(f"     formula: {r.formula}")
    if r.counterexample is not None:
        word = "counterexample" if r.verdict == proofs.REFUTED else "solver"
        print(f"     {word}: {describe_values(r.counterexample)}")
    if r.witness is not None:
        print(f"     witness: {describe_values(r.witness)}")


def run(args) -> int:
    ids = list(args.only)
    unknown = [i for i in ids if i not in proofs.BY_ID]
    if unknown:
        base, _, twin = unknown[0].partition("~")
        twins = ", ".join(t.id for t in proofs.TWINS)
        if twin == "false" and base in proofs.BY_ID:
            raise UsageError(f"{base} has no false twin: those with one are {twins}")
        raise UsageError(f"unknown theorem {unknown[0]!r}: choose from "
                         + ", ".join(t.id for t in proofs.THEOREMS) + f"; false twins: {twins}")
    if args.twins:
        base = ids or [t.id for t in proofs.THEOREMS]
        ids = base + [t.id for t in proofs.TWINS if t.id.split("~")[0] in base]
    bounds = proofs.QUICK if args.quick else proofs.FULL
    if not args.json:
        print(f"kmc prove: KIP-253 hashing claims over every 32-bit key hash, "
              f"{bounds.describe()}")
        if args.quick:
            print(f"QUICK MODE: only {bounds.describe()}; the claims are stated for "
                  f"{proofs.FULL.describe()} (run without --quick for that)")
    start = time.perf_counter()
    results = proofs.run_all(ids, bounds, on_result=None if args.json else _print_result)
    elapsed = time.perf_counter() - start
    ok = all(r.ok for r in results)
    if args.json:
        print(json.dumps({"theorems": [r.to_json() for r in results], "ok": ok,
                          "elapsed_s": round(elapsed, 3), "quick": bool(args.quick),
                          "bounds": {"N": [bounds.lo, bounds.hi],
                                     "n": f"[N, {bounds.growth}N]"}}, indent=1))
    else:
        met = sum(r.ok for r in results)
        print(f"{met}/{len(results)} verdicts as expected in {elapsed:.1f}s"
              + ("" if ok else ": FAILED"))
    return 0 if ok else 1
