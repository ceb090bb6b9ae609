"""Reachability and strongly connected components as RDD algorithms (label propagation).

Every function takes and returns RDDs keyed by state key; nothing but counts reaches the
driver.

- ``reachable``: the states reachable from ``start`` over ``edges``, one propagation step
  (a join) per breadth-first level.
- ``sccs``: the colouring algorithm. Each remaining state starts with its own key as its
  colour; colours propagate forward along edges keeping the minimum, until nothing
  changes. A state whose colour is its own key is the root of its colour (the smallest
  key among its ancestors); the states of that colour that reach the root backwards,
  within the colour, are the root's strongly connected component. Those are removed and
  the rest is coloured again. A component's id is its smallest key, so the result does
  not depend on partitioning or scheduling. States on no cycle are trimmed first (they
  are trivial components, never fair): few rounds on mostly acyclic graphs. ``verts``
  carries a group per state: edges between groups are ignored (how a refinement splits
  several components at once).
"""
from __future__ import annotations


def reachable(start, edges, parts):
    """RDD key -> None of the states reachable from ``start`` (RDD key -> anything)
    along ``edges`` (RDD src -> dst)."""
    seen = start.mapValues(lambda _v: None).distinct(parts).cache()
    frontier = seen
    while True:
        nxt = edges.join(frontier, parts).map(lambda x: (x[1][0], None)) \
            .distinct(parts).subtractByKey(seen, parts).cache()
        if not nxt.count():
            return seen
        seen = seen.union(nxt).partitionBy(parts).cache()
        frontier = nxt


def restrict(edges, verts, parts):
    """The edges (src -> dst) between states of ``verts`` (key -> group) with one group
    at both ends."""
    return edges.join(verts, parts).map(lambda x: (x[1][0], (x[0], x[1][1]))) \
        .join(verts, parts).filter(lambda x: x[1][0][1] == x[1][1]) \
        .map(lambda x: (x[1][0][0], x[0])).partitionBy(parts).cache()


def trim(verts, edges, parts):
    """(states, inner edges): ``verts`` without the states that lie on no cycle of the
    subgraph found by trimming, repeatedly dropping states with no inner edge in or no
    inner edge out (a path goes in a few passes; colouring takes a round per state)."""
    size = verts.count()
    while True:
        inner = restrict(edges, verts, parts)
        ends = inner.map(lambda e: (e[0], 1)).union(inner.map(lambda e: (e[1], 2))) \
            .reduceByKey(lambda a, b: a | b, parts)
        kept = verts.join(ends, parts).filter(lambda x: x[1][1] == 3) \
            .mapValues(lambda v: v[0]).cache()
        n = kept.count()
        if n == size:
            return verts, inner
        verts, size = kept, n


def sccs(verts, edges, parts):
    """RDD key -> component id (the component's smallest key) for the states of
    ``verts`` (key -> group) that lie on a cycle, over ``edges`` (src -> dst) within a
    group; states on no cycle (trivial components, never fair) are left out."""
    remaining = verts.partitionBy(parts).cache()
    done = []
    while True:
        remaining, inner = trim(remaining, edges, parts)
        if not remaining.count():
            break
        back = inner.map(lambda e: (e[1], e[0])).partitionBy(parts).cache()
        colour = remaining.map(lambda x: (x[0], x[0])).partitionBy(parts).cache()
        while True:
            sent = inner.join(colour, parts).map(lambda x: (x[1][0], x[1][1]))
            new = colour.union(sent).reduceByKey(min, parts).cache()
            changed = new.join(colour, parts).filter(lambda x: x[1][0] != x[1][1]).count()
            colour = new
            if not changed:
                break
        comp = colour.filter(lambda x: x[0] == x[1]).cache()
        frontier = comp
        while True:
            # predecessors of the frontier that share its colour and are not in yet
            cand = back.join(frontier, parts).map(lambda x: (x[1][0], x[1][1])) \
                .join(colour, parts).filter(lambda x: x[1][0] == x[1][1]) \
                .mapValues(lambda v: v[0]).distinct(parts).subtractByKey(comp, parts) \
                .cache()
            if not cand.count():
                break
            comp = comp.union(cand).partitionBy(parts).cache()
            frontier = cand
        done.append(comp)
        remaining = remaining.subtractByKey(comp, parts).cache()
    if not done:
        return verts.context.parallelize([], parts)
    return verts.context.union(done).partitionBy(parts).cache()
