"""The parts every plane shares on the client side and at the leader that answers it:
the client library (model/kafka/clients.py: Metadata.java's cache rules, the consumer's
start offset, the range assignor) and the leader's Fetch checks (broker.fetch_error, in
ReplicaManager.readFromLog's order)."""
import pytest

from kmc import api
from kmc.model.kafka import broker as bk
from kmc.model.kafka import clients as cl
from kmc.model.kafka.kraft import clients as kraft_clients
from kmc.model.kafka.zk import datapath

OLD, NEW = 2, 3  # topic IDs of a deleted and a re-created incarnation


@pytest.mark.parametrize("rule,new_id_lower_epoch", [
    ("epoch", False), ("ids-both", True), ("ids", True)])
def test_a_group_members_view_follows_the_clients_rule(rule, new_id_lower_epoch):
    view = (OLD, ((1, 2), (2, 2)))
    assert cl.accepts_view((), view, rule)  # nothing cached: any answer
    assert cl.accepts_view(view, (OLD, ((1, 3), (2, 2))), rule)  # no lower epoch
    assert not cl.accepts_view(view, (OLD, ((1, 3), (2, 1))), rule)  # one lower: kept
    assert cl.accepts_view(view, (NEW, ((1, 0), (2, 0))), rule) is new_id_lower_epoch


def test_the_view_rule_is_the_partition_rule_for_one_partition():
    for rule in cl.RULES:
        for tid in (OLD, NEW):
            for epoch in (0, 2, 3):
                cache = cl.ClientMeta((OLD, 1, 2), OLD, 2)
                assert cl.accepts_view((OLD, ((1, 2),)), (tid, ((1, epoch),)), rule) \
                    == cl.accepts(cache, tid, epoch, rule)


def test_start_offset_validates_then_falls_back_to_the_committed_offset_then_resets():
    here, moved = (1, 2), (2, 3)
    # same leader: the position stands, up to the log end
    assert cl.start_offset(3, 2, here, here, 2, 5, 4, "earliest") == 3
    # a position beyond the log end is out of range: reset by the policy
    assert cl.start_offset(6, 2, here, here, 2, 5, 4, "latest") == 4
    assert cl.start_offset(6, 2, here, here, 2, 5, 4, "none") is None
    # a new leader: OffsetsForLeaderEpoch for an epoch above the leader's is undefined
    assert cl.start_offset(3, 4, here, moved, 3, 5, 4, "earliest") == 0
    # an end below the position moves it back, or stops a consumer with reset none
    assert cl.start_offset(3, 2, here, moved, 3, 2, 2, "earliest") == 2
    assert cl.start_offset(3, 2, here, moved, 3, 2, 2, "none") is None
    # no position: the committed offset, else the policy
    assert cl.start_offset(-1, -1, (-1, -1), here, 2, 5, 4, "none", committed=1) == 1
    assert cl.start_offset(-1, -1, (-1, -1), here, 2, 5, 4, "latest") == 4


def test_range_assignor_gives_the_first_members_one_extra():
    assert cl.range_assign(range(5), 2) == ((0, 1, 2), (3, 4))
    assert cl.range_assign(range(3, 5), 3) == ((3,), (4,), ())


def _broker(leader=1, epoch=2, topic_id=OLD, records=(1, 1)):
    log = bk.Log(0, topic_id, records)
    return bk.Broker(bk.UP, (log,), (bk.Hosted(0, topic_id, leader, epoch),), (), 1, 1)


def _error(br, *args, **kw):
    """The leader's answer for partition 0 of ``br``."""
    return bk.fetch_error(bk.log_of(br, 0), bk.hosted_of(br, 0), *args, **kw)


def test_the_leader_checks_a_fetch_in_kafkas_order():
    follower = _broker(leader=2)
    # the leader epoch is checked before leadership (Partition.getLocalLog)
    assert _error(follower, 1, OLD, 1) == "FENCED_LEADER_EPOCH"
    assert _error(follower, 1, OLD, 3) == "UNKNOWN_LEADER_EPOCH"
    assert _error(follower, 1, OLD, 2) == "NOT_LEADER_OR_FOLLOWER"
    leader = _broker()
    # the topic ID before the epoch; by name (0) there is nothing to compare
    assert _error(leader, 1, NEW, 1) == "INCONSISTENT_TOPIC_ID"
    assert _error(leader, 1, 0, 2) == ""
    assert _error(leader, 1, OLD, 2, offset=3) == "OFFSET_OUT_OF_RANGE"
    # not hosted: NOT_LEADER_OR_FOLLOWER with a log on disk, whatever its topic ID
    offline = leader._replace(hosted=())
    assert _error(offline, 1, NEW, 2) == "NOT_LEADER_OR_FOLLOWER"
    assert _error(offline._replace(logs=()), 1, NEW, 2) == "UNKNOWN_TOPIC_ID"
    assert _error(offline._replace(logs=()), 1, 0, 2) \
        == "UNKNOWN_TOPIC_OR_PARTITION"
    # hosted without a log: no topic ID to differ; the epoch, then no local log
    logless = leader._replace(logs=())
    assert _error(logless, 1, NEW, 1) == "FENCED_LEADER_EPOCH"
    assert _error(logless, 1, NEW, 2) == "NOT_LEADER_OR_FOLLOWER"


def _kraft_fetchable():
    """A KRaft state in which a follower fetches from a running leader."""
    model = api.build("kraft-stray", "kraft")
    frontier = list(model.init_states())
    for _ in range(30):
        for w in frontier:
            if kraft_clients.fetch_candidates(w):
                return model, w
        frontier = [t for w in frontier for _a, t in model.successors(w)]
    raise AssertionError("no follower fetch reached")


def test_both_planes_refuse_a_fetch_the_shared_check_refuses(monkeypatch):
    zk = api.build("stale-read", "kip516")
    (w,) = zk.init_states()
    model, kw = _kraft_fetchable()
    f, p = kraft_clients.fetch_candidates(kw)[0]
    h = bk.hosted_of(kw.brokers[f - 1], p)
    served = kraft_clients.serve(model, kw, h.leader, p, h.topic_id, h.leader_epoch)
    assert served[0] is not None  # served as it stands
    monkeypatch.setattr(bk, "fetch_error", lambda *a, **k: "FENCED_LEADER_EPOCH")
    t = datapath.follower_fetch(zk, w, 2, 0)
    (msg,) = [x for x in zk.net.messages(t.net) if x.kind == "FetchResponse"]
    assert msg.error == "FENCED_LEADER_EPOCH" and msg.records == ()
    refused = kraft_clients.serve(model, kw, h.leader, p, h.topic_id, h.leader_epoch)
    assert refused == (None, served[1])
