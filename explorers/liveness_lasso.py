"""A violating behaviour as a lasso: the shortest stem, then a fair loop.

The stem is a shortest path, over the explored graph, from an initial state to a state of
a fair component or to a fair stop (``explorers.liveness``) that enters the waiting
region and stays in it: a breadth-first search over (state, phase) pairs, phase 0 before
the region is entered (any edge; leads_to only), phase 1 after (region edges only). Ties
are broken by node id (the rank of the state key) and successor order, so every explorer
that explored the same graph returns the same lasso.

The loop starts and ends at the stem's last state. In a fair component it is built
greedily: from where it is, the nearest step that discharges a pending obligation (take a
weakly fair class enabled everywhere in the component, take a strongly fair class enabled
somewhere in it, visit a state that disables — or take — a weakly fair class enabled
only in some states), then the shortest way back. At a fair stop the loop is the stop
itself (the behaviour stutters there: ``loop_start`` is the last index).
"""
from __future__ import annotations

from collections import deque

from kmc.model.lasso import Lasso
from kmc.model.trace import ReplayError


def lasso_for(rec, g, adj, i, prop, target):
    """(Lasso trace, detail dict) for property ``i`` of the recorder ``rec``."""
    stem, switch = _stem(g, adj, target, prop.kind == "eventually")
    end = stem[-1][0]
    # a fair stop is the shorter lasso when the state also lies in a fair component
    comp = None if end in target.stops else target.component(end)
    loop = [] if comp is None else _loop(adj, comp, end, rec.fair)
    steps = stem + loop
    init_index = next(ii for v, ii in g.inits if v == stem[0][0])
    keys = [g.key(v) for v, _ in steps]
    groups = [gr for _, gr in steps[1:]]
    trace = rebuild(rec.core, rec.fair, init_index, keys, groups, len(stem) - 1, prop,
                    switch)
    detail = {"entered_at": switch, "loop_start": trace.loop_start,
              "loop_end": len(trace) - 1,
              "loop": "stutter" if comp is None else "cycle",
              "fair_taken": rec.fair.describe(0 if comp is None else comp.taken),
              "fair_enabled": rec.fair.describe(adj.enabled[end] if comp is None
                                                else comp.en_any)}
    return trace, detail


