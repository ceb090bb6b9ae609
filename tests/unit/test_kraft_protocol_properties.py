"""The KRaft plane's own facts (model/kafka/kraft/protocol_properties.py): each holds on
the default variant and fails on a state that breaks the Kafka rule it states."""
import pytest

from kmc import api
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft import protocol_properties as pp
from kmc.model.kafka.kraft import quorum as qm
from kmc.model.kafka.kraft import records as rc
from kmc.model.kafka.kraft.state import DOWN

TID = 2  # the first incarnation's topic ID


def _initial(scenario="kraft-failover", params=None):
    model = api.build(scenario, "kraft", params or {})
    (w,) = model.init_states()
    return model, w


def _with_batch(w, *records, committed=True):
    q = qm.append(w.quorum, records, replicated=committed)
    return w._replace(quorum=q)


def _violated(prop, w) -> bool:
    return not prop.check(w)


def test_every_fact_holds_in_the_initial_states():
    for scenario in ("kraft-stray", "kraft-failover", "recreate-during-expansion"):
        _m, w = _initial(scenario)
        for prop in pp.ALWAYS + pp.QUIESCENT:
            assert prop.check(w), (scenario, prop.name)


@pytest.mark.parametrize("scenario,params", [
    ("kraft-failover", {"incarnations": 1}),
    ("kraft-stray", {"fences": 1, "crashes": 0}),
])
def test_the_facts_hold_on_every_reachable_state(scenario, params):
    res = api.check(scenario, "kraft", params)
    names = {p.name for p in pp.ALWAYS + pp.QUIESCENT}
    assert names <= {p.name for p in api.build(scenario, "kraft", params).properties()}
    assert res.complete and not (names & set(res.discoveries))


def test_partition_change_must_bump_the_partition_epoch_and_change_something():
    _m, w = _initial()
    part = im.build(w.quorum.log).topics[0].parts[0]
    same = rc.partition_change(TID, 0, part.isr, part.leader, part.leader_epoch,
                               part.partition_epoch + 1)  # a no-op change
    assert _violated(pp.PARTITION_CHANGE_EPOCHS, _with_batch(w, same))
    moved = rc.partition_change(TID, 0, part.isr, part.isr[-1], part.leader_epoch,
                                part.partition_epoch + 1)  # new leader, same epoch
    assert _violated(pp.PARTITION_CHANGE_EPOCHS, _with_batch(w, moved))
    ok = rc.partition_change(TID, 0, part.isr, part.isr[-1], part.leader_epoch + 1,
                             part.partition_epoch + 1)
    assert pp.PARTITION_CHANGE_EPOCHS.check(_with_batch(w, ok))


def test_created_partitions_start_at_epoch_zero_led_by_the_first_isr_member():
    _m, w = _initial()
    topic = (rc.topic("A", TID + 1),)
    for bad in (rc.partition(TID + 1, 0, (1, 2), (1, 2), 1, 1, 0),
                rc.partition(TID + 1, 0, (1, 2), (1, 2), 1, 0, 1),
                rc.partition(TID + 1, 0, (1, 2), (1, 2), 2)):
        assert _violated(pp.NEW_PARTITION_REGISTRATION, _with_batch(w, *topic, bad)), bad
    good = rc.partition(TID + 1, 0, (1, 2), (1, 2), 1)
    assert pp.NEW_PARTITION_REGISTRATION.check(_with_batch(w, *topic, good))


def test_leader_outside_the_isr_and_an_empty_isr_are_refused():
    _m, w = _initial()
    part = im.build(w.quorum.log).topics[0].parts[0]
    shrunk = rc.partition_change(TID, 0, (2,), 1, part.leader_epoch,
                                 part.partition_epoch + 1)
    assert _violated(pp.LEADER_IN_ISR, _with_batch(w, shrunk))
    empty = rc.partition_change(TID, 0, (), -1, part.leader_epoch + 1,
                                part.partition_epoch + 1)
    assert _violated(pp.LEADER_IN_ISR, _with_batch(w, empty))


def test_a_new_registration_needs_a_higher_broker_epoch():
    _m, w = _initial()
    epoch = im.broker_epoch(im.build(w.quorum.log), 1)
    assert _violated(pp.BROKER_EPOCHS, _with_batch(w, rc.register_broker(1, epoch)))
    assert pp.BROKER_EPOCHS.check(_with_batch(w, rc.register_broker(1, epoch + 1)))
    stale = rc.registration_change(1, epoch + 1, True)
    assert _violated(pp.BROKER_EPOCHS, _with_batch(w, stale))


def test_raft_log_commits_only_what_a_majority_holds():
    _m, w = _initial()
    q = qm.append(w.quorum, (rc.remove_topic(TID),))  # on the leader only
    assert pp.RAFT_LOG_SOUND.check(w._replace(quorum=q))
    assert _violated(pp.RAFT_LOG_SOUND, w._replace(quorum=q._replace(hwm=len(q.log))))
    # a majority holds a batch of the leader's epoch, yet the high watermark stays behind
    assert _violated(pp.RAFT_LOG_SOUND, w._replace(quorum=q._replace(repl=(2, 2, 1))))
    assert pp.RAFT_LOG_SOUND.check(w._replace(quorum=qm.replicate(q, 2)))
    # a new epoch that does not start with the leader's LeaderChangeMessage
    q2 = q._replace(epoch=2, log=q.log + (qm.Entry(2, (rc.remove_topic(TID),)),),
                    repl=(3, 1, 1))
    assert _violated(pp.RAFT_LOG_SOUND, w._replace(quorum=q2))
    assert pp.RAFT_LOG_SOUND.check(w._replace(quorum=qm.failover(q, 2)))


