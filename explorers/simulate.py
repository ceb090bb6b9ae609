"""Seeded random simulation: N walks of bounded length, reproducible from the seed.

Each walk starts from an initial state chosen at random and follows uniformly chosen
successors until the length bound or a state with no successor. Every state of a walk is
expanded, its last one included, so quiescence and deadlock are checked on it, as BFS
and DFS check them on the states at their depth bound. Not exhaustive: a property
that was never violated is reported "unknown", never "holds".

A walk costs time linear in its length: it appends each state's key to one list, and a
discovery records where it happened as (initial state, that list, length so far), so its
trace is rebuilt from the list's prefix at the end. ``--time-limit`` is checked every
``CHECK_EVERY`` steps and ``--max-states`` at every new state, inside a walk as between
walks, so one long walk cannot overrun either bound. ``max_memory`` (bytes of resident
memory; None: no guard) is looked at with the clock: the distinct states seen by every
walk and the keys of the current one are what grows.
"""
from __future__ import annotations

import random
import time

from kmc.explorers.core import Core
from kmc.explorers.gcpause import without_cyclic_gc
from kmc.explorers.level import keyer
from kmc.explorers.memory import MemoryGuard

#: steps between two looks at the clock (and progress updates) inside a walk: a few
#: milliseconds of work even for the fastest models, so the check costs nothing measurable
CHECK_EVERY = 1024


@without_cyclic_gc
def simulate(model, *, walks=1000, walk_length=50, seed=0, max_states=None,
             max_depth=None, time_limit=None, stop_on_violation=False, symmetry=False,
             deadlock=False, progress=None, properties=None, core=None, max_memory=None):
    core = core or Core(model, symmetry=symmetry, deadlock=deadlock, properties=properties)
    r = core.new_result("simulate")
    rng = random.Random(seed)
    randrange = rng.randrange
    guard = MemoryGuard(max_memory)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    length = walk_length if max_depth is None else min(walk_length, max_depth)
    successors, keyed = core.successors, keyer(core)
    check_new, check_settled = core.check_new, core.check_settled
    seen: set = set()
    coverage = core.coverage_counter()
    generated = deepest = 0
    inits = core.initial()
    stopped_by = ""
    countdown = CHECK_EVERY  # steps left until the next look at the clock
    for w in range(walks):
        init_index, s = inits[randrange(len(inits))]
        k, sp = keyed(s)
        path = [k]  # this walk's keys, in order; a locator names a prefix of it
        if k not in seen:
            seen.add(k)
            hash(s)  # a state is a value, as BFS's keys need: a list in it fails here too
            check_new(s, (init_index, path, 1), sp)
            if max_states is not None and len(seen) >= max_states:
                stopped_by = "max_states"
        for step in range(1, length + 1):  # ``step``: the states of the walk so far
            if stopped_by:
                break
            countdown -= 1
            if not countdown:
                countdown = CHECK_EVERY
                now = time.perf_counter()
                if deadline is not None and now > deadline:
                    stopped_by = "time_limit"
                    break
                if guard.exceeded(now):
                    stopped_by = "max_memory"
                    break
                if progress is not None:
                    progress(len(seen), generated, max(deepest, step), walks - w, now - t0)
            succ = successors(s)
            generated += len(succ)
            for a, _t in succ:
                coverage[a] += 1
            check_settled(s, succ, (init_index, path, step), sp)
            if not succ or step == length:  # the last state is expanded, not left
                break
            _a, t = succ[randrange(len(succ))]
            k, sp = keyed(t, s, sp)
            s = t
            path.append(k)
            if k not in seen:
                seen.add(k)
                hash(s)
                check_new(s, (init_index, path, step + 1), sp)
                if max_states is not None and len(seen) >= max_states:
                    stopped_by = "max_states"
        deepest = max(deepest, len(path))
        if stopped_by:
            break
        if progress is not None and not w % 100:
            progress(len(seen), generated, deepest, walks - w, time.perf_counter() - t0)
        if stop_on_violation and core.violated():
            stopped_by = "violation"
            break
        if deadline is not None and time.perf_counter() > deadline:
            stopped_by = "time_limit"
            break
        if guard.exceeded(time.perf_counter()):
            stopped_by = "max_memory"
            break
    r.unique_states, r.generated_states, r.max_depth = len(seen), generated, deepest
    r.stopped_by = stopped_by or "simulation"
    r.complete = False
    r.elapsed_s = time.perf_counter() - t0
    r.extra.update(seed=seed, walks=walks, walk_length=length)
    guard.report(r)
    return core.finish(r, coverage, lambda loc: core.rebuild(loc[0], loc[1][:loc[2]]))
