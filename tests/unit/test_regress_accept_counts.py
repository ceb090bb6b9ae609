"""A changed state count is not a verdict: `kmc regress --update` refuses to re-record
one unless told why with `--accept-counts "REASON"`, which it writes next to the entry."""
import tomllib

import pytest

from kmc.cli import main

# twophase rm=3 has 288 states; the recorded count below is deliberately wrong
SUITE = '''traces = "stored"

[[entry]]
id = "counted"
scenario = "twophase"
params = { rm = 3 }
expect = "holds"
states = 280
witnesses = ["SomeCommit"]

[[entry]]
id = "fresh"
scenario = "diehard"
'''


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def suite(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SUITE)
    return path


def test_update_refuses_a_changed_count_and_writes_nothing(suite, capsys):
    code, out, err = _run(capsys, "regress", suite, "--update", "-j", "1")
    assert code == 1, err
    assert "not updated: 1 state count changed" in out
    assert "  counted: 280 -> 288" in out
    assert suite.read_text() == SUITE
    assert not (suite.parent / "stored").exists()


def test_accept_counts_records_the_count_and_the_reason(suite, capsys):
    reason = "the suite pinned a count by hand"
    code, out, err = _run(capsys, "regress", suite, "--update", "-j", "1",
                          "--accept-counts", reason)
    assert code == 0, err
    data = tomllib.loads(suite.read_text())
    counted, fresh = data["entry"]
    assert (counted["states"], counted["counts_reason"]) == (288, reason)
    assert "counts_reason" not in fresh  # a first recording is not a change
    assert f"counts_reason: {reason}" in out
    # the reason stays while the count does, and a plain run passes
    code, out, err = _run(capsys, "regress", suite, "--update", "-j", "1")
    assert code == 0, out
    assert tomllib.loads(suite.read_text())["entry"][0]["counts_reason"] == reason
    assert _run(capsys, "regress", suite, "-j", "1")[0] == 0


def test_a_count_inside_a_recorded_range_is_not_drift(suite, capsys):
    suite.write_text(SUITE.replace("states = 280", "states = [280, 300]"))
    code, out, err = _run(capsys, "regress", suite, "--update", "-j", "1", "--only",
                          "counted")
    assert code == 0, out
    assert tomllib.loads(suite.read_text())["entry"][0]["states"] == [280, 300]


@pytest.mark.parametrize("argv, needle", [
    (["--accept-counts", "why"], "use it with --update"),
    (["--update", "--accept-counts", " "], "needs a reason on one line"),
    (["--update", "--accept-counts", "two\nlines"], "needs a reason on one line"),
])
def test_bad_reasons_are_one_line_exit_2(suite, capsys, argv, needle):
    code, out, err = _run(capsys, "regress", suite, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and needle in lines[0], err
    assert suite.read_text() == SUITE


def test_a_malformed_counts_reason_in_a_suite_is_refused(suite, capsys):
    suite.write_text(SUITE.replace("states = 280", "states = 288\ncounts_reason = 3"))
    code, out, err = _run(capsys, "regress", suite)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "counts_reason" in lines[0], err
