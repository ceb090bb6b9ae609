"""Depth-first search with an optional depth bound (traces are the DFS path, not shortest).

With a depth bound a state first reached deep may later be reached shallower; it is then
expanded again (Spin's fix for bounded DFS), so every state within the bound is explored.
"""
from __future__ import annotations

import time

from kmc.explorers.core import Core
from kmc.explorers.gcpause import without_cyclic_gc


@without_cyclic_gc
def dfs(model, *, max_states=None, max_depth=None, time_limit=None,
        stop_on_violation=False, symmetry=False, deadlock=False, progress=None,
        properties=None, core=None):
    core = core or Core(model, symmetry=symmetry, deadlock=deadlock, properties=properties)
    r = core.new_result("dfs")
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    successors, rkey = core.successors, core.rkey
    depth_of: dict = {}  # key -> smallest depth seen (1-based)
    coverage = core.coverage_counter()
    generated = 0
    deepest = 0
    stopped_by = ""
    inits = core.initial()
    generated += len(inits)
    steps = 0
    for init_index, s0 in inits:
        k0 = rkey(s0)
        depth_of[k0] = 1
        core.check_new(s0, (init_index, [k0]))
        # stack of [state, key, successors, next position]
        stack = [[s0, k0, None, 0]]
        while stack:
            top = stack[-1]
            s, k, succ, pos = top
            if succ is None:
                d = len(stack)
                deepest = max(deepest, d)
                succ = successors(s)
                generated += len(succ)
                for a, _t in succ:
                    coverage[a] += 1
                core.check_settled(s, succ, (init_index, [e[1] for e in stack]))
                if max_depth is not None and d >= max_depth:
                    if any(depth_of.get(rkey(t), 1 << 60) > d + 1 for _a, t in succ):
                        stopped_by = stopped_by or "max_depth"
                    succ = ()
                top[2] = succ
            if pos >= len(succ):
                stack.pop()
                continue
            top[3] = pos + 1
            t = succ[pos][1]
            kt = rkey(t)
            d = len(stack) + 1
            seen = depth_of.get(kt)
            if seen is not None and (max_depth is None or seen <= d):
                continue
            if seen is None:
                if max_states is not None and len(depth_of) >= max_states:
                    stopped_by = "max_states"
                    break
                path = [e[1] for e in stack] + [kt]
                if core.check_new(t, (init_index, path)) and stop_on_violation and \
                        core.violated():
                    stopped_by = "violation"
            depth_of[kt] = d
            stack.append([t, kt, None, 0])
            steps += 1
            if not steps & 1023:
                now = time.perf_counter()
                if deadline is not None and now > deadline:
                    stopped_by = "time_limit"
                if progress is not None:
                    progress(len(depth_of), generated, len(stack), len(stack), now - t0)
            if stopped_by in ("time_limit", "violation") or core.done:
                break
        if stopped_by in ("time_limit", "violation", "max_states") or core.done:
            stopped_by = stopped_by or "all properties decided"
            break
    r.unique_states, r.generated_states, r.max_depth = len(depth_of), generated, deepest
    r.stopped_by = stopped_by
    r.complete = stopped_by == ""
    r.elapsed_s = time.perf_counter() - t0
    return core.finish(r, coverage, lambda loc: core.rebuild(loc[0], loc[1]))

