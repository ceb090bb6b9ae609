"""`kmc mutate` on a toy model (tests/mutate_toy.py): every outcome, isolation from the
source tree, determinism, the report formats and bad input."""
import json
import os
import sys

import pytest

from kmc.cli import main
from kmc.mutate.runner import make_plan, mutate
from kmc.reports.regress.suite import Entry
from mutate_toy import SOURCE, STEM, line_of, toy_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return toy_file(tmp_path_factory)


def _entries(path):
    return [Entry(id="toy", scenario=f"{path}:make")]


@pytest.fixture(scope="module")
def runs(toy):
    """Two whole runs of the toy's mutants, and the toy's folder before and after."""
    folder = os.path.dirname(toy)
    plan = make_plan(_entries(toy))
    before = sorted(os.listdir(folder))
    first = mutate(plan, jobs=2)
    after = sorted(os.listdir(folder))
    # the second run repeats the mutants of actions(), where every outcome occurs
    lines = range(line_of("def actions"), line_of("def next_state"))
    second = mutate(make_plan(_entries(toy), only=[f":{n}:" for n in lines]), jobs=2)
    return first, second, before, after


def _find(rep, text, operator, n=0, offset=None):
    line = line_of(text)
    rows = [r for r in rep["mutants"] if r["line"] == line and r["operator"] == operator
            and r["n"] == n and (offset is None or r["column"] == offset)]
    assert len(rows) == 1, (text, operator, rows)
    return rows[0]


def test_a_weakened_guard_is_killed_by_the_property(runs):
    row = _find(runs[0], "if s.x < self.limit", "cmp")
    assert (row["outcome"], row["killed_by"]) == ("property", ["Bounded"])
    assert row["description"] == "`<` -> `<=`"


def test_a_dropped_action_is_killed_by_the_missing_witness(runs):
    row = _find(runs[0], 'out.append("mark")', "drop-stmt")
    assert (row["outcome"], row["killed_by"]) == ("witness", ["Marked"])


def test_a_crash_is_a_kill_and_names_the_exception(runs):
    row = _find(runs[0], "out = []", "drop-stmt")
    assert (row["outcome"], row["killed_by"]) == ("crash", ["NameError"])


def test_a_crash_ends_the_mutant_at_its_first_run_unless_every_run(toy):
    entries = [Entry(id=f"toy{k}", scenario=f"{toy}:make") for k in (1, 2)]
    line = line_of("out = []")
    for every_run, evidence in ((False, 1), (True, 2)):
        plan = make_plan(entries, only=[f":{line}:"])
        plan.mutants = [m for m in plan.mutants if m.operator == "drop-stmt"]
        (row,) = mutate(plan, jobs=1, every_run=every_run)["mutants"]
        assert (row["outcome"], row["killed_by"]) == ("crash", ["NameError"])
        assert len(row["evidence"]) == evidence, row["evidence"]


def test_a_changed_count_alone_is_not_a_kill(runs):
    line = line_of("if s.y == 0 and s.x > 1")
    col = SOURCE.splitlines()[line - 1].index("1")
    row = _find(runs[0], "if s.y == 0 and s.x > 1", "const", 0, col)
    assert row["outcome"] == "count_only" and row["killed_by"] == []
    assert row["evidence"] == ["toy: states 6 -> 5"]


def test_a_guard_that_never_fires_gives_equivalent_mutants(runs):
    for op, n in (("cmp", 0), ("const", 0), ("const", 1), ("drop-stmt", 0)):
        assert _find(runs[0], "if s.x > 100", op, n)["outcome"] == "equivalent"
    # code no run executes is not shown harmless: survived, and listed
    never = _find(runs[0], 'out.append("never")', "drop-stmt")
    assert never["outcome"] == "survived" and never["reached"] is False
    assert list(runs[0]["unreached"].values()) == [[line_of('out.append("never")')]]


def test_a_statement_marked_no_mutate_has_no_mutant_and_is_listed(runs):
    line = line_of("# pragma: no mutate")
    assert not [r for r in runs[0]["mutants"] if r["line"] == line]
    assert list(runs[0]["excluded"].values()) == [[line]]


def test_display_code_is_not_mutated(runs):
    line = line_of("def format_state")
    assert not [r for r in runs[0]["mutants"] if line <= r["line"] <= line + 1]


def test_score_counts_kills_over_non_equivalent_mutants(runs):
    rep = runs[0]
    rows = rep["mutants"]
    kills = sum(r["outcome"] in ("property", "witness", "crash") for r in rows)
    counted = sum(r["outcome"] != "equivalent" for r in rows)
    assert rep["score"]["overall"] == {"killed": kills, "of": counted,
                                       "score": round(kills / counted, 4)}
    assert rep["score"]["properties"]["Bounded"]["killed"] == sum(
        "Bounded" in r["killed_by"] for r in rows)
    assert set(rep["score"]["outcomes"]) == {"property", "witness", "crash", "count_only",
                                             "survived", "equivalent"}


