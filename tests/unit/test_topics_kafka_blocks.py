"""The shared Kafka building blocks (model.kafka): canonical collections, the network,
controller election and fencing, store records, broker helpers, symmetry."""
from typing import NamedTuple

import pytest

from kmc.model.encoding import check_canonical, fingerprint
from kmc.model.kafka import broker as bk
from kmc.model.kafka import canon, controller, store, symmetry
from kmc.model.kafka.network import Network


class Ping(NamedTuple):
    kind: str
    src: int
    dst: int
    n: int


def ping(src, dst, n=0):
    return Ping("Ping", src, dst, n)


# ---- canon ----------------------------------------------------------------------------------
def test_sorted_set_and_bag_stay_canonical():
    s = canon.set_add(canon.set_add((), 3), 1)
    assert s == (1, 3) and canon.set_add(s, 3) == s
    assert canon.set_remove(s, 3) == (1,) and canon.set_remove(s, 9) == s
    assert canon.set_union((2,), [3, 1, 2]) == (1, 2, 3)
    b = canon.bag_add(canon.bag_add((), 2), 2)
    assert b == (2, 2) and canon.bag_remove(b, 2) == (2,)
    with pytest.raises(ValueError):
        canon.bag_remove((), 2)


def test_maps_and_keyed_records():
    m = canon.map_put(canon.map_put((), "b", 1), "a", 2)
    assert m == (("a", 2), ("b", 1)) and canon.map_get(m, "b") == 1
    assert canon.map_put(m, "b", 5) == (("a", 2), ("b", 5))
    assert canon.map_del(m, "a") == (("b", 1),) and canon.map_get(m, "z", 0) == 0
    recs = canon.keyed_put(canon.keyed_put((), ("y", 1)), ("x", 2))
    assert recs == (("x", 2), ("y", 1)) and canon.keyed_get(recs, "y") == ("y", 1)
    assert canon.keyed_put(recs, ("y", 7)) == (("x", 2), ("y", 7))
    assert canon.keyed_del(recs, "x") == (("y", 1),)
    assert canon.replace_at((1, 2, 3), 1, 9) == (1, 9, 3)


# ---- network --------------------------------------------------------------------------------
def test_unordered_network_is_a_canonical_multiset():
    net = Network(ordered=False)
    a = net.send_all((), [ping(1, 2, 1), ping(2, 1), ping(1, 2, 1)])
    b = net.send_all((), [ping(1, 2, 1), ping(1, 2, 1), ping(2, 1)])
    assert a == b and fingerprint(a) == fingerprint(b)  # send order does not matter
    assert list(net.deliverable(a)) == [ping(1, 2, 1), ping(2, 1)]  # distinct, sorted
    assert net.count(a) == 3
    a2 = net.deliver(a, ping(1, 2, 1))
    assert net.count(a2) == 2 and ping(1, 2, 1) in a2


def test_ordered_network_delivers_only_channel_heads():
    net = Network(ordered=True)
    x = net.send_all((), [ping(1, 2, 1), ping(1, 2, 2), ping(3, 2, 9)])
    assert list(net.deliverable(x)) == [ping(1, 2, 1), ping(3, 2, 9)]
    with pytest.raises(ValueError):
        net.deliver(x, ping(1, 2, 2))  # not at the head of its channel
    y = net.deliver(x, ping(1, 2, 1))
    assert list(net.deliverable(y)) == [ping(1, 2, 2), ping(3, 2, 9)]
    z = net.lose(net.deliver(y, ping(1, 2, 2)), ping(3, 2, 9))
    assert z == ()  # empty channels disappear: the value stays canonical
    check_canonical(x)
    # channels are found by (src, dst) wherever they sit: before, between, after others
    w = net.send_all((), [ping(3, 1, 5), ping(1, 3), ping(2, 2), ping(2, 2, 4)])
    assert net.deliver(w, ping(2, 2)) == net.send_all((), [ping(3, 1, 5), ping(1, 3),
                                                            ping(2, 2, 4)])
    assert net.deliver(w, ping(3, 1, 5)) == net.send_all((), [ping(1, 3), ping(2, 2),
                                                               ping(2, 2, 4)])
    for absent in (ping(1, 1), ping(2, 1), ping(3, 3)):
        with pytest.raises(ValueError, match="not in flight"):
            net.deliver(w, absent)
    assert net.messages(w) == [ping(1, 3), ping(2, 2), ping(2, 2, 4), ping(3, 1, 5)]


