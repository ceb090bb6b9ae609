"""The memoised fast paths give the answers of the plain computations, state by state:
field-wise fingerprints, generated ``_replace``, memoised view parts and fused,
memoised property checks (the Kafka models' states, ZooKeeper-era and KRaft)."""
from __future__ import annotations

import itertools
import pickle

import pytest
from typing import NamedTuple

from kmc.api import build
from kmc.explorers.bfs import bfs
from kmc.explorers.core import Core
from kmc.explorers.visited import keys_array
from kmc.invariants import fused
from kmc.invariants.fused import Checker
from kmc.model.contract import Model
from kmc.model.encoding import FieldReprs, fingerprint128, key_of_fields
from kmc.model.kafka.kraft import protocol_properties as kraft_protocol
from kmc.model.kafka.kraft import views as kraft_views
from kmc.model.kafka.zk import views as topic_views
from kmc.model.kafka.broker import Broker
from kmc.model.kafka.zk.state import World


def _states(scenario, variant, n, params=None):
    """The first ``n`` states in BFS order, and their parents."""
    m = build(scenario, variant, params or {})
    core = Core(m)
    frontier = [s for _i, s in core.initial()]
    seen, out = set(frontier), [(None, s) for s in frontier]
    while frontier and len(out) < n:
        nxt = []
        for s in frontier:
            for _a, t in core.successors(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
                    out.append((s, t))
        frontier = nxt
    return m, out[:n]


@pytest.fixture(scope="module")
def topics():
    return _states("lifecycle-large", "kip516", 2000)


def test_field_wise_keys_are_the_fingerprints(topics):
    _m, pairs = topics
    reprs = FieldReprs(len(World._fields))
    for parent, s in pairs:
        assert key_of_fields(reprs.of(s)) == fingerprint128(s)
        if parent is not None:
            pieces = reprs.of_child(s, parent, reprs.of(parent))
            assert key_of_fields(pieces) == fingerprint128(s)


def test_order_keys_from_field_reprs_are_those_from_values(topics):
    """A model that names a partition key: the order keys the BFS makes from its new
    states' field reprs are those made from the states' values (None: no reprs)."""
    m, pairs = topics
    core = Core(m)
    assert core.by_partition_key
    states = [s for _p, s in pairs]
    reprs = FieldReprs(len(World._fields))
    keys = keys_array(map(core.rkey, states), len(states), core.key_dtype)
    pieces = [None if j % 5 == 0 else reprs.of(s) for j, s in enumerate(states)]
    by_value = core.order_keys(keys, states)
    assert (core.order_keys(keys, states, pieces) == by_value).all()
    assert not (by_value == keys).all()  # the partition key's bits are in them
    assert [int(k) for k in by_value["hi"][:50]] == \
        [core.order_key(s) >> 64 for s in states[:50]]


def test_generated_replace_builds_the_same_records(topics):
    _m, pairs = topics
    w = pairs[-1][1]
    br = w.brokers[0]
    assert type(br._replace(ctl_epoch=7)) is Broker
    i = Broker._fields.index("ctl_epoch")
    assert tuple(br._replace(ctl_epoch=7, status="down")) == \
        (("down",) + tuple(br)[1:i] + (7,) + tuple(br)[i + 1:])
    assert w._replace() == w and w._replace(net=()).net == ()
    with pytest.raises(TypeError):
        br._replace(nonsense=1)


@pytest.mark.parametrize("case, probed", [
    (("recreate-other-count", None, {}), {"member-refresh", "member-fetch",
                                           "producer-refresh"}),
    (("kraft-lagging-broker", None, {"records": 1}), {"consumer-refresh", "consumer-fetch",
                                                      "producer-refresh"}),
    (("kraft-stray", None, {}), {"replica-fetch"})])
def test_kraft_successors_reuse_the_steps_that_enabled_them(case, probed):
    """The KRaft model's successors keep the steps ``actions`` computed to tell that
    they change something: the same list as asking ``next_state`` for each action."""
    m, pairs = _states(*case[:2], 1500, case[2])
    kinds = set()
    for _p, s in pairs:
        fast = m.successors(s)
        assert fast == Model.successors(m, s)
        kinds.update(a[0] for a, _t in fast)
    assert probed <= kinds


def test_kraft_enabled_reuses_only_the_expansion_of_that_very_state():
    """``enabled`` answers a property's question with the actions of the expansion just
    computed when it is about that state object, and asks ``actions`` otherwise (an
    equal copy, another state); the clients' busy set is the same either way."""
    m, pairs = _states("kraft-lagging-broker", None, 800, {"records": 1})
    calls = []
    actions = m.actions
    m.actions = lambda w: calls.append(w) or actions(w)
    busy_seen = set()
    for _p, s in pairs:
        m.successors(s)
        calls.clear()
        assert m.enabled(s) == actions(s) and calls == []
        copy = pickle.loads(pickle.dumps(s))
        assert m.enabled(copy) == actions(s) and calls == [copy]
        fresh = kraft_views.busy(m, s)
        m.successors(pairs[0][1])  # the last expansion is another state's
        assert kraft_views.busy(m, s) == fresh
        busy_seen.add(frozenset(fresh))
    assert len(busy_seen) > 1  # the clients are busy in some states, idle in others


def test_a_pickled_view_is_its_module_object():
    """A property's view unpickled on an executor is the module's own view, whose memos
    stay warm between tasks; an unnamed view travels without its memos."""
    view = topic_views.view
    assert pickle.loads(pickle.dumps(view)) is view
    assert pickle.loads(pickle.dumps(kraft_views.view)) is kraft_views.view
    kraft = kraft_protocol.protocol_view
    assert pickle.loads(pickle.dumps(kraft)) is kraft
    copy = view.extended()
    copy(_states("stale-read", "kip516", 3)[1][-1][1])
    back = pickle.loads(pickle.dumps(copy))
    assert back is not copy and all(part.memo == {} for part in back._parts)


def _fresh(view, s):
    """``view(s)`` computed from scratch: every part's memo emptied first."""
    for part in view._parts + view._derived:
        part.memo.clear()
    view._last = (None, None)
    return view(s)


@pytest.mark.parametrize("case", [("lifecycle-large", "kip516"), ("kraft-stray", "kraft"),
                                  ("recreate-other-count", None),
                                  ("split-merge-spark", "kip253")])
def test_memoised_view_parts_equal_a_fresh_computation(case):
    m, pairs = _states(*case, 1000, {"bookkeeping": True} if case[1] == "kip253" else None)
    if case[0] == "lifecycle-large":
        views = {type(s): (topic_views.view,) for _p, s in pairs}
    elif case[1] == "kip253":  # the properties' view and the bookkeeping invariants'
        own = tuple({id(p.view): p.view for p in m.properties()}.values())
        assert len(own) == 2
        views = {type(s): own for _p, s in pairs}
    else:
        views = {type(s): (kraft_views._VIEWS[type(s)], kraft_protocol.protocol_view)
                 for _p, s in pairs}
    for k in range(len(next(iter(views.values())))):
        memoised = [views[type(s)][k](s) for _p, s in pairs]
        # the same parts, new memos
        copies = {t: v[k].extended() for t, v in views.items()}
        assert all(part.memo == {} for c in copies.values() for part in c._parts)
        for (_p, s), got in zip(pairs[::5], memoised[::5]):
            assert got == _fresh(copies[type(s)], s)


@pytest.mark.parametrize("case", [("lifecycle-large", "kip516", {}),
                                  ("stale-read", "legacy", {}),
                                  ("kraft-stray", "kraft-3.6", {}),
                                  ("recreate-during-expansion", None, {}),
                                  ("recreate-other-count", None, {}),
                                  ("split-merge-spark", "kip253", {"bookkeeping": True}),
                                  ("shrink-two", "modulo", {"bookkeeping": True,
                                                            "liveness": True})])
def test_fused_checks_answer_as_each_property_does(case):
    m, pairs = _states(*case[:2], 1200, case[2])
    props = list(m.properties())
    props = [p for p in props if p.kind in ("always", "quiescent", "sometimes")]
    chk = Checker(props)
    assert any(getattr(p.check, "declared", None) for p in props)
    reprs = FieldReprs(len(type(pairs[0][1])._fields))
    for _parent, s in pairs:
        want = [i for i, p in enumerate(props) if not p.check(s)]
        # by the fields' values, then by their reprs (as the BFS expander hands them in)
        assert chk.false_at(s) == want
        assert chk.false_at(s, reprs.of(s)) == want
    assert chk._plan is not None and chk.__getstate__()["_plan"] is None  # no memos shipped


@pytest.mark.parametrize("case", [("lifecycle-large", "kip516", {}),
                                  ("kraft-stray", "kraft-3.6", {}),
                                  ("split-merge-spark", "kip253", {"bookkeeping": True})])
def test_merged_and_volatile_groups_answer_as_each_property_does(case, monkeypatch):
    """Through the warm-up (made short here), the merged memo's trial and after it,
    the answers stay each property's own, and a checker unpickled again (a Spark
    task's) finds the decision made."""
    monkeypatch.setattr(fused, "WARMUP", 64)
    monkeypatch.setattr(fused, "_MERGERS", {})
    m, pairs = _states(*case[:2], 1500, case[2])
    props = [p for p in m.properties() if p.kind in ("always", "quiescent", "sometimes")]
    chk = Checker(props)
    reprs = FieldReprs(len(type(pairs[0][1])._fields))
    merged = 0
    for _parent, s in pairs:
        want = [i for i, p in enumerate(props) if not p.check(s)]
        assert chk.false_at(s, reprs.of(s)) == want
        assert chk.false_at(s) == want
        merged += chk._merged is not None
    merger = chk._merger
    assert merged and merger.steady is not None and not merger.on_trial
    again = Checker.__new__(Checker)  # as unpickling makes it
    again.__dict__.update(chk.__getstate__())
    for _parent, s in pairs[::7]:
        assert again.false_at(s, reprs.of(s)) == chk.false_at(s)
    assert again._merger is merger


class _Toy(NamedTuple):
    step: int  # step and tick change in every state: their groups are volatile
    tick: int
    mode: int  # mode and phase change seldom: their groups are steady
    phase: int
    __repr__ = tuple.__repr__


def test_volatile_and_steady_groups_report_the_properties_that_fail(monkeypatch):
    """A property of the field that changes at every state fails now and then, and so
    do properties of the fields that seldom change: after the warm-up each is reported
    exactly where it fails, from the merged memo, the volatile path and the rest."""
    from kmc.invariants.declare import declare
    from kmc.invariants.fieldview import FieldView
    from kmc.invariants.logic import Rel, forall, implies, variables
    monkeypatch.setattr(fused, "WARMUP", 32)
    monkeypatch.setattr(fused, "_MERGERS", {})
    Step, Tick, Mode, Phase = (Rel(n, 1) for n in ("Step", "Tick", "Mode", "Phase"))
    (v,) = variables("v")
    view = FieldView(((("step",), lambda s: {"Step": {(s.step,)}}),
                      (("tick",), lambda s: {"Tick": {(s.tick,)}}),
                      (("mode",), lambda s: {"Mode": {(s.mode,)}}),
                      (("phase",), lambda s: {"Phase": {(s.phase,)}})))
    props = [declare("always", "StepNot1000", forall((v,), implies(Step(v), v != 1000)),
                     view),
             declare("always", "TickNot2400", forall((v,), implies(Tick(v), v != 2400)),
                     view),
             declare("always", "ModeNotTwo", forall((v,), implies(Mode(v), v != 2)), view),
             declare("always", "PhaseNotOne", forall((v,), implies(Phase(v), v != 1)), view)]
    chk = Checker(props)
    reprs = FieldReprs(4)
    failed = set()
    for n in range(2000):
        s = _Toy(n, 3 * n, (n // 100) % 3, (n // 300) % 2)
        want = [i for i, p in enumerate(props) if not p.check(s)]
        assert chk.false_at(s, reprs.of(s)) == want
        failed.update(want)
    assert failed == {0, 1, 2, 3}
    merger, groups = chk._merger, chk._plan[0]

    def named(js):
        return sorted(props[i].name for j in js for i, _fast in groups[j][6])
    assert named(merger.volatile) == ["StepNot1000", "TickNot2400"]
    assert named(merger.steady) == ["ModeNotTwo", "PhaseNotOne"]
    assert not merger.on_trial  # the merged memo passed its trial: six values in all


def test_a_merged_memo_that_keeps_missing_is_given_up(monkeypatch):
    """Two fields that each take few values but together a new pair at nearly every
    state: their groups are steady alone, the merged memo misses through its trial
    and the groups go back to their own memos; the answers never change."""
    from kmc.invariants.declare import declare
    from kmc.invariants.fieldview import FieldView
    from kmc.invariants.logic import Rel, forall, implies, variables
    monkeypatch.setattr(fused, "WARMUP", 32)
    monkeypatch.setattr(fused, "_MERGERS", {})
    Mode, Phase = Rel("Mode", 1), Rel("Phase", 1)
    (v,) = variables("v")
    view = FieldView(((("mode",), lambda s: {"Mode": {(s.mode,)}}),
                      (("phase",), lambda s: {"Phase": {(s.phase,)}})))
    props = [declare("always", "ModeNotFive", forall((v,), implies(Mode(v), v != 5)), view),
             declare("always", "PhaseNotThree", forall((v,), implies(Phase(v), v != 3)),
                     view)]
    chk = Checker(props)
    reprs = FieldReprs(4)
    for n in range(600):
        s = _Toy(0, 0, n % 8, (n // 8) % 8)
        assert chk.false_at(s, reprs.of(s)) == [i for i, p in enumerate(props)
                                                if not p.check(s)]
        if n == 40:  # warmed up, on trial
            assert chk._merger.steady and chk._merger.on_trial
    merger = chk._merger
    assert not merger.on_trial and merger.steady == () and not merger.memo
    assert chk._merged is None  # nothing merged, nothing volatile: the plain path


@pytest.mark.parametrize("case", [("lifecycle-large", "kip516"), ("kraft-stray", "kraft"),
                                  ("split-merge-spark", "kip253")])
def test_relations_of_a_group_equal_the_whole_views(case):
    """``getter_of`` computes only the parts a group of properties reads, memoised by the
    fields' values or their reprs: the same relations as the whole view, state by state."""
    m, pairs = _states(*case, 600)
    views = {id(p.view): p.view for p in m.properties()
             if getattr(p, "view", None) is not None and hasattr(p.view, "getter_of")}
    assert views
    reprs = FieldReprs(len(type(pairs[0][1])._fields))
    first = pairs[0][1]
    for view in views.values():
        names = sorted(view(first))
        for name in names:
            get = view.getter_of((name,), first)
            for _p, s in pairs[::3]:
                whole = view(s)[name]
                assert get(s) == (whole,) and get(s, reprs.of(s)) == (whole,)


def test_a_getter_answers_right_when_its_memos_start_over_at_every_entry(monkeypatch):
    """With every memo starting over at each new entry, an entry is dropped as soon as
    the next state comes: the answers are still each state's own, by the fields' reprs
    and by their values, and asked twice for one state."""
    from kmc.invariants import fieldview
    monkeypatch.setattr(fieldview.keep, "__defaults__", (1,))
    view = fieldview.FieldView(((("step",), lambda s: {"r": {(s.step % 7,)}}),
                                (("mode",), lambda s: {"m": {(s.mode,)}})))
    first = _Toy(0, 0, 0, 0)
    get = view.getter_of(("r", "m"), first)
    reprs = FieldReprs(len(_Toy._fields))
    for n in range(300):
        s = _Toy(n, 0, n % 2, 0)
        want = (frozenset({(n % 7,)}), frozenset({(n % 2,)}))
        assert get(s, reprs.of(s)) == want and get(s) == want and get(s) == want


def test_a_bfs_keeps_its_counts_and_traces_through_the_fast_paths():
    """The field-wise expander and the fused checks against the plain ones, on one run:
    same counts, verdicts and counterexamples, step by step."""
    m = build("stale-read", "legacy", {})
    fast = bfs(m)
    core = Core(m)
    core.field_keys = lambda: None  # the per-state dict expander, plain fingerprints
    for attr in ("_always_check", "_quiescent_check", "_witness_check"):
        getattr(core, attr).false_at = _plain(getattr(core, attr).props)
    plain = bfs(m, core=core)
    assert (fast.unique_states, fast.generated_states, fast.max_depth) == \
        (plain.unique_states, plain.generated_states, plain.max_depth)
    assert fast.verdicts() == plain.verdicts()
    assert fast.discoveries
    for name, d in fast.discoveries.items():
        other = plain.discoveries[name].trace
        assert (d.trace.init_index, d.trace.action_indices, d.trace.states) == \
            (other.init_index, other.action_indices, other.states)


def _plain(props):
    return lambda s, pieces=None: [i for i, p in enumerate(props) if not p.check(s)]


def test_checker_without_declared_properties_calls_them():
    from kmc.invariants.properties import always
    calls = itertools.count()
    p = always("Even", lambda s: next(calls) >= 0 and s % 2 == 0)
    assert Checker([p]).false_at(3) == [0] and Checker([p]).false_at(4) == []


def test_checkers_that_share_a_memo_keep_their_own_property_order():
    """Two models list the same witness at different positions: a verdict memoised for
    one checker's property must not answer for the other's."""
    fmd = build("failover-mid-delete", "kip516", {})
    legacy, states = _states("stale-read", "legacy", 300)
    wf = [p for p in fmd.properties() if p.kind == "sometimes"]
    wl = [p for p in legacy.properties() if p.kind == "sometimes"]
    at = {p.name: i for i, p in enumerate(wf)}
    assert at["RestartWithStaleReplica"] != [p.name for p in wl].index(
        "RestartWithStaleReplica")
    cf, cl = Checker(wf), Checker(wl)
    for _parent, s in states:
        for chk, props in ((cf, wf), (cl, wl)):
            assert chk.false_at(s) == _plain(props)(s)
