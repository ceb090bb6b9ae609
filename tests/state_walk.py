"""The states of a model in breadth-first order, for tests that compare a fast path with
the plain one state by state."""
from __future__ import annotations


def reachable(model, limit: int) -> list:
    """The first ``limit`` states ``model`` reaches, in breadth-first order (each level in
    the order its states were first met)."""
    frontier = list(model.init_states())
    seen, out = set(frontier), list(frontier)
    while frontier and len(out) < limit:
        nxt = []
        for s in frontier:
            for _a, t in model.successors(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        out += nxt
        frontier = nxt
    return out[:limit]
