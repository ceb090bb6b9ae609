"""A replay asks a recorded state again step by step: only the steps (and the action
list) that ran the mutant's code are computed; every other step's recorded next state is
taken as it is. The successors are the contract's: ``next_state`` of each listed action
that has one, in order."""
import pytest

from kmc import Model
from kmc.mutate.pool import run_one
from kmc.mutate.replay import same_graph
from kmc.mutate.reuse import reusing
from kmc.mutate.runner import make_plan
from kmc.mutate.worker import baseline_task
from kmc.reports.regress.suite import Entry
from mutate_toy import line_of, load, reach, record_graph, toy_file

KEY = ("toy.py", 1)  # the changed code, as the tracer names a function


def _counting(cls):
    class Counting(cls):
        def __init__(self, *args):
            super().__init__(*args)
            self.asked = []

        def actions(self, s):
            self.asked.append(("actions", s))
            return super().actions(s)

        def next_state(self, s, a):
            self.asked.append((a, s))
            return super().next_state(s, a)
    return Counting


def test_only_the_steps_that_ran_the_changed_code_are_computed(tmp_path_factory):
    mod = load(toy_file(tmp_path_factory))
    inc_only = record_graph(mod.make(3), lambda s: frozenset(),
                      lambda s, a: frozenset({KEY}) if a == "inc" else frozenset())

    class MarksTwo(_counting(mod.Toy)):  # its "mark" step differs from the baseline's
        def next_state(self, s, a):
            t = super().next_state(s, a)
            return t._replace(y=2) if a == "mark" else t

    m = MarksTwo(3)
    # "mark" never ran the changed code: its recorded next state is taken, and the
    # model is asked only for the "inc" steps (never for the action list)
    assert same_graph(m, inc_only, {KEY})
    assert m.asked and all(a == "inc" for a, _s in m.asked)
    mark_too = record_graph(mod.make(3), lambda s: frozenset(), lambda s, a: frozenset({KEY}))
    assert not same_graph(MarksTwo(3), mark_too, {KEY})


def test_a_changed_action_list_computes_only_the_actions_it_adds(tmp_path_factory):
    mod = load(toy_file(tmp_path_factory))
    graph = record_graph(mod.make(3), lambda s: frozenset({KEY}), lambda s, a: frozenset())

    class ListsNever(_counting(mod.Toy)):  # one more action, doing nothing
        def actions(self, s):
            return super().actions(s) + ["never"]

    m = ListsNever(3)
    assert same_graph(m, graph, {KEY}, by_states=False)
    steps = [a for a, _s in m.asked if a != "actions"]
    assert steps and set(steps) == {"never"}  # the listed steps were all taken as recorded
    assert not same_graph(mod.make(4), graph, {KEY})  # x may now reach 4


def test_a_reusing_run_step_by_step_gives_the_mutants_own_successors(tmp_path_factory):
    mod = load(toy_file(tmp_path_factory))
    graph = record_graph(mod.make(3), lambda s: frozenset({KEY}), lambda s, a: frozenset())
    mutant = _counting(mod.Toy)(4)  # its action list differs: x may reach 4
    got = reach(reusing(mutant.successors, graph, {KEY}, model=mutant),
                mutant.init_states())
    seen = set(got)
    asked = [(a, s) for a, s in mutant.asked if a != "actions"]
    mutant.asked.clear()
    assert got == {s: mutant.successors(s) for s in seen}
    assert any(s.x == 4 for s in seen)
    # recorded states computed only the step the mutant added (inc at x == 3); the
    # states the baseline never reached, every step
    assert all(s.x >= 3 for _a, s in asked)
    assert len(asked) < sum(1 for a, _s in mutant.asked if a != "actions")


def test_the_baseline_records_each_expansion_step_by_step(tmp_path_factory):
    """The toy's ``actions`` and ``next_state`` are told apart: the action list's
    guard runs in ``actions``, the ``_replace`` of "mark" in its own step only."""
    toy = toy_file(tmp_path_factory)
    plan = make_plan([Entry(id="toy", scenario=f"{toy}:make")])
    served = {plan.mutants[0].module: (toy, plan.sources[toy])}
    out = run_one(baseline_task, (plan.entries[0], plan.files, served, None, None))
    graph = out["graph"]
    acts_key = (toy, line_of("def actions(self, s):"))
    step_key = (toy, line_of("def next_state(self, s, a):"))
    steps = [s for s in graph[5]]
    assert steps and all(s is not None for s in steps)
    for (listed, acts, per, _results, _probed, every), want in zip(steps, graph[2]):
        assert acts_key in listed and step_key not in listed
        assert all(step_key in p and acts_key not in p for p in per)
        assert set(every) == set(listed).union(*per)  # what the steps vouch for
        assert [a for a, _j in want] == [a for a in acts if a in dict(want)]


