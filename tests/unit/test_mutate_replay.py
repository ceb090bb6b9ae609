"""`kmc mutate` decides a run the mutant cannot have changed by replaying the baseline's
state graph: the same outcomes as exploring every run, and never for code whose effect
can escape the successors (a cached function)."""
import json
from typing import NamedTuple

import pytest

from kmc.cli import main

from kmc.mutate.replay import same_graph
from kmc.mutate.runner import make_plan, mutate
from kmc.reports.regress.suite import Entry
from mutate_toy import (lines_of, load, model_file, outcome, reach, record_graph, toy_file,
                        watched)

#: a counter (its state a plain tuple: no class a mutant could reload) whose step goes
#: through a cached helper; ``x > 100`` never holds, so the mutants of both guards
#: change nothing
CACHED = '''from functools import lru_cache

from kmc import Model, always, sometimes


@lru_cache(maxsize=None)
def bump(x):
    if x > 100:
        return x + 2
    return x + 1


class Cached(Model):
    name = "cached"

    def init_states(self):
        return [(0,)]

    def actions(self, s):
        out = []
        if s[0] < 3:
            out.append("inc")
        if s[0] > 100:
            out.append("never")
        return out

    def next_state(self, s, a):
        return (bump(s[0]),) if a == "inc" else None

    def properties(self):
        return [always("Small", lambda s: s[0] <= 3),
                sometimes("Three", lambda s: s[0] == 3)]


def make():
    return Cached()
'''


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return toy_file(tmp_path_factory)


@pytest.fixture(scope="module")
def cached(tmp_path_factory):
    return model_file(tmp_path_factory, "mutate_cached_model", CACHED)


def _both(path):
    plan = lambda: make_plan([Entry(id="toy", scenario=f"{path}:make")])  # noqa: E731
    return mutate(plan(), jobs=2), mutate(plan(), jobs=2, replay=False)


@pytest.fixture(scope="module")
def cached_runs(cached):
    """The cached model's mutants with replay and explored in full."""
    return _both(cached)


def _lines_of(text, source=CACHED):
    return lines_of(text, source)


def test_replay_gives_every_mutant_the_outcome_of_a_full_run(cached_runs):
    fast, full = cached_runs
    assert [outcome(r) for r in fast["mutants"]] == [outcome(r) for r in full["mutants"]]
    assert not any(r["replayed"] for r in full["mutants"])
    # the guard that never fires: its mutants (but the one that reads past the state's
    # end) are decided by replay, as equivalent
    never = [r for r in fast["mutants"] if r["line"] in _lines_of("if s[0] > 100:")
             and r["outcome"] == "equivalent"]
    assert len(never) >= 4 and all(r["replayed"] == 1 for r in never)
    # the properties' code runs outside the successors: never replayed from the graph;
    # only a mutant whose probe never saw it differ is decided, as equivalent
    props = [r for r in fast["mutants"] if r["function"] == "properties"]
    assert props and all(r["outcome"] == "equivalent" and watched(r)
                         for r in props if r["replayed"])
    assert any(not r["replayed"] for r in props if r["outcome"] == "equivalent")
    # a mutant that changes the graph is explored in full and killed
    killed = [r for r in fast["mutants"] if r["outcome"] in ("property", "witness")]
    assert killed and not any(r["replayed"] for r in killed)


def test_a_cached_function_is_never_replayed(cached_runs):
    fast, _full = cached_runs
    lines = CACHED.splitlines()
    in_bump = range(lines.index("def bump(x):") + 1, lines.index("class Cached(Model):"))
    inside = [r for r in fast["mutants"] if r["line"] in in_bump]
    guard = [r for r in inside if r["line"] in _lines_of("if x > 100:")]
    assert {r["outcome"] for r in guard} == {"equivalent"}
    # its guard never fires either, but the cache may hand its answer out where its
    # lines do not run: explored in full, unless a probe watched the mutant and never
    # saw it give another value (then no evaluation anywhere differed)
    assert inside and all(watched(r) for r in inside if r["replayed"])
    assert any(r["replayed"] for r in guard if r["operator"] == "cmp")
    # dropping the guard changes nothing where its test is false: decided so
    dropped = [r for r in guard if r["operator"] == "drop-stmt"]
    assert dropped and all(r["replayed"] for r in dropped)
    # a mutant the probe saw differ is explored in full, and killed
    step = [r for r in inside if r["line"] in _lines_of("return x + 1")]
    assert step and not any(r["replayed"] for r in step) and \
        {r["outcome"] for r in step} <= {"property", "witness"}



