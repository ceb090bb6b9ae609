"""What tables of step answers, keyed by the fields each step read, would make of the
ZooKeeper-era cluster's successor function: a measurement of a design, not the product.

    python bench/step_tables_bench.py                          # lifecycle-large kip516
    python bench/step_tables_bench.py stale-read --variant legacy
    python bench/step_tables_bench.py split-merge-spark --verify 0
    python bench/step_tables_bench.py -p crashes=2 -p failovers=2 --max-states 1500000 --levels

The design: a state is a tuple of numbers, one per field of ``World``, each the index of
the field's value in a table of the values met. A step (a delivery's handler, an admin
request, a crash...) runs once on a decoded World whose field reads are recorded; its
answer (the fields it wrote, as numbers) is kept under the numbers of the fields it read.
Every later state that agrees on those fields takes the answer from the table. Per step
kind the key is the union of every field the kind read so far (a read outside it widens
the key and empties the kind's table), which is sound for deterministic steps: a state
that agrees on the fields read takes the same path. The messages in flight are most of
the state space's variety, so a step does not read them as a field: it runs on a stand-in
network that records its deliveries, sends and drops as operations, replayed on each
state's own messages (a table of its own maps (network, operation) to the next network),
and answers its questions (``model.net.ask``: is a fetch of this partition in flight?)
from the real messages; the answer, not the network, then keys the rest of the step's
entry. A step that reads the network any other way raises on the
stand-in; its kind then reads the network as a field. The candidate actions of a state
are tabled the same way, per feature; a feature that lists its deliveries apart
(``delivery_candidates``) has them tabled by the network alone. Reads are recorded where
a step names a field (``w.brokers``): the cluster's steps read the World no other way,
and its memoised functions take field values, never the World, so an answer a memo
table gives hides no read. The verification below checks both by its results.

Prints, for a plain BFS over World states with ``model.successors`` and for the tabled
BFS over number states (twice: with empty tables, then with the tables the first run
filled): distinct states, transitions and CPU seconds; then per step kind its table's
hits and misses and the fields it read. ``--levels`` adds the misses per new state of
each level of the first tabled BFS, which say whether the tables pay more as the state
space grows; ``--max-states N`` stops each BFS at a level boundary past N states.
``--checks`` first times the product's whole BFS, then adds a tabled BFS (tables empty
again) that also checks every property as the product's BFS does (``Core.check_new`` on
each new state, ``Core.check_settled`` on each expanded one, with field reprs kept per
number), and says whether both find the same properties violated or witnessed.
``--verify N`` compares the successors of N sampled states (0: none) with the model's
own, decoded. Figures, never assertions.
"""
from __future__ import annotations

import argparse
import gc
import random
import sys
import time

from step_tables import FIELDS, Tables, bfs_count

from kmc.api import build
from kmc.explorers.bfs import bfs
from kmc.explorers.core import Core
from kmc.model.kafka.zk.cluster import Cluster


class _Reprs(dict):
    """number -> the repr of the value it numbers, in one field's table ``vals``."""
    __slots__ = ("vals",)

    def __init__(self, vals: list):
        super().__init__()
        self.vals = vals

    def __missing__(self, x: int) -> str:
        got = self[x] = repr(self.vals[x])
        return got


