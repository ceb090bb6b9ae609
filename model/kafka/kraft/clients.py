"""Fetches between brokers and from the consumer, and Metadata requests, answered from
the answering broker's own state.

- Metadata (KIP-4 "Metadata"; KIP-516 "Metadata" adds topic IDs): answered from the
  answering broker's published image (KafkaApis.handleTopicMetadataRequest ->
  KRaftMetadataCache), which may lag behind the controller.
- Fetch (KIP-516 "Fetch": topic IDs in Fetch v13; KIP-320: currentLeaderEpoch): the
  leader checks the request as every broker does (``model.kafka.broker.fetch_error``,
  ReplicaManager.readFromLog's order: the hosted partition, its topic ID, the leader
  epoch, leadership).
  A follower then copies the leader's log (ReplicaFetcherThread: truncation and
  append, in one step here); the consumer reads the records.

Requests and responses are one step each: the answer is computed from the leader's
state at the moment of the step (no message in flight). This drops the interleavings
in which the leader changes between answering and the answer's arrival.
"""
from __future__ import annotations

from kmc.model.kafka import broker as bk
from kmc.model.kafka import clients as cl
from kmc.model.kafka.canon import keyed_put, set_add
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft.state import RUNNING, TOPIC, inc_of

NO_LEADER = -1


def serve(model, w, leader: int, p: int, topic_id: int, leader_epoch: int,
          by_id: bool | None = None):
    """The leader's answer to a Fetch of partition ``p`` naming ``topic_id`` and
    ``leader_epoch``, by the checks both planes share (``model.kafka.broker.
    fetch_error``): ``(log or None, attempt)`` where attempt is the log the request
    reached (None: the leader is not running or does not host the partition). ``by_id``:
    the request carries the topic ID (default: the variant's ``topic_ids``)."""
    if by_id is None:
        by_id = model.flags.topic_ids
    if leader == NO_LEADER:
        return None, None
    br = w.brokers[leader - 1]
    if br.status != RUNNING:
        return None, None
    h, log = bk.hosted_of(br, p), bk.log_of(br, p)
    if h is None or log is None:
        return None, None
    err = bk.fetch_error(log, h, leader, topic_id if by_id else 0, leader_epoch)
    return (None if err else log), log


def high_watermark(w, leader: int, p: int, log, live: bool = True) -> int:
    """The high watermark of ``log``, partition ``p`` on broker ``leader``: the smallest
    log end among the in-sync replicas (Partition.maybeIncrementLeaderHW), with the ISR
    of the partition in the leader's own image (the PartitionRegistration its
    Partition.makeLeader took) and each replica's log of the same topic ID as it is now.
    Kafka's leader learns a follower's log end from the follower's next Fetch, so its
    high watermark trails this one by one fetch; the records below either are held by
    every in-sync replica. A consumer reads below it only (FetchIsolation.of: a
    consumer's Fetch has HIGH_WATERMARK isolation; UnifiedLog.read / LocalLog.read
    return nothing from there up). ``live``: the topic is in the committed image. Once it
    is removed, followers delete their logs, and a leader whose image lags keeps the
    high watermark it had (Kafka never moves it back), which the logs left no longer
    tell: the model keeps none, and such a leader serves up to its log end."""
    hw = len(log.records)
    if not live:
        return hw
    img = w.brokers[leader - 1].image
    t = im.topic_by_id(img, log.topic_id) if img is not None else None
    if t is None or p >= len(t.parts):
        return hw  # an image without the topic: the leader's partition knows no ISR
    for b in t.parts[p].isr:
        if b != leader:
            other = bk.log_of(w.brokers[b - 1], p)
            held = other is not None and other.topic_id == log.topic_id
            hw = min(hw, len(other.records) if held else 0)
    return hw


def fetchable_end(model, w, leader: int, p: int, log) -> int:
    """Where a consumer's Fetch of ``log`` (partition ``p`` on broker ``leader``) stops:
    the high watermark while the topic is in the committed image; the log end once it
    is removed (``high_watermark``), and always with the mutant
    ``consumer-reads-log-end``."""
    live = im.topic_by_id(model.committed_image(w.quorum), log.topic_id) is not None
    return high_watermark(w, leader, p, log, live and model.flags.consumer_reads_committed)


def _record(ghost, field, item):
    return ghost._replace(**{field: set_add(getattr(ghost, field), item)})