def test_drop_and_rename_keep_the_shape():
    for ordered in (False, True):
        net = Network(ordered=ordered)
        x = net.send_all((), [ping(1, 2), ping(2, 1), ping(2, 3)])
        assert sorted(net.messages(net.drop(x, lambda m: 2 in (m.src, m.dst)))) == []
        assert sorted(net.messages(net.drop(x, lambda m: m.dst == 1))) == \
            [ping(1, 2), ping(2, 3)]
        swapped = net.rename(x, lambda m: m._replace(src=3 - m.src if m.src < 3 else 3,
                                                      dst=3 - m.dst if m.dst < 3 else 3))
        assert sorted(net.messages(swapped)) == sorted([ping(2, 1), ping(1, 2), ping(1, 3)])
        assert net.ask(x, lambda ms: sorted(m.dst for m in ms)) == [1, 2, 3]


def test_unorderable_message_gets_a_clear_error():
    net = Network(ordered=False)
    x = net.send((), ping(1, 2))
    with pytest.raises(TypeError, match="distinct kind string"):
        net.send(x, ("Ping", 1, 2, None))


# ---- controller -----------------------------------------------------------------------------
def test_failover_elects_another_candidate_with_the_next_epoch():
    c = controller.initial(3)
    assert (c.active, c.epoch) == (1, controller.FIRST_EPOCH)
    assert controller.successors_of(c) == (2, 3)
    c2 = controller.fail_over(c, 3)
    assert (c2.active, c2.epoch) == (3, 2)
    with pytest.raises(ValueError):
        controller.fail_over(c2, 3)
    with pytest.raises(ValueError):
        controller.initial(0)
    assert controller.lane(2) == "controller-2"


def test_epoch_fence_rejects_only_older_epochs():
    assert controller.accepts(2, 2) and controller.accepts(2, 3)
    assert not controller.accepts(3, 2)


# ---- store ----------------------------------------------------------------------------------
def test_new_topics_get_fresh_ids_never_zero_or_sentinel():
    s = store.Store()
    ids = []
    for _ in range(4):
        s, rec = store.new_topic(s, "A", [(1, 2)], with_id=True)
        ids.append(rec.topic_id)
        assert rec.version == 3
        s = store.remove_topic(s, "A")
    assert len(set(ids)) == 4
    assert store.ZERO_ID not in ids and store.SENTINEL_ID not in ids
    s, legacy = store.new_topic(s, "B", [(2, 1)], with_id=False)
    assert legacy.topic_id == store.ZERO_ID and legacy.version == 2
    assert legacy.incarnation == 5 and legacy.partitions[0].leader == 2


def test_markers_leader_election_and_reassignment():
    s, rec = store.new_topic(store.Store(), "A", [(1, 2, 3)], with_id=True)
    s = store.mark_for_deletion(s, "A")
    assert store.marked(s, "A") and store.topic(s, "A") == rec
    assert store.remove_topic(s, "A") == s._replace(topics=(), delete_markers=())
    part = rec.partitions[0]
    p2 = store.elect_leader(part, lambda b: b != 1)
    assert (p2.leader, p2.leader_epoch) == (2, 1)
    p3 = store.elect_leader(part, lambda b: False)
    assert (p3.leader, p3.leader_epoch) == (store.NO_LEADER, 1)
    p4 = store.remove_replica(part, 1)
    assert p4.replicas == (2, 3) and p4.isr == (2, 3) and p4.leader == 2
    assert store.set_partition(rec, 0, p4).partitions == (p4,)


# ---- brokers and symmetry -------------------------------------------------------------------
class B(NamedTuple):
    status: str


def test_broker_liveness_helpers():
    brs = (B(bk.UP), B(bk.DOWN), B(bk.RESTARTING))
    assert bk.live_ids(brs) == (1, 3)
    assert bk.get(bk.put(brs, 2, B(bk.UP)), 2) == B(bk.UP)
    assert list(bk.broker_ids(3)) == [1, 2, 3] and bk.lane(2) == "broker-2"


def test_representative_is_the_same_for_every_member_of_an_orbit():
    maps = symmetry.mappings((1, 2, 3))
    assert len(maps) == 6 and maps[0] == {1: 1, 2: 2, 3: 3}

    def rename(state, mp):  # state: a tuple of (broker, value) facts
        return tuple(sorted((mp[b], v) for b, v in state))
    s = ((1, "x"), (2, "y"), (3, "y"))
    reps = {symmetry.representative(rename(s, mp), maps, rename) for mp in maps}
    assert len(reps) == 1
