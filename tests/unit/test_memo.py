"""Memoised pure steps (``model.memo``): the Kafka models give the same successors with
their tables as without, models of other release lines never share an answer, and
``kmc mutate``'s workers keep no table while recording (its recorder must see every
call), and a mutant's explored run only the answers of its own code."""
from __future__ import annotations

from kmc.explorers.bfs import bfs
from kmc.model import memo
from kmc.model.kafka.kraft import image, protocol_view, replicas
from kmc.model.kafka.zk import brokers
from kmc.mutate.pool import run_one
from kmc.mutate.runner import make_plan
from kmc.mutate.worker import baseline_task
from kmc.reports.regress.suite import Entry
from mutate_toy import line_of
from test_fast_checks import _states as bfs_pairs

from kmc.api import build


def _states(scenario, variant, n):
    """The model, and its first ``n`` states in BFS order."""
    m, pairs = bfs_pairs(scenario, variant, n)
    return m, [s for _parent, s in pairs]


def test_successors_are_the_same_with_and_without_the_tables():
    for scenario, variant in (("lifecycle-large", "kip516"), ("stale-read", "legacy"),
                              ("expand", "kip253"), ("kraft-large", None),
                              ("kraft-crash-window", None)):
        m, states = _states(scenario, variant, 1500)
        for s in states:
            with memo.disabled():
                plain = m.successors(s)
            assert m.successors(s) == plain, (scenario, s)
    assert brokers.leader_and_isr_applied.table  # the tables did answer
    assert replicas.apply_delta.table and image.apply_batch.table


def test_the_kraft_protocol_relations_are_the_same_without_the_table():
    _m, states = _states("kraft-large", None, 1500)
    for s in states:
        with memo.disabled():
            plain = protocol_view._protocol_relations(s)
        assert protocol_view._protocol_relations(s) == plain, s
    assert protocol_view._broker_rows.table


def test_models_of_other_release_lines_never_share_an_answer():
    new, states = _states("stale-read", "kip516", 400)
    old = build("stale-read", "legacy", {})
    asked = 0
    for s in states:
        for msg in new.net.messages(s.net):
            if msg.kind != "LeaderAndIsr":
                continue
            br = s.brokers[msg.dst - 1]
            for m in (new, old, new):
                assert brokers.leader_and_isr_applied(m, br, msg) == \
                    brokers.leader_and_isr_applied.__wrapped__(m, br, msg)
                asked += 1
    assert asked


def test_a_bfs_finds_the_same_states_without_the_tables():
    m = build("lifecycle-large", "kip516", {})
    fast = bfs(m, max_states=3000)
    with memo.disabled():
        plain = bfs(build("lifecycle-large", "kip516", {}), max_states=3000)
    assert (fast.unique_states, fast.generated_states, fast.max_depth) == \
        (plain.unique_states, plain.generated_states, plain.max_depth)


#: a model whose step calls a memoised function with the same arguments in many states
MEMOISED = '''from kmc import Model, always
from kmc.model import memo


def halved(x):
    return x // 2


@memo.pure(lambda m: None)
def half(m, x):
    return halved(x)


class Halving(Model):
    name = "halving"

    def init_states(self):
        return [(0, 0)]

    def actions(self, s):
        return ["inc"] if s[0] < 6 else []

    def next_state(self, s, a):
        return (s[0] + 1, half(self, s[0] % 2))

    def properties(self):
        return [always("Small", lambda s: s[1] <= 1)]


def make():
    return Halving()
'''


def test_kmc_mutate_records_every_call_of_a_memoised_function(tmp_path):
    """The baseline's worker keeps no table: each expansion that steps runs the
    memoised function's body, and the recorder lists what the body calls there (a
    table's answer would hide it from every expansion after the first two, and a
    mutant of it would take those expansions as the baseline's in its replay)."""
    path = tmp_path / "mutate_memoised_model.py"
    path.write_text(MEMOISED)
    plan = make_plan([Entry(id="memoised", scenario=f"{path}:make")])
    served = {plan.mutants[0].module: (str(path), plan.sources[str(path)])}
    out = run_one(baseline_task, (plan.entries[0], plan.files, served, None, None))
    _all, _expanded, successors, _calls, touched = out["graph"][:5]
    halved = (str(path), line_of("def halved", MEMOISED))
    stepping = [t for t, succ in zip(touched, successors) if succ]
    assert len(stepping) == 6
    assert all(halved in t for t in stepping), touched


def test_a_configuration_is_told_by_value_whichever_model_object_holds_it():
    """A key holds a configuration's number, not the configuration: two model objects
    with equal configurations share answers, models of other configurations never do,
    however the calls alternate."""
    calls = []

    class M:
        def __init__(self, flags):
            self.flags = flags

    @memo.pure(lambda m: (m.flags,))
    def step(m, x):
        calls.append((m.flags, x))
        return (m.flags, x)

    a, b, a2 = M(("fast", 1)), M(("slow", 2)), M(("fast", 1))
    for m in (a, b, a2, b, a, a2):
        assert step(m, 7) == (m.flags, 7)
    assert calls == [(("fast", 1), 7), (("slow", 2), 7)]


