"""`kmc regress` end to end: a flipped guard fails naming the entry and property, a
corrupted suite is exit 2 with its line, the JUnit file has the usual shape, and the
shipped expectations are exactly what `--update` records from the models."""
import json
import os
import signal
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kmc.cli import main
from kmc.reports.regress.suite import read_suite

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "regressions" / "regressions.toml"
VALIDATION = ("twophase", "tcommit", "diehard")


def kmc(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def toml_value(v):
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    return json.dumps(v)  # str, int and bool are written alike in TOML


def entry_text(e, variant=None, expectation=True) -> str:
    """A suite entry with e's run keys (the variant may be swapped) and, optionally,
    its recorded expectation."""
    lines = ["[[entry]]", f"id = {json.dumps(e.id)}", f"scenario = {json.dumps(e.scenario)}",
             f"variant = {json.dumps(variant or e.variant)}", f"tier = {json.dumps(e.tier)}",
             f"explorer = {json.dumps(e.explorer)}"]
    for key, value in [("params", e.params), ("bounds", e.bounds)]:
        if value:
            lines.append(f"{key} = {toml_value(value)}")
    lines += [f"{k} = {toml_value(v)}" for k, v in e.options.items()]
    if expectation and e.expect is not None:
        lines += e.expect.toml_lines()
    return "\n".join(lines) + "\n\n"


def suite_file(path, entries_text, traces=None):
    traces = traces or str(ROOT / "regressions")
    path.write_text(f"traces = {json.dumps(traces)}\n\n" + entries_text)
    return path


def flip_pairs():
    """Per scenario: an entry expected to hold and a sibling run (same scenario, params,
    explorer) of another variant expected to violate. Running the first's expectation
    against the second's variant is "one guard flipped through the variant flags"."""
    groups = {}
    for e in read_suite(str(SHIPPED)).entries:
        if e.expect is None or e.bounds or e.options or e.tier != "smoke":
            continue
        groups.setdefault((e.scenario, json.dumps(e.params, sort_keys=True), e.explorer),
                          []).append(e)
    pairs = {}
    for (scenario, _p, _x), es in sorted(groups.items()):
        holds = [e for e in es if not e.expect.violated]
        bad = [e for e in es if e.expect.violated]
        if holds and bad and scenario not in pairs:
            h = holds[0]
            # prefer a mutant of the holding variant (same name prefix) to another protocol
            bad.sort(key=lambda b: (not b.variant.startswith(h.variant), b.variant))
            pairs[scenario] = (h, bad[0])
    return pairs


PAIRS = flip_pairs()


def test_the_shipped_suite_has_a_guard_to_flip():
    assert "twophase" in PAIRS  # standard vs broken-commit: the validation pair
    # and a Kafka one: kip516 against one of its mutants (one guard removed)
    assert any(h.variant == "kip516" and b.variant.startswith("kip516-")
               for h, b in PAIRS.values())


#: pairs whose flip takes over 10 s (an 88k-state run), in the full tier (`-m full`): the
#: others flip a guard through the same path
FULL_TIER = {"shrink-then-expand"}


@pytest.mark.parametrize("scenario", [
    pytest.param(s, marks=[pytest.mark.full] if s in FULL_TIER else []) for s in sorted(PAIRS)])
def test_a_flipped_guard_fails_naming_entry_and_property(scenario, tmp_path, capsys):
    holds, broken = PAIRS[scenario]
    suite = suite_file(tmp_path / "copy.toml", entry_text(holds, variant=broken.variant))
    junit = tmp_path / "junit.xml"
    code, out, _err = kmc(capsys, "regress", suite, "-j", 1, "--junit", junit)
    assert code == 1
    for prop in broken.expect.violated:
        line = next(ln for ln in out.splitlines() if f"verdict flipped: {prop}" in ln)
        assert "expected to hold, now violated" in line
    assert f"FAIL  {holds.id}" in out
    (case,) = ET.parse(junit).getroot().iter("testcase")
    assert case.get("name") == holds.id
    failure = case.find("failure")
    assert all(p in failure.get("message") + failure.text for p in broken.expect.violated)


def test_a_corrupted_suite_is_exit_2_with_the_line(tmp_path, capsys):
    text = SHIPPED.read_text()
    at = text.index('expect = "holds"')
    line = text[:at].count("\n") + 1
    bad = tmp_path / "regressions.toml"
    bad.write_text(text[:at] + "expect = holds" + text[at + len('expect = "holds"'):])
    code, out, err = kmc(capsys, "regress", bad)
    assert code == 2 and out == ""
    assert err.startswith(f"kmc: error: {bad}:{line}: not valid TOML")
    assert len(err.strip().splitlines()) == 1  # one line, no traceback


def test_an_unknown_scenario_is_exit_2_with_its_line(tmp_path, capsys):
    # lines: traces, blank, [[entry]], id, blank, scenario
    bad = suite_file(tmp_path / "s.toml", '[[entry]]\nid = "x"\n\nscenario = "no-such"\n')
    code, _out, err = kmc(capsys, "regress", bad)
    assert code == 2 and err.startswith(f"kmc: error: {bad}:6: entry 'x': unknown scenario")


def assert_junit_shape(path, n_cases):
    """The usual JUnit schema: testsuites > testsuite > testcase [> failure|error]."""
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    suites = list(root)
    assert suites and all(s.tag == "testsuite" for s in suites)
    total = 0
    for s in suites:
        cases = list(s)
        assert all(c.tag == "testcase" for c in cases) and s.get("name")
        tests, failures, errors = (int(s.get(k)) for k in ("tests", "failures", "errors"))
        assert float(s.get("time")) >= 0 and tests == len(cases)
        assert failures == sum(c.find("failure") is not None for c in cases)
        assert errors == sum(c.find("error") is not None for c in cases)
        for c in cases:
            assert c.get("name") and c.get("classname") and float(c.get("time")) >= 0
            assert {k.tag for k in c} <= {"failure", "error", "skipped", "system-out",
                                          "system-err"}
            for f in list(c.iter("failure")) + list(c.iter("error")):
                assert f.get("message") and f.get("type")
        total += tests
    assert total == n_cases == int(root.get("tests"))


def test_junit_markdown_and_json(tmp_path, capsys):
    holds, broken = PAIRS["twophase"]
    diehard = next(e for e in read_suite(str(SHIPPED)).entries if e.scenario == "diehard"
                   and e.expect and e.expect.violated)
    suite = suite_file(tmp_path / "s.toml", entry_text(diehard)
                       + entry_text(holds, variant=broken.variant))
    junit, md = tmp_path / "out" / "junit.xml", tmp_path / "summary.md"
    code, out, _ = kmc(capsys, "regress", suite, "-j", 1, "--junit", junit,
                       "--markdown", md, "--json")
    assert code == 1
    assert_junit_shape(junit, 2)
    doc = json.loads(out)
    assert doc["exit_code"] == 1 and doc["counts"] == {"pass": 1, "fail": 1, "error": 0,
                                                       "new": 0}
    assert [e["status"] for e in doc["entries"]] == ["pass", "fail"]
    text = md.read_text()
    assert f"`{holds.id}`" in text and "### Differences" in text


def validation_skeleton(tmp_path):
    """The shipped validation entries without their expectations."""
    chosen = [e for e in read_suite(str(SHIPPED)).entries if e.scenario in VALIDATION]
    text = "".join(entry_text(e, expectation=False) for e in chosen)
    return suite_file(tmp_path / "s.toml", text, traces="stored"), chosen


def test_update_records_exactly_the_shipped_expectations(tmp_path, capsys):
    # the smoke tier keeps this quick; CI's `kmc regress` checks the full tier as shipped
    suite, chosen = validation_skeleton(tmp_path)
    shipped = [e for e in chosen if e.tier == "smoke"]
    code, out, _ = kmc(capsys, "regress", suite, "--only", shipped[0].id)
    assert code == 1 and "no expectation recorded" in out
    code, out, _ = kmc(capsys, "regress", suite, "--update", "--tier", "smoke")
    assert code == 0 and f"{len(shipped)} of {len(shipped)} entries changed" in out
    recorded = {e.id: e.expect for e in read_suite(str(suite)).entries}
    assert [recorded[e.id] for e in shipped] == [e.expect for e in shipped]
    for e in shipped:  # a recorded counterexample for each expected violation...
        for prop, length in e.expect.violated.items():
            doc = json.loads((tmp_path / "stored" / e.id / f"{prop}.json").read_text())
            assert len(doc["action_indices"]) + 1 == length
    # ...which the next run replays (which shortest counterexample BFS picks among equals
    # is an explorer detail, so the steps are not compared with the shipped files)
    assert kmc(capsys, "regress", suite, "--tier", "smoke")[0] == 0
    code, out, _ = kmc(capsys, "regress", suite, "--update", "--tier", "smoke")
    assert code == 0 and f"0 of {len(shipped)} entries changed" in out


def test_stored_counterexamples_are_replayed(tmp_path, capsys):
    suite, _ = validation_skeleton(tmp_path)
    assert kmc(capsys, "regress", suite, "--update", "--only", "diehard")[0] == 0
    stored = tmp_path / "stored" / "diehard.standard" / "NotSolved.json"
    doc = json.loads(stored.read_text())
    # another last step that is enabled but does not solve the puzzle: the trace replays,
    # and the property holds on its last state
    from kmc.api import build
    from kmc.model.trace import Trace
    model = build("diehard")
    prop = next(p for p in model.properties() if p.name == "NotSolved")
    before = Trace.replay(model, doc["init_index"], doc["action_indices"][:-1]).last
    doc["action_indices"][-1] = next(i for i, a in enumerate(model.actions(before))
                                     if prop.check(model.next_state(before, a)))
    stored.write_text(json.dumps(doc))
    code, out, _ = kmc(capsys, "regress", suite, "--only", "diehard.standard")
    assert code == 1 and "NotSolved now holds on its last state" in out
    doc["action_indices"][-1] = 99
    stored.write_text(json.dumps(doc))
    code, out, _ = kmc(capsys, "regress", suite, "--only", "diehard.standard")
    assert code == 1
    assert "stored counterexample for NotSolved no longer reproduces" in out
    assert "action #99 is not enabled" in out
    stored.unlink()
    code, out, _ = kmc(capsys, "regress", suite, "--only", "diehard.standard")
    assert code == 1 and "stored counterexample for NotSolved is missing" in out


def test_a_stored_counterexample_must_replay_as_recorded(tmp_path, capsys):
    """The same steps still reach the violation, but a recorded state is not the model's
    any more (as when the model's states gain a field): `kmc replay` of the file would
    diverge, so the entry fails until `--update` re-records it."""
    suite, _ = validation_skeleton(tmp_path)
    assert kmc(capsys, "regress", suite, "--update", "--only", "diehard")[0] == 0
    stored = tmp_path / "stored" / "diehard.standard" / "NotSolved.json"
    doc = json.loads(stored.read_text())
    doc["steps"][1]["state"]["big"] += 1
    stored.write_text(json.dumps(doc))
    code, out, _ = kmc(capsys, "regress", suite, "--only", "diehard.standard")
    assert code == 1
    assert "stored counterexample for NotSolved no longer replays as recorded" in out
    assert "now leads to a different state" in out and "kmc regress --update" in out
    code, out, _ = kmc(capsys, "regress", suite, "--update", "--only", "diehard.standard")
    assert code == 0 and "re-recorded (the recorded states changed)" in out
    assert kmc(capsys, "regress", suite, "--only", "diehard.standard")[0] == 0
    assert json.loads(stored.read_text())["steps"][1]["state"]["big"] == \
        doc["steps"][1]["state"]["big"] - 1


def test_parallel_runs_report_like_serial_ones(tmp_path, capsys):
    suite, _ = validation_skeleton(tmp_path)
    kmc(capsys, "regress", suite, "--update", "--tier", "smoke")

    def run(jobs):
        code, out, _ = kmc(capsys, "regress", suite, "--tier", "smoke", "--json", "-j", jobs)
        entries = json.loads(out)["entries"]
        for e in entries:
            e.pop("elapsed_s")
        return code, entries
    assert run(1) == run(2)


def test_add_missing_covers_every_scenario_and_variant(tmp_path, capsys):
    from kmc import catalog

    suite = suite_file(tmp_path / "s.toml", '[[entry]]\nscenario = "diehard"\n',
                       traces="stored")
    code, _out, _ = kmc(capsys, "regress", suite, "--update", "--add-missing",
                        "--only", "twophase", "--only", "diehard")
    assert code == 0
    entries = read_suite(str(suite)).entries
    covered = {(e.scenario, e.variant or "standard") for e in entries}
    for sc in catalog.scenarios().values():
        assert {(sc.name, v) for v in sc.variants} <= covered
    assert all(e.expect is not None for e in entries
               if e.scenario in ("twophase", "diehard"))
    assert kmc(capsys, "regress", suite, "--add-missing")[0] == 2  # needs --update


def test_the_shipped_suite_covers_every_scenario_and_variant():
    from kmc import catalog

    suite = read_suite(str(SHIPPED))
    have = {(e.scenario, e.variant) for e in suite.entries if e.expect is not None}
    missing = [f"{sc.name} [{v}]" for sc in catalog.scenarios().values()
               for v in sc.variants if (sc.name, v) not in have]
    assert not missing, ("regressions.toml has no recorded entry for "
                         f"{', '.join(missing)}: run `kmc regress --update --add-missing`")
    expected_dirs = {e.id for e in suite.entries if e.expect and e.expect.violated}
    stored = {d.name for d in Path(suite.traces_dir).iterdir()
              if d.is_dir() and d.name != "__pycache__"}
    assert stored == expected_dirs, "orphaned or missing stored counterexamples"


def crashing_check(*_args, **_kwargs):
    raise RuntimeError("model exploded")


def dying_check(scenario, *args, **kwargs):
    """kmc.api.check, except that the process checking scenario "x" is killed, as the
    kernel's out-of-memory killer would kill it."""
    if scenario == "x":
        os.kill(os.getpid(), signal.SIGKILL)
    from kmc.api import check
    return check(scenario, *args, **kwargs)


def test_a_worker_that_dies_is_its_entrys_error_and_the_others_run():
    """A killed worker breaks the whole process pool: the entries it did not finish run
    again one by one, and only the one whose process dies again is an error."""
    from kmc.reports.regress.runner import ERROR, NEW, Job, run_entries
    from kmc.reports.regress.suite import parse_suite

    text = "".join(f'[[entry]]\nid = "{i}"\nscenario = "{s}"\n\n'
                   for i, s in (("a", "diehard"), ("b", "x"), ("c", "diehard"), ("d", "diehard")))
    suite = parse_suite(text, "s.toml")
    jobs = [Job(i, e, suite.traces_dir, dying_check) for i, e in enumerate(suite.entries)]
    seen = []
    outcomes = run_entries(jobs, 2, seen.append)
    assert [o.entry.id for o in outcomes] == [o.entry.id for o in seen] == list("abcd")
    assert [o.status for o in outcomes] == [NEW, ERROR, NEW, NEW]
    assert "process running it died" in outcomes[1].error
    assert outcomes[0].got.states == outcomes[2].got.states > 0


def test_a_crashing_run_is_an_error_case_not_a_crash_of_regress(tmp_path):
    from kmc.reports.regress.junit import junit_bytes
    from kmc.reports.regress.runner import ERROR, Job, run_entries
    from kmc.reports.regress.suite import parse_suite

    suite = parse_suite('[[entry]]\nscenario = "diehard"\n\n[[entry]]\nscenario = "x"\n',
                        str(tmp_path / "s.toml"))
    jobs = [Job(i, e, suite.traces_dir, crashing_check) for i, e in enumerate(suite.entries)]
    outcomes = run_entries(jobs, 1)
    assert [o.status for o in outcomes] == [ERROR, ERROR]
    assert outcomes[0].error == "RuntimeError: model exploded"
    (tmp_path / "j.xml").write_bytes(junit_bytes(outcomes, "s.toml", 0.0))
    assert_junit_shape(tmp_path / "j.xml", 2)
    assert ET.parse(tmp_path / "j.xml").getroot().find("testsuite").get("errors") == "2"
