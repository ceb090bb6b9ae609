"""The lasso of a violation found on Spark: the same lasso as the local explorers.

The stem is the local one (``explorers.liveness_lasso``): a breadth-first search over
(state, phase) pairs whose ties are broken by key order and successor order. Its depth
``D`` is found on the executors, one join per level; the driver then collects only the
states within ``D`` steps of that search (their keys, flags and edges) and runs the local
search on them: a search that stops at depth ``D`` never looks further, so it chooses the
stem the local explorers choose on the whole graph. The loop is built by the local code
on the one fair component the stem ends in (its states and inner edges are collected);
a fair stop needs none. The driver thus holds the stem's neighbourhood and one component,
not the graph.
"""
from __future__ import annotations

from types import SimpleNamespace

from kmc.explorers.liveness import FairComponent
from kmc.explorers.liveness_lasso import _loop, _stem, rebuild


def spark_lasso(sc, core, fair, graph, target, prop, parts):
    """(Lasso trace, detail dict) of ``target`` (``spark.liveness.SparkTarget``), the
    target of the liveness property ``prop``."""
    eventually = prop.kind == "eventually"
    hits = target.hits(parts).cache()
    ball = _ball(sc, graph, target, hits, eventually, parts)
    stops = set(target.stops.join(ball, parts).keys().collect())
    hit = set(hits.join(ball, parts).keys().collect())
    entry = set(target.entry.join(ball, parts).keys().collect())
    region = dict(target.region.join(ball, parts).mapValues(lambda v: v[0]).collect())
    sub, keys = _subgraph(graph, ball, parts, graph.inits)
    mark = SimpleNamespace(entry=[k in entry for k in keys],
                           region=[k in region for k in keys],
                           hit=lambda v: keys[v] in hit)
    stem, switch = _stem(sub, sub, mark, eventually)
    hits.unpersist()
    end_key = keys[stem[-1][0]]
    steps = [(keys[v], gr) for v, gr in stem]
    comp = None
    if end_key not in stops:
        cid = target.fair_of.lookup(end_key)[0]
        members = target.fair_of.filter(lambda x: x[1] == cid).mapValues(lambda _c: None)
        csub, ckeys = _subgraph(graph, members, parts, [])
        ids = list(range(len(ckeys)))
        comp = FairComponent(ids, set(ids), *target.facts.lookup(cid)[0])
        loop = _loop(csub, comp, ckeys.index(end_key), fair)
        steps += [(ckeys[v], gr) for v, gr in loop]
    init_index = next(ii for k, ii in graph.inits if k == steps[0][0])
    trace = rebuild(core, fair, init_index, [k for k, _ in steps],
                    [gr for _, gr in steps[1:]], len(stem) - 1, prop, switch)
    end = sub.enabled[stem[-1][0]]
    detail = {"entered_at": switch, "loop_start": trace.loop_start,
              "loop_end": len(trace) - 1,
              "loop": "stutter" if comp is None else "cycle",
              "fair_taken": fair.describe(0 if comp is None else comp.taken),
              "fair_enabled": fair.describe(end if comp is None else comp.en_any)}
    return trace, detail


def _ball(sc, graph, target, hits, eventually: bool, parts):
    """RDD key -> None of the states the local stem search visits: every (state, phase)
    pair within the depth where the first target is reached. A level is an RDD key ->
    phases (bit 0: before the region is entered, bit 1: inside it), partitioned as the
    graph, so every join but the one that gathers successors stays local."""
    inits = [k for k, _ii in graph.inits]
    bits = 2 if eventually else 1
    level = sc.parallelize([(k, bits) for k in inits], parts).partitionBy(parts)
    if eventually:
        level = level.join(target.entry, parts).mapValues(lambda v: v[0])
    # per state: 1 where the region is entered, 2 where a target lies
    marks = target.entry.mapValues(lambda _v: 1).union(hits.mapValues(lambda _v: 2)) \
        .reduceByKey(lambda a, b: a | b, parts).cache()
    every = graph.edges.mapValues(lambda e: e[1])
    seen = level = level.cache()
    while True:
        # a state entering the region is inside it at the same depth
        level = level.leftOuterJoin(marks, parts).mapValues(
            lambda v: v[0] | (2 if v[0] & 1 and (v[1] or 0) & 1 else 0)).cache()
        seen = seen.union(level).reduceByKey(lambda a, b: a | b, parts).cache()
        if level.join(marks, parts).filter(lambda x: x[1][0] & 2 and x[1][1] & 2).count():
            return seen.mapValues(lambda _b: None)
        nxt = every.join(level.filter(lambda x: x[1] & 1), parts) \
            .map(lambda x: (x[1][0], 1)) \
            .union(target.redges.join(level.filter(lambda x: x[1] & 2), parts)
                   .map(lambda x: (x[1][0], 2))) \
            .reduceByKey(lambda a, b: a | b, parts).leftOuterJoin(seen, parts) \
            .mapValues(lambda v: v[0] & ~(v[1] or 0)).filter(lambda x: x[1]).cache()
        if not nxt.count():
            raise AssertionError("a reachable target has a stem")
        level = nxt


def _subgraph(graph, nodes, parts, inits):
    """The subgraph induced by ``nodes`` (key -> anything), collected, in the local
    graph's form: node ids are key ranks, each state's edges in successor order.
    Returns (graph, keys)."""
    enabled = dict(graph.attrs.join(nodes, parts).mapValues(lambda v: v[0][0]).collect())
    keys = sorted(enabled)
    node = {k: v for v, k in enumerate(keys)}
    out: dict = {}
    for src, ((idx, dst, gr), _n) in graph.edges.join(nodes, parts).collect():
        if dst in node:
            out.setdefault(src, []).append((idx, node[dst], gr))
    offsets, dsts, groups = [0], [], []
    for k in keys:
        for _idx, d, gr in sorted(out.get(k, ())):
            dsts.append(d)
            groups.append(gr)
        offsets.append(len(dsts))
    g = SimpleNamespace(offsets=offsets, dst=dsts, group=groups,
                        enabled=[enabled[k] for k in keys],
                        inits=[(node[k], ii) for k, ii in inits if k in node])
    return g, keys