def test_a_call_with_keywords_is_computed():
    calls = []

    @memo.pure()
    def scaled(x, by=2):
        calls.append(x)
        return by * x

    assert scaled(3) == 6 and scaled(3) == 6 and calls == [3]
    assert scaled(3, by=5) == 15 and scaled(3, by=5) == 15 and calls == [3, 3, 3]
    assert scaled(3) == 6 and calls == [3, 3, 3]


def test_fresh_tables_answer_inside_and_are_emptied_after():
    calls = []

    @memo.pure()
    def doubled(x):
        calls.append(x)
        return 2 * x

    assert doubled(1) == 2 and doubled.table  # on: kept
    with memo.disabled():
        with memo.fresh():
            assert not doubled.table  # what was kept before is gone
            assert doubled(2) == 4 and doubled(2) == 4
            assert calls == [1, 2] and doubled.table  # inside: kept and read
        assert not doubled.table  # emptied on leaving
        assert doubled(2) == 4 and calls == [1, 2, 2] and not doubled.table  # off again
    assert doubled(3) == 6 and doubled.table  # on again outside both


HELPER = '''from kmc.model import memo


@memo.pure(lambda m: m.limit)
def step(m, x):
    return m.bump(x)
'''

STALE = '''from typing import NamedTuple

from kmc import Model, always

import mutate_memo_helper as helper


class S(NamedTuple):
    x: int


class Counter(Model):
    """Counts to its limit through a memoised step of another module."""
    name = "counter"

    def __init__(self, limit=3):
        self.limit = limit

    def init_states(self):
        return [S(0)]

    def actions(self, s):
        return ["inc"] if s.x < self.limit else []

    def next_state(self, s, a):
        return S(helper.step(self, s.x))

    def bump(self, x):
        return x + 1

    def properties(self):
        return [always("Bounded", lambda s: s.x <= self.limit)]


def make():
    return Counter()
'''


def test_a_mutant_is_explored_with_no_answer_of_the_baseline(tmp_path, monkeypatch):
    """The process that forks the workers has run the model with its tables on, so
    the helper's table holds the baseline's steps. A mutant of ``bump`` is explored
    with the tables answering, but only with what its own run put in them: ``x + 2``
    goes past the limit (killed by Bounded) and ``x + 0`` stays at 0 (fewer states),
    as with the tables off."""
    import importlib
    import sys

    from kmc.mutate.runner import mutate

    (tmp_path / "mutate_memo_helper.py").write_text(HELPER)
    path = tmp_path / "mutate_memo_model.py"
    path.write_text(STALE)
    monkeypatch.syspath_prepend(str(tmp_path))
    plan = make_plan([Entry(id="stale", scenario=f"{path}:make")])
    model = importlib.import_module("mutate_memo_model").make()
    state = model.init_states()[0]
    for _ in range(3):  # the baseline's steps, kept in this process's table
        state = model.next_state(state, "inc")
    helper = sys.modules["mutate_memo_helper"]
    assert len(helper.step.table) == 3
    line = line_of("return x + 1", STALE)
    rows = {(r["line"], r["description"]): r for r in mutate(plan, jobs=2)["mutants"]}
    assert rows[(line, "1 -> 2")]["outcome"] == "property"
    assert rows[(line, "1 -> 2")]["killed_by"] == ["Bounded"]
    assert rows[(line, "1 -> 0")]["outcome"] == "count_only"


def test_a_canonical_table_answers_the_first_equal_value_of_the_same_type():
    canon = memo.canonical(limit=3)
    first, again = tuple([1, (2, 3)]), tuple([1, (2, 3)])
    assert again is not first
    assert canon(first) is first and canon(again) is first
    assert canon(True) is True and canon(1) == 1 and type(canon(1)) is int  # 1 == True
    for x in ((4,), (5,), (6,)):  # past the limit: the table starts over
        canon(x)
    assert canon(again) is again
    with memo.disabled():
        fresh = tuple([7, 8])
        assert canon(fresh) is fresh and fresh not in canon.table


def test_the_messages_in_flight_are_one_object_per_value():
    """Every send keeps the first equal message: the successors of different states
    that send the same request hold one object, and the state space is the same as
    without the table."""
    m, states = _states("lifecycle-large", "kip516", 3000)
    by_value: dict = {}
    for s in states:
        for msg in m.net.messages(s.net):
            assert by_value.setdefault(msg, msg) is msg
    assert len(by_value) > 20
    with memo.disabled():
        plain = bfs(build("stale-read", "kip516", {}))
    on = bfs(build("stale-read", "kip516", {}))
    assert (on.unique_states, on.generated_states) == (plain.unique_states,
                                                       plain.generated_states)
