"""`kmc mutate` decides a run the mutant cannot have changed by replaying the baseline's
state graph: the same outcomes as exploring every run, and never for code whose effect
can escape the successors (a cached function)."""
import json

import pytest

from kmc.cli import main

from kmc.mutate.replay import Graph, same_graph
from kmc.mutate.runner import make_plan, mutate
from kmc.reports.regress.suite import Entry
from mutate_toy import toy_file

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


def _key(row):
    return row["outcome"], row["killed_by"], row["evidence"]


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return toy_file(tmp_path_factory)


@pytest.fixture(scope="module")
def cached(tmp_path_factory):
    path = tmp_path_factory.mktemp("mutate-cached") / "mutate_cached_model.py"
    path.write_text(CACHED)
    return str(path)


def _both(path):
    plan = lambda: make_plan([Entry(id="toy", scenario=f"{path}:make")])  # noqa: E731
    return mutate(plan(), jobs=2), mutate(plan(), jobs=2, replay=False)


def _lines_of(text):
    lines = CACHED.splitlines()
    return [n for n, line in enumerate(lines, 1) if line.strip() == text]


def test_replay_gives_every_mutant_the_outcome_of_a_full_run(cached):
    fast, full = _both(cached)
    assert [_key(r) for r in fast["mutants"]] == [_key(r) for r in full["mutants"]]
    assert not any(r["replayed"] for r in full["mutants"])
    # the guard that never fires: its mutants (but the one that reads past the state's
    # end) are decided by replay, as equivalent
    never = [r for r in fast["mutants"] if r["line"] in _lines_of("if s[0] > 100:")
             and r["outcome"] == "equivalent"]
    assert len(never) >= 4 and all(r["replayed"] == 1 for r in never)
    # the properties' code runs outside the successors: never replayed
    props = [r for r in fast["mutants"] if r["function"] == "properties"]
    assert props and not any(r["replayed"] for r in props)
    # a mutant that changes the graph is explored in full and killed
    killed = [r for r in fast["mutants"] if r["outcome"] in ("property", "witness")]
    assert killed and not any(r["replayed"] for r in killed)


def test_a_cached_function_is_never_replayed(cached):
    fast, _full = _both(cached)
    lines = CACHED.splitlines()
    in_bump = range(lines.index("def bump(x):") + 1, lines.index("class Cached(Model):"))
    inside = [r for r in fast["mutants"] if r["line"] in in_bump]
    # its guard never fires either, but the cache may hand its answer out where its
    # lines do not run: explored in full
    assert inside and not any(r["replayed"] for r in inside)
    assert {r["outcome"] for r in inside if r["line"] in _lines_of("if x > 100:")} == \
        {"equivalent"}


def test_a_state_class_of_the_mutated_module_is_never_replayed(toy):
    # the toy's states are instances of a class its own module defines: a mutant
    # reloads that module, so the recorded states would keep the old class
    rep = mutate(make_plan([Entry(id="toy", scenario=f"{toy}:make")]), jobs=2)
    assert rep["mutants"] and not any(r["replayed"] for r in rep["mutants"])


def _toy_module(toy):
    import importlib.util

    spec = importlib.util.spec_from_file_location("mutate_replay_toy", toy)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _record(model):
    """The whole graph of ``model`` as the baseline records it (no tracer: every state
    counts as touching every function)."""
    g, todo, seen = Graph(), list(model.init_states()), set()
    while todo:
        s = todo.pop()
        if s in seen:
            continue
        seen.add(s)
        out = model.successors(s)
        g.add(s, out)
        todo.extend(t for _a, t in out)
    return g.frozen()


def test_same_graph_tells_a_changed_successor_apart(toy):
    mod = _toy_module(toy)
    graph = _record(mod.make(3))
    assert same_graph(mod.make(3), graph)
    assert not same_graph(mod.make(4), graph)  # x may now reach 4: another successor

    class Relabelled(mod.Toy):
        def actions(self, s):
            return ["step" if a == "inc" else a for a in super().actions(s)]

    assert not same_graph(Relabelled(3), graph)  # the same states, another action


def test_only_the_states_that_called_the_function_are_asked_again(toy):
    mod = _toy_module(toy)
    states, expanded, successors, calls, _touched = _record(mod.make(3))
    # no state called the function: nothing is asked, so even another model agrees
    untouched = (states, expanded, successors, calls, (frozenset(),) * len(expanded))
    assert same_graph(mod.make(4), untouched, (toy, 1))
    touched = (states, expanded, successors, calls,
               (frozenset({(toy, 1)}),) * len(expanded))
    assert not same_graph(mod.make(4), touched, (toy, 1))


def test_no_replay_flag(cached, capsys):
    only = f":{_lines_of('if s[0] > 100:')[0]}:"
    assert main(["mutate", "--scenario", f"{cached}:make", "--only", only, "-j", "1",
                 "--no-replay", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["mutants"]
    assert rows and not any(r["replayed"] for r in rows)
