"""What `kmc regress` writes, and never writes: a suite it cannot edit line by line is
exit 2 before anything runs, an --update that cannot write every file changes none, a
report never replaces a file the entries run, and the JUnit file stays XML whatever a
model's error message holds."""
import os
import xml.etree.ElementTree as ET

import pytest

from cli_checks import kmc_in_process as kmc, snapshot
from kmc.reports.regress.suite import SuiteError, parse_suite


@pytest.mark.parametrize("text", [
    'entry = [{ scenario = "diehard" }]\n',  # valid TOML, but no header line to edit
    ('[[entry]]\nscenario = "diehard"\nnote = """\n[[entry]]\n"""\n\n'
     '[[entry]]\nscenario = "tcommit"\n'),  # a header line inside a string
])
def test_every_entry_needs_its_own_header_line(tmp_path, capsys, text):
    """--update finds an entry's lines by its [[entry]] header: a suite where headers and
    entries do not pair up would have its edits land on the wrong entry (or fail half-way
    through the writes), so it is exit 2, naming the fix, before anything runs."""
    with pytest.raises(SuiteError, match=r"\[\[entry\]\] header"):
        parse_suite(text, "s.toml")
    suite = tmp_path / "s.toml"
    suite.write_text(text)
    before = snapshot(tmp_path)
    code, out, err = kmc(capsys, "regress", suite, "--update")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "write each entry under its own [[entry]] line" in err
    assert snapshot(tmp_path) == before


def test_a_quoted_header_is_a_header():
    (e,) = parse_suite('[["entry"]]\nscenario = "diehard"\n', "s.toml").entries
    assert e.line == 1


def test_an_update_that_cannot_write_every_file_changes_none(tmp_path, capsys):
    """The second entry's directory is blocked by a file: the first entry's stored
    counterexample, recorded before, must not be replaced by a new one either."""
    suite = tmp_path / "s.toml"
    suite.write_text('[[entry]]\nid = "a"\nscenario = "diehard"\n\n'
                     '[[entry]]\nid = "b"\nscenario = "twophase"\n'
                     'variant = "broken-commit"\n')
    (tmp_path / "regressions").mkdir()
    (tmp_path / "regressions" / "b").write_text("in the way\n")
    before = snapshot(tmp_path)
    code, _out, err = kmc(capsys, "regress", suite, "--update")
    assert code == 2 and "regressions/b, and it is a file" in err, err
    assert snapshot(tmp_path) == before  # no trace of entry a, no temporary file
    (tmp_path / "regressions" / "b").unlink()
    assert kmc(capsys, "regress", suite, "--update")[0] == 0
    assert sorted(os.listdir(tmp_path / "regressions")) == ["a", "b"]
    assert kmc(capsys, "regress", suite)[0] == 0


def test_a_report_never_replaces_the_scenario_an_entry_runs(tmp_path, capsys):
    (tmp_path / "scenario.toml").write_text('scenario = "diehard"\n')
    (tmp_path / "spared_model.py").write_text("def make():\n    raise RuntimeError('x')\n")
    suite = tmp_path / "s.toml"
    suite.write_text('[[entry]]\nid = "file"\nscenario = "scenario.toml"\n\n'
                     '[[entry]]\nid = "model"\nscenario = "spared_model.py:make"\n')
    before = snapshot(tmp_path)
    for flag, name, entry in (("--junit", "scenario.toml", "file"),
                              ("--markdown", "spared_model.py", "model")):
        code, out, err = kmc(capsys, "regress", suite, flag, tmp_path / name)
        assert code == 2 and out == "", err
        assert f"is the scenario entry {entry!r} runs" in err
        assert snapshot(tmp_path) == before


def test_junit_stays_xml_whatever_a_model_error_says(tmp_path, capsys):
    """A user model's exception message with a terminal colour code (ESC, which XML 1.0
    cannot carry even escaped) is written as \\x1b: the file still parses."""
    (tmp_path / "colour_model.py").write_text(
        "def make():\n    raise RuntimeError('\\x1b[31mred\\x1b[0m')\n")
    suite = tmp_path / "s.toml"
    suite.write_text('[[entry]]\nid = "model"\nscenario = "colour_model.py:make"\n')
    junit = tmp_path / "j.xml"
    code, _out, _err = kmc(capsys, "regress", suite, "--junit", junit)
    assert code == 2, _err  # the entry cannot run as written
    error = ET.parse(junit).getroot().find("testsuite/testcase/error")
    assert "\\x1b[31mred\\x1b[0m" in error.get("message")


def test_an_id_is_one_line_of_printable_text():
    with pytest.raises(SuiteError, match="s.toml:2: `id` must be one line"):
        parse_suite('[[entry]]\nid = "a\\nb"\nscenario = "diehard"\n', "s.toml")


def test_failure_reports_never_go_among_the_stored_counterexamples(tmp_path, capsys):
    """A failure report holds trace files, which --update would take for stored ones
    (and remove)."""
    suite = tmp_path / "s.toml"
    suite.write_text('[[entry]]\nscenario = "diehard"\n')
    (tmp_path / "regressions").mkdir()
    before = snapshot(tmp_path)
    for out_dir in ("regressions", "regressions/reports"):
        code, out, err = kmc(capsys, "regress", suite, "--out", tmp_path / out_dir)
        assert code == 2 and out == "", err
        assert "inside the stored counterexamples' directory" in err
        assert snapshot(tmp_path) == before


def test_a_report_that_cannot_be_written_keeps_the_verdict_and_leaves_nothing(tmp_path,
                                                                            capsys):
    """A directory stands where the failing entry's index.html goes: the entry is still
    reported as the regression it is (not as a crash), the command says in one line what
    could not be written (exit 2, as `kmc check --out`), and none of the report's files
    stay behind."""
    suite = tmp_path / "s.toml"
    suite.write_text('[[entry]]\nscenario = "diehard"\nexpect = "holds"\nstates = 14\n')
    (tmp_path / "out" / "diehard" / "index.html").mkdir(parents=True)
    code, out, err = kmc(capsys, "regress", suite, "--out", tmp_path / "out")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "the report of entry diehard could not be written" in err and "index.html" in err
    assert "FAIL" in out and "verdict flipped" in out and "ERROR" not in out
    assert sorted(os.listdir(tmp_path / "out" / "diehard")) == ["index.html"]


def test_a_directory_where_a_counterexample_goes_is_named_before_any_write(tmp_path,
                                                                           capsys):
    suite = tmp_path / "s.toml"
    suite.write_text('[[entry]]\nscenario = "diehard"\n')
    (tmp_path / "regressions" / "diehard" / "NotSolved.json").mkdir(parents=True)
    before = snapshot(tmp_path)
    code, _out, err = kmc(capsys, "regress", suite, "--update")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "regressions/diehard/NotSolved.json, and a directory is there" in err
    assert snapshot(tmp_path) == before
