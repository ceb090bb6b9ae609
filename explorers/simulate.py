"""Seeded random simulation: N walks of bounded length, reproducible from the seed.

Each walk starts from an initial state chosen at random and follows uniformly chosen
successors until the length bound or a state with no successor. Not exhaustive: a property
that was never violated is reported "unknown", never "holds".
"""
from __future__ import annotations

import random
import time

from kmc.explorers.core import Core
from kmc.explorers.gcpause import without_cyclic_gc


@without_cyclic_gc
def simulate(model, *, walks=1000, walk_length=50, seed=0, max_states=None,
             max_depth=None, time_limit=None, stop_on_violation=False, symmetry=False,
             deadlock=False, progress=None, properties=None, core=None):
    core = core or Core(model, symmetry=symmetry, deadlock=deadlock, properties=properties)
    r = core.new_result("simulate")
    rng = random.Random(seed)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    length = walk_length if max_depth is None else min(walk_length, max_depth)
    successors, rkey = core.successors, core.rkey
    seen: set = set()
    coverage = core.coverage_counter()
    generated = deepest = 0
    inits = core.initial()
    stopped_by = ""
    for w in range(walks):
        init_index, s = inits[rng.randrange(len(inits))]
        path = [rkey(s)]
        if path[0] not in seen:
            seen.add(path[0])
            core.check_new(s, (init_index, list(path)))
        for _ in range(length - 1):
            succ = successors(s)
            generated += len(succ)
            for a, _t in succ:
                coverage[a] += 1
            core.check_settled(s, succ, (init_index, list(path)))
            if not succ:
                break
            _a, s = succ[rng.randrange(len(succ))]
            k = rkey(s)
            path.append(k)
            if k not in seen:
                seen.add(k)
                core.check_new(s, (init_index, list(path)))
        deepest = max(deepest, len(path))
        if progress is not None and not w % 100:
            progress(len(seen), generated, deepest, walks - w, time.perf_counter() - t0)
        if stop_on_violation and core.violated():
            stopped_by = "violation"
            break
        if deadline is not None and time.perf_counter() > deadline:
            stopped_by = "time_limit"
            break
        if max_states is not None and len(seen) >= max_states:
            stopped_by = "max_states"
            break
    r.unique_states, r.generated_states, r.max_depth = len(seen), generated, deepest
    r.stopped_by = stopped_by or "simulation"
    r.complete = False
    r.elapsed_s = time.perf_counter() - t0
    r.extra.update(seed=seed, walks=walks, walk_length=length)
    return core.finish(r, coverage, lambda loc: core.rebuild(loc[0], loc[1]))
