"""The explored state graph around a counterexample, small enough to read.

A scenario whose reachable graph has at most ``limit`` states is drawn whole; a larger
one is cut to the neighbourhood of the counterexample: the path plus a few successors of
each of its states (the branches not taken), with a count of what was left out. The
graph is built by expanding the model through the Model contract (init_states,
successors, within_boundary, properties), never from explorer internals.
"""
from __future__ import annotations

from collections import deque

import networkx as nx

from kmc.invariants.properties import ALWAYS, QUIESCENT

FULL = "full"
NEIGHBOURHOOD = "neighbourhood"


def state_graph(model, path_states: list, *, limit: int = 60, prop: str | None = None
                ) -> nx.DiGraph:
    """Nodes are states, with ``initial``, ``on_path``, ``step`` (position on the
    counterexample, or -1), ``violates`` (names of the always/quiescent properties the
    state violates), ``violating`` (it violates ``prop``, or any property when ``prop`` is
    None) and ``layer`` (drawing column); edges carry ``label`` and ``on_path``.
    ``graph['mode']`` is FULL or NEIGHBOURHOOD."""
    full = _explore(model, limit)
    g = nx.DiGraph()
    if full is not None:
        g.graph.update(mode=FULL, omitted=0)
        for s, d in full["depth"].items():
            g.add_node(s, layer=d)
        for s, t, label in full["edges"]:
            g.add_edge(s, t, label=label, on_path=False)
        inits = full["inits"]
    else:
        _neighbourhood(model, g, path_states, limit)
        inits = [path_states[0]]
    _annotate(model, g, path_states, inits, prop)
    return g


def _explore(model, limit):
    """BFS over the whole reachable graph, or None as soon as it has more than ``limit``
    states."""
    depth, edges, inits = {}, [], []
    q = deque()
    for s in model.init_states():
        if model.within_boundary(s) and s not in depth:
            depth[s] = 0
            inits.append(s)
            q.append(s)
    while q:
        s = q.popleft()
        for a, t in model.successors(s):
            if not model.within_boundary(t):
                continue
            if t not in depth:
                if len(depth) >= limit:
                    return None
                depth[t] = depth[s] + 1
                q.append(t)
            edges.append((s, t, model.format_action(a)))
    return {"depth": depth, "edges": edges, "inits": inits}


def _neighbourhood(model, g, path, limit):
    g.graph.update(mode=NEIGHBOURHOOD, omitted=0)
    for i, s in enumerate(path):
        if s not in g:
            g.add_node(s, layer=i)
    budget = max(0, limit - g.number_of_nodes())
    per_step = max(1, budget // max(1, len(path)))
    omitted = 0
    for i, s in enumerate(path):
        taken = 0
        for a, t in model.successors(s):
            if not model.within_boundary(t) or t == s:
                continue
            if t in g:
                g.add_edge(s, t, label=model.format_action(a), on_path=False)
                continue
            if taken >= per_step or g.number_of_nodes() >= limit:
                omitted += 1
                continue
            taken += 1
            g.add_node(t, layer=i + 1)
            g.add_edge(s, t, label=model.format_action(a), on_path=False)
        g.nodes[s]["omitted"] = omitted - g.graph["omitted"]
        g.graph["omitted"] = omitted


def _annotate(model, g, path, inits, prop):
    props = [p for p in model.properties() if p.kind in (ALWAYS, QUIESCENT)]
    has_quiescent = any(p.kind == QUIESCENT for p in props)
    for s in g:
        d = g.nodes[s]
        d.setdefault("omitted", 0)
        d.update(initial=False, on_path=False, step=-1)
        settled = has_quiescent and _quiescent(model, s)
        bad = [p.name for p in props if (p.kind == ALWAYS or settled) and not p.check(s)]
        d["violates"] = ",".join(bad)  # a string: GraphML has no list attributes
        d["violating"] = prop in bad if prop is not None else bool(bad)
    for s in inits:
        g.nodes[s]["initial"] = True
    for i, s in enumerate(path):
        g.nodes[s].update(on_path=True, step=i)
        if i and g.has_edge(path[i - 1], s):
            g.edges[path[i - 1], s]["on_path"] = True
        elif i:
            g.add_edge(path[i - 1], s, label="", on_path=True)


def _quiescent(model, s) -> bool:
    return all(model.is_fault(a) for a, _t in model.successors(s))
