"""CreatePartitions on the ZooKeeper plane: AdminUtils' placement, the controller broker's
reads (the assignment, then the topic ID) and unfenced write of the topic znode, the
controller's reaction to the znode's change (KAFKA-6612's restore included), and the stale
write that lands on a re-created topic, with the deleted topic's ID or none, and surfaces
at the next controller failover."""
from kmc import api
from kmc.model.kafka import broker as bk
from kmc.model.kafka import store as zk
from kmc.model.kafka.zk import control, expansion
from kmc.model.kafka.zk.state import TOPIC


def test_placement_is_adminutils_rack_unaware_with_a_fixed_start():
    # AdminUtils' own example: 5 brokers, 10 partitions, 3 replicas, start index 0
    got = expansion.placement((0, 1, 2, 3, 4), 10, 3, 0, 0)
    first = [r[0] for r in got]
    assert first == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]
    # the Javadoc's second- and third-replica rows, broker by broker
    second = {b: sorted(p for p, r in enumerate(got) if r[1] == b) for b in range(5)}
    third = {b: sorted(p for p, r in enumerate(got) if r[2] == b) for b in range(5)}
    assert second == {0: [4, 8], 1: [0, 9], 2: [1, 5], 3: [2, 6], 4: [3, 7]}
    assert third == {0: [3, 7], 1: [4, 8], 2: [0, 9], 3: [1, 5], 4: [2, 6]}
    # new partitions continue from the existing count
    assert expansion.placement((1, 2, 3), 1, 2, 0, 1) == ((2, 3),)


def _model(variant="kip516", **params):
    model = api.build("recreate-during-expansion", variant, {"plane": "zk", **params})
    (w,) = model.init_states()
    return model, w


def _take(model, w, kind, pred=lambda a: True):
    """The successor of ``w`` by the one enabled action of ``kind`` that ``pred`` picks."""
    got = [(a, t) for a, t in model.successors(w) if a[0] == kind and pred(a)]
    assert len(got) == 1, (kind, [a for a, _ in model.successors(w)])
    return got[0][1]


def _walk(model, w, *steps):
    """``w`` after ``steps``, each an action kind or (kind, pred) for ``_take``."""
    for step in steps:
        kind, pred = (step, lambda a: True) if isinstance(step, str) else step
        w = _take(model, w, kind, pred)
    return w


#: the admin's requests of the ID tests: DeleteTopics by name, CreateTopics on (1, 2)
DELETE = ("delete", lambda a: a[1] == "name")
CREATE = ("create", lambda a: a[1] == (1, 2))


def _settle(model, w):
    """Deliver every message in flight (the controller's requests and the answers)."""
    while True:
        nxt = [t for a, t in model.successors(w) if a[0] == "deliver"]
        if not nxt:
            return w
        w = nxt[0]


def test_the_controller_brings_new_partitions_online_after_the_znode_write():
    model, w = _model()
    w = _take(model, w, "send-create-partitions")
    w = _take(model, w, "create-partitions-read")
    w = _take(model, w, "create-partitions-read-id")
    w = _take(model, w, "create-partitions-write")
    rec = zk.topic(w.store, TOPIC)
    # written to the znode only: the controller's record has not changed yet
    assert len(rec.partitions) == 1 and len(zk.assignment(w.store, TOPIC)) == 2
    assert w.ghost.expansions == ((1, 1, ""),)
    w = _take(model, w, "partition-modifications")
    rec = zk.topic(w.store, TOPIC)
    assert w.store.assignments == ()
    new = rec.partitions[1]
    assert (new.leader, new.leader_epoch, new.isr) == (new.replicas[0], 0, new.replicas)
    w = _settle(model, w)
    hosts = {b for b, br in enumerate(w.brokers, 1) if bk.log_of(br, 1) is not None}
    online = {b for b, br in enumerate(w.brokers, 1) if bk.hosted_of(br, 1) is not None}
    assert hosts == online == set(new.replicas)


def test_a_write_to_a_topic_queued_for_deletion_is_restored():
    # zk-3.9 deletes through /admin/delete_topics: the topic is marked while its
    # replicas are stopped (KafkaController.processPartitionModifications, KAFKA-6612)
    model, w = _model("zk-3.9")
    w = _take(model, w, "send-create-partitions")
    w = _take(model, w, "create-partitions-read")
    w = _take(model, w, "create-partitions-read-id")
    w = _take(model, w, "delete", lambda a: a[1] == "name")
    assert zk.marked(w.store, TOPIC)
    w = _take(model, w, "create-partitions-write")
    assert len(zk.assignment(w.store, TOPIC)) == 2
    w = _take(model, w, "partition-modifications")
    assert w.store.assignments == () and len(zk.topic(w.store, TOPIC).partitions) == 1
    # a request read after the marker is refused
    model, w = _model("zk-3.9")
    w = _take(model, w, "send-create-partitions")
    w = _take(model, w, "delete", lambda a: a[1] == "name")
    w = _take(model, w, "create-partitions-read")
    assert w.requests == () and w.ghost.expansions == ((1, 1, expansion.QUEUED),)


