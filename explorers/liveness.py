"""Liveness on the explored state graph: fair cycles and fair stops, found by SCCs.

For each liveness property (``invariants.liveness``) the question is whether some fair
behaviour of the explored graph violates it:

- the *waiting region* is the set of states where the awaited predicate is false (``P``
  of eventually, ``Q`` of leads_to);
- it is *entered* at the initial states (eventually) or at the states where the trigger
  holds and the awaited predicate does not (leads_to);
- a violation is a fair behaviour that enters the region and never leaves it: it ends in
  a **fair stop** (a region state where no fair action is enabled: the behaviour stutters
  there forever, as in TLC) or runs forever in a **fair strongly connected component**
  of the region's subgraph.

A component is fair when (every action class is a fairness class, model/fairness.py):
weak — every weakly fair class enabled in all of its states is taken by one of its inner
edges; strong — every strongly fair class enabled in any of its states is taken inside
it. A component that fails only a strong condition may still contain a fair one: the
states where the offending class is enabled are removed and the rest is split into
components again (the Emerson-Lei refinement), until each part is fair or acyclic. An
inner edge may be a self-loop: a step of a class that changes nothing enables and takes
the class, unlike TLA+'s ``<A>_vars`` (docs/invariants.md, "Liveness").

Components come from an iterative Tarjan (no recursion, any graph size); the first and
largest split is handed to scipy's strongly connected components (the same components,
in C) when scipy is installed. The verdict: a
lasso found -> violated; none and the run was complete -> holds; else unknown (a state
cut off by a bound is not a stop, and a loop through states never expanded cannot be
seen). ``explorers.liveness_lasso`` turns the finding into a shortest-stem lasso.
"""
from __future__ import annotations

import time

import numpy as np

from kmc.explorers.graph import GraphRecorder
from kmc.invariants.liveness import EVENTUALLY, split


def attach(core):
    """Start recording the state graph when the core's properties include liveness
    ones; returns the recorder (None: nothing to record). Call before the explorer
    takes ``core.successors``."""
    _safety, live = split(core.properties)
    if not live:
        return None
    rec = GraphRecorder(core, live)
    rec.attach()
    return rec


def finish(rec, result):
    """Decide every liveness property on the recorded graph and add its lasso to
    ``result``'s discoveries (declaration order kept). Returns ``result``."""
    if rec is None:
        return result
    from kmc.explorers.liveness_lasso import lasso_for
    from kmc.model.result import Discovery

    t0 = time.perf_counter()
    g = rec.graph()
    adj = Adjacency(g)
    found = {}
    for i, prop in enumerate(rec.props):
        hit = fair_target(g, adj, i, prop.kind == EVENTUALLY, rec.fair)
        if hit is not None:
            trace, detail = lasso_for(rec, g, adj, i, prop, hit)
            found[prop.name] = Discovery(prop.name, prop.kind, trace, detail)
    order = [p.name for p in rec.core.properties]
    merged = {**result.discoveries, **found}
    result.discoveries = {n: merged[n] for n in order if n in merged}
    for n, d in merged.items():  # Deadlock, after the declared ones
        result.discoveries.setdefault(n, d)
    result.extra["liveness"] = {"graph_states": g.n, "graph_edges": int(g.dst.size),
                                "graph_bytes": g.nbytes, "record_bytes": rec.nbytes,
                                "fair_classes": list(rec.fair.names),
                                "check_s": round(time.perf_counter() - t0, 4)}
    result.elapsed_s += time.perf_counter() - t0
    return result


class Adjacency:
    """The graph's arrays as memoryviews of the numpy arrays: the loops below index them
    one at a time, and an item of a memoryview is a Python int (as fast as a list's), but
    the view shares the array's bytes — Python lists of them cost 40 bytes per edge more
    (a pointer and an int object), 6 GiB on 10^7 states with ten edges each."""

    def __init__(self, g):
        self.offsets = _view(g.offsets)
        self.dst = _view(g.dst)
        self.group = _view(g.group)
        self.enabled = _view(g.enabled)


def _view(a: np.ndarray) -> memoryview:
    return memoryview(np.ascontiguousarray(a))