def _stem(g, adj, target, eventually: bool):
    """[(node, class of the edge into it)], and the index where the region is entered."""
    parent = {}  # code -> (parent code, edge class); code = node * 2 + phase
    q = deque()
    entry, region = target.entry, target.region
    for v, _ in sorted(g.inits):
        if eventually:
            if entry[v] and v * 2 + 1 not in parent:
                parent[v * 2 + 1] = (-1, None)
                q.append(v * 2 + 1)
        elif v * 2 not in parent:
            parent[v * 2] = (-1, None)
            q.append(v * 2)
    found = None
    offs, dst, grp = adj.offsets, adj.dst, adj.group
    while q and found is None:
        code = q.popleft()
        v, phase = divmod(code, 2)
        if phase == 0 and entry[v] and v * 2 + 1 not in parent:
            parent[v * 2 + 1] = (code, "enter")
            if target.hit(v):
                found = v * 2 + 1
                break
            q.appendleft(v * 2 + 1)  # the same depth: explored before this level's rest
        if phase == 1 and target.hit(v):
            found = code
            break
        for e in range(offs[v], offs[v + 1]):
            w = dst[e]
            if phase == 1 and not region[w]:
                continue
            c = w * 2 + phase
            if c not in parent:
                parent[c] = (code, grp[e])
                q.append(c)
    assert found is not None, "a reachable target has a stem"
    codes, code = [], found
    while code != -1:
        prev, how = parent[code]
        if how == "enter":  # the state itself, reached in phase 0
            prev, how = parent[prev]
        codes.append((code, how))
        code = prev
    codes.reverse()
    entered = next(k for k, (c, _how) in enumerate(codes) if c % 2 == 1)
    return [(c // 2, how) for c, how in codes], entered


def _loop(adj, comp, start, fair):
    """[(node, edge class)] from ``start`` back to ``start`` inside ``comp`` satisfying
    the component's fairness obligations (module docstring)."""
    en = adj.enabled
    must = (comp.en_all & fair.weak_mask) | (comp.en_any & fair.strong_mask)
    either = comp.en_any & ~comp.en_all & fair.weak_mask  # disable it or take it
    pending_take, pending_either = must, _visit(en[start], either)
    path, cur = [], start
    while pending_take or pending_either:
        seg = _nearest(adj, comp, cur, pending_take, pending_either)
        for v, gr in seg:
            if gr is not None and gr >= 0:
                pending_take &= ~(1 << gr)
                pending_either &= ~(1 << gr)
            pending_either = _visit(en[v], pending_either)
        path += seg
        cur = seg[-1][0]
    if cur != start or not path:
        path += _shortest(adj, comp, cur, start)
    return path


def _visit(enabled: int, pending: int) -> int:
    """Pending "disable or take" classes left after visiting a state."""
    return pending & enabled


def _nearest(adj, comp, cur, take, either):
    """The shortest path from ``cur`` inside ``comp`` ending with a step that discharges
    an obligation: an edge of a class in ``take | either``, or a state disabling a class
    of ``either``."""
    offs, dst, grp, en = adj.offsets, adj.dst, adj.group, adj.enabled
    want = take | either
    parent = {cur: None}
    q = deque([cur])
    while q:
        v = q.popleft()
        if v != cur and either & ~en[v]:
            return _path(parent, v)
        for e in range(offs[v], offs[v + 1]):
            w = dst[e]
            if w not in comp.member:
                continue
            gr = grp[e]
            if gr >= 0 and want >> gr & 1:
                return _path(parent, v) + [(w, gr)]
            if w not in parent:
                parent[w] = (v, gr)
                q.append(w)
    raise AssertionError("a fair component discharges its obligations")


def _shortest(adj, comp, src, dst_node):
    """Shortest non-empty path inside ``comp`` from ``src`` to ``dst_node``."""
    offs, dst, grp = adj.offsets, adj.dst, adj.group
    parent: dict = {}
    q = deque()
    for e in range(offs[src], offs[src + 1]):
        w = dst[e]
        if w in comp.member and w not in parent:
            parent[w] = (src, grp[e]) if w != src else (None, grp[e])
            if w == dst_node:
                return [(w, grp[e])]
            q.append(w)
    while q:
        v = q.popleft()
        for e in range(offs[v], offs[v + 1]):
            w = dst[e]
            if w in comp.member and w not in parent:
                parent[w] = (v, grp[e])
                if w == dst_node:
                    out = [(w, grp[e])]
                    while v != src:
                        pv, pg = parent[v]
                        out.append((v, pg))
                        v = pv
                    out.reverse()
                    return out
                q.append(w)
    raise AssertionError("a component is strongly connected")


def _path(parent, v):
    out = []
    while parent[v] is not None:
        pv, gr = parent[v]
        out.append((v, gr))
        v = pv
    out.reverse()
    return out


def rebuild(core, fair, init_index, keys, groups, loop_start, prop, entered_at) -> Lasso:
    """The lasso's states and actions, regenerated through the model: at each step the
    action whose successor has the recorded key and whose fairness class is the recorded
    edge's (so the loop shows the fair action it relies on). ``loop_start``: the index
    of the loop's first state in ``keys``; ``prop`` and ``entered_at`` (where the lasso
    starts waiting): what ``explorers.rebuilt`` confirms. The result is a concrete
    lasso: its last state is ``states[loop_start]`` itself (``close``)."""
    from kmc.explorers.rebuilt import rebuilt

    model, keys = core.model, list(keys)

    def accept_from(offset):
        def accept(step, action, nxt):
            return fair.group(action) == groups[offset + step - 1] and \
                (not core.bounded or model.within_boundary(nxt))
        return accept

    def make():
        t = Lasso.from_keys(model, init_index, keys, core.key, accept_from(0))
        t.loop_start = loop_start
        return close(t, lambda: t.follow_keys(model, keys[loop_start:], core.key,
                                              accept_from(loop_start)))
    return rebuilt(core, prop, prop.name, prop.kind, make, entered_at)


#: times a loop may be gone round before its lasso is given up (``close``)
MAX_ROUNDS = 1 << 16


def close(t: Lasso, again) -> Lasso:
    """``t`` with a loop that closes on the concrete state. Under symmetry the explored
    loop runs between representatives: the rebuilt path ends at an image of the loop's
    first state, not necessarily the state itself. Going round again (``again()``
    appends one more round) maps it by the same permutation again, so within the orbit's
    size of rounds a round ends at a state where an earlier round ended: the loop then
    starts there (the rounds before it join the stem)."""
    if t.stutters or t.last == t.states[t.loop_start]:
        return t
    ends = {t.states[t.loop_start]: t.loop_start}
    while t.last not in ends:
        if len(ends) > MAX_ROUNDS:
            raise ReplayError(f"the loop from step {t.loop_start} does not close on its "
                              f"first state after {MAX_ROUNDS} rounds", len(t) - 1)
        ends[t.last] = len(t) - 1
        again()
    t.loop_start = ends[t.last]
    return t
