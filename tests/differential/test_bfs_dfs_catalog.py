"""BFS and DFS explore the same state space on kmc's own scenarios, Kafka models included:
a cover of the catalogue's scenario x variant pairs (tests/catalog_cases.py), whatever
the catalogue holds when the test runs.

With no property to stop them, a complete run counts the same unique and generated
states on both engines. A scenario larger than BUDGET states is compared on a depth
bound, where the unique states agree (DFS expands a state again when it reaches it
shallower, so the generated counts may differ). With the scenario's properties, both
engines give the same verdicts, and no BFS counterexample is longer than DFS's."""
from __future__ import annotations

import pytest

from kmc import catalog
from kmc.explorers.bfs import bfs
from kmc.explorers.dfs import dfs
from catalog_cases import covering_cases

BUDGET = 1500  # states per case; a depth bound keeps bigger scenarios comparable


def _cases():
    scenarios = [sc for _name, sc in sorted(catalog.scenarios().items())
                 if sc.family != "validation"]
    return [(sc.name, v) for sc, v in covering_cases(scenarios)]


def _model(name, variant):
    scenario = catalog.scenarios()[name]
    # safety only: liveness on both engines is test_liveness_bfs_dfs.py's
    raw = {"liveness": False} if any(p.name == "liveness" for p in scenario.params) else {}
    return scenario.make(variant, raw)[0], scenario.options.get("deadlock", False)


@pytest.mark.parametrize("name,variant", _cases())
def test_bfs_and_dfs_explore_the_same_states(name, variant):
    model, deadlock = _model(name, variant)
    probe = bfs(model, properties=[], max_states=BUDGET)
    bound = None if probe.complete else max(1, probe.max_depth - 1)
    a = bfs(_model(name, variant)[0], properties=[], max_depth=bound)
    b = dfs(_model(name, variant)[0], properties=[], max_depth=bound)
    assert a.unique_states == b.unique_states > 1
    if bound is None:
        assert a.complete and b.complete
        assert a.generated_states == b.generated_states
    else:
        assert a.stopped_by == b.stopped_by == "max_depth"

    a = bfs(_model(name, variant)[0], max_depth=bound, deadlock=deadlock)
    b = dfs(_model(name, variant)[0], max_depth=bound, deadlock=deadlock)
    assert a.verdicts() == b.verdicts()
    for prop, d in a.discoveries.items():
        assert len(d.trace) <= len(b.discoveries[prop].trace), prop