def checked_bfs(model, tables):
    """A tabled BFS that checks the properties (see the module docstring): (distinct
    states, the names of the properties found violated or witnessed)."""
    core = Core(model)
    reprs = [_Reprs(v) for v in tables.vals]
    decode, get = tables.decode, dict.__getitem__

    def pieces(s) -> list:
        return list(map(get, reprs, s))
    init = tables.encode(model.init_states()[0])
    seen, frontier = {init}, [init]
    core.check_new(decode(init), None, pieces(init))
    while frontier:
        nxt = []
        for s in frontier:
            succ = tables.successors(s)
            if core.needs_settled:
                core.check_settled(decode(s), succ, None, pieces(s))
            for _a, t in succ:
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
                    core.check_new(decode(t), None, pieces(t))
        frontier = nxt
    return seen, set(core.discoveries)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="step_tables_bench", description=__doc__.splitlines()[0])
    ap.add_argument("scenario", nargs="?", default="lifecycle-large")
    ap.add_argument("--variant", default=None, help="default: kip516 for lifecycle-large")
    ap.add_argument("-p", dest="params", action="append", default=[], metavar="NAME=INT")
    ap.add_argument("--verify", type=int, default=3000, metavar="N")
    ap.add_argument("--checks", action="store_true")
    ap.add_argument("--max-states", type=int, default=None, metavar="N",
                    help="stop each BFS at the first level boundary past N states")
    ap.add_argument("--levels", action="store_true",
                    help="per level of the first tabled BFS: its misses per new state")
    a = ap.parse_args(argv)
    if a.checks and a.max_states is not None:
        print("step_tables_bench: --checks compares whole state spaces: leave out "
              "--max-states", file=sys.stderr)
        return 2
    variant = a.variant or ("kip516" if a.scenario == "lifecycle-large" else None)
    params = {k: int(v) for k, v in (p.split("=", 1) for p in a.params)}
    model = build(a.scenario, variant, params)
    if type(model) is not Cluster:
        print(f"step_tables_bench: {a.scenario} is not a ZooKeeper-era cluster scenario",
              file=sys.stderr)
        return 2
    clock = time.process_time
    if a.checks:  # first, as in a process of its own (kafka_bench runs it so)
        t = clock()
        r = bfs(build(a.scenario, variant, params))
        el = clock() - t
        product = set(r.discoveries)
        print(f"the product's BFS: {r.unique_states:,} states, {el:.2f} CPU s "
              f"({r.unique_states / el:,.0f} states/s)")
    gc.disable()
    t = clock()
    seen, moves = bfs_count(model.init_states()[0], model.successors, a.max_states)
    print(f"plain BFS:  {len(seen):,} states, {moves:,} transitions, {clock() - t:.2f} CPU s")
    tables = Tables(model)
    init = tables.encode(model.init_states()[0])
    last = [0, clock()]

    def level(depth, new):
        misses = sum(k.misses for k in tables.kinds.values())
        now = clock()
        print(f"  level {depth:3d}: {new:10,} new states, "
              f"{(misses - last[0]) / max(new, 1):5.2f} misses per new state, "
              f"{new / max(now - last[1], 1e-9):9,.0f} new states/s")
        last[:] = [misses, clock()]
    for run in ("empty", "filled"):
        t = clock()
        watch = level if a.levels and run == "empty" else None
        states, moves = bfs_count(init, tables.successors, a.max_states, watch)
        el = clock() - t
        print(f"tabled BFS, tables {run}: {len(states):,} states, {moves:,} transitions, "
              f"{el:.2f} CPU s ({len(states) / el:,.0f} states/s)")
        if run == "empty":
            first = [(k.misses, k.hits, k.name, k.fields) for k in tables.kinds.values()]
    for misses, hits, name, fields in sorted(first, key=lambda x: (-x[0], x[2])):
        read = ", ".join(FIELDS[i] for i in fields)
        print(f"  {name:28s} {hits:9,} hits {misses:9,} misses   reads {read}")
    print("  values per field:", ", ".join(f"{f} {len(v):,}" for f, v in zip(FIELDS, tables.vals)))
    if a.checks:
        fresh = build(a.scenario, variant, params)
        t = clock()
        got, found = checked_bfs(fresh, Tables(fresh))
        el = clock() - t
        print(f"tabled BFS with the checks, tables empty: {len(got):,} states, "
              f"{el:.2f} CPU s ({len(got) / el:,.0f} states/s); the same properties "
              f"violated or witnessed as the product's BFS: {found == product} "
              f"({len(found)})")
    sample = random.Random(1).sample(sorted(states), min(a.verify, len(states)))
    wrong = sum(model.successors(tables.decode(s)) !=
                [(x, tables.decode(y)) for x, y in tables.successors(s)] for s in sample)
    print(f"verified: {len(sample):,} sampled states, {wrong} whose successors differ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
