"""Level-synchronous breadth-first search: shortest counterexamples, compact memory.

Per level: expand the frontier (``explorers.level``: the shared expansion core), drop the
candidates already visited with one vectorised look-up in the sorted fingerprint set, and
check properties on the new states. Parent pointers are one uint32 per state (the index
of its parent in the previous level); a trace is rebuilt by regenerating successors along
the key path, as TLC does.

Stopping happens at a level boundary (after a violation with stop_on_violation, or when
every property is decided) so every engine, local or Spark, reports the same counts.
"""
from __future__ import annotations

import time

import numpy as np

from kmc.explorers.core import Core
from kmc.explorers.gcpause import without_cyclic_gc
from kmc.explorers.level import level_expander
from kmc.explorers.visited import SortedKeySet, keys_array, smallest


@without_cyclic_gc
def bfs(model, *, max_states=None, max_depth=None, time_limit=None,
        stop_on_violation=False, symmetry=False, deadlock=False, progress=None,
        properties=None, core=None):
    core = core or Core(model, symmetry=symmetry, deadlock=deadlock, properties=properties)
    r = core.new_result("bfs")
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    coverage = core.coverage_counter()
    expand = level_expander(core, coverage)
    check_new = core.check_new
    watch_new = bool(core.always or core.pending_witness)

    inits = core.initial()
    init_index = [i for i, _ in inits]
    frontier = [s for _, s in inits]
    visited = SortedKeySet()
    keys0 = keys_array(map(core.rkey, frontier), len(frontier))
    visited.add_new(keys0)
    level_keys = [keys0]
    level_parent = [np.zeros(len(frontier), dtype=np.uint32)]
    for j, s in enumerate(frontier):
        check_new(s, (0, j))
    unique = generated = len(frontier)
    depth = 1 if frontier else 0
    stopped_by = ""
    state = {"last": t0}

    def tick(i):
        now = time.perf_counter()
        if progress is not None and now - state["last"] > 0.5:
            state["last"] = now
            progress(unique, generated, depth, len(frontier) - i, now - t0)
        return deadline is not None and now > deadline

    while frontier:
        if stop_on_violation and core.violated():
            stopped_by = "violation"
            break
        if core.done:
            stopped_by = "all properties decided"
            break
        lvl = expand(frontier, depth - 1, tick)
        generated += lvl.generated
        if lvl.aborted:
            stopped_by = "time_limit"
            break
        fresh = np.flatnonzero(visited.unseen_mask(lvl.keys))
        if max_depth is not None and depth >= max_depth:
            stopped_by = "max_depth" if fresh.size else ""
            break
        if max_states is not None and unique + fresh.size > max_states:
            fresh = fresh[smallest(lvl.keys[fresh], max_states - unique)]
            stopped_by = "max_states"
        if fresh.size == 0:
            break
        new_keys = lvl.keys[fresh]
        visited.add_new(new_keys)
        level_keys.append(new_keys)
        level_parent.append(lvl.parents[fresh].astype(np.uint32))
        frontier = new_keys.tolist() if lvl.states is None else \
            [lvl.states[i] for i in fresh.tolist()]
        if watch_new:
            for j, t in enumerate(frontier):
                check_new(t, (depth, j))
        unique += len(frontier)
        depth += 1
        if progress is not None:
            progress(unique, generated, depth, len(frontier), time.perf_counter() - t0)
        if stopped_by:
            break

    r.unique_states, r.generated_states, r.max_depth = unique, generated, depth
    r.stopped_by = stopped_by
    r.complete = stopped_by == ""
    r.elapsed_s = time.perf_counter() - t0
    r.visited_bytes = visited.nbytes
    r.extra["trace_bytes"] = int(sum(k.nbytes + p.nbytes
                                     for k, p in zip(level_keys, level_parent)))

    def trace_for(loc):
        level, j = loc
        keys = []
        while level > 0:
            keys.append(int(level_keys[level][j]))
            j = int(level_parent[level][j])
            level -= 1
        keys.append(int(level_keys[0][j]))
        keys.reverse()
        return core.rebuild(init_index[j], keys)

    return core.finish(r, coverage, trace_for)
