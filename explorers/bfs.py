"""Level-synchronous breadth-first search: shortest counterexamples, compact memory.

Per level: expand the frontier (``explorers.level``: the shared expansion core), drop the
candidates already visited with one vectorised look-up in the sorted fingerprint set, and
check properties on the new states. Parent pointers are one uint32 per state (the index
of its parent in the previous level); a trace is rebuilt by regenerating successors along
the key path, as TLC does.

Every choice is made by order key (``Core.order_key``), as the Spark explorer makes it, so
both keep the same states at ``max_states`` and return the same counterexamples: the
initial states and each new level are kept in ascending order-key order, so a state
reached from several parents keeps the parent with the smallest key (the level expander
keeps the first parent), and the core keeps, per property, the violating state with the
smallest key of the shallowest level (``Core.open_level``).

Stopping happens at a level boundary (after a violation with stop_on_violation, when every
property is decided, or when the process outgrows ``max_memory``) so BFS and Spark report
the same counts (DFS, which has no levels, stops at once: docs/architecture.md). The
initial states are the first level: more of them than ``max_states`` keeps the
``max_states`` with the smallest order keys and expands none.
"""
from __future__ import annotations

import hashlib
import time

import numpy as np

from kmc.explorers.core import Core
from kmc.explorers.gcpause import without_cyclic_gc
from kmc.explorers.level import level_expander
from kmc.explorers import liveness
from kmc.explorers.memory import MemoryGuard
from kmc.explorers.keyarrays import key_at, sort_order
from kmc.explorers.visited import SortedKeySet, keys_array, smallest


@without_cyclic_gc
def bfs(model, *, max_states=None, max_depth=None, time_limit=None,
        stop_on_violation=False, symmetry=False, deadlock=False, progress=None,
        properties=None, core=None, max_memory=None, states_digest=False):
    """``max_memory``: bytes of resident memory (None: no guard); the run stops with
    stopped_by "max_memory" at the last level boundary it completed (a level that crosses
    the limit is abandoned, as a time limit abandons it). ``states_digest``: also give,
    in ``extra["states_digest"]``, a digest of the set of states the run found (of their
    keys: two runs with the same digest found the same states)."""
    core = core or Core(model, symmetry=symmetry, deadlock=deadlock, properties=properties)
    r = core.new_result("bfs")
    graph = liveness.attach(core)  # liveness properties: record the state graph
    guard = MemoryGuard(max_memory)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    coverage = core.coverage_counter()
    expand = level_expander(core, coverage, getattr(model, "known_keys", None))
    check_new = core.check_new
    watch_new = bool(core.always or core.pending_witness)

    inits = sorted(core.initial(), key=lambda e: core.order_key(e[1]))
    generated = len(inits)
    stopped_by = ""
    if max_states is not None and len(inits) > max_states:  # the first level crosses it
        inits, stopped_by = inits[:max_states], "max_states"  # the smallest order keys
    init_index = [i for i, _ in inits]
    frontier = [s for _, s in inits]
    pieces = None  # the frontier's field reprs, when the expander gives them
    visited = SortedKeySet(core.key_dtype)
    keys0 = keys_array(map(core.rkey, frontier), len(frontier), core.key_dtype)
    visited.add_new(keys0)
    level_keys = [keys0]
    level_parent = [np.zeros(len(frontier), dtype=np.uint32)]
    core.open_level()
    for j, s in enumerate(frontier):
        check_new(s, (0, j))
    core.close_level()
    unique = len(frontier)
    depth = 1 if frontier else 0
    state = {"last": t0}

    def tick(i):
        now = time.perf_counter()
        if progress is not None and now - state["last"] > 0.5:
            state["last"] = now
            progress(unique, generated, depth, len(frontier) - i, now - t0)
        if deadline is not None and now > deadline:
            state["why"] = "time_limit"
        elif guard.exceeded(now):
            state["why"] = "max_memory"
        return "why" in state

    while frontier and not stopped_by:
        if stop_on_violation and core.violated():
            stopped_by = "violation"
            break
        if core.done:
            stopped_by = "all properties decided"
            break
        if guard.exceeded():
            stopped_by = "max_memory"
            break
        if deadline is not None and time.perf_counter() > deadline:
            stopped_by = "time_limit"  # between levels too, as the Spark explorer does
            break
        core.open_level()  # quiescence and deadlock of the frontier, then the new states
        lvl = expand(frontier, depth - 1, tick, pieces)
        generated += lvl.generated
        if lvl.aborted:
            core.close_level()
            stopped_by = state["why"]
            break
        fresh = np.flatnonzero(visited.unseen_mask(lvl.keys))
        if max_depth is not None and depth >= max_depth:
            core.close_level()
            stopped_by = "max_depth" if fresh.size else ""
            break
        okeys, states = lvl.keys[fresh], None  # packed: the keys are the (sorted) states
        pieces = None  # the new states' field reprs, aligned with states
        if lvl.states is not None:  # the generic expander keeps generation order
            states, pieces = _take(lvl.states, lvl.pieces, fresh.tolist())
            okeys = core.order_keys(okeys, states, pieces)
        if max_states is not None and unique + fresh.size > max_states:
            keep = np.flatnonzero(smallest(okeys, max_states - unique))
            fresh, okeys = fresh[keep], okeys[keep]
            if states is not None:
                states, pieces = _take(states, pieces, keep.tolist())
            stopped_by = "max_states"
        if states is not None:
            order = sort_order(okeys)
            fresh = fresh[order]
            states, pieces = _take(states, pieces, order.tolist())
        if fresh.size == 0:
            core.close_level()
            break
        new_keys = lvl.keys[fresh]
        visited.add_new(new_keys)
        level_keys.append(new_keys)
        level_parent.append(lvl.parents[fresh].astype(np.uint32))
        lvl = None  # the level's candidates (and their reprs) go before the next expansion
        frontier = new_keys.tolist() if states is None else states
        if watch_new:
            for j, t in enumerate(frontier):
                check_new(t, (depth, j), None if pieces is None else pieces[j])
        core.close_level()
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
    guard.report(r)
    r.extra["trace_bytes"] = int(sum(k.nbytes + p.nbytes
                                     for k, p in zip(level_keys, level_parent)))
    if states_digest:
        found = np.sort(np.concatenate(level_keys))
        r.extra["states_digest"] = hashlib.sha256(found.tobytes()).hexdigest()

    def trace_for(loc):
        level, j = loc
        keys = []
        while level > 0:
            keys.append(key_at(level_keys[level], j))
            j = int(level_parent[level][j])
            level -= 1
        keys.append(key_at(level_keys[0], j))
        keys.reverse()
        return core.rebuild(init_index[j], keys)

    return liveness.finish(graph, core.finish(r, coverage, trace_for))


def _take(states, pieces, at):
    """``states`` and their field reprs ``pieces`` (None: not kept) at the indices
    ``at``, in that order."""
    return [states[i] for i in at], None if pieces is None else [pieces[i] for i in at]
