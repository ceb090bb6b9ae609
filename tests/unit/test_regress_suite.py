"""The suite file: what it accepts, and the file:line of everything it refuses."""
import pytest

from kmc.api import check
from kmc.reports.regress.expect import Expectation, compare, observe
from kmc.reports.regress.suite import SuiteError, parse_suite


def entries(text):
    return parse_suite(text, "suite.toml").entries


def test_run_keys_and_default_id():
    (e,) = entries('[[entry]]\nscenario = "twophase"\nvariant = "broken-commit"\n'
                   'params = { rm = 4 }\nexplorer = "dfs"\nbounds = { max_depth = 9 }\n'
                   'symmetry = true\ntier = "smoke"\n')
    assert (e.scenario, e.variant, e.params, e.explorer) == \
        ("twophase", "broken-commit", {"rm": 4}, "dfs")
    assert e.bounds == {"max_depth": 9} and e.options == {"symmetry": True}
    assert e.tier == "smoke" and e.in_tier("smoke") and e.in_tier("full")
    assert e.id == "twophase.broken-commit.rm=4.dfs"
    assert e.expect is None and e.line == 1


def test_full_tier_entries_are_not_smoke():
    a, b = entries('[[entry]]\nscenario = "a"\n\n[[entry]]\nscenario = "b"\ntier = "smoke"\n')
    assert a.tier == "full" and not a.in_tier("smoke") and b.in_tier("smoke")


def test_expectations_are_read():
    one, many, holds = entries(
        '[[entry]]\nscenario = "a"\nexpect = "violates P"\nlength = 4\n'
        'states = [10, 20]\nwitnesses = ["W"]\n\n'
        '[[entry]]\nscenario = "b"\nexpect = "violates P, Q"\nlength = { P = 4, Q = 6 }\n\n'
        '[[entry]]\nscenario = "c"\nexpect = "holds"\nstates = 7\n')
    assert one.expect == Expectation({"P": 4}, (10, 20), ("W",))
    assert many.expect == Expectation({"P": 4, "Q": 6})
    assert holds.expect == Expectation({}, 7, None)
    assert holds.expect.describe() == "holds"
    assert many.expect.describe() == "violates P (4), Q (6)"


def test_expectation_lines_read_back():
    exp = Expectation({"P": 4, "Q-2": 6}, (3, 9), ("W", "V"))
    text = '[[entry]]\nscenario = "a"\n' + "\n".join(exp.toml_lines()) + "\n"
    assert entries(text)[0].expect == exp


BAD = [  # (suite text, line of the error, words the message must contain)
    ('[[entry]]\nscenario = "a"\nparams = { rm = 3\n', 3, "not valid TOML"),
    ('[[entry]]\nscenario = "a"\n\n[[entry]]\nvariant = "x"\n', 4, "scenario"),
    ('[[entry]]\nscenario = "a"\n\n\nexpect = "violate P"\n', 5, "violates PROPERTY"),
    ('[[entry]]\nscenario = "a"\nexpect = "violates P"\n', 3, "length"),
    ('[[entry]]\nscenario = "a"\nexpect = "holds"\nlength = 4\n', 4, "length"),
    ('[[entry]]\nscenario = "a"\nexpect = "violates P, Q"\nlength = 4\n', 4, "table"),
    ('[[entry]]\nscenario = "a"\nexpect = "violates P, Q"\nlength = { P = 1 }\n', 4,
     "one length per violated property"),
    ('[[entry]]\nscenario = "a"\nexpect = "holds"\nstates = [9, 2]\n', 4, "range"),
    ('[[entry]]\nscenario = "a"\nexpect = "holds"\nwitnesses = "W"\n', 4, "witnesses"),
    ('[[entry]]\nscenario = "a"\nstates = 3\n', 3, "without `expect`"),
    ('[[entry]]\nscenario = "a"\nexpect = "violates P"\n', 3,
     "remove `expect` and run `kmc regress --update`"),
    ('[[entry]]\nscenario = "a"\ntier = "quick"\n', 3, "smoke"),
    ('[[entry]]\nscenario = "a"\nexplorer = "bfss"\n', 3, "unknown explorer"),
    ('[[entry]]\nscenario = "a"\nbounds = { max_depth = 0 }\n', 3, "positive integer"),
    ('[[entry]]\nscenario = "a"\nbounds = { depth = 3 }\n', 3, "unknown bound"),
    ('[[entry]]\nscenario = "a"\nsymetry = true\n', 3, "unknown key 'symetry'"),
    ('[[entry]]\nscenario = "a"\n\n[[entry]]\nscenario = "a"\n', 4, "used twice"),
    ('traces = "r"\nmystery = 1\n[[entry]]\nscenario = "a"\n', 2, "unknown top-level key"),
    ('version = 2\n', 1, "version"),
    ('[[entry]]\nscenario = "a"\n[entry.params]\nrm = [1]\n', 3, "parameter 'rm'"),
]


@pytest.mark.parametrize("text,line,words", BAD)
def test_errors_name_the_line(text, line, words):
    with pytest.raises(SuiteError) as info:
        parse_suite(text, "suite.toml")
    assert info.value.line == line, str(info.value)
    assert str(info.value).startswith(f"suite.toml:{line}: ")
    assert words in str(info.value)


def test_traces_dir_is_relative_to_the_suite(tmp_path):
    suite = parse_suite('traces = "stored"\n', str(tmp_path / "s.toml"))
    assert suite.traces_dir == str(tmp_path / "stored")


# ---- comparing runs with expectations (observations come from real runs) --------------

def test_a_run_matches_the_expectation_it_records():
    obs = observe(check("twophase", "standard", {"rm": 3}))
    assert compare(obs.expectation(), obs) == []


def test_every_difference_is_named():
    good = observe(check("twophase", "standard", {"rm": 3}))
    bad = observe(check("twophase", "broken-commit", {"rm": 3}))
    diffs = compare(good.expectation(), bad)
    assert any(d.startswith("verdict flipped: TCConsistent was expected to hold") for d in diffs)
    assert any(d.startswith("state count drifted") for d in diffs)
    back = compare(bad.expectation(), good)
    assert any(d.startswith("verdict flipped: TCConsistent was violated") for d in back)


def test_counterexample_length_and_witness_changes():
    obs = observe(check("diehard"))
    exp = obs.expectation()
    (prop, n), = exp.violated.items()
    longer = Expectation({prop: n + 1}, exp.states, ("NoSuchWitness",))
    diffs = compare(longer, obs)
    assert f"counterexample length changed: {prop} expected {n + 1} states, got {n}" in diffs
    assert any("witness NoSuchWitness no longer exists" in d for d in diffs)


def test_a_state_range_absorbs_drift_and_is_kept_on_update():
    obs = observe(check("twophase", "standard", {"rm": 3}))
    around = Expectation({}, (obs.states - 1, obs.states + 1), obs.witnesses)
    assert compare(around, obs) == []
    assert obs.expectation(around).states == around.states
    below = Expectation({}, (0, obs.states - 1))
    assert "state count drifted" in compare(below, obs)[0]
    assert obs.expectation(below).states == obs.states
