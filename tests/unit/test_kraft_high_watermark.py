"""On the KRaft plane a consumer reads below the high watermark only (the smallest log
end of the in-sync replicas in the leader's image): a record the follower does not hold
yet is not served, and is served once the follower has fetched it."""
from kmc import api
from kmc.model.kafka.kraft import clients

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
    assert _logs(w) == [1] and not clients.committed(model, w, log.topic_id)
    assert clients.high_watermark(w, 1, 0, log) == 0  # recomputed from the logs left
    assert clients.high_watermark(w, 1, 0, log, live=False) == 1
    w = model.next_state(w, ("consumer-fetch",))
    assert w.ghost.consumed == ((1, 0),) and w.consumer.pos == 1
