"""``bench/step_tables.py``'s tables of step answers, a measured design for faster Kafka
models, give every state the model's own successors: steps keyed by the fields they
read, with the messages in flight changed by replayed operations, and a step that
reads the World whole keyed by every field."""
from __future__ import annotations

import pytest
from bench_scripts import load

from kmc.api import build


zt = load("step_tables")
bfs_count = zt.bfs_count


def filled(model):
    """(the model's tables, filled by a BFS over numbered states, and those states)."""
    tables = zt.Tables(model)
    states, _moves = bfs_count(tables.encode(model.init_states()[0]), tables.successors)
    return tables, states


def assert_successors_are_the_models(tables, states):
    model = tables.m
    for s in states:
        assert [(a, tables.decode(t)) for a, t in tables.successors(s)] == \
            model.successors(tables.decode(s))


@pytest.mark.parametrize("scenario,variant", [("stale-read", "legacy"), ("expand", None),
                                              ("offline-delete", None),
                                              ("stale-state", "legacy")])
def test_tabled_successors_are_the_models(scenario, variant):
    model = build(scenario, variant, {})
    plain, plain_moves = bfs_count(model.init_states()[0], model.successors)
    tables = zt.Tables(model)
    numbered, moves = bfs_count(tables.encode(model.init_states()[0]), tables.successors)
    assert {tables.decode(s) for s in numbered} == plain
    assert moves == plain_moves
    assert sum(k.hits for k in tables.kinds.values()) > 0  # answers taken from the tables
    assert_successors_are_the_models(tables, numbered)


def test_a_question_to_the_network_keys_a_step_by_its_answer():
    """A follower's fetch asks whether a fetch of its partition is in flight: its table
    is keyed by the answer, not by the network; so are the lifecycle's candidates (which
    fetches and StopReplica requests are in flight). A crash drops the broker's traffic:
    an operation replayed, not a read."""
    tables, _states = filled(build("stale-read", "legacy", {}))
    for name in ("fetch", "retry-stop", "candidates", "crash"):
        assert zt.NET not in tables.kinds[name].fields and name not in tables.net_kinds
    for name in ("fetch", "retry-stop", "candidates"):
        assert any(type(v) is zt.Question for v in tables.kinds[name].table.values())


def test_a_step_that_reads_no_field_is_tabled_under_an_empty_key():
    """stale-state's lost StopReplica (``lose``) reads no field of the World: one entry
    per message serves every state."""
    tables, _states = filled(build("stale-state", "legacy", {}))
    lose = tables.kinds["lose"]
    assert lose.fields == () and lose.hits > lose.misses > 0


def test_a_step_that_reads_the_world_whole_is_keyed_by_every_field(monkeypatch):
    """A step that iterates the World (here a crash made to look at every field first)
    cannot be recorded field by field: its kind reads every field, network included,
    and its answers are still the model's."""
    model = build("stale-read", "legacy", {})
    crash = model._steps["crash"]

    def looking(m, w, *args):
        assert len(tuple(w)) == len(zt.FIELDS)
        return crash(m, w, *args)
    monkeypatch.setitem(model._steps, "crash", looking)
    tables, states = filled(model)
    kind = tables.kinds["crash"]
    assert "crash" in tables.whole_kinds and kind.fields == tuple(range(len(zt.FIELDS)))
    assert_successors_are_the_models(tables, states)


def test_the_tables_count_their_entries():
    tables, states = filled(build("stale-read", "legacy", {}))
    values = sum(len(v) for v in tables.vals)
    assert tables.entries() > values >= len(zt.FIELDS)
    assert len(tables.vals[zt.NET]) <= len(states)
