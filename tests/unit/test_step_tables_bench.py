"""``bench/step_tables_bench.py``: it refuses a model without step tables, stops past
its state bound with a report per level, and times the product's BFS both ways."""
from __future__ import annotations

from bench_scripts import load


load("step_tables")
script = load("step_tables_bench")


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


def test_the_bench_times_the_product_bfs_both_ways(capsys):
    assert script.main(["stale-state", "--variant", "legacy", "--product"]) == 0
    out = capsys.readouterr().out
    assert out.count("product BFS, field-wise") == 2 and "tabled, tables filled" in out
    assert "the same states in every run: True" in out
