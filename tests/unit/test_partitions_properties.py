"""The KIP-253 model's properties: declared once as formulas, and each one decides the
states it is about (hand-made variations of reachable states)."""
import pytest

from kmc.invariants.properties import Property
from kmc.api import build
from kmc.model.kafka.kip253 import znodes
from kmc.model.kafka.kip253 import properties as P
from kmc.model.kafka.kip253.broker import log_at, put_log
from kmc.model.kafka.kip253.state import Part


@pytest.fixture(scope="module")
def expand():
    return build("expand", "kip253")


def props(m):
    return {p.name: p for p in m.properties()}


def with_history(w, sent, delivered):
    """``w`` where producer 0 acknowledged ``sent`` messages and the group delivered
    ``delivered`` ((seq, partition) in delivery order) — the scenario has one key class."""
    prods = (w.producers[0]._replace(sent=sent),) + w.producers[1:]
    ghost = w.ghost._replace(delivered=((tuple(delivered),),) + w.ghost.delivered[1:])
    return w._replace(producers=prods, ghost=ghost)


def test_each_property_is_declared_once_as_a_formula():
    assert len(P.DECLARATIONS) == len(set(P.DECLARATIONS))
    for name in P.INVARIANTS:
        assert P.DECLARATIONS[name][0] in ("always", "quiescent")
    for sc in ("expand", "shrink", "expand-failover", "shrink-then-expand"):
        for p in build(sc, "kip253").properties():
            assert isinstance(p, Property) and p.formula is not None and p.view is not None
            assert p.formula is P.DECLARATIONS[p.name][1]


def test_in_order_keyed_delivery(expand):
    p = props(expand)["InOrderKeyedDelivery"]
    w = expand.init_states()[0]
    assert p.check(with_history(w, 2, [(0, 0), (1, 2)]))
    assert not p.check(with_history(w, 2, [(1, 2)]))          # seq 0 skipped
    assert not p.check(with_history(w, 2, [(1, 2), (0, 0)]))  # delivered out of order
    assert p.explain(with_history(w, 2, [(1, 2)]))["s2"] == 1
    assert p.check(with_history(w, 1, []))


def test_no_lost_message(expand):
    p = props(expand)["NoLostMessage"]
    w = expand.init_states()[0]
    assert p.kind == "quiescent"
    assert not p.check(with_history(w, 2, [(0, 0)]))
    assert p.check(with_history(w, 2, [(0, 0), (1, 2)]))


def _with_part(w, member, part):
    g = w.group
    parts = tuple(part if x.p == part.p else x for x in g.members[member])
    return w._replace(group=g._replace(members=g.members[:member] + (parts,)
                                       + g.members[member + 1:]))


def test_new_partition_has_one_parent(expand):
    p = props(expand)["NewPartitionHasOneParent"]
    w = expand.init_states()[0]  # consumer1 owns partition 1
    assert p.check(_with_part(w, 1, Part(1, ((0, 0),), (), False)))
    assert not p.check(_with_part(w, 1, Part(1, ((0, 0), (1, 0)), (), False)))
    assert not p.check(_with_part(w, 1, Part(1, (), (), False)))  # waits on nothing
    assert p.check(_with_part(w, 1, Part(1, None, (), False)))    # look-up still pending


def test_no_consumer_stuck(expand):
    p = props(expand)["NoConsumerStuck"]
    w = expand.init_states()[0]
    blocked = _with_part(w, 1, Part(1, ((0, 1),), (), False))
    assert p.check(blocked)  # blocked, but partition 1 holds nothing
    data = put_log(blocked, log_at(blocked, 1)._replace(records=((2, 0, 0, 0),)))
    assert not p.check(data)
    assert p.explain(data) == {"c": 1, "p": 1}


def test_split_witnesses_need_a_moved_key():
    m = build("shrink-then-expand", "kip253")
    ps = props(m)
    w = m.init_states()[0]  # partition 2 is an old split of partition 0
    assert ("KeyMovedOnSplit" in ps) and ("ChildDeliveredAfterParent" in ps)
    moved = put_log(w, log_at(w, 0)._replace(records=((2, 0, 0, 0),)))
    moved = put_log(moved, log_at(moved, 2)._replace(records=((2, 0, 1, 0),)))
    assert not ps["KeyMovedOnSplit"].check(w)
    assert ps["KeyMovedOnSplit"].check(moved)
    assert ps["ChildDeliveredAfterParent"].check(with_history(w, 2, [(0, 0), (1, 2)]))
    assert not ps["ChildDeliveredAfterParent"].check(with_history(w, 2, [(1, 2), (0, 0)]))


def test_history_witnesses():
    m = build("split-merge-spark", "kip253")
    ps = props(m)
    w = m.init_states()[0]
    assert not ps["MarkedPartitionRemoved"].check(w)
    removed = w._replace(ghost=w.ghost._replace(removed=(2,)))
    assert ps["MarkedPartitionRemoved"].check(removed)
    assert ps["ExpandedAfterRemoval"].check(removed)  # partition 2 exists again
    gone = removed._replace(store=znodes.written(removed.store, total_=2,
                                                 parts=znodes.znodes(w.store)[:2]))
    assert not ps["ExpandedAfterRemoval"].check(gone)
    hit = w._replace(ghost=w.ghost._replace(failover_in=("idle", "shrink")))
    assert ps["FailoverMidShrink"].check(hit) and not ps["FailoverMidExpansion"].check(hit)
    legacy = props(build("shrink", "modulo"))["ShrinkRejected"]
    w0 = build("shrink", "modulo").init_states()[0]
    assert legacy.check(w0._replace(admin=w0.admin._replace(
        alter_errors=("IncreasePartitionsNotAllowed",))))
    assert not legacy.check(w0._replace(admin=w0.admin._replace(
        alter_errors=("InvalidPartitions",))))