def replica_fetch(model, w, f: int, p: int):
    """Follower ``f`` fetches partition ``p`` from the leader its own state names
    (KIP-516 "Fetch", KIP-320; ReplicaFetcherThread / AbstractFetcherThread.
    processFetchRequest; the leader's checks: ReplicaManager.readFromLog)."""
    br = w.brokers[f - 1]
    h = bk.hosted_of(br, p)
    mine = bk.log_of(br, p)
    log, reached = serve(model, w, h.leader, p, h.topic_id, h.leader_epoch)
    ghost = w.ghost
    if reached is not None:
        ghost = _record(ghost, "attempts", (inc_of(h.topic_id), inc_of(reached.topic_id)))
    if log is not None:
        lh = bk.hosted_of(w.brokers[h.leader - 1], p)
        ghost = _record(ghost, "served", (h.leader_epoch, lh.leader_epoch))
        for g in set(log.records):
            ghost = _record(ghost, "reads", (f, inc_of(h.topic_id), g))
        flushed = mine.flushed or bool(log.records)  # UnifiedLog.append flushes first
        br = br._replace(logs=keyed_put(br.logs, mine._replace(records=log.records,
                                                               flushed=flushed)))
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


def _answer(img):
    """Partition 0 of the topic named ``TOPIC`` in an image: ``(topic_id, leader,
    leader_epoch)``, or None (UNKNOWN_TOPIC_OR_PARTITION)."""
    t = im.topic_by_name(img, TOPIC)
    if t is None:
        return None
    part = t.parts[0]
    return (t.topic_id, part.leader, part.leader_epoch)


def consumer_refresh(model, w, b: int):
    """A Metadata request of the consumer answered by broker ``b`` from its image, and
    the answer taken into the consumer's cache by the client's rule (model.kafka.clients.update;
    KIP-4 "Metadata", KIP-516 "Metadata"; KafkaApis.handleTopicMetadataRequest;
    Metadata.handleMetadataResponse / updateLatestMetadata). The consumer may refresh
    at any time: this covers the periodic refresh (metadata.max.age.ms) and the
    refreshes a fetch error requests (FetchCollector: UNKNOWN_TOPIC_ID,
    INCONSISTENT_TOPIC_ID, NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH)."""
    ans = _answer(w.brokers[b - 1].image)
    ghost = w.ghost
    if ans is not None and (b, ans[0]) not in ghost.stale_meta and \
            im.topic_by_id(model.committed_image(w.quorum), ans[0]) is None:
        ghost = _record(ghost, "stale_meta", (b, ans[0]))
    c = w.consumer
    cache = cl.update(cl.ClientMeta(*c[:3]), ans, model.flags.client_rule)
    if ghost is w.ghost and cache == c[:3]:
        return w  # the answer changes nothing
    return w._replace(consumer=c._replace(meta=cache.meta, known_id=cache.known_id,
                                          last_epoch=cache.last_epoch), ghost=ghost)


def may_consumer_fetch(w) -> bool:
    """The consumer has metadata and no error: ``consumer_fetch`` then tells whether a
    fetch changes anything."""
    c = w.consumer
    return bool(c.meta) and not c.failed


def consumer_fetch(model, w):
    """The consumer fetches partition 0 from the leader its metadata names, with the
    leader epoch it learnt and, from client 3.1 on (FetchRequest v13, KIP-516 "Fetch"),
    the topic ID (FetchCollector / AbstractFetch). Where the fetch starts is the client
    library's decision (``model.kafka.clients.start_offset``: KIP-320 validation of the
    position after a leader change, with the leader epoch of the last record received;
    ``auto.offset.reset`` without a position or beyond the log end; with ``none`` the
    error stops the consumer). OffsetsForLeaderEpoch names the topic, not its ID. Then
    the records from the position to the high watermark (``high_watermark``) are
    returned and the position moves on; a reset to ``latest`` goes to the high watermark
    too (Partition.fetchOffsetForTimestamp: READ_UNCOMMITTED's last fetchable offset).
    The position is kept per partition name (SubscriptionState is keyed by
    TopicPartition), across a change of topic ID."""
    c, f = w.consumer, model.flags
    tid, leader, le = c.meta
    log, reached = serve(model, w, leader, 0, tid, le, f.topic_ids and f.client_fetch_ids)
    ghost = w.ghost
    if reached is not None:
        ghost = _record(ghost, "attempts", (inc_of(tid), inc_of(reached.topic_id)))
    if log is None:
        return w._replace(ghost=ghost)
    lh = bk.hosted_of(w.brokers[leader - 1], 0)
    ghost = _record(ghost, "served", (le, lh.leader_epoch))
    end = len(log.records)
    hw = fetchable_end(model, w, leader, 0, log)
    pos = cl.start_offset(c.pos, c.pos_epoch, c.pos_leader, (leader, le), lh.leader_epoch,
                          end, hw, model.bounds.reset)
    if pos is None:  # reset none: LogTruncationException or NoOffsetForPartitionException
        return w._replace(consumer=c._replace(failed=True), ghost=ghost)
    served = inc_of(log.topic_id)
    before = model.bounds.initial_records if served == 1 else 0  # written before it subscribed
    for o in range(before, pos):
        if (served, o) not in ghost.consumed:
            ghost = _record(ghost, "skipped", (served, o))
    upto = max(pos, hw)  # records below the high watermark only
    for o in range(pos, upto):
        ghost = _record(ghost, "reads", (0, inc_of(tid), log.records[o]))
        ghost = _record(ghost, "consumed", (served, o))
    got = c.pos_epoch if upto == pos else lh.leader_epoch
    return w._replace(consumer=c._replace(pos=upto, pos_leader=(leader, le), pos_epoch=got),
                      ghost=ghost)


