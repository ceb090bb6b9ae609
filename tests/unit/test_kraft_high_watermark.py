"""On the KRaft plane a consumer reads below the high watermark only (the smallest log
end of the in-sync replicas in the leader's image): a record the follower does not hold
yet is not served, and is served once the follower has fetched it. The mutant that
reads up to the log end is caught by ConsumerReadsCommitted, for the consumer and for a
group member."""
from kmc import api
from kmc.model.kafka.kraft import clients, views

RF2 = {"rf": 2, "incarnations": 1, "deletes": 0}


def _logs(w, p=0):
    return [len(log.records) for br in w.brokers for log in br.logs if log.partition == p]


def _produced():
    """The producer has written one record to the leader; the follower has not fetched."""
    model = api.build("kraft-consumer-recreate", "kraft", RF2)
    (w,) = model.init_states()
    for a in (("producer-refresh", 1), ("produce",), ("consumer-refresh", 1)):
        w = model.next_state(w, a)
    return model, w


def test_a_record_only_the_leader_holds_is_not_served():
    model, w = _produced()
    assert _logs(w) == [2, 1]  # the initial record on both, the new one on the leader
    leader_log = w.brokers[0].logs[0]
    assert clients.high_watermark(w, 1, 0, leader_log) == 1
    w = model.next_state(w, ("consumer-fetch",))
    assert sorted(w.ghost.consumed) == [(1, 0)] and w.consumer.pos == 1


def test_the_record_is_served_once_the_follower_holds_it():
    model, w = _produced()
    w = model.next_state(w, ("replica-fetch", 2, 0))
    assert _logs(w) == [2, 2]
    w = model.next_state(w, ("consumer-fetch",))
    assert sorted(w.ghost.consumed) == [(1, 0), (1, 1)] and w.consumer.pos == 2


def test_a_leader_of_a_removed_topic_still_serves_what_it_had_committed():
    """Once the topic is removed, its follower deletes its log; the leader whose image
    lags keeps the high watermark it had (Kafka never moves it back), so the consumer
    that still follows it reads the record both replicas held."""
    model = api.build("kraft-consumer-recreate", "kraft", {"rf": 2})
    (w,) = model.init_states()
    for a in (("consumer-refresh", 1), ("delete",), ("fetch-metadata", 2)):
        w = model.next_state(w, a)
    log = w.brokers[0].logs[0]
    assert _logs(w) == [1]
    assert clients.high_watermark(w, 1, 0, log) == 0  # recomputed from the logs left
    assert clients.fetchable_end(model, w, 1, 0, log) == 1  # the topic is not live
    w = model.next_state(w, ("consumer-fetch",))
    assert w.ghost.consumed == ((1, 0),) and w.consumer.pos == 1


def test_the_log_end_mutant_serves_what_only_the_leader_holds():
    """From the same state the mutant's fetch reads the record the follower lacks, and
    the view shows it read above the in-sync replicas' smallest log end."""
    fixed, w = _produced()
    mutant = api.build("kraft-consumer-recreate", "consumer-reads-log-end", RF2)
    after = mutant.next_state(w, ("consumer-fetch",))
    assert sorted(after.ghost.consumed) == [(1, 0), (1, 1)]
    v = views.view(after)
    assert v["Consumed"] == {(1, 0, 0), (1, 0, 1)} and v["InSyncEnd"] == {(1, 0, 1)}
    assert views.view(fixed.next_state(w, ("consumer-fetch",)))["Consumed"] == {(1, 0, 0)}


def test_consumer_reads_committed_is_violated_by_the_mutant_only():
    held = api.check("kraft-consumer-recreate", "kraft", RF2)
    assert held.complete and held.verdicts()["ConsumerReadsCommitted"] == "holds"
    broken = api.check("kraft-consumer-recreate", "consumer-reads-log-end", RF2,
                       stop_on_violation=True)
    assert broken.verdicts()["ConsumerReadsCommitted"] == "violated"
    last = broken.discoveries["ConsumerReadsCommitted"].trace.states[-1]
    (inc, _p, end), = views.view(last)["InSyncEnd"]
    assert any(o >= end for i, _q, o in views.view(last)["Consumed"] if i == inc)


def test_a_group_member_reading_past_the_high_watermark_is_caught():
    group = {"members": 1, "records": 1, "deletes": 0, "incarnations": 1}
    broken = api.check("recreate-during-expansion", "consumer-reads-log-end", group,
                       stop_on_violation=True)
    assert broken.verdicts()["ConsumerReadsCommitted"] == "violated"
    last = broken.discoveries["ConsumerReadsCommitted"].trace.states[-1]
    assert last.group.consumed and not last.ghost.consumed
    held = api.check("recreate-during-expansion", "kraft", group)
    assert held.complete and held.verdicts()["ConsumerReadsCommitted"] == "holds"
