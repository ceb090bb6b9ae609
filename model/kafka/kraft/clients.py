"""Fetches between brokers and from the consumer, and Metadata requests, answered from
the answering broker's own state.

- Metadata (KIP-4 "Metadata"; KIP-516 "Metadata" adds topic IDs): answered from the
  answering broker's published image (KafkaApis.handleTopicMetadataRequest ->
  KRaftMetadataCache), which may lag behind the controller.
- Fetch (KIP-516 "Fetch": topic IDs in Fetch v13; KIP-320: currentLeaderEpoch): the
  leader looks the partition up (ReplicaManager.getPartitionOrException /
  readFromLog), refuses a topic ID other than its partition's (INCONSISTENT_TOPIC_ID /
  UNKNOWN_TOPIC_ID: Partition.hasConsistentTopicId, ReplicaManager.readFromLog), a
  broker that is not the leader in its own state (NOT_LEADER_OR_FOLLOWER), and a
  leader epoch other than its own (Partition.checkCurrentLeaderEpoch:
  FENCED_LEADER_EPOCH for an older one, UNKNOWN_LEADER_EPOCH for a newer one).
  A follower then copies the leader's log (ReplicaFetcherThread: truncation and
  append, in one step here); the consumer reads the records.

Requests and responses are one step each: the answer is computed from the leader's
state at the moment of the step (no message in flight). This drops the interleavings
in which the leader changes between answering and the answer's arrival.
"""
from __future__ import annotations

from kmc.model.kafka.canon import keyed_get, keyed_put, set_add
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft import logmanager as lm
from kmc.model.kafka.kraft.state import RUNNING, TOPIC, inc_of

NO_LEADER = -1


def serve(model, w, leader: int, p: int, topic_id: int, leader_epoch: int):
    """The leader's answer to a Fetch of partition ``p`` naming ``topic_id`` and
    ``leader_epoch``: ``(log or None, attempt)`` where attempt is the log the request
    reached (None: it reached none)."""
    if leader == NO_LEADER:
        return None, None
    br = w.brokers[leader - 1]
    if br.status != RUNNING:
        return None, None
    h = keyed_get(br.hosted, p)
    log = lm.log_of(br.logs, p)
    if h is None or log is None:
        return None, None
    if model.flags.topic_ids and h.topic_id != topic_id:
        return None, log
    if h.leader != leader or h.leader_epoch != leader_epoch:
        return None, log
    return log, log


def _record(ghost, field, item):
    return ghost._replace(**{field: set_add(getattr(ghost, field), item)})


def replica_fetch(model, w, f: int, p: int):
    """Follower ``f`` fetches partition ``p`` from the leader its own state names
    (ReplicaFetcherThread / AbstractFetcherThread.processFetchRequest)."""
    br = w.brokers[f - 1]
    h = keyed_get(br.hosted, p)
    mine = lm.log_of(br.logs, p)
    log, reached = serve(model, w, h.leader, p, h.topic_id, h.leader_epoch)
    ghost = w.ghost
    if reached is not None:
        ghost = _record(ghost, "attempts", (inc_of(h.topic_id), inc_of(reached.topic_id)))
    if log is not None:
        lh = keyed_get(w.brokers[h.leader - 1].hosted, p)
        ghost = _record(ghost, "served", (h.leader_epoch, lh.leader_epoch))
        for g in set(log.records):
            ghost = _record(ghost, "reads", (f, inc_of(h.topic_id), g))
        br = br._replace(logs=keyed_put(br.logs, mine._replace(records=log.records)))
    brokers = w.brokers[:f - 1] + (br,) + w.brokers[f:]
    return w._replace(brokers=brokers, ghost=ghost)


def fetch_candidates(w) -> list:
    out = []
    for b, br in enumerate(w.brokers, 1):
        if br.status != RUNNING:
            continue
        for h in br.hosted:
            if h.leader not in (b, NO_LEADER):
                out.append((b, h.partition))
    return out


def consumer_refresh(model, w, b: int):
    """A Metadata request answered by broker ``b`` from its image."""
    img = w.brokers[b - 1].image
    t = im.topic_by_name(img, TOPIC)
    ghost = w.ghost
    if t is None:
        meta = ()
    else:
        part = t.parts[0]
        meta = (t.topic_id, part.leader, part.leader_epoch)
        live = im.topic_by_id(model.committed_image(w.quorum), t.topic_id)
        if live is None:
            ghost = _record(ghost, "stale_meta", (b, t.topic_id))
    return w._replace(consumer=w.consumer._replace(meta=meta), ghost=ghost)


def consumer_fetch(model, w):
    """The consumer fetches partition 0 from the leader its metadata names, with the
    topic ID and leader epoch it learnt (KafkaConsumer's Fetcher; FetchRequest v13)."""
    tid, leader, le = w.consumer.meta
    log, reached = serve(model, w, leader, 0, tid, le)
    ghost = w.ghost
    if reached is not None:
        ghost = _record(ghost, "attempts", (inc_of(tid), inc_of(reached.topic_id)))
    if log is not None:
        lh = keyed_get(w.brokers[leader - 1].hosted, 0)
        ghost = _record(ghost, "served", (le, lh.leader_epoch))
        for g in set(log.records):
            ghost = _record(ghost, "reads", (0, inc_of(tid), g))
    return w._replace(ghost=ghost)


def producer_refresh(model, w, b: int):
    """A Metadata request of the producer, answered by broker ``b`` from its image."""
    t = im.topic_by_name(w.brokers[b - 1].image, TOPIC)
    meta = () if t is None else (t.topic_id, t.parts[0].leader)
    return w._replace(producer=w.producer._replace(meta=meta))


def _produce_target(w):
    tid, leader = w.producer.meta
    if leader == NO_LEADER or w.brokers[leader - 1].status != RUNNING:
        return None
    br = w.brokers[leader - 1]
    h = keyed_get(br.hosted, 0)
    log = lm.log_of(br.logs, 0)
    if h is None or log is None or h.leader != leader:
        return None  # UNKNOWN_TOPIC_OR_PARTITION / NOT_LEADER_OR_FOLLOWER: it refreshes
    return leader, h, log


def can_produce(model, w) -> bool:
    pr = w.producer
    return bool(pr.meta) and pr.left > 0 and _produce_target(w) is not None


def produce(model, w):
    """The producer writes one record to partition 0 of the leader its metadata names
    (KafkaProducer's Sender; KafkaApis.handleProduceRequest -> ReplicaManager.
    appendRecords -> Partition.appendRecordsToLeader). Produce names the topic by name
    only: ProduceRequest.json in Kafka 3.9 has versions 0-11 and no topic ID field, so
    the leader appends whatever incarnation it hosts under that name (KIP-516 "Produce"
    plans topic IDs in Produce later)."""
    leader, h, log = _produce_target(w)
    pr = w.producer
    br = w.brokers[leader - 1]
    logs = keyed_put(br.logs, log._replace(records=log.records + (inc_of(h.topic_id),)))
    brokers = w.brokers[:leader - 1] + (br._replace(logs=logs),) + w.brokers[leader:]
    ghost = _record(w.ghost, "wrote", (inc_of(pr.meta[0]), inc_of(h.topic_id)))
    return w._replace(brokers=brokers, producer=pr._replace(left=pr.left - 1), ghost=ghost)