def _toy_module(toy):
    return load(toy)


def test_same_graph_tells_a_changed_successor_apart(toy):
    mod = _toy_module(toy)
    graph = record_graph(mod.make(3))
    assert same_graph(mod.make(3), graph)
    assert not same_graph(mod.make(4), graph)  # x may now reach 4: another successor

    class Relabelled(mod.Toy):
        def actions(self, s):
            return ["step" if a == "inc" else a for a in super().actions(s)]

    assert not same_graph(Relabelled(3), graph)  # the same states, another action


def test_only_the_states_that_called_the_function_are_asked_again(toy):
    mod = _toy_module(toy)
    states, expanded, successors, calls, _touched = record_graph(mod.make(3))[:5]
    # no state called the function: nothing is asked, so even another model agrees
    untouched = (states, expanded, successors, calls, (frozenset(),) * len(expanded))
    assert same_graph(mod.make(4), untouched, {(toy, 1)})
    touched = (states, expanded, successors, calls,
               (frozenset({(toy, 1)}),) * len(expanded))
    assert not same_graph(mod.make(4), touched, {(toy, 1)})


def test_a_run_explored_after_a_replay_reuses_the_untouched_successors(toy):
    """A run the replay cannot decide is explored asking the mutant's model only for the
    states whose expansion called the changed code and the states never recorded:
    every other state gets its recorded successors, and the run reaches what the
    mutant's own run reaches."""
    from kmc.mutate.reuse import reusing

    mod = _toy_module(toy)
    states, expanded, successors, calls, _touched = record_graph(mod.make(3))[:5]
    asked = []
    mutant = mod.make(4)  # x may now reach 4

    def succ(s):
        asked.append(s)
        return mutant.successors(s)

    # the states where x is 2 or more called the changed code; the others did not
    touched = tuple(frozenset({(toy, 1)}) if states[i][0] >= 2 else frozenset()
                    for i in expanded)
    reuse = reusing(succ, (states, expanded, successors, calls, touched), {(toy, 1)})
    got = reach(reuse, mutant.init_states())
    seen = set(got)
    assert got == {s: mutant.successors(s) for s in seen}
    assert any(s[0] == 4 for s in seen)  # the mutant's own new states
    assert asked and all(s[0] >= 2 for s in asked)  # only touched or new states asked
    assert len(asked) < len(seen)


def test_a_reusing_run_finds_a_recorded_state_by_identity_or_by_value(toy):
    """The recorded object itself and an equal copy of it both get the recorded
    successors, without the mutant's model being asked; a state never recorded is."""
    from kmc.mutate.reuse import by_value, reusing

    mod = _toy_module(toy)
    states, expanded, successors, calls, _touched = record_graph(mod.make(3))[:5]
    asked = []

    def succ(s):
        asked.append(s)
        return []

    none = (frozenset(),) * len(expanded)
    graph = (states, expanded, successors, calls, none)
    i, want = expanded[0], successors[0]
    recorded = [(a, states[j]) for a, j in want]
    copy = type(states[i])(*states[i])
    assert copy is not states[i]
    # the look-up by value built here, or once for every run by the forking process
    for reuse in (reusing(succ, graph, {(toy, 1)}),
                  reusing(succ, graph, {(toy, 1)}, values=by_value(graph))):
        asked.clear()
        assert reuse(states[i]) == recorded and reuse(copy) == recorded and not asked
        assert reuse(mod.S(9, 9)) == [] and asked == [mod.S(9, 9)]


def test_only_the_questions_that_called_the_function_are_asked_again(toy):
    """A recorded question (a property asking ``actions``) is asked again only when
    it called the changed code: ``actions`` of the state x=3, y=1 is ``inc`` with the
    toy's bound 4 and nothing with bound 3."""
    mod = _toy_module(toy)
    states, expanded, successors, _calls, _touched = record_graph(mod.make(4))[:5]
    at = states.index(mod.S(3, 1))
    none = (frozenset(),) * len(expanded)

    def asked(called):
        return (states, expanded, successors, (("actions", at, (), ["inc"], called),), none)

    assert same_graph(mod.make(3), asked(frozenset()), {(toy, 1)})  # not asked again
    assert same_graph(mod.make(4), asked(frozenset({(toy, 1)})), {(toy, 1)})
    assert not same_graph(mod.make(3), asked(frozenset({(toy, 1)})), {(toy, 1)})


