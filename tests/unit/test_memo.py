"""Memoised pure steps (``model.memo``): the Kafka models give the same successors with
their tables as without, models of other release lines never share an answer, and
``kmc mutate``'s workers keep no table (its recorder must see every call)."""
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


def test_a_call_with_keywords_is_computed():
    calls = []

    @memo.pure()
    def scaled(x, by=2):
        calls.append(x)
        return by * x

    assert scaled(3) == 6 and scaled(3) == 6 and calls == [3]
    assert scaled(3, by=5) == 15 and scaled(3, by=5) == 15 and calls == [3, 3, 3]
    assert scaled(3) == 6 and calls == [3, 3, 3]
