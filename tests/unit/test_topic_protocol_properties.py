"""The protocol's own facts on the ZooKeeper-era topic model
(model/kafka/zk/protocol_properties.py): each holds on kip516, is violated on a state with
exactly its fault, and is declared only where the scenario's bounds make it meaningful. The
witnesses are found on the runs the regression suite pins."""
from functools import lru_cache

import pytest

from kmc import api
from kmc.model.kafka import broker as bk
from kmc.model.kafka import store as zk
from kmc.model.kafka.canon import replace_at
from kmc.model.kafka.messages import lair
from kmc.model.kafka.zk.state import TOPIC

ALWAYS = ("LeaderIsReplica", "LeaderIsLive", "NoTrafficWithCrashedBroker",
          "NoTrafficToFormerController",
          "DeleteByIdFindsLiveTopic")
QUIESCENT = ("LeadersElected", "ReplicatedRecordsAcknowledged")


def props(model):
    return {p.name: p for p in model.properties()}


@lru_cache(maxsize=None)
def start():
    """offline-delete on kip516 (2 brokers, rf 1) and its initial state: broker-1 leads
    partition 0 of incarnation 1 and holds its initial record."""
    m = api.build("offline-delete", "kip516")
    return m, m.init_states()[0]


def with_partition(w, **fields):
    rec = zk.topic(w.store, TOPIC)
    rec = zk.set_partition(rec, 0, rec.partitions[0]._replace(**fields))
    return w._replace(store=zk.put_topic(w.store, rec))


def violated(name, w):
    m, _ = start()
    p = props(m)[name]
    assert not p.check(w)
    return p.explain_sentence(p.explain(w))


def test_all_hold_on_kip516_and_its_initial_state():
    m, w = start()
    p = props(m)
    for name in ALWAYS + QUIESCENT:
        assert p[name].check(w), name
    r = api.check("offline-delete", "kip516")
    assert r.ok and all(r.verdict(n) == "holds" for n in ALWAYS + QUIESCENT)


def test_leader_is_replica_sees_a_leader_outside_the_assignment():
    _, w = start()
    assert "not one of its replicas" in violated("LeaderIsReplica", with_partition(w, leader=2))


def test_leader_is_live_sees_a_down_broker_still_named_leader():
    m, w = start()
    down = w._replace(brokers=replace_at(w.brokers, 0, w.brokers[0]._replace(status=bk.DOWN)))
    assert "yet broker-1 is down" in violated("LeaderIsLive", down)
    # the controller's answer to the crash: no leader (no other replica), or another one
    assert props(m)["LeaderIsLive"].check(with_partition(down, leader=zk.NO_LEADER))
    other = w._replace(brokers=replace_at(w.brokers, 1, w.brokers[1]._replace(status=bk.DOWN)))
    assert props(m)["LeaderIsLive"].check(other)


def test_leaders_elected_sees_a_partition_without_a_leader():
    _, w = start()
    assert "has no leader" in violated("LeadersElected", with_partition(w, leader=zk.NO_LEADER))
    # a broker that is down excuses it: the controller waits for a replica to come back
    m, _ = start()
    down = w._replace(brokers=replace_at(w.brokers, 1, w.brokers[1]._replace(status=bk.DOWN)))
    assert props(m)["LeadersElected"].check(with_partition(down, leader=zk.NO_LEADER))


def test_no_traffic_with_a_crashed_broker():
    m, w = start()
    down = w._replace(brokers=replace_at(w.brokers, 1, w.brokers[1]._replace(status=bk.DOWN)))
    to_down = down._replace(net=m.net.send(down.net, lair(-1, 2, 1, "FULL", ())))
    assert "is in flight although one of them is down" in violated(
        "NoTrafficWithCrashedBroker", to_down)
    to_up = down._replace(net=m.net.send(down.net, lair(-1, 1, 1, "FULL", ())))
    assert props(m)["NoTrafficWithCrashedBroker"].check(to_up)


def test_no_traffic_to_a_former_controller():
    m, w = start()
    stale = w._replace(net=m.net.send(w.net, lair(2, 1, 1, "FULL", ())._replace(
        src=1, dst=-2)))
    assert "not the active controller" in violated("NoTrafficToFormerController", stale)


