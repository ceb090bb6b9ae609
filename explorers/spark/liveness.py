"""Liveness on the Spark explorer: fair stops and fair components found on the executors
(a run of at most KMC_SPARK_DRIVER_GRAPH states is decided on the driver instead:
``liveness_driver``).

The same question as ``explorers.liveness`` (read it first), answered with RDDs over the
graph ``explorers.spark.graph`` records on the executors, for each liveness property:

1. the waiting region (states where the awaited predicate is false) and its entries;
2. the region states reachable from the entries (``liveness_scc.reachable``);
3. fair stops: reachable region states where no fair class is enabled;
4. strongly connected components of the reachable region (``liveness_scc.sccs``), each
   summarised with reduceByKey (classes taken by inner edges, enabled in all / in some
   of its states); the executors judge the summaries (weak and strong fairness) and the
   driver receives only the components that fail a strong condition alone, sent back
   for refinement: their states where an offending class is enabled are removed and the
   rest split again.

The driver holds the ids of the components to refine and, for a violation, what the
lasso needs (``explorers.spark.liveness_lasso``); how many states, edges or fair
components there are does not reach it. The verdict rule is the local one.
"""
from __future__ import annotations

import time

from kmc.explorers.spark.liveness_scc import reachable, restrict, sccs


class SparkTarget:
    """Where a violating behaviour of one property can end, as RDDs."""

    def __init__(self, region, entry, redges, stops, fair_of, facts):
        self.region = region    # key -> enabled mask, the waiting region
        self.entry = entry      # key -> None, where the region is entered
        self.redges = redges    # src -> dst, edges inside the region
        self.stops = stops      # key -> None, fair stops
        self.fair_of = fair_of  # key -> component id, states of fair components
        self.facts = facts      # RDD component id -> (taken, en_all, en_any)

    def hits(self, parts):
        return self.stops.union(self.fair_of.mapValues(lambda _c: None)).distinct(parts)


def fair_target(sc, graph, i: int, eventually: bool, fair, parts):
    """The ``SparkTarget`` of property ``i``, or None when no violation exists."""
    aw, tr = 1 << (2 * i + 1), 1 << (2 * i)
    region = graph.attrs.filter(lambda x: not x[1][1] & aw) \
        .mapValues(lambda v: v[0]).cache()
    if eventually:
        init_keys = {k for k, _ii in graph.inits}
        entry = region.filter(lambda x: x[0] in init_keys)
    else:
        entry = graph.attrs.filter(lambda x: x[1][1] & tr and not x[1][1] & aw)
    entry = entry.mapValues(lambda _v: None).cache()
    redges = restrict(graph.edges.mapValues(lambda e: e[1]),
                      region.mapValues(lambda _en: 0), parts)
    reach = reachable(entry, redges, parts)
    if not reach.count():
        return None
    reach_en = region.join(reach, parts).mapValues(lambda v: v[0]).cache()
    all_mask = fair.all_mask
    stops = reach_en.filter(lambda x: not x[1] & all_mask).mapValues(lambda _v: None) \
        .cache()
    fact_parts, fair_parts = [], []
    work = sccs(reach.mapValues(lambda _v: 0), redges, parts)
    while True:
        facts, bad = _judge(_summaries(work, reach_en, graph.edges, parts), fair)
        fact_parts.append(facts)
        fair_parts.append(work.map(lambda x: (x[1], x[0])).join(facts, parts)
                          .map(lambda x: (x[1][0], x[0])))
        if not bad:
            break
        rest = work.filter(lambda x, bad=bad: x[1] in bad).join(reach_en, parts) \
            .filter(lambda x, bad=bad: not x[1][1] & bad[x[1][0]]) \
            .mapValues(lambda v: v[0]).cache()
        if not rest.count():
            break
        work = sccs(rest, redges, parts)
    fair_of = sc.union(fair_parts).distinct(parts).cache()
    if not stops.count() and not fair_of.count():
        return None
    # no partitioner: lookup() then scans instead of hashing the key on the driver
    facts = sc.union(fact_parts).cache()
    return SparkTarget(region, entry, redges, stops, fair_of, facts)


