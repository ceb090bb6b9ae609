"""`--update`'s text surgery: only the expectation keys change; the rest is kept."""
import json
import os

from cli_checks import kmc_in_process, snapshot
from kmc.api import check
from kmc.reports.regress.expect import observe
from kmc.reports.regress.stored import store, trace_path
from kmc.reports.regress.suite import parse_suite
from kmc.reports.regress.update import append_entries, changes, rewrite

SUITE = '''# header comment
traces = "stored"

[[entry]]   # the first entry
id = "first"
scenario = "twophase"
# a comment inside the entry
params = { rm = 3 }
expect = "holds"
witnesses = [
  "Old",
]
tier = "smoke"   # kept, with its comment

[[entry]]
id = "second"
scenario = "diehard"
[entry.params]
'''


def recorded():
    a = observe(check("twophase", "broken-commit", {"rm": 3})).expectation()
    b = observe(check("diehard")).expectation()
    return a, b


def test_rewrite_replaces_only_expectation_keys():
    a, b = recorded()
    suite = parse_suite(SUITE, "s.toml")
    text = rewrite(suite, {0: a, 1: b})
    again = parse_suite(text, "s.toml")
    assert [e.expect for e in again.entries] == [a, b]
    for kept in ("# header comment", "[[entry]]   # the first entry",
                 "# a comment inside the entry", 'tier = "smoke"   # kept, with its comment',
                 "[entry.params]"):
        assert kept in text
    assert '"Old"' not in text
    # the second entry's expectation sits above its [entry.params] sub-table, not in it
    assert text.index('expect = "violates') < text.rindex("[entry.params]")
    assert again.entries[1].params == {}


def test_rewrite_of_unchanged_expectations_is_identity():
    a, b = recorded()
    once = rewrite(parse_suite(SUITE, "s.toml"), {0: a, 1: b})
    assert rewrite(parse_suite(once, "s.toml"), {0: a, 1: b}) == once


def test_rewrite_without_trailing_newline():
    a, _ = recorded()
    text = rewrite(parse_suite('[[entry]]\nscenario = "twophase"', "s.toml"), {0: a})
    assert parse_suite(text, "s.toml").entries[0].expect == a


def test_rewrite_keeps_the_files_line_endings():
    a, b = recorded()
    crlf = SUITE.replace("\n", "\r\n")
    text = rewrite(parse_suite(crlf, "s.toml"), {0: a, 1: b})
    assert text.count("\n") == text.count("\r\n") > crlf.count("\r\n")


def test_changes_describe_the_difference():
    a, b = recorded()
    assert changes(None, a)[0].startswith("recorded: violates TCConsistent")
    lines = changes(a, b)
    assert any(line.startswith("expect: violates TCConsistent") for line in lines)
    assert any(line.startswith("states: ") for line in lines)
    assert changes(a, a) == []


def test_append_entries_adds_entries_without_expectations():
    text = append_entries("traces = \"t\"", [{"id": "x.y", "scenario": "x", "variant": "y"}])
    (e,) = parse_suite(text, "s.toml").entries
    assert (e.id, e.scenario, e.variant, e.expect) == ("x.y", "x", "y", None)


def test_store_writes_and_removes_stale_traces(tmp_path):
    d = str(tmp_path)
    store(d, "e", {"P": {"init_index": 0, "action_indices": []},
                   "Q": {"init_index": 0, "action_indices": [1]}})
    assert os.path.exists(trace_path(d, "e", "P")) and os.path.exists(trace_path(d, "e", "Q"))
    written, removed = store(d, "e", {"Q": {"init_index": 0, "action_indices": [2]}})
    assert removed == [trace_path(d, "e", "P")] and written == [trace_path(d, "e", "Q")]
    with open(trace_path(d, "e", "Q")) as f:
        assert json.load(f)["action_indices"] == [2]
    store(d, "e", {})
    assert not os.path.exists(os.path.dirname(trace_path(d, "e", "Q")))


def test_documented_mismatch_flags_a_recorded_verdict_the_scenario_contradicts():
    from kmc.reports.regress.update import documented_mismatch

    obs = observe(check("diehard"))
    (prop,) = obs.violated
    assert documented_mismatch(f"violates {prop} (why)", obs) is None
    assert "but the run violates" in documented_mismatch("holds (all good)", obs)
    assert "Other is not violated" in documented_mismatch("violates Other", obs)
    bounded = observe(check("diehard", max_depth=2))
    assert documented_mismatch(f"violates {prop}", bounded) is None  # proves no absence




def test_update_writes_only_under_the_suites_directory(tmp_path, capsys):
    """A `traces` directory that resolves outside the suite file's directory ('..', an
    absolute path, a symbolic link) is exit 2 before anything runs, and nothing is
    written; without --update such a directory is only read, and allowed."""
    suite_dir, outside = tmp_path / "suite", tmp_path / "outside"
    suite_dir.mkdir()
    outside.mkdir()
    (suite_dir / "linked").symlink_to(outside)
    entry = '\n[[entry]]\nid = "diehard"\nscenario = "diehard"\n'
    for traces in ("../outside", str(outside), "linked", "linked/deeper"):
        suite = suite_dir / "s.toml"
        suite.write_text(f"traces = {json.dumps(traces)}\n" + entry)
        before = snapshot(tmp_path)
        code, out, err = kmc_in_process(capsys, "regress", suite, "--update")
        assert code == 2, (traces, out, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and f"{suite}:1: --update writes" in lines[0], err
        assert str(outside) in lines[0] and "beside the suite file" in lines[0]
        assert out == "" and snapshot(tmp_path) == before  # nothing ran, nothing written
    # an entry's own directory linked elsewhere is refused too
    (suite_dir / "stored").mkdir()
    (suite_dir / "stored" / "diehard").symlink_to(outside)
    suite.write_text('traces = "stored"\n' + entry)
    code, _out, err = kmc_in_process(capsys, "regress", suite, "--update")
    assert code == 2 and "stored/diehard resolves to" in err and not os.listdir(outside)
    # inside the suite's directory: --update records; reading from elsewhere is allowed
    suite.write_text('traces = "kept"\n' + entry)
    assert kmc_in_process(capsys, "regress", suite, "--update")[0] == 0
    assert os.listdir(suite_dir / "kept" / "diehard")
    recorded_text = suite.read_text().replace('traces = "kept"', 'traces = "../outside"')
    os.rename(suite_dir / "kept" / "diehard", outside / "diehard")
    suite.write_text(recorded_text)
    assert kmc_in_process(capsys, "regress", suite)[0] == 0
