"""DFS keys record states as BFS's level expander does, from the reprs of their fields
(``Core.field_keys``): the same keys as ``Core.rkey``, so the same states, counts and
traces, at a fraction of the cost of printing whole states."""
from __future__ import annotations

import pytest

from kmc.api import build
from kmc.explorers import dfs as dfs_mod
from kmc.explorers.core import Core
from kmc.explorers.dfs import dfs
from kmc.explorers.level import keyer
from kmc.model.validation.twophase import TwoPhase
from state_walk import reachable


def test_a_successor_is_keyed_from_its_parents_field_reprs():
    model = build("stale-read", "legacy")
    core = Core(model)
    keyed = keyer(core)
    _cls, reprs, _key = core.field_keys()
    walked = [(s, model.successors(s)) for s in reachable(model, 400)]
    assert sum(len(succ) for _s, succ in walked) > 1000
    for s, succ in walked:
        k, sp = keyed(s)
        assert (k, sp) == (core.rkey(s), reprs.of(s))
        for _a, t in succ:
            assert keyed(t, s, sp) == (core.rkey(t), reprs.of(t))


def test_a_packed_models_states_are_their_keys():
    core = Core(TwoPhase(3))
    keyed = keyer(core)
    for _i, s in core.initial():
        assert keyed(s) == (core.rkey(s), None)


def _answers(r):
    return (r.unique_states, r.generated_states, r.max_depth, r.stopped_by, r.verdicts(),
            r.coverage, {n: (d.trace.init_index, tuple(d.trace.action_indices))
                         for n, d in r.discoveries.items()})


@pytest.mark.parametrize("scenario,variant,options", [
    ("stale-read", "legacy", {}),
    ("stale-read", "legacy", {"max_depth": 10}),
    ("recreate-race", "legacy", {"symmetry": True}),
    ("expand", "modulo", {}),
])
def test_dfs_answers_as_it_did_with_whole_state_keys(monkeypatch, scenario, variant,
                                                      options):
    fast = dfs(build(scenario, variant), **options)

    def whole(core):
        return lambda t, s=None, sp=None: (core.rkey(t), None)

    monkeypatch.setattr(dfs_mod, "keyer", whole)
    plain = dfs(build(scenario, variant), **options)
    assert _answers(fast) == _answers(plain)
    assert fast.discoveries  # the traces compared are real ones
