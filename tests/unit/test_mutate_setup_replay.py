"""A mutant of the set-up or of module-level code (a constant, a class body) is decided
by replay when what it builds, and the code that reads what it changed, give the
baseline's run: the same outcomes as exploring every run."""
import importlib.util
import sys

import pytest

from kmc.mutate import snapshot as sn
from kmc.mutate.runner import make_plan
from kmc.reports.regress.suite import Entry
from mutate_toy import both_ways, outcome

#: a counter whose successor table the set-up builds; ``UNUSED`` is read by nothing,
#: ``STEP`` by the successors only, ``LIMIT`` by a property too, and ``table``'s guard
#: ``i > 100`` never holds
SETUP = '''from typing import NamedTuple

from kmc import Model, always, eventually

LIMIT = 3
STEP = 1
UNUSED = 7


class Config(NamedTuple):
    limit: int = LIMIT
    spare: int = 5
    slack: int = 1


def table(n):
    out = []
    for i in range(n + 1):
        if i > 100:
            out.append(-i)
        else:
            out.append(i + 1)
    return tuple(out)


class Counter(Model):
    name = "counter-setup"

    def __init__(self, config):
        self.config = config
        self.next = table(config.limit)

    def init_states(self):
        return [(0,)]

    def actions(self, s):
        return ["inc"] if s[0] < self.config.limit else []

    def next_state(self, s, a):
        return (min(self.next[s[0]], s[0] + STEP),)

    def action_name(self, a):
        return a

    def action_names(self):
        return ("inc", "idle") if self.config.spare > 0 else ("idle",)

    @property
    def weakly_fair(self):
        return tuple(n for n in self.action_names() if n != "idle")

    def properties(self):
        return [always("Small", lambda s: s[0] <= LIMIT),
                eventually("Reaches", lambda s: s[0] == 3)]


def make():
    return Counter(Config(limit=3, spare=5))
'''


def _lines(text):
    return [n for n, line in enumerate(SETUP.splitlines(), 1) if line.strip() == text]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return both_ways(tmp_path_factory, "mutate_setup_model", SETUP)


def test_every_mutant_gets_the_outcome_of_a_full_run(runs):
    fast, full = runs
    assert {k: outcome(r) for k, r in fast.items()} == {k: outcome(r) for k, r in full.items()}
    assert not any(r["replayed"] for r in full.values())


def test_a_constant_nothing_reads_is_replayed(runs):
    fast, _full = runs
    (unused,) = _lines("UNUSED = 7")
    rows = [r for r in fast.values() if r["line"] == unused]
    assert len(rows) == 2  # 7 -> 8 and 7 -> 6
    assert all(r["outcome"] == "equivalent" and r["replayed"] == 1 for r in rows)


def test_a_constant_the_successors_read_is_replayed_on_their_states(runs):
    fast, _full = runs
    (step,) = _lines("STEP = 1")
    rows = {r["description"]: r for r in fast.values() if r["line"] == step}
    # STEP 2: min(i + 1, i + 2) is still i + 1; the successors are asked again and agree
    assert rows["1 -> 2"]["outcome"] == "equivalent" and rows["1 -> 2"]["replayed"] == 1
    # STEP 0: no step at all; the replay sees it and the run is explored
    assert rows["1 -> 0"]["outcome"] != "equivalent" and not rows["1 -> 0"]["replayed"]


def test_a_constant_a_property_reads_is_explored(runs):
    fast, _full = runs
    (limit,) = _lines("LIMIT = 3")
    rows = [r for r in fast.values() if r["line"] == limit]
    assert rows and not any(r["replayed"] for r in rows)


def test_a_default_the_set_up_overrides_is_replayed(runs):
    fast, _full = runs
    (spare,) = _lines("spare: int = 5")
    rows = [r for r in fast.values() if r["line"] == spare]
    assert len(rows) == 2 and all(r["outcome"] == "equivalent" and r["replayed"]
                                  for r in rows)
    # a default the set-up uses: the model it builds differs in ``config.slack``, which
    # no code reads (``setup_reads``), so the run is still the baseline's
    (slack,) = _lines("slack: int = 1")
    rows = [r for r in fast.values() if r["line"] == slack]
    assert len(rows) == 2 and all(r["outcome"] == "equivalent" and r["replayed"] == 1
                                  for r in rows)


