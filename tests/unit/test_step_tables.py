"""``bench/step_tables_bench.py``'s tabled successor function, a measured design for faster
Kafka models, gives every state the model's own successors: steps keyed by the fields
they read, with the messages in flight changed by replayed operations."""
from __future__ import annotations

import importlib.util
import pathlib

import pytest

from kmc.api import build

_PATH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "step_tables_bench.py"
_spec = importlib.util.spec_from_file_location("step_tables_bench", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


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
    assert sum(tables.hits.values()) > 0  # answers were taken from the tables
    for s in numbered:
        assert [(a, tables.decode(t)) for a, t in tables.successors(s)] == \
            model.successors(tables.decode(s))


def test_a_step_that_scans_the_network_is_keyed_by_it():
    """A follower's fetch looks for a fetch of its partition in flight: the stand-in
    network refuses the scan, and the step's table is keyed by the network itself."""
    tables = bench.Tables(build("stale-read", "legacy", {}))
    bench.bfs_count(tables.encode(tables.m.init_states()[0]), tables.successors)
    assert "fetch" in tables.net_kinds
    assert bench.NET in tables.keys["fetch"]
    assert bench.NET not in tables.keys["deliver LeaderAndIsr"]


def test_the_bench_refuses_a_model_it_cannot_table(capsys):
    assert bench.main(["kraft-large"]) == 2
    assert "not a ZooKeeper-era cluster scenario" in capsys.readouterr().err
