"""The Spark explorer decides liveness on the executors (explorers/spark/liveness.py) and
gives BFS's answers on the pinned liveness models: the same verdicts and the very same
lasso (stem, loop start and actions), since its stem search and loop are chosen on the
graph alone, as locally. A run of at most KMC_SPARK_DRIVER_GRAPH states has its
liveness decided on the driver instead, by bfs (explorers/spark/liveness_driver.py),
with the same answers; ``driver_level_max=0`` (nothing on the driver) keeps every
graph here on the executors. The tests' embedded local[2] SparkContext (tests/conftest.py)
runs them."""
from __future__ import annotations

import pytest

from kmc.api import check

pytestmark = pytest.mark.slow

# small pinned liveness cases of the suite (liveness-lossy.strong and .weak,
# liveness-offline-delete.kip516): every propagation step is a Spark job, so the larger
# ones (Peterson: 14-19 s each, offline-delete legacy: 9 s) are left out; the weak lossy
# channel, the same model's other fairness, is in the full tier (`-m full`)
CASES = [("lossy", "strong", {}), ("lossy", "weak", {}),
         ("offline-delete", "kip516", {"liveness": True})]
FULL_TIER = {("lossy", "weak")}


def _lassos(result):
    return {n: (d.kind, d.trace.init_index, d.trace.action_indices,
                getattr(d.trace, "loop_start", None), d.detail)
            for n, d in result.discoveries.items()}


@pytest.mark.parametrize("scenario,variant,params", [
    pytest.param(*c, marks=[pytest.mark.full] if c[:2] in FULL_TIER else []) for c in CASES])
def test_spark_decides_liveness_as_bfs(sc, scenario, variant, params):
    b = check(scenario, variant, params)
    s = check(scenario, variant, params, explorer="spark", driver_level_max=0)
    assert s.complete and b.complete
    assert s.verdicts() == b.verdicts()
    assert _lassos(s) == _lassos(b)
    assert s.extra["liveness"]["on"] == "spark"
    assert s.extra["liveness"]["graph_states"] == b.extra["liveness"]["graph_states"]
    assert s.extra["liveness"]["graph_edges"] == b.extra["liveness"]["graph_edges"]


@pytest.mark.full  # ~14 s; the unbounded runs of the same model above stay in the default tier
def test_spark_liveness_under_a_depth_bound(sc):
    # the graph is cut at the bound on both: a lasso inside it is found, else unknown
    for depth in (2,):
        b = check("lossy", "weak", max_depth=depth)
        s = check("lossy", "weak", max_depth=depth, explorer="spark", driver_level_max=0)
        assert s.verdicts() == b.verdicts()
        assert _lassos(s) == _lassos(b)


# random graphs of tests/unit/test_liveness_random.py with a strongly fair class (the
# refinement's path), both kinds, violated and holding; every propagation step is a Spark
# job (6-12 s a graph here), so two more violated ones are in the full tier
RANDOM_SEEDS = (6, 95)
RANDOM_SEEDS_FULL = (58, 94)


@pytest.mark.parametrize("seed", [
    *RANDOM_SEEDS, *(pytest.param(s, marks=pytest.mark.full) for s in RANDOM_SEEDS_FULL)])
def test_spark_decides_random_graphs_as_bfs(sc, seed):
    from unit.test_liveness_random import Random, brute_force

    m = Random(seed)
    b = check(m)
    s = check(Random(seed), explorer="spark", driver_level_max=0)
    assert s.verdicts() == b.verdicts()
    assert (s.verdict("L") == "violated") == brute_force(m)
    assert _lassos(s) == _lassos(b)


def test_a_small_graph_is_decided_on_the_driver_with_the_same_answers(sc, monkeypatch):
    """The cases above and two random graphs, at the default settings: decided on the
    driver, with BFS's verdicts, lassos and graph sizes. A run one state over the
    setting goes to the executors."""
    from kmc.explorers.spark import liveness_driver
    from unit.test_liveness_random import Random

    runs = [(lambda c=c, **kw: check(*c, **kw)) for c in CASES] + \
        [(lambda seed=seed, **kw: check(Random(seed), **kw)) for seed in (6, 94)]
    for run in runs:
        b, s = run(), run(explorer="spark")
        assert s.extra["liveness"]["on"] == "driver"
        assert s.verdicts() == b.verdicts()
        assert _lassos(s) == _lassos(b)
        for n in ("graph_states", "graph_edges"):
            assert s.extra["liveness"][n] == b.extra["liveness"][n]
    one = check(Random(6))  # a run of one state: 0 sends it to the executors
    assert one.unique_states == 1
    for limit, on in ((1, "driver"), (0, "spark")):
        monkeypatch.setattr(liveness_driver, "DRIVER_GRAPH_MAX", limit)
        assert check(Random(6), explorer="spark").extra["liveness"]["on"] == on


def test_a_fault_declared_fair_is_bad_input_on_spark(sc):
    from kmc.errors import UsageError
    from kmc.model.validation.liveness import LossyChannel

    m = LossyChannel("weak")
    m.weakly_fair = ("Send", "Lose")  # Lose is a fault
    with pytest.raises(UsageError, match="never fair"):
        check(m, explorer="spark")
