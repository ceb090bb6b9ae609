"""The explored state graph on Spark, recorded on the executors for liveness checking.

``record_graph`` explores the model again, level by level, as RDDs partitioned by state
key, and records what ``explorers.graph.GraphRecorder`` records locally: per expanded
state its enabled fairness classes and liveness predicate bits (``attrs``: key ->
(enabled, flags)), and per successor one edge (``edges``: source key -> (index, successor
key, fairness class)), in successor order. The records stay on the executors; the driver
holds per-level counts only. An edge to a state that was not expanded (beyond
``max_depth``) is dropped, as locally, so node sets and edges equal the local graph's.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SparkGraph:
    attrs: object   # RDD key -> (enabled mask, predicate bits), one per expanded state
    edges: object   # RDD source key -> (successor index, successor key, class)
    inits: list     # (key, init index) of the expanded initial states
    n: int          # states
    m: int          # edges


def record_graph(sc, core, core_bc, props, parts, max_depth=None) -> SparkGraph:
    """Record the graph of ``core``'s model (``props``: its liveness properties)."""
    from kmc.explorers.errors import ExplorerError

    inits, seen = [], set()
    for ii, s in core.initial():
        k = core.rkey(s)
        if k not in seen:
            seen.add(k)
            inits.append((k, ii, s))
    frontier = sc.parallelize([(k, s) for k, _ii, s in inits], parts).cache()
    visited = frontier.keys().map(lambda k: (k, None)).partitionBy(parts).cache()
    levels_attrs, levels_edges = [], []
    expand = _expander(core_bc, len(props))
    depth = 1
    try:
        while True:
            rec = frontier.mapPartitions(expand).cache()
            levels_attrs.append(rec.map(lambda r: (r[0], (r[1], r[2]))))
            levels_edges.append(rec.flatMap(
                lambda r: [(r[0], (i, d, g)) for i, (d, g) in enumerate(r[3])]))
            if max_depth is not None and depth >= max_depth:
                break
            cands = rec.flatMap(lambda r: r[4]).reduceByKey(lambda a, b: a, parts)
            new = cands.subtractByKey(visited, parts).cache()
            if not new.count():
                break
            visited = visited.union(new.mapValues(lambda _s: None)) \
                .partitionBy(parts).cache()
            frontier = new
            depth += 1
    except Exception as e:  # a fault or an input declared fair: bad input, as locally
        said = [ln.split("ModelError:", 1)[1].strip() for ln in str(e).splitlines()
                if "ModelError:" in ln]
        if said:
            raise ExplorerError(said[0]) from None
        raise
    attrs = sc.union(levels_attrs).partitionBy(parts).cache()
    raw = sc.union(levels_edges)
    known = attrs.mapValues(lambda _v: None)
    edges = raw.map(lambda e: (e[1][1], (e[0], e[1][0], e[1][2]))).join(known, parts) \
        .map(lambda x: (x[1][0][0], (x[1][0][1], x[0], x[1][0][2]))) \
        .partitionBy(parts).cache()
    n, m = attrs.count(), edges.count()
    return SparkGraph(attrs, edges, [(k, ii) for k, ii, _s in inits], n, m)


def _expander(core_bc, nprops):
    def expand(it):
        from kmc.explorers.graph import predicate_flags
        from kmc.explorers.level import keyer
        from kmc.explorers.spark.level_tasks import core_of, settle_garbage
        from kmc.invariants.liveness import split
        from kmc.model.fairness import FairnessClasses

        core = core_of(core_bc)
        model = core.model
        fair = FairnessClasses(model)
        _safety, live = split(core.properties)
        assert len(live) == nprops
        flags = predicate_flags(live)
        keyed = keyer(core)  # record states: keys from field reprs, as locally
        rep = model.representative if core.symmetry else None
        within = model.within_boundary if core.bounded else None
        for k, s in it:
            mask, edges, succ = 0, [], []
            sp = keyed(s)[1]
            for a, t in model.successors(s):
                g = fair.group(a)
                if g >= 0:
                    mask |= 1 << g
                if within is not None and not within(t):
                    continue
                if rep is not None:
                    t = rep(t)
                tk = keyed(t, s, sp)[0]
                edges.append((tk, g))
                succ.append((tk, t))
            yield k, mask, flags(s, sp), edges, succ
        settle_garbage()
    return expand
