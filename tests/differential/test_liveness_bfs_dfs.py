"""BFS and DFS explore the same state graph, so they decide liveness alike: the same
verdicts and, because a lasso is chosen on the graph alone (node ids are key ranks), the
very same lasso."""
import pytest

from kmc.api import check
from kmc.model.validation.scenarios import SCENARIOS

LIVENESS = [(sc.name, v) for sc in SCENARIOS if sc.name in ("peterson", "counter", "lossy")
            for v in sc.variants]


@pytest.mark.parametrize("scenario,variant", LIVENESS)
def test_bfs_and_dfs_agree_on_liveness(scenario, variant):
    b = check(scenario, variant)
    d = check(scenario, variant, explorer="dfs")
    assert b.complete and d.complete
    assert b.unique_states == d.unique_states
    assert b.verdicts() == d.verdicts()
    for name, disc in b.discoveries.items():
        other = d.discoveries[name].trace
        assert (disc.trace.init_index, disc.trace.action_indices, disc.trace.loop_start) \
            == (other.init_index, other.action_indices, other.loop_start)


@pytest.mark.parametrize("depth", [3, 6])
def test_bfs_and_dfs_agree_under_a_depth_bound(depth):
    # a depth bound cuts the graph: both explorers see the same states within it
    for scenario, variant in (("peterson", "standard"), ("peterson", "unfair"),
                              ("lossy", "weak")):
        b = check(scenario, variant, max_depth=depth)
        d = check(scenario, variant, max_depth=depth, explorer="dfs")
        assert b.verdicts() == d.verdicts()
        assert {n: x.trace.action_indices for n, x in b.discoveries.items()} == \
            {n: x.trace.action_indices for n, x in d.discoveries.items()}