def test_action_names_are_compared_by_the_fair_actions_they_give(runs):
    fast, _full = runs
    (names,) = _lines('return ("inc", "idle") if self.config.spare > 0 else ("idle",)')
    rows = {r["operator"]: r for r in fast.values() if r["line"] == names}
    # ``spare >= 0``: the same names, and the run is the baseline's
    assert rows["cmp"]["outcome"] == "equivalent" and rows["cmp"]["replayed"] == 1
    # the branches exchanged: "inc" is no longer fair, so the counter may stop short
    assert rows["swap-if"]["outcome"] == "property" and \
        rows["swap-if"]["killed_by"] == ["Reaches"] and not rows["swap-if"]["replayed"]


#: a counter that checks no liveness property: its fair actions, derived from its action
#: names, count only through the check of the declaration
SAFETY = '''from kmc import Model, always


class Counter(Model):
    name = "counter-safety"

    def __init__(self, spare):
        self.spare = spare

    def init_states(self):
        return [(0,)]

    def actions(self, s):
        return ["inc"] if s[0] < 3 else []

    def next_state(self, s, a):
        return (s[0] + 1,)

    def action_name(self, a):
        return a

    def action_names(self):
        names = ("inc", "idle") if self.spare > 0 else ("idle",)
        return names + ("wait",) if self.spare > 1 else names

    @property
    def weakly_fair(self):
        return ("inc",) + tuple(n for n in self.action_names() if n == "wait")

    def properties(self):
        return [always("Small", lambda s: s[0] <= 3)]


def make():
    return Counter(5)
'''


@pytest.fixture(scope="module")
def safety_runs(tmp_path_factory):
    return both_ways(tmp_path_factory, "mutate_safety_model", SAFETY)


def test_without_liveness_fair_actions_count_only_through_their_check(safety_runs):
    fast, full = safety_runs
    assert {k: outcome(r) for k, r in fast.items()} == {k: outcome(r) for k, r in full.items()}
    lines = SAFETY.splitlines()
    wait = lines.index("        return names + (\"wait\",) if self.spare > 1 else names") + 1
    names = lines.index(
        "        names = (\"inc\", \"idle\") if self.spare > 0 else (\"idle\",)") + 1
    rows = {(r["line"], r["operator"], r["n"]): r for r in fast.values()}
    # the branches exchanged, "wait" is no longer a name, so no longer fair; the
    # declaration still holds, no run reads the fair actions: the run is the baseline's
    dropped = rows[(wait, "swap-if", 0)]
    assert dropped["outcome"] == "equivalent" and dropped["replayed"] == 1
    # the branches exchanged, "inc" is fair but no longer a name: the check fails
    broken = rows[(names, "swap-if", 0)]
    assert broken["outcome"] == "crash" and broken["killed_by"] == ["UsageError"]
    assert not broken["replayed"]


def test_set_up_code_is_replayed_when_it_builds_the_same(runs):
    fast, _full = runs
    (guard,) = _lines("if i > 100:")
    (bump,) = _lines("out.append(i + 1)")
    never = [r for r in fast.values() if r["line"] == guard and r["outcome"] == "equivalent"]
    assert len(never) >= 3 and all(r["replayed"] == 1 for r in never)
    # another table: the set-up built something else, ``self.next``, which only
    # ``next_state`` reads: the states whose successors read it are asked again. Where
    # the successors' ``min`` hides the change (``i + 2``) the run is the baseline's;
    # elsewhere it is explored
    changed = {r["description"]: r for r in fast.values() if r["line"] == bump}
    assert len(changed) >= 3
    assert changed["1 -> 2"]["outcome"] == "equivalent" and changed["1 -> 2"]["replayed"]
    assert changed["1 -> 0"]["outcome"] != "equivalent" and not changed["1 -> 0"]["replayed"]


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        del sys.modules[name]
    return mod


