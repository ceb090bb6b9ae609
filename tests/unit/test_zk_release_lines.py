"""ZooKeeper-mode release lines: each line differs from the next in the flags its history
says, and each flag changes the successor of a state exactly where it says (one step,
the two settings side by side)."""
from kmc import api, catalog
from kmc.model.kafka.messages import PartitionState, lair, stop_replica
from kmc.model.kafka.store import ZERO_ID
from kmc.model.kafka.broker import NO_ROLE, leader_of
from kmc.model.kafka.zk.variants import RELEASE_LINES, VARIANT_NAMES, VARIANTS

OLD, NEW = 2, 3  # topic IDs of incarnations 1 and 2


def _model(scenario, variant="zk-3.9", **flags):
    m = api.build(scenario, variant, {})
    m.flags = m.flags._replace(**flags)
    return m


def _deliver(m, w, msg):
    """The successor of ``w`` when ``msg`` is sent and then delivered."""
    w = w._replace(net=m.net.send(w.net, msg))
    return m.next_state(w, ("deliver", msg))


def _lair_to(b, topic_id, inc=2, leader=1, epoch=1):
    return lair(-1, b, 1, "", [PartitionState(0, topic_id, inc, leader, epoch)])


def _log(w, b):
    """Broker ``b``'s log of the one partition, or None."""
    (x,) = w.brokers[b - 1].logs or (None,)
    return x


def _hosted(w, b):
    """The partition broker ``b`` hosts online, or None."""
    (x,) = w.brokers[b - 1].hosted or (None,)
    return x


def _leader(w, b):
    """The leader broker ``b`` hosts partition 0 with (NO_ROLE: not hosted)."""
    return leader_of(w.brokers[b - 1], 0)


def test_release_lines_are_listed_and_differ_in_their_flags_only():
    def changed(a, b):
        fa, fb = VARIANTS[a][0], VARIANTS[b][0]
        return {f for f, x, y in zip(fa._fields, fa, fb) if x != y}
    assert RELEASE_LINES == ("zk-2.8", "zk-3.0", "zk-3.9")
    assert changed("legacy", "zk-2.8") == {
        "topic_ids", "incremental_id_check", "lair_type", "id_mismatch_stages",
        "id_at_creation", "id_check_on_disk", "stop_replica_ids", "produce_topic_id",
        "follower_epoch_check"}
    assert changed("zk-2.8", "zk-3.0") == {"id_at_creation", "id_check_on_disk"}
    assert changed("zk-3.0", "zk-3.9") == {"fetch_topic_id"}
    for f in ("immediate_delete", "full_reconcile", "failover_sends_full"):
        assert not any(getattr(VARIANTS[v][0], f) for v in RELEASE_LINES)
    sc = catalog.scenarios()["stale-read"]
    assert set(RELEASE_LINES) <= set(sc.variants) and sc.default_variant == "kip516"
    assert VARIANT_NAMES[:2] == ("legacy", "kip516")


def test_lair_type_decides_whether_a_restart_gets_a_full_request():
    def after_restart(typed):
        m = _model("stale-read", "kip516", lair_type=typed)
        (w,) = m.init_states()
        w = m.next_state(m.next_state(w, ("crash", 2)), ("restart", 2))
        return [x.lair_type for x in m.net.messages(w.net) if x.dst == 2]
    assert after_restart(True) == ["FULL"]
    assert after_restart(False) == [""]


def test_id_mismatch_stages_replaces_or_refuses_the_partition():
    def after(stages):
        m = _model("stale-read", id_mismatch_stages=stages)
        (w,) = m.init_states()
        t = _deliver(m, w, _lair_to(1, NEW))
        return _log(t, 1), _hosted(t, 1)
    (staged, _), (refused, refused_at) = after(True), after(False)
    assert (staged.topic_id, staged.inc, staged.records) == (NEW, 2, ())
    assert (refused.topic_id, refused.inc, refused.records, refused_at.leader_epoch) == \
        (OLD, 1, (1,), 0)