def producer_refresh(model, w, b: int):
    """A Metadata request of the producer, answered by broker ``b`` from its image and
    taken into its cache by the same rule as the consumer's (KIP-4 "Metadata";
    KafkaApis.handleTopicMetadataRequest; Metadata.java ``updateLatestMetadata``)."""
    pr = w.producer
    cache = cl.update(cl.ClientMeta(*pr[:3]), _answer(w.brokers[b - 1].image),
                      model.flags.client_rule)
    if cache == pr[:3]:
        return w  # the answer changes nothing
    return w._replace(producer=pr._replace(meta=cache.meta, known_id=cache.known_id,
                                           last_epoch=cache.last_epoch))


def _produce_target(w):
    tid, leader, _le = w.producer.meta
    if leader == NO_LEADER or w.brokers[leader - 1].status != RUNNING:
        return None
    br = w.brokers[leader - 1]
    h = bk.hosted_of(br, 0)
    log = bk.log_of(br, 0)
    if h is None or log is None or h.leader != leader:
        return None  # UNKNOWN_TOPIC_OR_PARTITION / NOT_LEADER_OR_FOLLOWER: it refreshes
    return leader, h, log


def produce_hint(model, w):
    """KIP-951 (brokers and clients 3.7.0 on): the producer's Produce goes to the leader
    its metadata names, which answers NOT_LEADER_OR_FOLLOWER with its CurrentLeader
    (KafkaApis.getCurrentLeader: the partition it hosts, else its metadata image, both
    found by name: the answer may be another incarnation's). Sender.completeBatch hands
    it to Metadata.updatePartitionLeadership, which takes it when its leader epoch is
    newer than the current one (the cached partition's, or the last seen epoch when the
    cache is not current: Metadata.currentLeader), keeps the cached topic ID and records
    the epoch as the last seen. No hint taken: the step changes nothing (``w``)."""
    pr = w.producer
    if not model.flags.leader_hint or not pr.meta or pr.left <= 0:
        return w
    tid, leader, le = pr.meta
    if leader == NO_LEADER or w.brokers[leader - 1].status != RUNNING:
        return w
    br = w.brokers[leader - 1]
    h, log = bk.hosted_of(br, 0), bk.log_of(br, 0)
    if h is not None and log is not None:
        if h.leader == leader:
            return w  # the write is accepted (``produce``)
        hint = (h.leader, h.leader_epoch)
    else:
        answer = _answer(br.image) if br.image is not None else None
        if answer is None:
            return w  # UNKNOWN_TOPIC_OR_PARTITION carries no CurrentLeader
        hint = answer[1:]
    current = pr.last_epoch if pr.last_epoch >= 0 else le
    if hint[0] == NO_LEADER or hint[1] < 0 or hint[1] <= current:
        return w
    return w._replace(producer=pr._replace(meta=(tid, hint[0], hint[1]),
                                           last_epoch=hint[1]))


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
    logs = keyed_put(br.logs, log._replace(records=log.records + (inc_of(h.topic_id),),
                                           flushed=True))
    brokers = w.brokers[:leader - 1] + (br._replace(logs=logs),) + w.brokers[leader:]
    ghost = _record(w.ghost, "wrote", (inc_of(pr.meta[0]), inc_of(h.topic_id)))
    return w._replace(brokers=brokers, producer=pr._replace(left=pr.left - 1), ghost=ghost)