def test_no_replay_flag(cached, capsys):
    only = f":{_lines_of('if s[0] > 100:')[0]}:"
    assert main(["mutate", "--scenario", f"{cached}:make", "--only", only, "-j", "1",
                 "--no-replay", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["mutants"]
    assert rows and not any(r["replayed"] for r in rows)


#: a counter whose property asks the model's ``actions`` (as the KRaft clients'
#: settled properties do): ``x > 100`` never holds, so its mutants change nothing
ASKING = '''from kmc import Model, always, sometimes


def can_inc(x):
    if x > 100:
        return False
    return x < 3


class Asking(Model):
    name = "asking"

    def init_states(self):
        return [(0,)]

    def actions(self, s):
        return ["inc"] if can_inc(s[0]) else []

    def next_state(self, s, a):
        return (s[0] + 1,)

    def properties(self):
        return [always("DoneOrBusy", lambda s: s[0] == 3 or bool(self.actions(s))),
                sometimes("Three", lambda s: s[0] == 3)]


def make():
    return Asking()
'''


def test_code_a_property_reaches_through_actions_is_still_replayed(tmp_path_factory):
    """A property that asks ``model.actions`` asks what the successors ask: the run
    records its answers and a replay asks the mutant the same, so the helper's mutants
    are replayed, with the outcomes of full runs."""
    fast, full = _both(model_file(tmp_path_factory, "mutate_asking_model", ASKING))
    assert [outcome(r) for r in fast["mutants"]] == [outcome(r) for r in full["mutants"]]
    never = [r for r in fast["mutants"] if r["line"] in _lines_of("if x > 100:", ASKING)]
    assert never and all(r["outcome"] == "equivalent" and r["replayed"] == 1
                         for r in never if r["operator"] != "drop-stmt")
    # ``x <= 3``: the counter reaches 4, where nothing is enabled and DoneOrBusy fails
    bound = [r for r in fast["mutants"] if r["line"] in _lines_of("return x < 3", ASKING)
             and r["operator"] == "cmp"]
    assert bound and bound[0]["outcome"] == "property" and \
        bound[0]["killed_by"] == ["DoneOrBusy"]


def test_a_graph_larger_than_its_limit_is_not_kept(toy, monkeypatch):
    """A run with more states than ``graph.MAX_STATES`` records no graph (every
    worker would hold it): its mutants explore it."""
    from kmc.mutate import graph

    mod = _toy_module(toy)
    assert record_graph(mod.make(3)) is not None
    monkeypatch.setattr(graph, "MAX_STATES", 3)
    assert record_graph(mod.make(3)) is None


class _Rec(NamedTuple):
    n: int
    seen: tuple
    __repr__ = tuple.__repr__


def test_a_graph_keys_each_state_by_its_fingerprint():
    """A recorded graph finds its states by ``fingerprint128``: for records made from
    their fields' memoised reprs (a successor's from its parent's), for any other state
    from its whole repr. Equal states are one position."""
    from kmc.model.encoding import fingerprint128
    from kmc.mutate.graph import Graph

    g = Graph()
    todo, done = [_Rec(0, ())], set()
    while todo:
        s = todo.pop()
        if s in done:
            continue
        done.add(s)
        out = [(("inc", k), s._replace(n=s.n + k, seen=tuple(sorted({*s.seen, k}))))
               for k in (1, 2) if s.n + k <= 5]
        out.append((("plain",), ("plain", s.n)))  # not a record
        g.add(s, out)
        todo.extend(t for _a, t in out if type(t) is _Rec)
    frozen = g.frozen()
    states, keys = frozen[0], frozen[-1]
    assert keys == [fingerprint128(s) for s in states]
    assert len(set(keys)) == len(states)
    records = [s for s in states if type(s) is _Rec]
    assert len(records) == len(done)
    assert len(states) == len(done) + len({s.n for s in done})


def test_a_graph_whose_first_state_breaks_the_field_reprs_keys_by_whole_reprs():
    """``True`` and ``1`` compare equal and print apart: a memo of field reprs would
    print one as the other. A graph whose first state shows it keys every state by its
    whole repr, as the explorers do."""
    from kmc.model.encoding import fingerprint128
    from kmc.mutate.graph import Graph

    g = Graph()
    added = [_Rec(0, (1, True)), _Rec(1, (True, 1))]
    g.add(added[0], [(("inc",), added[1])])
    assert list(g.index) == [fingerprint128(s) for s in added]
