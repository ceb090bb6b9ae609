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
components again (the Emerson-Lei refinement), until each part is fair or acyclic.

Components come from an iterative Tarjan (no recursion, any graph size). The verdict: a
lasso found -> violated; none and the run was complete -> holds; else unknown (a state
cut off by a bound is not a stop, and a loop through states never expanded cannot be
seen). ``explorers.liveness_lasso`` turns the finding into a shortest-stem lasso.
"""
from __future__ import annotations

import time

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
    """The graph's arrays as Python lists (the loops below index them one at a time)."""

    def __init__(self, g):
        self.offsets = g.offsets.tolist()
        self.dst = g.dst.tolist()
        self.group = g.group.tolist()
        self.enabled = g.enabled.tolist()


class Target:
    """Where a violating behaviour can end: a fair stop (``component`` None) or any state
    of a fair component."""

    def __init__(self, region, entry_nodes, components):
        self.region = region            # bytearray: 1 for states of the waiting region
        self.entry = entry_nodes        # bytearray: 1 where the region is entered
        self.components = components    # node -> FairComponent, for nodes of fair ones
        self.stops = set()              # fair stops in the reachable region

    def hit(self, v: int) -> bool:
        return v in self.stops or v in self.components


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
    region = bytearray((~awaited).astype("uint8").tobytes())
    if eventually:
        entry = bytearray(n)
        for v, _ in g.inits:
            entry[v] = region[v]
    else:
        entry = bytearray((g.flag(2 * i) & ~awaited).astype("uint8").tobytes())
    reach = _reachable(adj, region, [v for v in range(n) if entry[v]])
    if not reach:
        return None
    target = Target(region, entry, {})
    en, fair_all = adj.enabled, fair.all_mask
    target.stops = {v for v in reach if not en[v] & fair_all}
    mark = [0] * n
    for v in reach:
        mark[v] = 1
    work = [c for c in sccs(reach, adj, mark, 1)]
    token = 1
    while work:
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
            fc = FairComponent(comp, member, taken, en_all, en_any)
            for v in comp:
                target.components[v] = fc
            continue
        rest = [v for v in comp if not en[v] & bad]
        if rest:
            token += 1
            for v in rest:
                mark[v] = token
            work.extend(sccs(rest, adj, mark, token))
    if not target.stops and not target.components:
        return None
    return target


def _reachable(adj, region, sources) -> list:
    """Region states reachable from ``sources`` (region states) through the region."""
    seen = bytearray(len(region))
    out = []
    stack = []
    for s in sources:
        if not seen[s]:
            seen[s] = 1
            stack.append(s)
    offs, dst = adj.offsets, adj.dst
    while stack:
        v = stack.pop()
        out.append(v)
        for e in range(offs[v], offs[v + 1]):
            w = dst[e]
            if region[w] and not seen[w]:
                seen[w] = 1
                stack.append(w)
    out.sort()
    return out


def sccs(nodes, adj, mark, token) -> list[list]:
    """Strongly connected components of the subgraph of nodes ``v`` with ``mark[v] ==
    token`` (Tarjan's algorithm with an explicit stack: no recursion limit)."""
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
                out.append(comp)
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
    return out


def without_liveness(props, explorer: str) -> tuple[list, list]:
    """For an explorer that does not check liveness (Spark): (the other properties, the
    names of the liveness ones). Only liveness properties asked for: ExplorerError."""
    from kmc.explorers.errors import ExplorerError

    safety, live = split(props)
    names = [p.name for p in live]
    if live and not safety:
        raise ExplorerError(f"the {explorer} explorer does not check liveness properties "
                            f"({', '.join(names)}): use --explorer bfs or dfs")
    return safety, names
