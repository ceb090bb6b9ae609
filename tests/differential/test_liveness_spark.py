"""The Spark explorer decides liveness on the executors (explorers/spark/liveness.py) and
gives BFS's answers on the pinned liveness models: the same verdicts and the very same
lasso (stem, loop start and actions), since its stem search and loop are chosen on the
graph alone, as locally. One embedded local[2] SparkContext serves the module."""
from __future__ import annotations

import pytest

from kmc.api import check

pytestmark = pytest.mark.slow

# the small pinned liveness cases of the suite (liveness-counter.*, liveness-lossy.*);
# every Spark step is a job, so the larger ones (Peterson, Kafka) are left to the suite
CASES = [("lossy", "strong"), ("lossy", "weak"), ("lossy", "none"), ("counter", "weak")]


def _lassos(result):
    return {n: (d.kind, d.trace.init_index, d.trace.action_indices, d.trace.loop_start,
                d.detail) for n, d in result.discoveries.items()}


@pytest.mark.parametrize("scenario,variant", CASES)
def test_spark_decides_liveness_as_bfs(sc, scenario, variant):
    b = check(scenario, variant)
    s = check(scenario, variant, explorer="spark")
    assert s.complete and b.complete
    assert s.verdicts() == b.verdicts()
    assert _lassos(s) == _lassos(b)
    assert s.extra["liveness"]["on"] == "spark"
    assert s.extra["liveness"]["graph_states"] == b.extra["liveness"]["graph_states"]
    assert s.extra["liveness"]["graph_edges"] == b.extra["liveness"]["graph_edges"]


def test_spark_liveness_under_a_depth_bound(sc):
    # the graph is cut at the bound on both: a lasso inside it is found, else unknown
    for depth in (1, 2):
        b = check("lossy", "weak", max_depth=depth)
        s = check("lossy", "weak", max_depth=depth, explorer="spark")
        assert s.verdicts() == b.verdicts()
        assert _lassos(s) == _lassos(b)
