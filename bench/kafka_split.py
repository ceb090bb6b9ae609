"""Where a Kafka model's BFS spends its CPU time: each part timed alone over the run's states.

    python bench/kafka_split.py                        # lifecycle-large kip516
    python bench/kafka_split.py kraft-large            # another scenario (its default variant)
    python bench/kafka_split.py stale-read --variant legacy

First every state of the scenario is collected (a plain breadth-first search), then each
part of what the BFS does per state is timed alone over all of them, in CPU seconds
(``time.process_time``): the model's successor function, the field reprs and keys of the
successors (``model.encoding.FieldReprs``, as the level expander makes them), the
property checks on a new state (``Core.check_new``, with the state's field reprs, warm-up
and merged memos included) and the quiescence checks of an expanded state
(``Core.check_settled``). Then the whole BFS is run and timed; what the parts leave of it
is deduplication and the levels' bookkeeping. Figures, never assertions.
"""
from __future__ import annotations

import argparse
import gc
import sys
import time

from kmc.api import build
from kmc.explorers.bfs import bfs
from kmc.explorers.core import Core


def states_of(model, core) -> list:
    frontier = [s for _i, s in core.initial()]
    seen, out = set(frontier), list(frontier)
    while frontier:
        nxt = []
        for s in frontier:
            for _a, t in model.successors(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        out += nxt
        frontier = nxt
    return out


def record_scenario(argv, prog: str, description: str):
    """The scenario the command line names (default: lifecycle-large kip516) as (its
    name, its variant, model, core); None, said on standard error, when its states are
    not field-wise records."""
    ap = argparse.ArgumentParser(prog=prog, description=description)
    ap.add_argument("scenario", nargs="?", default="lifecycle-large")
    ap.add_argument("--variant", default=None, help="default: kip516 for lifecycle-large")
    a = ap.parse_args(argv)
    variant = a.variant or ("kip516" if a.scenario == "lifecycle-large" else None)
    model = build(a.scenario, variant, {})
    core = Core(model)
    if core.field_keys() is None:
        print(f"{prog}: {a.scenario}'s states are not field-wise records", file=sys.stderr)
        return None
    return a.scenario, variant, model, core


def main(argv=None) -> int:
    got = record_scenario(argv, "kafka_split", __doc__.splitlines()[0])
    if got is None:
        return 2
    scenario, variant, model, core = got
    _cls, reprs, key = core.field_keys()
    gc.disable()
    states = states_of(model, core)
    clock = time.process_time
    parts = {}
    t = clock()
    succs = [model.successors(s) for s in states]
    parts["successor function"] = clock() - t
    pieces = [reprs.of(s) for s in states]
    t = clock()
    for s, sp, ss in zip(states, pieces, succs):
        for _a, x in ss:
            key(reprs.of_child(x, s, sp))
    parts["field reprs and keys of the successors"] = clock() - t
    t = clock()
    for s, sp in zip(states, pieces):
        core.check_new(s, None, sp)
    parts["property checks of new states"] = clock() - t
    t = clock()
    for s, sp, ss in zip(states, pieces, succs):
        core.check_settled(s, ss, None, sp)
    parts["quiescence checks of expanded states"] = clock() - t
    del succs, pieces
    gc.enable()
    t = clock()
    r = bfs(build(scenario, variant, {}))  # a fresh model and core: cold memos
    whole = clock() - t
    n = len(states)
    name = scenario + (f" {variant}" if variant else "")
    print(f"{name}: {n:,} states, {r.generated_states:,} generated; "
          f"the whole BFS {whole:.2f} CPU s = {n / whole:,.0f} states/s")
    for name, sec in parts.items():
        print(f"  {name:40s} {sec:6.2f} s  {sec / n * 1e6:6.2f} us/state  "
              f"{sec / whole:4.0%}")
    rest = whole - sum(parts.values())
    print(f"  {'the rest (deduplication, levels)':40s} {rest:6.2f} s  "
          f"{rest / n * 1e6:6.2f} us/state  {rest / whole:4.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