def test_an_image_is_its_log_prefix_replayed():
    _m, w = _initial()
    br = w.brokers[0]
    wrong = br.image._replace(brokers=())
    bad = w._replace(brokers=(br._replace(image=wrong),) + w.brokers[1:])
    assert _violated(pp.IMAGE_IS_REPLAY, bad)
    ahead = w._replace(brokers=(br._replace(fetched=br.fetched + (1,)),) + w.brokers[1:])
    assert _violated(pp.IMAGE_IS_REPLAY, ahead)


def test_hosted_partitions_follow_the_image():
    _m, w = _initial()
    br = w.brokers[1]
    h = br.hosted[0]
    for bent in (h._replace(leader_epoch=h.leader_epoch + 1), h._replace(leader=2),
                 h._replace(topic_id=TID + 1)):
        bad = w._replace(brokers=(w.brokers[0], br._replace(hosted=(bent,))))
        assert _violated(pp.HOSTED_MATCHES_IMAGE, bad), bent


def test_a_running_broker_keeps_no_stray_log():
    _m, w = _initial()
    br = w.brokers[1]
    stray = br.logs[0]._replace(topic_id=TID + 5)
    bad = w._replace(brokers=(w.brokers[0], br._replace(logs=(stray,), hosted=())))
    assert _violated(pp.NO_STRAY_WHILE_RUNNING, bad)
    down = w._replace(brokers=(w.brokers[0], br._replace(status=DOWN, logs=(stray,),
                                                         hosted=(), image=None)))
    assert pp.NO_STRAY_WHILE_RUNNING.check(down)
    res = api.check("kraft-stray", "no-stray-detection")
    assert "NoStrayWhileRunning" in res.discoveries


def test_settled_means_caught_up_unfenced_and_led():
    _m, w = _initial()
    assert pp.SETTLED_CONVERGED.check(w)
    ahead = _with_batch(w, rc.remove_topic(TID))  # committed, not yet fetched
    assert _violated(pp.SETTLED_CONVERGED, ahead)
    part = im.build(w.quorum.log).topics[0].parts[0]
    leaderless = rc.partition_change(TID, 0, part.isr, -1, part.leader_epoch + 1,
                                     part.partition_epoch + 1)
    w2 = _with_batch(w, leaderless)
    w2 = w2._replace(brokers=tuple(
        b._replace(fetched=b.fetched + (1,), image=im.build(w2.quorum.log))
        for b in w2.brokers))
    assert _violated(pp.SETTLED_CONVERGED, w2)
    fenced = _with_batch(w, rc.registration_change(1, 1, True))
    fenced = fenced._replace(brokers=tuple(
        b._replace(fetched=b.fetched + (1,), image=im.build(fenced.quorum.log))
        for b in fenced.brokers))
    assert _violated(pp.SETTLED_CONVERGED, fenced)


def test_settled_leaves_no_delete_directory_on_a_running_broker():
    _m, w = _initial("kraft-stray")
    br = w.brokers[1]
    waiting = br._replace(deleting=((0, TID),))
    assert _violated(pp.SETTLED_CONVERGED, w._replace(brokers=(w.brokers[0], waiting)))
    down = waiting._replace(status=DOWN, image=None, hosted=())
    assert "PendingDelete" in pp.protocol_view(w) and not pp.protocol_view(
        w._replace(brokers=(w.brokers[0], down)))["PendingDelete"]


def test_a_fenced_broker_leaves_every_isr_but_as_its_last_member():
    _m, w = _initial()
    fence = rc.registration_change(2, 1, True)
    assert _violated(pp.FENCED_LEAVE_ISR, _with_batch(w, fence))  # ISR (1, 2) kept
    part = im.build(w.quorum.log).topics[0].parts[0]
    shrink = rc.partition_change(TID, 0, (1,), part.leader, part.leader_epoch,
                                 part.partition_epoch + 1)
    assert pp.FENCED_LEAVE_ISR.check(_with_batch(w, shrink, fence))
    last = rc.registration_change(1, 1, True)
    assert pp.FENCED_LEAVE_ISR.check(_with_batch(w, shrink, fence, last))


def test_delete_directories_are_eventually_removed():
    model = api.build("kraft-crash-window", "kraft")
    assert pp.DELETE_DIRS_EVENTUALLY_REMOVED in model.properties()
    assert "DeleteDirsEventuallyRemoved" not in api.check(model).discoveries
    # a kafka-delete-logs task that never removes the directory it is offered
    model._steps["delete-logs"] = lambda _m, w, *_args: w
    assert "DeleteDirsEventuallyRemoved" in api.check(model).discoveries


def test_partition_metadata_is_eventually_flushed():
    model = api.build("kraft-crash-window", "kraft-3.6")  # the flush is a step of its own
    assert pp.METADATA_FILE_EVENTUALLY_FLUSHED in model.properties()
    assert "MetadataFileEventuallyFlushed" not in api.check(model).discoveries
    model._steps["flush-metadata"] = lambda _m, w, *_args: w  # a task that never writes
    assert "MetadataFileEventuallyFlushed" in api.check(model).discoveries