def test_the_source_tree_is_untouched_and_a_second_run_agrees(runs, toy):
    first, second, before, after = runs
    with open(toy) as f:
        assert f.read() == SOURCE
    assert after == before  # no mutated copy or bytecode left beside the model
    again = {r["id"]: (r["outcome"], r["killed_by"]) for r in second["mutants"]}
    assert len(again) > 20
    assert again == {r["id"]: (r["outcome"], r["killed_by"]) for r in first["mutants"]
                     if r["id"] in again}
    # this process still has the unmutated model
    model = sys.modules[STEM].make()
    assert model.actions(model.init_states()[0]) == ["inc"]


def test_json_markdown_and_list(toy, tmp_path, capsys):
    md = tmp_path / "mutants.md"
    code = main(["mutate", "--scenario", f"{toy}:make", "--only", ":cmp:", "-j", "2",
                 "--json", "--markdown", str(md)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["mutants"] and all(r["operator"] == "cmp" for r in out["mutants"])
    for r in out["mutants"]:
        assert {"id", "file", "line", "operator", "outcome", "killed_by"} <= set(r)
        assert r["id"].startswith(f"{r['file']}:{r['line']}:")
        # a mutant that ran says how long its worker took; one no run executes did not run
        assert (r["elapsed_s"] >= 0) if r["reached"] else r["elapsed_s"] is None
    assert set(out["score"]) >= {"overall", "files", "properties"}
    assert md.read_text().startswith("# Mutation report: ")
    assert main(["mutate", "--scenario", f"{toy}:make", "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert any(":cmp:0  `<` -> `<=`" in line for line in listed)
    assert len(listed) == len({line.split()[0] for line in listed})
    assert main(["mutate", "--scenario", f"{toy}:make", "--list", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [f"{m['id']}  {m['change']}" for m in doc["mutants"]] == listed
    assert all(m["id"] == f"{m['file']}:{m['line']}:{m['column']}:{m['operator']}:"
               f"{m['id'].rsplit(':', 1)[1]}" for m in doc["mutants"])


@pytest.mark.parametrize("argv, needle", [
    (["--files", "no/such/file.py"], "no such file"),
    (["--files", os.path.join(ROOT, "model", "validation", "twophase.py")],
     "no chosen scenario uses"),
    (["--only", "no-such-mutant"], "no mutant matches"),
    (["--only", "no-such-mutant"], "look like {toy}:"),  # an id of this model's
    (["--suite", os.path.join(ROOT, "regressions", "regressions.toml")], "alternatives"),
    (["-j", "0"], "-j/--jobs"),
    (["--time-budget", "-1"], "--time-budget"),
    (["--markdown", "{toy}/m.md"], "--markdown"),
    (["--files", os.path.join(ROOT, "model", "validation")], "validation is a directory"),
    (["--timeout", "0.000001", "--only", ":cmp:"], "the unmutated runs"),
])
def test_bad_input_is_one_line_and_exit_2(toy, capsys, argv, needle):
    argv = [a.replace("{toy}", toy) for a in argv]
    needle = needle.replace("{toy}", toy)
    code = main(["mutate", "--scenario", f"{toy}:make"] + argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("kmc: error: "), err
    assert needle in err[0]


def test_a_markdown_report_that_cannot_be_written_loses_no_json(toy, tmp_path, capsys,
                                                                  monkeypatch):
    from kmc.reports import inputs

    def full_disk(path, text, flag):
        raise inputs.InputError(f"{flag} {path} could not be written (No space left)")

    monkeypatch.setattr(inputs, "write_output", full_disk)
    code = main(["mutate", "--scenario", f"{toy}:make", "--only", ":cmp:", "-j", "1",
                 "--json", "--markdown", str(tmp_path / "m.md")])
    out, err = capsys.readouterr()
    assert code == 2 and "No space left" in err
    assert json.loads(out)["mutants"]


@pytest.mark.parametrize("argv, needle", [
    (["--variant", "kip516"], "go with --scenario"),
    (["--scenario", "no-such-scenario"], "unknown scenario"),
    (["--suite", "no/such/suite.toml"], "no/such/suite.toml"),
])
def test_bad_runs_are_one_line_and_exit_2(capsys, argv, needle):
    code = main(["mutate"] + argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("kmc: error: "), err
    assert needle in err[0]


def test_a_mutant_stops_at_its_first_kill_unless_every_run(toy):
    """Its runs go smallest first (the baseline's state count): limit 2 before limit 3,
    whatever the suite's order."""
    entries = _entries(toy) + [Entry(id="toy.limit=2", scenario=f"{toy}:make",
                                     params={"limit": 2})]
    line = line_of("if s.x < self.limit")

    def evidence(every_run):
        plan = make_plan(entries, only=[f":{line}:"])
        plan.mutants = [m for m in plan.mutants if m.operator == "cmp"]
        (row,) = mutate(plan, jobs=1, every_run=every_run)["mutants"]
        assert (row["outcome"], row["killed_by"]) == ("property", ["Bounded"])
        return row["evidence"]

    assert evidence(False) == ["toy.limit=2: Bounded violated"]
    assert evidence(True) == ["toy.limit=2: Bounded violated", "toy: Bounded violated"]


def test_a_mutant_runs_only_the_entries_that_execute_its_line(toy):
    """With limit 1 the counter never passes 1, so `out.append("mark")` never runs there:
    its mutants skip that entry (they would run it exactly as the baseline did); the
    guard above it runs in both."""
    from kmc.mutate.lines import statement_lines
    from kmc.mutate.runner import entries_reaching, run_baseline

    entries = _entries(toy) + [Entry(id="toy.limit=1", scenario=f"{toy}:make",
                                     params={"limit": 1})]
    plan = make_plan(entries)
    base = run_baseline(plan, jobs=2)
    stmt = statement_lines(SOURCE)

    def reached(text, operator):
        (m,) = [m for m in plan.mutants if m.line == line_of(text)
                and m.operator == operator][:1]
        return [e.id for e in entries_reaching(plan, base, m, stmt)]

    assert reached('out.append("mark")', "drop-stmt") == ["toy"]
    assert reached("if s.x < self.limit", "cmp") == ["toy.limit=1", "toy"]  # smallest first
    assert reached('out.append("never")', "drop-stmt") == []


def test_a_node_on_a_continuation_line_belongs_to_its_statement():
    from kmc.mutate.lines import statement_lines

    lines = statement_lines("def f(a):\n    return (a +\n            2)\n")
    assert lines[(3, 12)] == 2  # the constant 2 runs with `return` on line 2


BUDGET = '''from typing import NamedTuple

from kmc import Model, always


class S(NamedTuple):
    x: int
    budget: int


class Spend(Model):
    """A counter that spends a budget of three steps."""
    name = "spend"

    def init_states(self):
        return [S(0, 3)]

    def actions(self, s):
        return ["inc"] if s.budget > 0 else []

    def next_state(self, s, a):
        return s._replace(x=s.x + 1, budget=s.budget - 1)

    def properties(self):
        return [always("NonNegative", lambda s: s.x >= 0)]


def make():
    return Spend()
'''


def test_a_mutant_that_blows_the_state_space_up_stops_at_the_state_limit(tmp_path):
    """Dropping ``budget=`` makes the counter endless: its run stops after 10 times the
    baseline's 4 states plus 1,000, as a kill, instead of running out its time limit."""
    from kmc.mutate.classify import GROWTH, GROWTH_SLACK

    path = tmp_path / "mutate_budget_model.py"
    path.write_text(BUDGET)
    plan = make_plan([Entry(id="spend", scenario=f"{path}:make")])
    plan.mutants = [m for m in plan.mutants
                    if m.operator == "drop-field" and "budget" in m.description]
    (row,) = mutate(plan, jobs=1)["mutants"]
    assert (row["outcome"], row["killed_by"]) == ("crash", ["max_states"])
    assert row["evidence"] == [f"spend: the state space outgrew the state limit "
                               f"({GROWTH} times the baseline's states, plus "
                               f"{GROWTH_SLACK:,})"]


#: a counter in a 1-tuple whose (empty) tail is copied twice at every step; ``s[1:]`` ->
#: ``s[0:]`` in the second copy makes every step double the tuple, so a few dozen states
#: would hold billions of items
DOUBLING = '''from kmc import Model, always


class Doubling(Model):
    name = "doubling"

    def init_states(self):
        return [(0,)]

    def actions(self, s):
        return ["inc"] if s[0] < 40 else []

    def next_state(self, s, a):
        return (s[0] + 1,) + s[1:] + s[1:]

    def properties(self):
        return [always("Small", lambda s: s[0] <= 40)]


def make():
    return Doubling()
'''


def test_a_mutant_whose_states_grow_without_bound_stops_at_the_address_limit(
        tmp_path, monkeypatch):
    """The mutant's states double at every step, too few of them for the state limit:
    no explorer guard looks between two allocations, but the worker's address-space
    limit makes one fail, a crash that ends the mutant at its first run."""
    from kmc.mutate import worker

    monkeypatch.setattr(worker, "WORKER_ADDRESS_SPACE", 64 * 1024 * 1024)
    path = tmp_path / "mutate_doubling_model.py"
    path.write_text(DOUBLING)
    entries = [Entry(id=f"doubling{k}", scenario=f"{path}:make") for k in (1, 2)]
    plan = make_plan(entries)
    line = DOUBLING.splitlines()[line_of("s[1:] + s[1:]", DOUBLING) - 1]
    col = line.rindex("s[1:]") + 2
    plan.mutants = [m for m in plan.mutants if m.col == col and m.description == "1 -> 0"]
    # each state is printed for its key (ever longer): on a slow machine the default
    # time limit, 3 times the baseline's 0.1 s plus 10 s, can come before the limit
    (row,) = mutate(plan, jobs=1, timeout=300)["mutants"]
    assert (row["outcome"], row["killed_by"]) == ("crash", ["MemoryError"]), row
    assert len(row["evidence"]) == 1  # the second run never started

