"""Liveness of a small run on Spark: decided on the driver by the local explorer.

Every propagation step of the executors' algorithm (``explorers.spark.liveness``), and
every level of recording the graph for it (``explorers.spark.graph``), is a Spark job, so
a graph of a few thousand states takes tens of seconds there and a second or two on one
core. A run of at most ``KMC_SPARK_DRIVER_GRAPH`` states therefore has its liveness
properties decided by bfs on the driver: it explores the model again with those
properties alone (no invariant is checked twice), records the graph and decides it with
the local code (``explorers.liveness``). The answers are bfs's by construction, and the
executors' algorithm gives the same ones (tests/differential/test_liveness_spark.py).
"""
from __future__ import annotations

from kmc.explorers.spark.tuning import env_number

#: the largest run (states) whose liveness is decided on the driver, which holds its
#: graph (about 40 bytes a state and 9 an edge) and explores it again on one core;
#: 0: always on the executors
DRIVER_GRAPH_MAX = env_number("KMC_SPARK_DRIVER_GRAPH", 50_000, int)


def decide(core, live, max_depth=None) -> tuple[dict, int, int]:
    """({property name: Discovery}, graph states, graph edges) of the liveness
    properties ``live`` of ``core``'s model, explored on the driver within
    ``max_depth``."""
    from kmc.explorers.bfs import bfs
    from kmc.explorers.core import Core

    local = Core(core.model, symmetry=core.symmetry, properties=live)
    r = bfs(core.model, core=local, max_depth=max_depth)
    lv = r.extra["liveness"]  # its only properties are ``live``, without Deadlock
    return r.discoveries, lv["graph_states"], lv["graph_edges"]
