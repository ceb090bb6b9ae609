"""``bench/step_tables.py``'s tabled successor function, a measured design for faster
Kafka models, gives every state the model's own successors: steps keyed by the fields
they read, with the messages in flight changed by replayed operations."""
from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest

from kmc.api import build

_BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, _BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the bench script imports the engine by this name
    spec.loader.exec_module(module)
    return module


bench = _load("step_tables")
script = _load("step_tables_bench")


@pytest.mark.parametrize("scenario,variant", [("stale-read", "legacy"), ("expand", None),
                                              ("offline-delete", None)])
def test_tabled_successors_are_the_models(scenario, variant):
    model = build(scenario, variant, {})
    plain, plain_moves = bench.bfs_count(model.init_states()[0], model.successors)
    tables = bench.Tables(model)
    numbered, moves = bench.bfs_count(tables.encode(model.init_states()[0]),
                                      tables.successors)
    assert {tables.decode(s) for s in numbered} == plain
    assert moves == plain_moves
    assert sum(k.hits for k in tables.kinds.values()) > 0  # answers taken from the tables
    for s in numbered:
        assert [(a, tables.decode(t)) for a, t in tables.successors(s)] == \
            model.successors(tables.decode(s))


def test_a_question_to_the_network_keys_a_step_by_its_answer():
    """A follower's fetch asks whether a fetch of its partition is in flight: its table
    is keyed by the answer, not by the network; so are the lifecycle's candidates (which
    fetches and StopReplica requests are in flight). A crash drops the broker's traffic:
    an operation replayed, not a read."""
    tables = bench.Tables(build("stale-read", "legacy", {}))
    bench.bfs_count(tables.encode(tables.m.init_states()[0]), tables.successors)
    for name in ("fetch", "retry-stop", "candidates", "crash"):
        assert bench.NET not in tables.kinds[name].fields and name not in tables.net_kinds
    for name in ("fetch", "retry-stop", "candidates"):
        assert any(type(v) is bench.Question for v in tables.kinds[name].table.values())


@pytest.mark.parametrize("scenario,variant", [("stale-read", "legacy"), ("offline-delete", None)])
def test_the_tabled_bfs_with_checks_finds_what_the_bfs_finds(scenario, variant):
    from kmc.explorers.bfs import bfs
    r = bfs(build(scenario, variant, {}))
    model = build(scenario, variant, {})
    states, found = script.checked_bfs(model, bench.Tables(model))
    assert len(states) == r.unique_states
    assert found == set(r.discoveries) and found


def test_the_bench_refuses_a_model_it_cannot_table(capsys):
    assert script.main(["kraft-large"]) == 2
    assert "not a ZooKeeper-era cluster scenario" in capsys.readouterr().err


def test_the_bench_stops_past_its_state_bound_and_reports_each_level(capsys):
    assert script.main(["stale-read", "--variant", "legacy", "--max-states", "100",
                        "--levels", "--verify", "50"]) == 0
    out = capsys.readouterr().out
    first = next(line for line in out.splitlines() if line.startswith("tabled BFS"))
    assert 100 <= int(first.split(": ")[1].split(" states")[0].replace(",", "")) < 1334
    assert "  level   1:" in out and ", 0 whose successors differ" in out
    assert script.main(["stale-read", "--checks", "--max-states", "100"]) == 2
    assert "leave out --max-states" in capsys.readouterr().err