#: a model with its own successors (a fast path, as kmc's Kafka models have): its
#: ``actions`` and ``next_state`` run only when the recorder asks them step by step
FAST = '''from kmc import Model, always


class Fast(Model):
    name = "fast"

    def init_states(self):
        return [(0,)]

    def successors(self, s):
        return [("inc", (s[0] + 1,))] if s[0] < 3 else []

    def actions(self, s):
        out = []
        if s[0] < 3:
            out.append("inc")
        return out

    def next_state(self, s, a):
        return (s[0] + 1,)

    def properties(self):
        return [always("Small", lambda s: s[0] <= 3)]


def make():
    return Fast()
'''


def test_the_steps_recorded_run_no_line_the_run_did_not(tmp_path):
    """The run executes the fast path only: the lines of ``actions`` and
    ``next_state``, which only the recording of steps runs, are not the run's (a
    mutant there still reaches no run), and every expansion still has its steps."""
    path = tmp_path / "mutate_fast_model.py"
    path.write_text(FAST)
    plan = make_plan([Entry(id="fast", scenario=f"{path}:make")])
    served = {plan.mutants[0].module: (str(path), plan.sources[str(path)])}
    out = run_one(baseline_task, (plan.entries[0], plan.files, served, None, None))
    lines = out["lines"][str(path)]
    assert line_of("return [(\"inc\"", FAST) in lines
    assert line_of("out.append(\"inc\")", FAST) not in lines
    assert line_of("return (s[0] + 1,)", FAST) not in lines
    assert all(s is not None for s in out["graph"][5])


#: a model whose ``actions`` computes each candidate's step to tell whether it is
#: enabled (as KIP-253's procedure and the KRaft plane do), with no successors of its
#: own (the contract's: ``actions``, then ``next_state`` of each)
PROBING = FAST.replace('''    def successors(self, s):
        return [("inc", (s[0] + 1,))] if s[0] < 3 else []

''', "").replace('''    def actions(self, s):
        out = []
        if s[0] < 3:
            out.append("inc")
        return out
''', '''    def actions(self, s):
        return [a for a in ("inc", "dec") if self.next_state(s, a) is not None]
''').replace('''        return (s[0] + 1,)''', '''        if a == "inc" and s[0] < 3:
            return (s[0] + 1,)
        return None''')


@pytest.fixture(scope="module")
def probing(tmp_path_factory):
    """The PROBING model's module, the baseline's graph of its run and the keys of its
    ``actions`` and ``next_state``."""
    path = tmp_path_factory.mktemp("probing") / "mutate_probing_model.py"
    path.write_text(PROBING)
    plan = make_plan([Entry(id="probing", scenario=f"{path}:make")])
    served = {plan.mutants[0].module: (str(path), plan.sources[str(path)])}
    out = run_one(baseline_task, (plan.entries[0], plan.files, served, None, None))
    keys = ((str(path), line_of("def actions(self, s):", PROBING)),
            (str(path), line_of("def next_state(self, s, a):", PROBING)))
    return load(str(path), "mutate_probing_replayed"), out["graph"], keys


def test_a_step_that_actions_computes_is_recorded_as_its_own(probing):
    _mod, graph, (acts_key, step_key) = probing
    steps = {tuple(graph[0][i]): st for i, st in zip(graph[1], graph[5])}
    assert set(steps) == {(0,), (1,), (2,), (3,)}
    for x, (listed, acts, per, _results, (probed, positions, called), every) in \
            ((s[0], st) for s, st in steps.items()):
        assert acts_key in listed and step_key not in listed  # the list's own code
        assert set(every) == set(listed).union(*per, *called)
        assert probed == ("inc", "dec") and all(step_key in c for c in called)
        assert acts == (("inc",) if x < 3 else ())
        want = [(x + 1,) if x < 3 else None, None]  # inc's next state; dec has none
        assert [None if j is None else tuple(graph[0][j]) for j in positions] == want


def test_a_replay_asks_only_the_steps_actions_computed_not_the_list(probing):
    mod, graph, (_acts_key, step_key) = probing
    m = _counting(mod.Fast)()
    assert same_graph(m, graph, {step_key})
    assert m.asked and all(a in ("inc", "dec") for a, _s in m.asked)
    # each candidate once per state: the list's answer and the steps come from them
    assert len(m.asked) == 2 * 4


