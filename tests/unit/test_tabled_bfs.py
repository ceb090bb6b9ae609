"""The product's BFS with its levels expanded over ``bench/step_tables.py``'s tables
(``bench/step_tables_expander.py``, a measured design) gives the field-wise expander's
answer: the same states, counts, coverage and counterexamples (their traces, state by
state), whether the tables start over within a level or not."""
from __future__ import annotations

import pytest
from bench_scripts import load

from kmc.api import build
from kmc.explorers.bfs import bfs


engine = load("step_tables")
expander = load("step_tables_expander")


def tabled(scenario, variant=None, limit=1 << 20, **options):
    """(the tabled BFS's result, its ``Run``)."""
    model = build(scenario, variant, {})
    run = expander.Run(lambda: engine.Tables(model), limit=limit)
    with expander.installed(run):
        return bfs(model, states_digest=True, **options), run


def same_answer(got, plain):
    assert (got.unique_states, got.generated_states, got.max_depth, got.stopped_by) == \
        (plain.unique_states, plain.generated_states, plain.max_depth, plain.stopped_by)
    assert got.extra["states_digest"] == plain.extra["states_digest"]
    assert got.coverage == plain.coverage
    assert list(got.discoveries) == list(plain.discoveries)
    for name, d in plain.discoveries.items():
        mine = got.discoveries[name]
        assert (mine.kind, mine.detail) == (d.kind, d.detail)
        assert (mine.trace.action_indices, mine.trace.states) == \
            (d.trace.action_indices, d.trace.states)


@pytest.mark.parametrize("scenario,variant,options", [
    ("stale-state", "legacy", {}), ("offline-delete", None, {}),
    ("stale-read", "legacy", {}), ("expand", None, {}),
    ("stale-state", "kip516", {"max_states": 700}),
    ("stale-state", "legacy", {"deadlock": True})])
def test_the_tabled_bfs_gives_the_field_wise_answer(scenario, variant, options):
    plain = bfs(build(scenario, variant, {}), states_digest=True, **options)
    got, run = tabled(scenario, variant, **options)
    assert run.made == 1 and run.tables.entries() > 0
    same_answer(got, plain)
    assert plain.discoveries or scenario == "expand"


def test_tables_that_start_over_within_a_level_give_the_same_answer():
    """Past ``limit`` entries the expander starts new tables between two frontier
    states; the level's candidates found before and after are joined by key."""
    plain = bfs(build("stale-state", "legacy", {}), states_digest=True)
    got, run = tabled("stale-state", "legacy", limit=300)
    assert run.made > 3
    same_answer(got, plain)


def test_the_tabled_expander_refuses_a_run_it_cannot_serve():
    model = build("stale-state", "legacy", {})
    run = expander.Run(lambda: engine.Tables(model))
    with expander.installed(run), pytest.raises(ValueError, match="plain BFS"):
        bfs(model, symmetry=True)