def test_id_at_creation_gives_a_new_log_the_request_topic_id():
    def created(at_creation):
        m = _model("offline-delete", "zk-2.8", id_at_creation=at_creation)
        (w,) = m.init_states()
        assert _log(w, 2) is None and _hosted(w, 2) is None
        t = _deliver(m, w, _lair_to(2, OLD, inc=1, epoch=0))
        return _log(t, 2), _hosted(t, 2)

    def without_id(made):
        return tuple(x._replace(topic_id=ZERO_ID) for x in made)
    assert created(True)[0].topic_id == OLD
    assert created(False)[0].topic_id == ZERO_ID
    assert without_id(created(True)) == without_id(created(False))  # nothing else differs


def test_id_check_on_disk_sees_a_log_loaded_at_restart():
    def after(on_disk):
        m = _model("stale-read", "zk-3.0", id_check_on_disk=on_disk)
        (w,) = m.init_states()
        w = m.next_state(m.next_state(w, ("crash", 1)), ("restart", 1))
        # loaded from disk, not attached yet
        assert _log(w, 1) is not None and _leader(w, 1) == NO_ROLE
        t = _deliver(m, w._replace(net=()), _lair_to(1, NEW))
        return _log(t, 1), _leader(t, 1)
    (checked, checked_leader), (attached, attached_leader) = after(True), after(False)
    assert (checked.inc, checked_leader) == (1, NO_ROLE)  # INCONSISTENT_TOPIC_ID
    # attached unchecked: serves the new incarnation with the old log and ID
    assert (attached.inc, attached.topic_id, attached.records, attached_leader) == \
        (2, OLD, (1,), 1)


def test_id_check_on_disk_off_assigns_an_attached_log_its_id_whatever_the_epoch():
    def after(on_disk):
        m = _model("stale-read", "zk-2.8", id_check_on_disk=on_disk)
        (w,) = m.init_states()
        log = _log(w, 1)._replace(topic_id=ZERO_ID)
        h = _hosted(w, 1)._replace(topic_id=ZERO_ID, leader_epoch=5)
        br = w.brokers[0]._replace(logs=(log,), hosted=(h,))
        w = w._replace(brokers=(br,) + w.brokers[1:])
        return _log(_deliver(m, w, _lair_to(1, OLD, inc=1, epoch=1)), 1)
    assert after(False).topic_id == OLD  # Partition.checkOrSetTopicId, before the epoch
    assert after(True).topic_id == ZERO_ID  # an older leader epoch changes nothing


def test_stop_replica_ids_decides_what_a_deletion_names_and_deletes():
    def deletion(ids):
        m = _model("stale-read", "zk-3.0", stop_replica_ids=ids)
        (w,) = m.init_states()
        w = m.next_state(w, ("delete", "name"))
        return m, w, sorted({x.topic_id for x in m.net.messages(w.net)
                             if x.kind == "StopReplica"})
    assert deletion(True)[2] == [OLD] and deletion(False)[2] == [ZERO_ID]
    for ids, kept in ((True, True), (False, False)):  # another incarnation's replica
        m, w, _ = deletion(ids)
        w = _deliver(m, w._replace(net=()), stop_replica(-1, 1, 1, 0, NEW, 2))
        assert (_log(w, 1) is not None) is kept


def test_produce_topic_id_refuses_a_record_for_another_topic_id():
    def produced(ids):
        m = _model("recreate-race", "zk-3.0", produce_topic_id=ids)
        (w,) = m.init_states()
        meta = w.producer.meta._replace(topic_id=NEW, inc=2)
        return m.next_state(w._replace(producer=w.producer._replace(meta=meta)),
                            ("produce", 0))
    assert produced(True) is None  # UNKNOWN_TOPIC_ID
    w = produced(False)
    assert _log(w, 1).records == (1,) and w.ghost.wrote == ((2, 1),)


def test_fetch_topic_id_separates_3_0_from_3_9_on_the_consumer():
    def fetched(variant):
        m = api.build("recreate-race", variant, {"initial_records": 1})
        (w,) = m.init_states()
        meta = w.consumer.meta._replace(topic_id=NEW, inc=2)
        return m.next_state(w._replace(consumer=w.consumer._replace(meta=meta)),
                            ("consumer-fetch", 0))
    assert fetched("zk-3.0").ghost.reads == ((0, 2, 1),)  # by name: a stale read
    w = fetched("zk-3.9")  # by topic ID: INCONSISTENT_TOPIC_ID, nothing read
    assert w.ghost.attempts == ((2, 1),) and w.ghost.reads == ()
    assert w.consumer.positions == (0,)
