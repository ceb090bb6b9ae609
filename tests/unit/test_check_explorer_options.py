"""`kmc check`'s explorer options: an option of another explorer is refused whatever its
value, and a simulation's own options reach the run as given."""
import json

import pytest

from kmc.cli import main


@pytest.mark.parametrize("explorer", ["bfs", "dfs"])
@pytest.mark.parametrize("seed", ["0", "00", "5"])
def test_a_seed_without_simulate_is_refused_even_when_it_is_zero(explorer, seed, capsys):
    # 0 compares equal to False: a test "was it given" by value would let --seed 0 pass
    # silently, and the user would believe the exhaustive run was seeded
    code = main(["check", "diehard", "--quiet", "--explorer", explorer, "--seed", seed])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "--seed" in err and "--explorer simulate" in err


def test_seed_zero_runs_a_simulation_with_seed_zero(capsys):
    code = main(["check", "diehard", "--quiet", "--json", "--explorer", "simulate",
                 "--seed", "0", "--walks", "5"])
    d = json.loads(capsys.readouterr().out)
    assert code == d["exit_code"] and (d["seed"], d["walks"]) == (0, 5)


def _help(capsys) -> str:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_walk_length_counts_states_as_its_help_says(capsys):
    # diehard never deadlocks, so every walk runs to its length: 3 states, each expanded
    # (the last one for its quiescence and deadlock checks only)
    assert "states per simulation walk, the initial one included" in _help(capsys)
    code = main(["check", "diehard", "--quiet", "--json", "--explorer", "simulate",
                 "--walks", "1", "--walk-length", "3"])
    d = json.loads(capsys.readouterr().out)
    assert code == 4 and d["max_depth"] == 3 and d["walk_length"] == 3
    assert d["generated_states"] == 3 * 6  # three states expanded, six jug moves each


def test_stop_on_violation_help_names_every_local_explorer(capsys):
    text = _help(capsys)
    assert "DFS at once, a simulation at the end of its walk" in text
    code = main(["check", "diehard", "--quiet", "--json", "--explorer", "simulate",
                 "--stop-on-violation", "--walks", "1000", "--walk-length", "40"])
    d = json.loads(capsys.readouterr().out)
    # the walk that found the violation ran to its end (40 expansions of six jug moves
    # each, diehard never deadlocks): the run stops between walks
    assert code == 1 and d["stopped_by"] == "violation"
    assert d["generated_states"] % (40 * 6) == 0