def test_value_compares_two_loads_by_content(tmp_path):
    path = tmp_path / "mutate_value_probe.py"
    path.write_text(SETUP)
    a, b = (_load(path, "mutate_value_probe") for _ in range(2))
    own = {"mutate_value_probe"}
    assert a.Counter is not b.Counter
    assert sn.namespace(a, own) == sn.namespace(b, own)
    assert sn.value(_with_me(a.make())) == sn.value(_with_me(b.make()))
    assert sn.value(_with_me(a.make())) != sn.value(_with_me(a.Counter(a.Config(2))))
    assert sn.value(object()) == sn.value(object())  # a sentinel has no content
    path.write_text(SETUP.replace("UNUSED = 7", "UNUSED = 8").replace(
        "out.append(i + 1)", "out.append(i + 2)"))
    c = _load(path, "mutate_value_probe")
    names, attributes = sn.changed(sn.namespace(a, own), sn.namespace(c, own))
    assert names == {"UNUSED", "table"} and not attributes
    assert sn.value(lambda: 0) != sn.value(lambda: 1)
    assert sn.OPAQUE != sn.OPAQUE


def _with_me(model):
    model.me = model  # a cycle
    return model


def test_readers_tell_a_module_attribute_from_a_field(tmp_path, monkeypatch):
    (tmp_path / "mutate_readers_a.py").write_text("EMPTY = 1\nquorum = 2\n")
    (tmp_path / "mutate_readers_b.py").write_text(
        "import mutate_readers_a as a\n"
        "EMPTY = 0\n\n"
        "def own_empty():\n    return EMPTY\n\n"
        "def other_empty():\n    return a.EMPTY\n\n"
        "def field(w):\n    return w.quorum\n\n"
        "def by_name():\n    return getattr(a, 'quorum')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import mutate_readers_b as b

    files = {str((tmp_path / f"mutate_readers_{x}.py").resolve()): x for x in "ab"}
    line = {f.__name__: f.__code__.co_firstlineno
            for f in (b.own_empty, b.other_empty, b.field, b.by_name)}

    def found(pairs):
        return {n for _f, n in sn.readers([b], pairs, set(), files)}
    # b's own EMPTY changed: only the function reading b's global
    assert found({("mutate_readers_b", "EMPTY")}) == {line["own_empty"]}
    # a's EMPTY: only the one reading it through the module
    assert found({("mutate_readers_a", "EMPTY")}) == {line["other_empty"]}
    # a's quorum: an attribute of anything else may be it, and so may a string
    assert found({("mutate_readers_a", "quorum")}) == {line["field"], line["by_name"]}
    assert sn.readers([b], {("mutate_readers_b", "EMPTY")}, set(), {}) is None


def test_each_run_says_how_it_was_decided(tmp_path):
    """The worker's answer tells, per run, how it was decided and what it took
    (``bench/mutate_bench.py`` sums it): replayed, explored reusing the recorded
    successors, or explored in full and why."""
    from kmc.mutate.runner import run_baseline, run_mutants

    path = tmp_path / "mutate_setup_how.py"
    path.write_text(SETUP)
    plan = make_plan([Entry(id="setup", scenario=f"{path}:make")])
    (unused,), (step,) = _lines("UNUSED = 7"), _lines("STEP = 1")
    plan.mutants = [m for m in plan.mutants if m.line in (unused, step)]
    hows = {}
    run_mutants(plan, run_baseline(plan, 1), 1,
                on_result=lambda m, result: hows.update({m.description + f"@{m.line}":
                                                         result["how"]["setup"]}))
    assert {k: how for k, (how, took) in hows.items()} == {
        f"7 -> 8@{unused}": "same", f"7 -> 6@{unused}": "same",
        f"1 -> 2@{step}": "same", f"1 -> 0@{step}": "reuse"}
    assert all(took >= 0 for _how, took in hows.values())