def _judge(rows, fair):
    """(fair, bad) from the summaries ``rows``, judged on the executors: ``fair`` the
    RDD id -> (taken, en_all, en_any) of the fair components, ``bad`` {id: offending
    classes} of those that fail only strong fairness (to be refined). A component with
    a weakly fair class enabled everywhere and never taken is neither. Only ``bad``
    reaches the driver: how many fair components there are does not matter to it."""
    weak, strong = fair.weak_mask, fair.strong_mask
    kept = rows.filter(lambda r: not r[2] & weak & ~r[1]).cache()
    facts = kept.filter(lambda r: not r[3] & strong & ~r[1]) \
        .map(lambda r: (r[0], (r[1], r[2], r[3]))).cache()
    bad = dict(kept.map(lambda r: (r[0], r[3] & strong & ~r[1]))
               .filter(lambda x: x[1]).collect())
    return facts, bad


def _summaries(comp, enabled, edges, parts):
    """RDD of (id, taken, en_all, en_any), one for each cyclic component of ``comp`` (key -> id):
    those with an inner edge (a self-loop for a single state)."""
    taken = edges.join(comp, parts).map(lambda x: (x[1][0][1], (x[1][1], x[1][0][2]))) \
        .join(comp, parts).filter(lambda x: x[1][0][0] == x[1][1]) \
        .map(lambda x: (x[1][1], 1 << x[1][0][1] if x[1][0][1] >= 0 else 0)) \
        .reduceByKey(lambda a, b: a | b, parts)
    en = comp.join(enabled, parts).map(lambda x: (x[1][0], (x[1][1], x[1][1]))) \
        .reduceByKey(lambda a, b: (a[0] & b[0], a[1] | b[1]), parts)
    return taken.join(en, parts).map(lambda x: (x[0], x[1][0], x[1][1][0], x[1][1][1]))


def finish(sc, core, core_bc, result, max_depth=None, driver_max=None):
    """Decide the liveness properties of ``core`` on Spark and merge their lassos into
    ``result`` (declaration order kept). Liveness stays unknown when the run stopped
    before its graph was complete, other than at ``max_depth``. A run of at most
    ``driver_max`` states (default ``KMC_SPARK_DRIVER_GRAPH``) is decided on the
    driver (``liveness_driver``)."""
    from kmc.explorers.spark import liveness_driver
    from kmc.explorers.spark.graph import record_graph
    from kmc.explorers.spark.liveness_lasso import spark_lasso
    from kmc.invariants.liveness import EVENTUALLY, split
    from kmc.model.fairness import FairnessClasses
    from kmc.model.result import Discovery

    _safety, live = split(core.properties)
    if not live:
        return result
    if not (result.complete or result.stopped_by == "max_depth"):
        result.extra["liveness"] = {"not_decided": "the run stopped before its graph "
                                    f"was complete ({result.stopped_by})"}
        return result
    t0 = time.perf_counter()
    fair = FairnessClasses(core.model)
    bound = max_depth if result.stopped_by == "max_depth" else None
    if driver_max is None:
        driver_max = liveness_driver.DRIVER_GRAPH_MAX
    if result.unique_states <= driver_max:
        found, n, m = liveness_driver.decide(core, live, bound)
        return _merge(result, core, found, fair, t0, "driver", n, m)
    parts = max(2, sc.defaultParallelism)
    before = set(sc._jsc.getPersistentRDDs().keys())
    found = {}
    try:
        graph = record_graph(sc, core, core_bc, live, parts, bound)
        for i, prop in enumerate(live):
            target = fair_target(sc, graph, i, prop.kind == EVENTUALLY, fair, parts)
            if target is not None:
                trace, detail = spark_lasso(sc, core, fair, graph, target, prop, parts)
                found[prop.name] = Discovery(prop.name, prop.kind, trace, detail)
    finally:  # every RDD this check cached, the graph's included
        for rid, rdd in list(sc._jsc.getPersistentRDDs().items()):
            if rid not in before:
                rdd.unpersist(False)
    return _merge(result, core, found, fair, t0, "spark", graph.n, graph.m)


def _merge(result, core, found, fair, t0, on, states, edges):
    """``result`` with the lassos ``found`` among its discoveries (declaration order,
    Deadlock after the declared ones) and, in ``extra``, where the check ran (``on``)
    and the size of its graph."""
    order = [p.name for p in core.properties]
    merged = {**result.discoveries, **found}
    result.discoveries = {n: merged[n] for n in order if n in merged}
    for n, d in merged.items():
        result.discoveries.setdefault(n, d)
    result.extra["liveness"] = {"graph_states": states, "graph_edges": edges,
                                "fair_classes": list(fair.names), "on": on,
                                "check_s": round(time.perf_counter() - t0, 4)}
    result.elapsed_s += time.perf_counter() - t0
    return result
