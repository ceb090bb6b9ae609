"""Small generic (tuple-state) models for engine tests: they exercise the non-packed
path (fingerprints, dict level expansion, quiescence, boundaries)."""
from typing import NamedTuple

from kmc.invariants import always, quiescent, sometimes
from kmc.model import Model


class Sys(NamedTuple):
    procs: tuple  # per process: ("idle" | "busy" | "done", count)
    log: tuple    # sorted tuple of finished process ids


class Workers(Model):
    """n workers each doing up to k jobs; a fault action may crash one (idle only)."""
    name = "workers"
    has_symmetry = True

    def __init__(self, n=3, k=2, bug=False, witness_never=False):
        self.n, self.k, self.bug, self.witness_never = n, k, bug, witness_never

    def init_states(self):
        return [Sys(tuple(("idle", 0) for _ in range(self.n)), ())]

    def actions(self, s):
        out = []
        for i, (st, c) in enumerate(s.procs):
            if st == "idle" and c < self.k:
                out.append(("Start", i))
            if st == "busy":
                out.append(("Finish", i))
            if st == "idle":
                out.append(("Crash", i))
        return out

    def next_state(self, s, a):
        kind, i = a
        st, c = s.procs[i]
        procs = list(s.procs)
        if kind == "Start":
            procs[i] = ("busy", c)
            return Sys(tuple(procs), s.log)
        if kind == "Finish":
            procs[i] = ("idle", c + 1)
            log = s.log if i in s.log else tuple(sorted(s.log + (i,)))
            return Sys(tuple(procs), log)
        procs[i] = ("done", c)
        return Sys(tuple(procs), s.log)

    def is_fault(self, a):
        return a[0] == "Crash"

    def representative(self, s):
        # processes are interchangeable: sort them, renaming the log accordingly
        order = sorted(range(self.n), key=lambda i: (s.procs[i], i in s.log))
        rank = {old: new for new, old in enumerate(order)}
        return Sys(tuple(s.procs[i] for i in order), tuple(sorted(rank[i] for i in s.log)))

    def properties(self):
        limit = self.k - 1 if self.bug else self.k
        return [
            always("CountBounded", lambda s: all(c <= limit for _st, c in s.procs)),
            sometimes("AllDone", lambda s: (not self.witness_never)
                      and all(c == self.k for _st, c in s.procs)),
            quiescent("SettledIdle", lambda s: all(st != "busy" for st, _c in s.procs)),
        ]


def reachable(model, limit=None):
    """Every reachable in-boundary state (the first ``limit`` of them), in BFS order: a
    plain enumeration through the Model contract for tests that look at every state."""
    frontier = [s for s in model.init_states() if model.within_boundary(s)]
    seen = set(frontier)
    order = list(frontier)
    while frontier and (limit is None or len(order) < limit):
        nxt = []
        for s in frontier:
            for _a, t in model.successors(s):
                if t not in seen and model.within_boundary(t):
                    seen.add(t)
                    nxt.append(t)
        order.extend(nxt)
        frontier = nxt
    return order if limit is None else order[:limit]
