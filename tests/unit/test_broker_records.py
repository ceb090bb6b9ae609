"""The broker records (model/kafka/broker.py): the logs and hosted partitions both
control planes keep, and the ZooKeeper-era broker's handling of controller requests
(model/kafka/zk/brokers.py), shared by the topic lifecycle and the KIP-253 procedure: the
procedure's broker changes its record exactly as the shared handlers do."""
from kmc.api import build
from kmc.model.kafka import broker as bk
from kmc.model.kafka.kip253.broker import the_broker
from kmc.model.kafka.kip253.channels import BROKER
from kmc.model.kafka.messages import LAIR, NO_COUNT, STOP, UM, PartitionState, lair
from kmc.model.kafka.store import ZERO_ID
from kmc.model.kafka.zk.brokers import (
    leader_and_isr_applied, stop_replica_applied, update_metadata_applied,
)


def _request(count, epoch=1):
    parts = (PartitionState(0, ZERO_ID, 1, BROKER, 3),)
    return lair(-1, BROKER, epoch, "", parts, count)


def test_leader_and_isr_records_the_kip253_count_and_a_request_without_one_keeps_it():
    m = build("stale-read", "legacy")
    br = m.init_states()[0].brokers[0]
    assert br.count == NO_COUNT and br.meta == ()
    same = leader_and_isr_applied(m, br, _request(NO_COUNT))
    assert same.count == NO_COUNT and bk.hosted_of(same, 0).leader_epoch == 3
    counted = leader_and_isr_applied(m, br, _request(3))
    assert counted.count == 3
    assert leader_and_isr_applied(m, counted, _request(NO_COUNT)).count == 3
    fenced = counted._replace(ctl_epoch=2)
    assert leader_and_isr_applied(m, fenced, _request(2)) is None


def test_log_helpers_keep_the_logs_sorted_by_partition():
    r = [bk.Log(p, ZERO_ID, (), True, 0, 1) for p in range(3)]
    h = bk.Hosted(2, ZERO_ID, 1, 0)
    br = bk.Broker(bk.UP, (r[0], r[2]), (h,), (), 1, 1)
    assert bk.with_log(br, r[1]).logs == tuple(r)
    assert bk.with_log(br, r[2]._replace(start=1)).logs == (r[0], r[2]._replace(start=1))
    assert bk.log_of(br, 1) is None and bk.log_of(br, 2) is r[2]
    assert bk.hosted_of(br, 0) is None and bk.hosted_of(br, 2) is h
    assert bk.leader_of(br, 0) == bk.NO_ROLE and bk.leader_of(br, 2) == 1


def _walk(m, until):
    """The first state, in a fixed walk of the actions listed first, in which a request
    of kind ``until`` is the broker's to handle."""
    w = m.init_states()[0]
    for _ in range(200):
        for a in m.actions(w):
            if a[0] == "deliver" and a[1].kind == until:
                return w, a, a[1]
        w = m.next_state(w, m.actions(w)[0])
    raise AssertionError(f"no {until} reached")


def test_the_kip253_broker_applies_requests_as_the_topic_lifecycle_does():
    m = build("shrink", "kip253")
    for kind, applied in ((LAIR, leader_and_isr_applied), (STOP, stop_replica_applied),
                          (UM, update_metadata_applied)):
        w, a, msg = _walk(m, kind)
        after = the_broker(m.next_state(w, a))
        assert after == applied(m, the_broker(w), msg), kind
    w, a, msg = _walk(m, LAIR)
    assert the_broker(m.next_state(w, a)).count == msg.count != the_broker(w).count


def test_both_planes_keep_a_brokers_logs_and_hosted_partitions_in_the_shared_records():
    for scenario, plane in (("stale-read", "zk"), ("stale-read", "kraft"),
                            ("shrink", None), ("kraft-stray", None)):
        m = build(scenario, None, {"plane": plane} if plane else {})
        for br in m.init_states()[0].brokers:
            assert br.logs and br.hosted
            assert {type(x) for x in br.logs} == {bk.Log}
            assert {type(x) for x in br.hosted} == {bk.Hosted}
            assert [x.partition for x in br.hosted] == \
                [x.partition for x in br.logs if bk.hosted_of(br, x.partition)]
