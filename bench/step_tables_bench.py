"""What tables of step answers, keyed by the fields each step read, would make of the
ZooKeeper-era cluster's successor function (``step_tables.py``): a measurement of a
design, not the product.

    python bench/step_tables_bench.py                          # lifecycle-large kip516
    python bench/step_tables_bench.py --product                # the product's BFS
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
table gives hides no read; a step that reads the recorded World any other way
(indexes, iterates, hashes or compares it) is keyed by every field. The verification
below checks all this by its results.

Prints, for a plain BFS over World states with ``model.successors`` and for a BFS over
numbered states with the tables' successor function (twice: with empty tables, then
with the tables the first run filled): distinct states, transitions and CPU seconds;
then per step kind its table's hits and misses and the fields it read. ``--levels``
adds the misses per new state of each level of the first tabled BFS, which say whether
the tables pay more as the state space grows; ``--max-states N`` stops each BFS at a
level boundary past N states. ``--verify N`` compares the successors of N sampled
states (0: none) with the model's own, decoded. ``--product`` times instead the
product's whole BFS (keys, checks and levels included): with its field-wise expander,
then over the tables (``step_tables_expander.py``: the same states, counts and
counterexamples; tables empty, then filled by that run; ``--limit N``: the entries
past which they start over), then field-wise again; with the states' digests and the
peak resident memory so far. Figures, never assertions.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import random
import sys
import time

from step_tables import FIELDS, Tables, bfs_count

from kmc.api import build
from kmc.explorers.bfs import bfs
from kmc.model.kafka.zk.cluster import Cluster


def product_runs(scenario, variant, params, max_states=None, limit=1 << 20) -> int:
    """``--product`` (the module docstring)."""
    import resource

    from step_tables_expander import Run, installed

    clock = time.process_time
    model = build(scenario, variant, params)
    run = Run(lambda: Tables(model), limit=limit)
    digests = set()
    for label in ("field-wise", "tabled, tables empty", "tabled, tables filled",
                  "field-wise"):
        plain = label == "field-wise"
        m = build(scenario, variant, params) if plain else model
        with contextlib.nullcontext() if plain else installed(run):
            t = clock()
            r = bfs(m, states_digest=True, max_states=max_states)
            el = clock() - t
        digests.add(r.extra["states_digest"])
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"product BFS, {label:22s} {r.unique_states:,} states, {el:6.2f} CPU s "
              f"({r.unique_states / el:,.0f} states/s), peak RSS so far {peak:,.0f} MB")
    print(f"tables: {run.made} made, the last holding {run.tables.entries():,} entries; "
          f"the same states in every run: {len(digests) == 1}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="step_tables_bench", description=__doc__.splitlines()[0])
    ap.add_argument("scenario", nargs="?", default="lifecycle-large")
    ap.add_argument("--variant", default=None, help="default: kip516 for lifecycle-large")
    ap.add_argument("-p", dest="params", action="append", default=[], metavar="NAME=INT")
    ap.add_argument("--verify", type=int, default=3000, metavar="N")
    ap.add_argument("--max-states", type=int, default=None, metavar="N",
                    help="stop each BFS at the first level boundary past N states")
    ap.add_argument("--levels", action="store_true",
                    help="per level of the first tabled BFS: its misses per new state")
    ap.add_argument("--product", action="store_true",
                    help="time the product's BFS, field-wise and over the tables")
    ap.add_argument("--limit", type=int, default=1 << 20, metavar="N",
                    help="--product: table entries past which the tables start over")
    a = ap.parse_args(argv)
    variant = a.variant or ("kip516" if a.scenario == "lifecycle-large" else None)
    params = {k: int(v) for k, v in (p.split("=", 1) for p in a.params)}
    model = build(a.scenario, variant, params)
    if type(model) is not Cluster:
        print(f"step_tables_bench: {a.scenario} is not a ZooKeeper-era cluster scenario",
              file=sys.stderr)
        return 2
    if a.product:
        return product_runs(a.scenario, variant, params, a.max_states, a.limit)
    clock = time.process_time
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
    sample = random.Random(1).sample(sorted(states), min(a.verify, len(states)))
    wrong = sum(model.successors(tables.decode(s)) !=
                [(x, tables.decode(y)) for x, y in tables.successors(s)] for s in sample)
    print(f"verified: {len(sample):,} sampled states, {wrong} whose successors differ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