def test_delete_by_id_refused_only_when_no_live_topic_has_the_id():
    _, w = start()
    tid = zk.topic(w.store, TOPIC).topic_id
    refused = w._replace(admin=w.admin._replace(known_id=tid,
                                                outcome=("delete", "UNKNOWN_TOPIC_ID")))
    assert "yet the live topic has that ID" in violated("DeleteByIdFindsLiveTopic", refused)
    m, _ = start()
    gone = refused._replace(store=zk.remove_topic(refused.store, TOPIC))
    assert props(m)["DeleteByIdFindsLiveTopic"].check(gone)


def test_replicated_records_acknowledged_sees_an_unacknowledged_record():
    _, w = start()
    assert "was never acknowledged" in violated(
        "ReplicatedRecordsAcknowledged", w._replace(ghost=w.ghost._replace(acked=())))


def test_declared_where_the_bounds_make_them_meaningful():
    names = set(props(api.build("offline-delete", "kip516")))
    assert {"TopicIdLostInRestart"} <= names
    assert not {"StagedBeforePurge", "FollowerReplicated"} & names
    assert "TopicIdLostInRestart" not in props(api.build("offline-delete", "legacy"))
    assert "StagedBeforePurge" in props(api.build("offline-delete", "kip516",
                                                  {"purge_delay": True}))
    assert "FollowersFetchTogether" not in props(api.build("recreate-race", "kip516"))
    reassign = props(api.build("stale-read", "kip516"))
    assert {"ReplicatedRecordsAcknowledged", "LeadersElected"} <= set(reassign)


def test_a_shrunk_isr_acknowledges_what_its_replicas_hold():
    """A reassignment away from a down follower shrinks the ISR to replicas that hold the
    record: the leader acknowledges it on the LeaderAndIsr (Partition.makeLeader)."""
    r = api.check("lifecycle-large", "kip516", {"rf": 3, "reassign": 1, "records": 1,
                                                "incarnations": 1, "deletes": 0,
                                                "failovers": 0})
    assert r.complete and r.verdict("ReplicatedRecordsAcknowledged") == "holds"


@pytest.mark.parametrize("scenario, variant, params, witness", [
    ("offline-delete", "kip516", {}, "TopicIdLostInRestart"),
    ("offline-delete", "kip516", {"purge_delay": True}, "StagedBeforePurge"),
    ("lifecycle-large", "kip516", {"rf": 3, "records": 1, "incarnations": 1, "deletes": 0,
                                   "failovers": 0}, "FollowerReplicated"),
    ("lifecycle-large", "kip516", {"rf": 3, "records": 1, "incarnations": 1, "deletes": 0,
                                   "failovers": 0}, "FollowersFetchTogether"),
])
def test_witnesses_found(scenario, variant, params, witness):
    r = api.check(scenario, variant, params)
    assert r.ok and r.verdict(witness) == "witness_found"


def test_stale_request_relation_and_where_the_liveness_property_is_declared():
    from kmc.model.kafka.zk.protocol_properties import protocol_view
    m, w = start()
    br = w.brokers[0]._replace(ctl_epoch=2)
    newer = w._replace(brokers=replace_at(w.brokers, 0, br))
    old = newer._replace(net=m.net.send(newer.net, lair(-1, 1, 1, "FULL", ())))
    assert protocol_view(old)["StaleRequest"] == {("LeaderAndIsr", 1, 1)}
    current = newer._replace(net=m.net.send(newer.net, lair(-1, 1, 2, "FULL", ())))
    assert not protocol_view(current)["StaleRequest"]
    name = "StaleRequestsEventuallyDropped"
    assert name in props(api.build("failover-mid-delete", "kip516", {"liveness": True}))
    assert name not in props(api.build("failover-mid-delete", "kip516"))
    assert name not in props(api.build("failover-mid-delete", "kip516-no-epoch-fencing",
                                       {"liveness": True}))
    r = api.check("failover-mid-delete", "kip516", {"liveness": True})
    assert r.ok and r.verdict(name) == "holds"
