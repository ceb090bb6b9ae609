"""Shared values: the states a level expander keeps hold each field value it met before
as one object (``model.encoding.shared``): equal to what the model made, with the same
key, and the memos' first object in place of every field the state changed. The view
parts' entries hold each relation value as one object (``fieldview.relation``). A
``FieldReprs`` keeps the bound it is given, and the Spark explorer's tasks keep each
candidate as the model made it (``explorers.spark.level.for_tasks``)."""
from typing import NamedTuple

import numpy as np

from kmc.api import build
from kmc.explorers.core import Core
from kmc.explorers.level import level_expander
from kmc.explorers.spark.level import TASK_REPRS_LIMIT, for_tasks
from kmc.explorers.visited import keys_array
from kmc.invariants.fieldview import relation
from kmc.model.kafka.kraft import protocol_properties as kraft_protocol
from kmc.model.kafka.kraft import views as kraft_views
from toymodels import reachable
from kmc.model import encoding
from kmc.model.encoding import FieldReprs, shared


class Rec(NamedTuple):
    log: tuple
    n: int


def _share():
    reprs = FieldReprs(len(Rec._fields))
    return reprs, shared(Rec, reprs.memos, reprs.positions)


def test_a_changed_field_becomes_the_first_equal_value_met():
    reprs, share = _share()
    parent = Rec((0,), 0)
    pp = reprs.of(parent)
    first = Rec(tuple([5, 6]), 0)
    assert share(first, parent, reprs.of_child(first, parent, pp)) is first
    again = Rec(tuple([5, 6]), 0)
    assert again.log is not first.log
    got = share(again, parent, reprs.of_child(again, parent, pp))
    assert got == again and type(got) is Rec and got is not again
    assert got.log is first.log and got.n is again.n
    same = parent._replace(n=1)  # its changed field is the first of its value already
    assert share(same, parent, reprs.of_child(same, parent, pp)) is same


def test_a_memo_that_starts_over_forgets_its_first_values(monkeypatch):
    monkeypatch.setattr(encoding, "MEMO_LIMIT", 2)
    reprs, share = _share()
    parent = Rec((0,), 0)
    pp = reprs.of(parent)
    first = Rec(tuple([5, 6]), 0)
    reprs.of_child(first, parent, pp)
    for k in range(3):  # past the limit: the log memo starts over
        reprs.of_child(Rec((k, k), 0), parent, pp)
    again = Rec(tuple([5, 6]), 0)
    got = share(again, parent, reprs.of_child(again, parent, pp))
    assert got is again and len(reprs.memos[0].first) == len(reprs.memos[0])


def test_a_bound_given_to_the_reprs_holds_whatever_the_default():
    reprs = FieldReprs(len(Rec._fields), limit=3)
    assert reprs.memos[0].limit == 3 and reprs.memos[0].inner.limit == 3
    for k in range(3):
        reprs.of(Rec((k,), k))
    assert len(reprs.memos[0]) == 3
    reprs.of(Rec((9,), 9))  # the fourth value: the memo starts over
    assert len(reprs.memos[0]) == 1 and len(reprs.memos[0].first) == 1
    assert FieldReprs(1).memos[0].limit == encoding.MEMO_LIMIT


def test_a_cores_field_reprs_follow_its_bound():
    core = Core(build("lifecycle-large", "kip516", {}))
    assert core.field_keys()[1].memos[0].limit == encoding.MEMO_LIMIT
    core.reprs_limit = 7
    assert core.field_keys()[1].memos[0].limit == 7


def _kept(core, levels=4):
    """The candidates of the first ``levels`` levels, and every successor object the
    model handed the expander, by id."""
    made: dict = {}
    successors = core.successors

    def recorded(s):
        out = successors(s)
        made.update((id(t), t) for _a, t in out)  # held: no id is reused meanwhile
        return out
    core.successors = recorded
    expand = level_expander(core, core.coverage_counter())
    frontier, pieces, kept = [s for _i, s in core.initial()], None, []
    for depth in range(levels):
        lvl = expand(frontier, depth, lambda _i: False, pieces)
        kept += lvl.states
        frontier, pieces = lvl.states, lvl.pieces
    return kept, made


def test_spark_tasks_keep_candidates_as_the_model_made_them():
    """The Spark explorer's core (``for_tasks``): memos of the task bound, and each
    candidate the very object the model made; the local explorers' core replaces some
    of them by records of the memos' first objects."""
    model = build("lifecycle-large", "kip516", {})
    local = Core(model)
    kept, made = _kept(local)
    assert any(id(t) not in made for t in kept)
    task = Core(model)
    for_tasks(task)
    assert task.field_keys()[1].memos[0].limit == TASK_REPRS_LIMIT < encoding.MEMO_LIMIT
    kept, made = _kept(task)
    assert len(kept) > 100 and all(made.get(id(t)) is t for t in kept)


def test_a_levels_states_hold_the_first_objects_of_the_fields_they_changed():
    """Five levels of lifecycle-large: each kept state's keys are those of the state as
    the model made it, and every field it changed from its parent is the object the
    memos met first for that value; the messages in flight, which nearly every step
    changes, are a few objects per value where the model made one per step."""
    core = Core(build("lifecycle-large", "kip516", {}))
    memos = core.field_keys()[1].memos
    net = type(core.initial()[0][1])._fields.index("net")
    expand = level_expander(core, core.coverage_counter())
    frontier, pieces = [s for _i, s in core.initial()], None
    for depth in range(5):
        lvl = expand(frontier, depth, lambda _i: False, pieces)
        made = keys_array(map(core.rkey, lvl.states), len(lvl.states), core.key_dtype)
        assert np.array_equal(made, lvl.keys)
        for t, tp, pi in zip(lvl.states, lvl.pieces, lvl.parents.tolist()):
            for i, (mine, theirs) in enumerate(zip(t, frontier[pi])):
                assert mine is theirs or mine is memos[i].first[id(tp[i])], (depth, i)
        objects = {id(t[net]) for t in lvl.states}
        assert len(objects) <= 2 * len({t[net] for t in lvl.states})
        frontier, pieces = lvl.states, lvl.pieces
    assert len(frontier) > 200


def test_equal_relations_are_one_object():
    a, b = relation([(1, "x"), (2, "y")]), relation(iter([(2, "y"), (1, "x")]))
    assert a is b and a == frozenset({(1, "x"), (2, "y")})
    assert relation([(3, "z")]) is not a and relation(()) == frozenset()


def test_the_view_parts_entries_share_each_relation_value():
    """Three hundred kraft-stray states through the KRaft views: every relation value in
    every part's entries is one object, wherever it occurs."""
    states = reachable(build("kraft-stray", "kraft", {}), 300)
    views = (kraft_views._VIEWS[type(states[0])], kraft_protocol.protocol_view)
    copies = [v.extended() for v in views]  # the same parts, memos of their own
    ids: dict = {}
    for s in states:
        for view in copies:
            view(s)
    for view in copies:
        for part in view._parts + view._derived:
            for same in part.entries:  # (the relation names, each relation's value)
                for value in same[1:]:
                    ids.setdefault(value, set()).add(id(value))
    assert len(ids) > 10 and all(len(x) == 1 for x in ids.values())
