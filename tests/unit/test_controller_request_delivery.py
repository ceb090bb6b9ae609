"""One delivery of the ZooKeeper-era controller's requests for both features
(model/kafka/zk/brokers.py DELIVER): the broker's record takes the request, the group
coordinator reacts where a group runs (model/kafka/zk/coordinator.py), and the answer is
sent where the controller reads it."""
import copy

import pytest

from kmc.api import build
from kmc.model.kafka import broker as bk
from kmc.model.kafka.messages import (
    LAIR_RESP, STOP_RESP, PartitionState, lair, stop_replica, update_metadata,
)
from kmc.model.kafka.store import ZERO_ID


def _kinds(m, w):
    return [x.kind for x in m.net.messages(w.net)]


def _deliver(m, w, msg):
    w = w._replace(net=m.net.send(w.net, msg))
    t = m.next_state(w, ("deliver", msg))
    assert t is not None
    return t


@pytest.fixture(scope="module")
def procedure():
    return build("expand", "kip253")


@pytest.fixture(scope="module")
def lifecycle():
    return build("stale-read", "kip516")


def _stop(w, p):
    return stop_replica(-w.ctl.active, 1, w.ctl.epoch, p, ZERO_ID, 1)


def test_a_stop_replica_is_answered_only_where_the_controller_reads_the_answer(procedure):
    m = procedure
    w = m.init_states()[0]
    w = w._replace(group=w.group._replace(committed=(2,) + w.group.committed[1:]))
    t = _deliver(m, w, _stop(w, 0))
    assert bk.log_of(t.brokers[0], 0) is None  # the replica is deleted
    assert bk.hosted_of(t.brokers[0], 0) is None
    assert t.group.committed[0] == 0  # and the group's committed offset with it
    assert STOP_RESP not in _kinds(m, t)  # KIP-253's controller never reads an answer
    answering = copy.copy(m)
    answering.stop_replica_answered = True
    t2 = _deliver(answering, w, _stop(w, 0))
    assert _kinds(m, t2) == [STOP_RESP]
    assert t2._replace(net=t.net) == t  # the same delivery otherwise


def test_the_coordinator_keeps_offsets_in_the_variant_that_keeps_them():
    m = build("expand", "kip253-keeps-offsets")
    w = m.init_states()[0]
    w = w._replace(group=w.group._replace(committed=(2,) + w.group.committed[1:]))
    t = _deliver(m, w, _stop(w, 0))
    assert bk.log_of(t.brokers[0], 0) is None and t.group.committed[0] == 2


@pytest.mark.parametrize("variant,fenced", [("kip253", True),
                                            ("kip253-unfenced-park", False)])
def test_a_count_change_fences_the_parked_fetch_where_the_variant_says(variant, fenced):
    m = build("expand", variant)
    w = m.init_states()[0]
    n = w.group.basis[0]
    parts = [PartitionState(p, ZERO_ID, 1, 1, 5) for p in range(n)]
    t = _deliver(m, w, lair(-w.ctl.active, 1, w.ctl.epoch, "", parts, n + 1))
    assert t.brokers[0].count == n + 1
    assert t.group.rejoin is fenced
    same = _deliver(m, w, lair(-w.ctl.active, 1, w.ctl.epoch, "", parts, n))
    assert same.group.rejoin is False  # the same count: the parked Fetch stays


def test_a_leader_and_isr_is_answered_when_its_controller_waits(lifecycle):
    m = lifecycle
    w = m.init_states()[0]
    r = w.brokers[0].logs[0]
    h = bk.hosted_of(w.brokers[0], r.partition)
    ps = [PartitionState(r.partition, r.topic_id, r.inc, 1, h.leader_epoch + 1)]
    src = -w.ctl.active
    waited = _deliver(m, w, lair(src, 1, w.ctl.epoch, "INCREMENTAL", ps, ack=True))
    assert _kinds(m, waited) == [LAIR_RESP]
    assert waited.group is None  # no group runs in the topic lifecycle
    unwaited = _deliver(m, w, lair(src, 1, w.ctl.epoch, "INCREMENTAL", ps))
    assert _kinds(m, unwaited) == []
    assert waited._replace(net=()) == unwaited
    assert bk.hosted_of(unwaited.brokers[0], r.partition).leader_epoch == h.leader_epoch + 1


def test_a_request_of_an_older_controller_epoch_changes_only_the_network(procedure):
    m = procedure
    w = m.init_states()[0]
    old = update_metadata(-w.ctl.active, 1, w.ctl.epoch - 1, 7, 7)
    t = _deliver(m, w, old)
    assert t == w  # taken off the channel, nothing else
    now = _deliver(m, w, update_metadata(-w.ctl.active, 1, w.ctl.epoch, 7, 7))
    assert now.brokers[0].meta == (7, 7)


def test_offsets_go_with_the_update_metadata_that_stops_advertising_the_partition():
    """``kip253-offsets-by-metadata``: as Kafka's broker, the coordinator deletes a
    partition's committed offsets when an UpdateMetadata no longer advertises it; the
    StopReplica leaves them, and a fenced UpdateMetadata deletes nothing."""
    m = build("shrink", "kip253-offsets-by-metadata")
    w = m.init_states()[0]
    assert w.brokers[0].meta == (3, 3)
    w = w._replace(group=w.group._replace(committed=(1, 1, 2) + w.group.committed[3:],
                                          reported=(0, 0, 2) + w.group.reported[3:]))
    stopped = _deliver(m, w, _stop(w, 2))
    assert bk.log_of(stopped.brokers[0], 2) is None and stopped.group == w.group
    src, ep = -w.ctl.active, w.ctl.epoch
    counted = _deliver(m, stopped, update_metadata(src, 1, ep, 2, 3))  # 2 is only marked
    assert counted.group == w.group
    gone = _deliver(m, counted, update_metadata(src, 1, ep, 2, 2))
    assert gone.group.committed[:3] == (1, 1, 0) and gone.group.reported[:3] == (0, 0, 0)
    fenced = _deliver(m, counted, update_metadata(src, 1, ep - 1, 2, 2))
    assert fenced.group == w.group and fenced.brokers[0].meta == (2, 3)
    kept = build("shrink", "kip253")  # the StopReplica deletes them in kip253
    assert _deliver(kept, w, _stop(w, 2)).group.committed[:3] == (1, 1, 0)