def test_a_new_partition_without_a_live_replica_waits_for_a_broker():
    model, w = _model(crashes=1, rf=1, deletes=0, incarnations=1, brokers=2)
    w = _take(model, w, "send-create-partitions")
    w = _take(model, w, "create-partitions-read")
    (new,) = w.requests[0][2][1]
    w = _take(model, w, "create-partitions-read-id")
    w = _take(model, w, "create-partitions-write")
    w = _settle(model, _take(model, w, "crash", lambda a: a[1] == new[0]))
    w = _take(model, w, "partition-modifications")
    part = zk.topic(w.store, TOPIC).partitions[1]
    assert (part.leader, part.leader_epoch) == (zk.NO_LEADER, control.NEW_PARTITION)
    assert not any(p.partition == 1 for m in model.net.messages(w.net)
                   if m.kind == "LeaderAndIsr" for p in m.parts)
    w = _take(model, w, "restart", lambda a: a[1] == new[0])
    part = zk.topic(w.store, TOPIC).partitions[1]
    assert (part.leader, part.leader_epoch, part.isr) == (new[0], 0, new)


def test_a_stale_write_lands_on_the_recreated_topic_and_a_failover_loads_it():
    model, w = _model(brokers=3, failovers=1)
    w = _take(model, w, "send-create-partitions")
    w = _take(model, w, "create-partitions-read")
    w = _take(model, w, "delete", lambda a: a[1] == "name")
    w = _take(model, w, "create", lambda a: a[1] == (3, 1))
    w = _take(model, w, "create-partitions-read-id")  # incarnation 2's own ID
    w = _take(model, w, "create-partitions-write")
    rec = zk.topic(w.store, TOPIC)
    # incarnation 1's assignment of partition 0 is now in incarnation 2's znode
    assert rec.incarnation == 2 and rec.partitions[0].replicas == (3, 1)
    assert zk.assignment(w.store, TOPIC) == ((1, 2), (2, 3))
    assert w.ghost.expansions == ((1, 2, ""),)
    w = _take(model, w, "failover")
    part = zk.topic(w.store, TOPIC).partitions[0]
    assert part.replicas == (1, 2) and part.leader == 3
    prop = next(p for p in model.properties() if p.name == "LeaderIsReplica")
    assert not prop.check(w)


def test_an_id_read_before_the_recreation_gives_the_new_topic_the_old_id():
    # AdminZkClient.writeTopicPartitionAssignment reads the ID, then writes with setData
    model, w = _model(failovers=1)
    unique = _prop(model, "TopicIdUnique")
    w = _walk(model, w, "send-create-partitions", "create-partitions-read",
              "create-partitions-read-id")
    old = zk.topic(w.store, TOPIC).topic_id
    w = _walk(model, w, DELETE, CREATE)
    new = zk.topic(w.store, TOPIC).topic_id
    assert new != old and unique.check(w)
    w = _take(model, w, "create-partitions-write")
    # the znode names the deleted topic's ID; the running controller keeps its own
    assert zk.znode_id(w.store, TOPIC) == old and zk.topic(w.store, TOPIC).topic_id == new
    assert not unique.check(w)  # one ID, two incarnations (a broker still holds the old)
    w = _take(model, w, "failover")
    rec = zk.topic(w.store, TOPIC)
    assert (rec.incarnation, rec.topic_id) == (2, old) and w.store.assignments == ()
    lairs = [m for m in model.net.messages(w.net) if m.kind == "LeaderAndIsr"
             and m.epoch == w.ctl.epoch]
    assert lairs and {p.topic_id for m in lairs for p in m.parts} == {old}


def test_an_id_read_with_no_znode_writes_none_and_the_next_controller_mints_one():
    model, w = _model(failovers=1)
    unique = _prop(model, "TopicIdUnique")
    # kip516: the znode goes with the deletion, so the ID's read finds none (NONODE)
    w = _walk(model, w, "send-create-partitions", "create-partitions-read", DELETE,
              "create-partitions-read-id", CREATE, "create-partitions-write")
    assert zk.znode_id(w.store, TOPIC) == zk.ZERO_ID
    assert not unique.check(w)  # a version-3 znode without an ID
    w = _take(model, w, "failover")  # processTopicIds -> setTopicIds
    rec = zk.topic(w.store, TOPIC)
    assert rec.topic_id == zk.MINTED_ID + w.ctl.epoch == zk.znode_id(w.store, TOPIC)
    assert w.store.assignments == () and unique.check(w)