class Target:
    """Where a violating behaviour can end: a fair stop, or any state of a fair component
    (``component(v)``; None for a state of no fair component)."""

    def __init__(self, region, entry, n):
        self.region = region        # bytearray: 1 for states of the waiting region
        self.entry = entry          # bytearray: 1 where the region is entered
        self.stops = set()          # fair stops in the reachable region
        self.fair_of = [-1] * n     # node -> its fair component's id, -1: none
        self.facts: dict = {}       # component id -> (taken, en_all, en_any)
        self.labels = None          # numpy node -> component id of the first split
        self._built: dict = {}      # component id -> FairComponent
        self._refined: dict = {}    # node -> FairComponent found by refinement

    def hit(self, v: int) -> bool:
        return v in self.stops or self.fair_of[v] != -1

    def add(self, fc) -> None:
        """A fair component found by refinement."""
        k = -2 - len(self._built) - len(self._refined)
        for v in fc.nodes:
            self.fair_of[v] = k
            self._refined[v] = fc

    def component(self, v: int):
        k = self.fair_of[v]
        if k == -1:
            return None
        if k < -1:
            return self._refined[v]
        fc = self._built.get(k)
        if fc is None:
            nodes = np.flatnonzero(self.labels == k).tolist()
            fc = self._built[k] = FairComponent(nodes, set(nodes), *self.facts[k])
        return fc


class FairComponent:
    def __init__(self, nodes, member, taken, en_all, en_any):
        self.nodes = nodes
        self.member = member  # set of node ids
        self.taken = taken    # classes taken by inner edges
        self.en_all = en_all  # classes enabled in every state
        self.en_any = en_any  # classes enabled in some state


def fair_target(g, adj, i: int, eventually: bool, fair):
    """The fair stops and fair components a behaviour violating property ``i`` can end
    in (a ``Target``), or None when there is none."""
    n = g.n
    awaited = g.flag(2 * i + 1)
    if eventually:
        entry = np.zeros(n, dtype=bool)
        entry[[v for v, _ in g.inits]] = True
        entry &= ~awaited
    else:
        entry = g.flag(2 * i) & ~awaited
    reach_mask = _reachable(g, ~awaited, entry)
    reach = np.flatnonzero(reach_mask).tolist()
    if not reach:
        return None
    target = Target(bytearray((~awaited).astype("uint8").tobytes()),
                    bytearray(entry.astype("uint8").tobytes()), n)
    target.stops = set(np.flatnonzero(
        reach_mask & (g.enabled & np.uint64(fair.all_mask) == 0)).tolist())
    mark = [0] * n
    for v in reach:
        mark[v] = 1
    target.labels, k = first_split(g, adj, reach, reach_mask, mark)
    work = _judge_first_split(g, target, k, fair)
    en = adj.enabled
    token = 1
    while work:  # components failing only strong fairness: split them again
        comp = work.pop()
        member = set(comp)
        taken, cyclic = 0, len(comp) > 1
        en_all, en_any = -1, 0
        for v in comp:
            en_all &= en[v]
            en_any |= en[v]
            for e in range(adj.offsets[v], adj.offsets[v + 1]):
                w = adj.dst[e]
                if w in member:
                    cyclic = cyclic or w == v
                    gr = adj.group[e]
                    if gr >= 0:
                        taken |= 1 << gr
        if not cyclic or en_all & fair.weak_mask & ~taken:
            continue  # no loop, or a weakly fair class always enabled and never taken
        bad = en_any & fair.strong_mask & ~taken
        if not bad:
            target.add(FairComponent(comp, member, taken, en_all, en_any))
            continue
        rest = [v for v in comp if not en[v] & bad]
        if rest:
            token += 1
            for v in rest:
                mark[v] = token
            work.extend(sccs(rest, adj, mark, token))
    if not target.stops and not any(k != -1 for k in target.fair_of):
        return None
    return target


#: the first split of the region uses scipy's strongly connected components (C, the same
#: components) when scipy is installed; False: always the Tarjan below
USE_SCIPY = True


def preload() -> bool:
    """Import scipy's strongly connected components now, when ``first_split`` would: a
    process forked afterwards starts with them (``kmc mutate``'s workers; the import
    takes 0.15 s, scipy's dependencies included). True when they are imported."""
    if not USE_SCIPY:
        return False
    try:
        import scipy.sparse.csgraph  # noqa: F401
    except ImportError:
        return False
    return True


def first_split(g, adj, reach, reach_mask, mark) -> tuple:
    """(labels, count): node -> index of its strongly connected component within the
    reachable region (-1 outside it)."""
    if USE_SCIPY:
        try:
            from scipy.sparse import csr_matrix
            from scipy.sparse.csgraph import connected_components
        except ImportError:
            pass
        else:
            n = g.n
            src = np.repeat(np.arange(n), np.diff(g.offsets))
            keep = reach_mask[src] & reach_mask[g.dst]
            m = csr_matrix((np.ones(int(keep.sum()), dtype=np.int8),
                            (src[keep], g.dst[keep])), shape=(n, n))
            _count, lab = connected_components(m, directed=True, connection="strong")
            ids, dense = np.unique(lab[reach_mask], return_inverse=True)
            labels = np.full(n, -1, dtype=np.int64)
            labels[reach_mask] = dense
            return labels, int(ids.size)
    labels = [-1] * g.n
    comps = sccs(reach, adj, mark, 1, labels)
    return np.array(labels, dtype=np.int64), len(comps)


