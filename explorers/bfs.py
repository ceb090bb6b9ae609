"""Level-synchronous breadth-first search: shortest counterexamples, compact memory.

Per level: expand every frontier state (the shared Core), dedup successors within the
level in a transient dict, drop those already visited with one vectorised look-up in the
sorted fingerprint set, check properties on the new states. Parent pointers are a uint32
array per level (index of the parent in the previous level); a trace is rebuilt by
regenerating successors along the key path, as TLC does.

Stopping always happens at a level boundary (after a violation with stop_on_violation, or
when every property is decided) so every engine, local or Spark, reports the same counts.
"""
from __future__ import annotations

import time
from collections import Counter

import numpy as np

from explorers.core import Core
from explorers.visited import SortedKeySet, keys_array


def bfs(model, *, max_states=None, max_depth=None, time_limit=None,
        stop_on_violation=False, symmetry=False, deadlock=False, progress=None,
        properties=None, core=None):
    core = core or Core(model, symmetry=symmetry, deadlock=deadlock, properties=properties)
    r = core.new_result("bfs")
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    successors, rkey = core.successors, core.rkey
    check_new, check_settled = core.check_new, core.check_settled
    needs_settled = core.needs_settled
    watch_new = bool(core.always or core.pending_witness)

    inits = core.initial()
    init_index = [i for i, _ in inits]
    frontier = [s for _, s in inits]
    visited = SortedKeySet()
    keys0 = keys_array(map(rkey, frontier), len(frontier))
    visited.add_new(keys0)
    level_keys = [keys0]
    level_parent = [np.zeros(len(frontier), dtype=np.uint32)]
    for j, s in enumerate(frontier):
        check_new(s, (0, j))
    unique = len(frontier)
    generated = len(frontier)
    depth = 1 if frontier else 0
    coverage = Counter()
    stopped_by = ""
    last_report = t0

    while frontier:
        if core.done:
            stopped_by = "all properties decided"
            break
        if stop_on_violation and _violated(core):
            stopped_by = "violation"
            break
        at_bound = max_depth is not None and depth >= max_depth
        nxt: dict = {}
        for pi, s in enumerate(frontier):
            succ = successors(s)
            generated += len(succ)
            if needs_settled:
                check_settled(s, succ, (depth - 1, pi))
            for a, t in succ:
                coverage[a] += 1
                if t not in nxt:
                    nxt[t] = pi
            if not pi & 1023 and pi:
                now = time.perf_counter()
                if deadline is not None and now > deadline:
                    stopped_by = "time_limit"
                    break
                if progress is not None and now - last_report > 0.5:
                    last_report = now
                    progress(unique, generated, depth, len(frontier) - pi + len(nxt),
                             now - t0)
        if stopped_by:
            break
        cand = list(nxt)
        keys = keys_array(map(rkey, cand), len(cand))
        fresh = np.flatnonzero(visited.unseen_mask(keys))
        if at_bound:
            if fresh.size:
                stopped_by = "max_depth"
            break
        if max_states is not None and unique + fresh.size > max_states:
            fresh = fresh[: max(0, max_states - unique)]
            stopped_by = "max_states"
        if fresh.size == 0 and not stopped_by:
            break
        new_keys = keys[fresh]
        visited.add_new(new_keys)
        parents = keys_array(nxt.values(), len(nxt))[fresh].astype(np.uint32)
        level_keys.append(new_keys)
        level_parent.append(parents)
        frontier = [cand[i] for i in fresh.tolist()]
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
    r.extra["trace_bytes"] = int(sum(k.nbytes + p.nbytes for k, p in
                                     zip(level_keys, level_parent)))

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


def _violated(core) -> bool:
    from invariants.properties import SOMETIMES
    return any(kind != SOMETIMES for kind, *_ in core.discoveries.values())
