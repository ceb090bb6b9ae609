"""Depth-first search with an optional depth bound (traces are the DFS path, not shortest).

With a depth bound a state first reached deep may later be reached shallower; it is then
expanded again (Spin's fix for bounded DFS), so every state within the bound is explored.

DFS has no levels to finish, so it stops at once: as soon as the discovery that decides
the last property is recorded (or, with stop_on_violation, the first violation), at the
state limit, the time limit or the memory limit. A run stopped early therefore counts
fewer states than BFS, which finishes the level it is on (docs/architecture.md).

Record states are keyed as BFS's level expander keys them (``level.keyer``): each state
on the stack keeps the reprs of its fields, and the property checks look their verdicts
up by them.
"""
from __future__ import annotations

import time

from kmc.explorers import liveness
from kmc.explorers.core import Core
from kmc.explorers.gcpause import without_cyclic_gc
from kmc.explorers.level import TICK, keyer
from kmc.explorers.memory import MemoryGuard


@without_cyclic_gc
def dfs(model, *, max_states=None, max_depth=None, time_limit=None,
        stop_on_violation=False, symmetry=False, deadlock=False, progress=None,
        properties=None, core=None, max_memory=None):
    """``max_memory``: bytes of resident memory (None: no guard); the run stops at once
    with stopped_by "max_memory" when the process grows past it."""
    core = core or Core(model, symmetry=symmetry, deadlock=deadlock, properties=properties)
    r = core.new_result("dfs")
    graph = liveness.attach(core)  # liveness properties: record the state graph
    guard = MemoryGuard(max_memory)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    successors, keyed = core.successors, keyer(core)
    depth_of: dict = {}  # key -> smallest depth seen (1-based)
    coverage = core.coverage_counter()
    generated = 0
    deepest = 0
    stopped_by = ""
    beyond: set = set()  # keys of successors of states at max_depth, unvisited then
    shown = [t0]  # when the progress display was last updated

    def decided(found: bool) -> str:
        """Why the run stops after a check that ``found`` something ("" to go on)."""
        if found and stop_on_violation and core.violated():
            return "violation"
        return "all properties decided" if found and core.done else ""

    inits = core.initial()
    generated += len(inits)
    steps = 0
    for init_index, s0 in inits:
        k0, p0 = keyed(s0)
        seen = depth_of.get(k0)  # an initial state already reached from another one
        if seen is not None and (max_depth is None or seen <= 1):
            continue
        if max_states is not None and len(depth_of) >= max_states:
            stopped_by = "max_states"
            break
        depth_of[k0] = 1
        if seen is None:
            hash(s0)  # a state is a value, as BFS's keys need: a list in it fails here too
            stopped_by = decided(core.check_new(s0, (init_index, [k0]), p0))
        # stack of [state, key, successors, next position, its field reprs or None]
        stack = [[s0, k0, None, 0, p0]]
        while stack and not stopped_by:
            top = stack[-1]
            s, k, succ, pos, sp = top
            if succ is None:
                d = len(stack)
                deepest = max(deepest, d)
                succ = successors(s)
                generated += len(succ)
                for a, _t in succ:
                    coverage[a] += 1
                stopped_by = decided(core.check_settled(
                    s, succ, (init_index, [e[1] for e in stack]), sp))
                if stopped_by:
                    break
                if max_depth is not None and d >= max_depth:
                    beyond.update(kt for kt in (keyed(t, s, sp)[0] for _a, t in succ)
                                  if kt not in depth_of)
                    succ = ()
                top[2] = succ
            if pos >= len(succ):
                stack.pop()
                continue
            top[3] = pos + 1
            t = succ[pos][1]
            kt, tp = keyed(t, s, sp)
            d = len(stack) + 1
            seen = depth_of.get(kt)
            if seen is not None and (max_depth is None or seen <= d):
                continue
            if seen is None:
                if max_states is not None and len(depth_of) >= max_states:
                    stopped_by = "max_states"
                    break
                depth_of[kt] = d
                hash(t)
                stopped_by = decided(core.check_new(t, (init_index, [e[1] for e in stack]
                                                        + [kt]), tp))
                if stopped_by:
                    break
            else:
                depth_of[kt] = d  # reached shallower than before: explored again
            stack.append([t, kt, None, 0, tp])
            steps += 1
            if not steps & TICK:
                now = time.perf_counter()
                if deadline is not None and now > deadline:
                    stopped_by = "time_limit"
                elif guard.exceeded(now):
                    stopped_by = "max_memory"
                if progress is not None and now - shown[0] > 0.5:
                    shown[0] = now
                    progress(len(depth_of), generated, len(stack), len(stack), now - t0)
        if stopped_by:
            break
    if not stopped_by and any(kt not in depth_of for kt in beyond):
        stopped_by = "max_depth"  # a state lies beyond the bound (as BFS decides it)
    r.unique_states, r.generated_states, r.max_depth = len(depth_of), generated, deepest
    r.stopped_by = stopped_by
    r.complete = stopped_by == ""
    r.elapsed_s = time.perf_counter() - t0
    guard.report(r)
    return liveness.finish(graph, core.finish(r, coverage,
                                              lambda loc: core.rebuild(loc[0], loc[1])))