def test_a_changed_list_takes_its_unchanged_steps_from_the_record(probing):
    """A mutant of the list's own code lists again, but the steps the list computes
    that ran none of the changed code are the recorded ones: only a candidate the
    baseline never tried is computed."""
    mod, graph, (acts_key, _step_key) = probing

    class TriesSkip(_counting(mod.Fast)):
        def actions(self, s):
            self.asked.append(("actions", s))
            return [a for a in ("inc", "dec", "skip") if self.next_state(s, a) is not None]

    m = TriesSkip()
    assert same_graph(m, graph, {acts_key})
    asked = sorted(m.asked)
    assert asked == sorted([("actions", (x,)) for x in range(4)] +
                           [("skip", (x,)) for x in range(4)])
    assert "next_state" not in m.__dict__  # the model is left as it was

    class NoIncAtOne(_counting(mod.Fast)):  # the list leaves "inc" out at x == 1
        def actions(self, s):
            return [a for a in super().actions(s) if s != (1,) or a != "inc"]

    assert not same_graph(NoIncAtOne(), graph, {acts_key})


def test_a_step_that_enables_another_action_makes_the_list_be_asked_again(probing):
    mod, graph, (_acts_key, step_key) = probing

    class DecAtTwo(_counting(mod.Fast)):  # "dec" at x == 2 now leads to (5,)
        def next_state(self, s, a):
            return (5,) if a == "dec" and s == (2,) else super().next_state(s, a)

    assert not same_graph(DecAtTwo(), graph, {step_key})
    mutant = DecAtTwo()
    got = reach(reusing(mutant.successors, graph, {step_key}, model=mutant),
                mutant.init_states())
    assert got == {s: Model.successors(mutant, s) for s in got}
    assert (5,) in got and ("dec", (5,)) in got[(2,)]


def test_a_step_that_gave_back_its_state_itself_must_do_so_again():
    """A model may tell the very state it was given from an equal copy (KRaft's group
    refresh is enabled when ``t is not w``): a recorded step that returned its state
    itself stands only if the mutant's does too, and one that returned an equal copy
    only if the mutant's is not the state itself."""
    from kmc.mutate.steps import SELF, probes

    class Steps:
        def __init__(self, step):
            self.next_state = lambda s, a: step(s)

    s, key, same = (7,), ("m.py", 1), (lambda x: x)
    states = [s]

    def stands(recorded, step):
        return probes(Steps(step), s, (("a",), (recorded,), ((key,),)), {key}, same,
                      states.__getitem__, {})
    assert stands(SELF, lambda w: w)
    assert not stands(SELF, lambda w: tuple(list(w)))  # equal, another object
    assert stands(0, lambda w: tuple(list(w)))
    assert not stands(0, lambda w: w)
    assert not stands(None, lambda w: w) and stands(None, lambda w: None)


class _Faults:
    def is_fault(self, a):
        return a.startswith("crash")


def test_successors_compare_as_sets_of_states_by_identity_or_by_value():
    from kmc.mutate.steps import same_states

    states = [(0, "a"), (1, "b"), (2, "c")]  # a graph's states: one object per value
    want = [("x", 1), ("y", 2)]
    model = _Faults()
    # the recorded objects themselves, in another order, one reached twice
    assert same_states(model, [("y", states[2]), ("x", states[1]), ("z", states[1])],
                       want, states)
    # copies equal in value count as the same states, in order or not
    assert same_states(model, [("x", (1, "b")), ("y", (2, "c"))], want, states)
    assert same_states(model, [("y", (2, "c")), ("x", (1, "b"))], want, states)
    assert not same_states(model, [("x", (1, "b")), ("y", (1, "b"))], want, states)
    # one recorded state missing, or one the graph never recorded
    assert not same_states(model, [("x", states[1])], want, states)
    assert not same_states(model, [("x", states[1]), ("y", states[0])], want, states)
    assert not same_states(model, [("x", states[1]), ("y", (3, "d"))], want, states)
    assert not same_states(model, [("x", states[1]), ("y", states[2]), ("w", (3, "d"))],
                           want, states)
    # the same states, but now every step to them is a fault and before one was not
    assert not same_states(model, [("crash-1", states[1]), ("crash-2", states[2])],
                           want, states)


def test_a_replay_finds_the_expansions_that_called_the_changed_code_by_their_set():
    from kmc.mutate.graph import Graph
    from kmc.mutate.replay import asked

    g = Graph()
    calls = [{KEY}, set(), {KEY, ("toy.py", 9)}, None, {("toy.py", 9)}, {KEY}]
    for n, called in enumerate(calls):
        g.add(n, [("inc", n + 1)], called)
    graph = g.frozen()
    every = [n for n, c in enumerate(calls) if c is None or KEY in c]
    assert list(asked(graph, {KEY})) == every == [0, 2, 3, 5]
    assert list(asked(graph[:6], {KEY})) == every  # a graph kept without the index
    assert list(asked(graph, {("toy.py", 9)})) == [2, 3, 4]
    assert list(asked(graph, {("toy.py", 7)})) == [3]  # not known: asked
    assert list(asked(graph, None)) == list(range(len(calls)))