def test_the_old_id_makes_a_broker_keep_the_deleted_topics_log():
    # kip516: the deletion's StopReplica is still in flight when the failover loads the
    # deleted topic's ID for the re-created topic; the FULL LeaderAndIsr matches the log
    model, w = _model(failovers=1)
    stale = _prop(model, "NoStaleReplication")
    flushed = _prop(model, "MetadataFlushedFirst")
    w = _walk(model, w, "send-create-partitions", "create-partitions-read",
              "create-partitions-read-id", DELETE, CREATE, "create-partitions-write",
              "failover")
    old = zk.topic(w.store, TOPIC).topic_id
    w = _take(model, w, "deliver", lambda a: a[1].kind == "LeaderAndIsr" and a[1].dst == 2
              and a[1].epoch == w.ctl.epoch)
    log = bk.log_of(w.brokers[1], 0)
    assert (log.inc, log.topic_id, log.records) == (2, old, (1,))
    assert log.flushed and flushed.check(w)  # partition.metadata already holds that ID
    assert not stale.check(w)


def test_without_topic_ids_no_id_is_read():
    model, w = _model("legacy")
    w = _take(model, w, "send-create-partitions")
    w = _take(model, w, "create-partitions-read")
    assert "create-partitions-read-id" not in [a[0] for a, _t in model.successors(w)]
    assert "create-partitions-read-id" not in model.action_names()
    w = _take(model, w, "create-partitions-write")
    assert zk.znode_id(w.store, TOPIC) == zk.ZERO_ID == zk.topic(w.store, TOPIC).topic_id


def test_the_restore_of_a_topic_queued_for_deletion_writes_the_controllers_id():
    model, w = _model("zk-3.9")
    w = _walk(model, w, "send-create-partitions", "create-partitions-read",
              "create-partitions-read-id", DELETE)
    rec = zk.topic(w.store, TOPIC)
    # a znode whose ID another write changed gets the controller's back with the restore
    w = w._replace(store=zk.write_assignment(w.store, TOPIC, ((1, 2), (2, 1)), 99))
    assert zk.znode_id(w.store, TOPIC) == 99
    w = _take(model, w, "partition-modifications")
    assert w.store.assignments == () and zk.znode_id(w.store, TOPIC) == rec.topic_id


def _prop(model, name):
    return next(p for p in model.properties() if p.name == name)


def test_assignment_agreed_and_replicas_distinct_read_the_topic_znode():
    model, w = _model()
    agreed, distinct = _prop(model, "AssignmentAgreed"), _prop(model, "ReplicasDistinct")
    w = _take(model, w, "send-create-partitions")
    w = _take(model, w, "create-partitions-read")
    w = _take(model, w, "delete", lambda a: a[1] == "name")
    w = _take(model, w, "create", lambda a: a[1] == (2, 1))
    w = _take(model, w, "create-partitions-read-id")
    w = _take(model, w, "create-partitions-write")
    w = _settle(model, _take(model, w, "partition-modifications"))
    # settled: the controller added partition 1 but kept (2, 1) for partition 0, while
    # the znode holds incarnation 1's (1, 2)
    assert not [a for a, _t in model.successors(w) if not model.is_fault(a)
                and a[0] not in ("create", "delete")]
    assert zk.assignment(w.store, TOPIC)[0] == (1, 2)
    assert zk.topic(w.store, TOPIC).partitions[0].replicas == (2, 1)
    assert not agreed.check(w) and distinct.check(w)
    # a placement naming a broker twice is caught in the znode
    doubled = w._replace(store=zk.write_assignment(w.store, TOPIC, ((1, 1), (2, 1))))
    assert not distinct.check(doubled)
    # the controller's own write (a failover's load) agrees again
    model, w2 = _model(failovers=1)
    w2 = w2._replace(store=w.store, brokers=w.brokers, ghost=w.ghost)
    w2 = _take(model, w2, "failover")
    assert w2.store.assignments == () and agreed.check(w2)


def test_every_expansion_step_is_drawn_in_a_declared_lane():
    from toymodels import reachable

    model, _w = _model(failovers=1)
    lanes, seen = set(model.lanes()), set()
    for w in reachable(model, 4000):
        for a, _t in model.successors(w):
            if a[0] not in expansion.KINDS:
                continue
            seen.add(a[0])
            assert model.action_actor(a) in lanes, a
            assert isinstance(model.format_action(a), str)
            src, dst, label = model.action_message(a, w)
            assert src in lanes and dst in lanes and label, a
    assert seen == set(expansion.KINDS)