def _judge_first_split(g, target, k, fair) -> list:
    """Judge every component of the first split at once (numpy): the fair ones are
    recorded in ``target``; returns (as node lists) those that fail only a strong
    condition."""
    lab = target.labels
    src = np.repeat(np.arange(g.n), np.diff(g.offsets))
    ls, ld = lab[src], lab[g.dst]
    inner = (ls >= 0) & (ls == ld)
    size = np.bincount(lab[lab >= 0], minlength=k)
    cyclic = size > 1
    cyclic[ls[inner & (src == g.dst)]] = True
    taken = np.zeros(k, dtype=np.uint64)
    ig = inner & (g.group >= 0)
    np.bitwise_or.at(taken, ls[ig], np.left_shift(np.uint64(1),
                                                  g.group[ig].astype(np.uint64)))
    nodes = np.flatnonzero(lab >= 0)
    en_all = np.full(k, np.iinfo(np.uint64).max, dtype=np.uint64)
    en_any = np.zeros(k, dtype=np.uint64)
    np.bitwise_and.at(en_all, lab[nodes], g.enabled[nodes])
    np.bitwise_or.at(en_any, lab[nodes], g.enabled[nodes])
    weak_ok = en_all & np.uint64(fair.weak_mask) & ~taken == 0
    strong_bad = en_any & np.uint64(fair.strong_mask) & ~taken
    ok = cyclic & weak_ok & (strong_bad == 0)
    fair_ids = np.flatnonzero(ok)
    for c in fair_ids.tolist():
        target.facts[c] = (int(taken[c]), int(en_all[c]), int(en_any[c]))
    if fair_ids.size:
        is_fair = np.zeros(k, dtype=bool)
        is_fair[fair_ids] = True
        fair_of = np.where((lab >= 0) & is_fair[np.maximum(lab, 0)], lab, -1)
        target.fair_of = fair_of.tolist()
    return [np.flatnonzero(lab == c).tolist()
            for c in np.flatnonzero(cyclic & weak_ok & (strong_bad != 0)).tolist()]


def _reachable(g, region, entry) -> np.ndarray:
    """Mask of the region states reachable from the entries (region states) through the
    region: a breadth-first search, one numpy step per level."""
    seen = entry & region
    frontier = np.flatnonzero(seen)
    offs, dst = g.offsets, g.dst
    while frontier.size:
        starts = offs[frontier]
        counts = offs[frontier + 1] - starts
        total = int(counts.sum())
        if not total:
            break
        first = np.cumsum(counts) - counts
        nb = dst[np.repeat(starts - first, counts) + np.arange(total)]
        nb = np.unique(nb[region[nb] & ~seen[nb]])
        seen[nb] = True
        frontier = nb
    return seen


def sccs(nodes, adj, mark, token, labels=None) -> list[list]:
    """Strongly connected components of the subgraph of nodes ``v`` with ``mark[v] ==
    token`` (Tarjan's algorithm with an explicit stack: no recursion limit). With
    ``labels``, ``labels[v]`` is set to the index of ``v``'s component."""
    offs, dst = adj.offsets, adj.dst
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    out: list = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        work = [[root, offs[root]]]
        while work:
            frame = work[-1]
            v, e = frame
            end = offs[v + 1]
            descended = False
            while e < end:
                w = dst[e]
                e += 1
                if mark[w] != token:
                    continue
                if w not in index:
                    frame[1] = e
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append([w, offs[w]])
                    descended = True
                    break
                if w in on_stack and index[w] < low[v]:
                    low[v] = index[w]
            if descended:
                continue
            work.pop()
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comp.sort()
                if labels is not None:
                    for w in comp:
                        labels[w] = len(out)
                out.append(comp)
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
    return out


def without_liveness(props, explorer: str) -> tuple[list, list]:
    """For an explorer that does not check liveness: (the other properties, the names
    of the liveness ones). Only liveness properties asked for: ExplorerError."""
    from kmc.explorers.errors import ExplorerError

    safety, live = split(props)
    names = [p.name for p in live]
    if live and not safety:
        raise ExplorerError(f"the {explorer} explorer does not check liveness properties "
                            f"({', '.join(names)}): use --explorer bfs or dfs")
    return safety, names
