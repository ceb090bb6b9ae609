"""The data path: follower replication (Fetch), the producer and the consumer.

A follower's Fetch is answered from the leader's state at the moment it is sent (its time
in flight is folded into the response's, which may be delayed arbitrarily); the response
is applied when delivered. Client requests are answered at once. An empty successful
fetch is a long poll that returns nothing, and a fetch whose error the follower already
holds changes nothing: both are "no step", so a settled cluster is not kept busy.

Each public function is one action ``f(m, w, ...) -> World | None``; the docstring names
the KIP section it models.
"""
from __future__ import annotations

from kmc.model.kafka import broker as bk
from kmc.model.kafka import clients as cl
from kmc.model.kafka import store as zk
from kmc.model.kafka.broker import hosted_of, leader_of, log_of
from kmc.model.kafka.canon import keyed_put, replace_at, set_add, set_union
from kmc.model.kafka.store import NO_LEADER, ZERO_ID
from kmc.model.kafka.messages import FETCH_RESP, FetchResponse
from kmc.model.kafka.zk import epochs
from kmc.model.kafka.zk.state import TOPIC, Meta

RESET = "earliest"  # the consumer's auto.offset.reset


def serve(lb, p, lr, leader_id, topic_id, epoch, offset):
    """Broker ``lb``'s answer to a Fetch of partition ``p``, ``lr`` its log of it (or
    None): (error, records), by the checks both planes share
    (``model.kafka.broker.fetch_error``)."""
    err = bk.fetch_error(lr, hosted_of(lb, p), leader_id, topic_id, epoch, offset)
    return (err, ()) if err else ("", lr.records[offset:])


def _reads(ghost, reader, asked, records):
    return ghost._replace(reads=set_union(ghost.reads, {(reader, asked, epochs.inc_of(g))
                                                        for g in records}))


def live_inc(store) -> int:
    """The incarnation whose znode exists and is not marked for deletion (0: none)."""
    rec = zk.topic(store, TOPIC)
    return 0 if rec is None or zk.marked(store, TOPIC) else rec.incarnation


def high_watermark(store, brokers, inc, p):
    """The high watermark of partition ``p`` of incarnation ``inc``: the smallest log end
    of its in-sync replicas (Partition.maybeIncrementLeaderHW), over the ISR the
    controller recorded in the partition's state znode and the logs the replicas hold
    now. Kafka's leader learns a follower's log end from the follower's next Fetch, so
    its high watermark trails this one by one fetch; and it counts only a Fetch that
    does not diverge (Partition.fetchRecords: updateFollowerFetchState without a
    divergingEpoch), so a follower counts with the records it shares with the leader's
    log, epochs included (``epochs.common_prefix``). None unless ``inc`` is live (its
    znode exists and is not marked for deletion): once the deletion has begun,
    followers delete their replicas, while a leader that still holds its replica keeps
    the high watermark it had (Kafka never moves it back), which the logs left no
    longer tell; the model keeps none, and such a leader serves up to its log end."""
    if inc != live_inc(store):
        return None
    rec = zk.topic(store, TOPIC)
    if p >= len(rec.partitions):
        return None
    leader = rec.partitions[p].leader
    lr = log_of(brokers[leader - 1], p) if leader > 0 else None
    lead = lr.records if lr is not None and lr.inc == inc else None
    hw = None
    for b in rec.partitions[p].isr:
        r = log_of(brokers[b - 1], p)
        if r is None or r.inc != inc:
            n = 0
        elif lead is None or b == leader:
            n = len(r.records)
        else:
            n = epochs.common_prefix(r.records, lead)
        hw = n if hw is None else min(hw, n)
    return hw or 0


def acknowledge(store, brokers, ghost, inc, p):
    """acks=all: the records of incarnation ``inc`` in partition ``p`` below the high
    watermark (every in-sync replica holds them) are acknowledged; the ghost keeps them."""
    hw = high_watermark(store, brokers, inc, p)
    if hw is None:
        return ghost
    part = zk.topic(store, TOPIC).partitions[p]
    lr = log_of(brokers[part.leader - 1], p) if part.leader > 0 else None
    if not hw or lr is None or lr.inc != inc:
        return ghost
    # records of another incarnation (a stale log taken over) were never produced to it
    recs = lr.records
    mine = ((inc, p, o) for o in range(min(hw, len(recs))) if epochs.inc_of(recs[o]) == inc)
    acked = set_union(ghost.acked, mine)
    return ghost if acked is ghost.acked else ghost._replace(acked=acked)


# ---- replication ---------------------------------------------------------------------------
def _fetch_in_flight(b: int, p: int):
    """The question: is a fetch of follower ``b`` for partition ``p`` in flight?"""
    def question(msgs) -> bool:
        for x in msgs:
            if x.kind == FETCH_RESP and x.dst == b and x.partition == p:
                return True
        return False
    return question


def follower_fetch(m, w, b, p):
    """A follower fetches from its leader (KIP-516 "Fetch" v13: by topic ID in kip516, by
    name in legacy and in the no-fetch-id mutant). Kafka: AbstractFetcherThread.
    processFetchRequest; the leader's KafkaApis.handleFetchRequest ->
    ReplicaManager.fetchMessages -> readFromLog (``broker.fetch_error``), then
    Partition.readRecords: the Fetch carries the epoch of the follower's last record
    (lastFetchedEpoch: truncation on fetch, KAFKA-10554 in 2.7, Fetch v12, with
    inter.broker.protocol.version 2.7 on), and a log that diverged from the leader's
    before the fetch offset is answered with the leader's end offset of that epoch
    (divergingEpoch, named DIVERGING_EPOCH here; ``epochs.diverging``) instead of
    records."""
    br = w.brokers[b - 1]
    h = hosted_of(br, p)
    if br.status != bk.UP or h is None or h.leader in (b, -1):
        return None
    lb = w.brokers[h.leader - 1]
    if lb.status != bk.UP:
        return None  # no connection: the follower waits for a new LeaderAndIsr
    if m.net.ask(w.net, _fetch_in_flight(b, p)):
        return None  # one fetch in flight per follower partition
    r, lr = log_of(br, p), log_of(lb, p)
    tid = r.topic_id if m.flags.fetch_topic_id else ZERO_ID
    end = len(r.records)
    err, recs = serve(lb, p, lr, h.leader, tid, h.leader_epoch, end)
    leader_end = len(lr.records) if lr else 0
    if err in ("", "OFFSET_OUT_OF_RANGE"):  # the checks before the read have passed
        got = epochs.diverging(lr.records, h.leader_epoch, r.records)
        if got == "undefined":
            err, recs = "OFFSET_OUT_OF_RANGE", ()
        elif got is not None:  # the divergingEpoch travels in leader_end (epochs.pack)
            err, recs, leader_end = "DIVERGING_EPOCH", (), epochs.pack(got)
    if err == "" and not recs:
        return None  # long poll: nothing to return
    if err and err == h.fetch_error:
        return None
    msg = FetchResponse(FETCH_RESP, h.leader, b, p, tid, h.leader_epoch, end,
                        recs, leader_end, err or "NONE", r.inc)
    ghost = w.ghost
    if lr is not None:
        ghost = ghost._replace(attempts=set_add(ghost.attempts, (r.inc, lr.inc)))
    return w._replace(net=m.net.send(w.net, msg), ghost=ghost)


def _truncating(w, b, h, r, msg) -> bool:
    """Whether follower ``b``'s fetch state for the partition is surely Truncating, so
    that Kafka drops ``msg``: the state was made anew since the fetch was sent (a
    LeaderAndIsr with a newer leader epoch: ReplicaManager.makeFollowers removes the
    partition from its fetcher and adds it again; or a new log after the topic was
    deleted and created again), and the log has no leader epoch
    (AbstractFetcherThread.partitionFetchState: ``latestEpoch`` empty -> Truncating). A
    log gets a leader epoch from records (fetched or produced) or from leading it
    (Partition.makeLeader -> maybeAssignEpochStartOffset, at offset 0 too). The model
    keeps no epoch cache: a log is taken to have none when it holds no record and the
    store never named ``b`` its leader, which the ghost history tells for the live
    incarnation only; otherwise the response is applied (a state Kafka may start in
    Fetching at the log's end). The incarnation, a ghost, stands for the log's
    identity, which Kafka's objects have and the model's values do not."""
    if r.records or (h.leader_epoch == msg.leader_epoch and r.inc == msg.asked_inc):
        return False
    if r.inc != live_inc(w.store):
        return False  # its leaders' history is gone with the deletion
    p = msg.partition
    return not any(x[0] == r.inc and x[1] == p and x[3] == b for x in w.ghost.leaders)


def on_fetch_response(m, w, msg):
    """The follower applies a FetchResponse if it still fetches that partition from that
    leader at that leader epoch and offset, and (kip516) the topic ID matches its own
    (KIP-516 "Fetch"). Records are appended after partition.metadata is flushed.
    OFFSET_OUT_OF_RANGE truncates to the leader's end (divergence after an election), a
    divergingEpoch to where the follower's own epochs, read when the answer arrives,
    say (AbstractFetcherThread.truncateOnFetchResponse -> getOffsetTruncationState:
    ``epochs.truncation_offset``; a truncation that is not complete goes on at the
    next Fetch).
    Kafka: AbstractFetcherThread.processFetchRequest (applies a response while the
    partition's fetch state is ready and at the requested offset),
    ReplicaFetcherThread.processPartitionData -> Partition.
    appendRecordsToFollowerOrFutureReplica; AbstractFetcherThread.handleOutOfRangeError.

    A fetch state made anew since the fetch was sent over a log without a leader epoch
    is not ready (``_truncating``): AbstractFetcherThread.partitionFetchState starts it
    in Truncating, and the fetcher thread, which waits for this response, cannot
    truncate before it handles it, so the response is dropped (2.8-3.9). Over a log with
    a leader epoch the new state is Fetching at the log's end
    (ReplicaManager.initialFetchOffset, truncation on fetch), and the offset decides."""
    b = msg.dst
    br = w.brokers[b - 1]
    net = m.net.deliver(w.net, msg)
    p = msg.partition
    h, r = hosted_of(br, p), log_of(br, p)
    if (h is None or h.leader != msg.src
            or (m.flags.follower_epoch_check and h.leader_epoch != msg.leader_epoch)
            or len(r.records) != msg.offset
            or (m.flags.fetch_topic_id and msg.topic_id != r.topic_id)
            or _truncating(w, b, h, r, msg)):
        return w._replace(net=net)  # discarded
    ghost, log = w.ghost, r
    if msg.error == "OFFSET_OUT_OF_RANGE":
        log, h = r._replace(records=r.records[:msg.leader_end]), h._replace(fetch_error="")
    elif msg.error == "DIVERGING_EPOCH":  # against the follower's log as it is now
        cut = epochs.truncation_offset(r.records, epochs.unpack(msg.leader_end))
        log, h = r._replace(records=r.records[:cut]), h._replace(fetch_error="")
    elif msg.error != "NONE":
        h = h._replace(fetch_error=msg.error)
    else:
        ghost = _reads(ghost, b, r.inc, msg.records)
        ghost = ghost._replace(appends=set_add(
            ghost.appends, (b, p, msg.leader_epoch, h.leader_epoch)))
        log = r._replace(records=r.records + msg.records, flushed=True)
        h = h._replace(fetch_error="")
    if log is not r:
        br = bk.with_log(br, log)
    br = br._replace(hosted=keyed_put(br.hosted, h))
    brokers = replace_at(w.brokers, b - 1, br)
    if msg.error == "NONE":
        ghost = acknowledge(w.store, brokers, ghost, r.inc, msg.partition)
    return w._replace(net=net, ghost=ghost, brokers=brokers)


# ---- clients -------------------------------------------------------------------------------
def snapshot(m, store, old):
    """Client metadata from the store (brokers' metadata caches folded in: a client's view
    is as old as its last refresh). A client cannot tell incarnations of a name apart
    without topic IDs, so in legacy its believed incarnation sticks."""
    rec = zk.topic(store, TOPIC)
    if rec is None or zk.marked(store, TOPIC):
        return old
    inc = rec.incarnation
    if old is not None and not m.flags.topic_ids:
        inc = old.inc
    return Meta(rec.topic_id, inc, tuple((p.leader, p.leader_epoch) for p in rec.partitions))


def _leader(w, meta, p):
    if meta is None or p >= len(meta.leaders):
        return None, None
    lid = meta.leaders[p][0]
    if lid == NO_LEADER or w.brokers[lid - 1].status != bk.UP:
        return None, None
    return lid, w.brokers[lid - 1]


def producer_refresh(m, w):
    """The producer refreshes its metadata (KIP-4 "Metadata"; KIP-516 "Metadata"):
    a ``snapshot`` of the store, standing for KafkaApis.handleTopicMetadataRequest
    answered from ZkMetadataCache.getTopicMetadata and taken in by Metadata.java
    ``updateLatestMetadata`` (docs: "Simplifications")."""
    meta = snapshot(m, w.store, w.producer.meta)
    if meta == w.producer.meta:
        return None
    return w._replace(producer=w.producer._replace(meta=meta))


def produce(m, w, p):
    """Produce to partition ``p`` via the producer's metadata (KIP-516 "Produce" v9: by
    topic ID; legacy and the release lines by name). The leader appends after flushing
    partition.metadata. Kafka: the producer's Sender.sendProduceRequest;
    KafkaApis.handleProduceRequest -> ReplicaManager.appendRecords ->
    Partition.appendRecordsToLeader."""
    pr = w.producer
    if pr.left <= 0:
        return None
    lid, br = _leader(w, pr.meta, p)
    lr = None if br is None else log_of(br, p)
    if lr is None or leader_of(br, p) != lid:
        return None  # UNKNOWN_TOPIC_OR_PARTITION / NOT_LEADER: the producer refreshes
    if m.flags.topic_ids and m.flags.produce_topic_id and lr.topic_id != pr.meta.topic_id:
        return None  # UNKNOWN_TOPIC_ID
    epoch = hosted_of(br, p).leader_epoch
    lr2 = lr._replace(records=lr.records + (epochs.record(lr.inc, epoch),), flushed=True)
    brokers = replace_at(w.brokers, lid - 1, bk.with_log(br, lr2))
    ghost = w.ghost._replace(wrote=set_add(w.ghost.wrote, (pr.meta.inc, lr.inc)))
    ghost = acknowledge(w.store, brokers, ghost, lr.inc, p)
    return w._replace(brokers=brokers, producer=pr._replace(left=pr.left - 1), ghost=ghost)


def consumer_refresh(m, w):
    """The consumer refreshes its metadata (KIP-4 "Metadata"; KIP-516 "Metadata"), as
    ``producer_refresh`` (Metadata.java ``updateLatestMetadata``): where the release
    line resets positions on a new topic ID, the consumer reads the new topic from its
    start (KIP-516 "Fetch": a new topic ID is a new topic)."""
    c = w.consumer
    meta = snapshot(m, w.store, c.meta)
    if meta == c.meta:
        return None
    pos = c.positions
    if c.meta is not None and meta.topic_id != c.meta.topic_id \
            and m.flags.reset_position_on_new_id:
        pos = (0,) * len(pos)  # a new topic ID: a new topic, read from the start
    return w._replace(consumer=c._replace(meta=meta, positions=pos))


def consumer_fetch(m, w, p):
    """The consumer fetches from the leader in its metadata (KIP-516 "Fetch" v13 by topic
    ID; legacy by name) with its leader epoch. OFFSET_OUT_OF_RANGE resets the position to
    the start (auto.offset.reset=earliest). The leader answers with the records below its
    high watermark (``high_watermark``): a consumer's Fetch reads with HIGH_WATERMARK
    isolation (FetchIsolation.of, UnifiedLog.read), and LocalLog.read returns nothing from
    the high watermark up; only a position beyond the log end is out of range."""
    c = w.consumer
    lid, lb = _leader(w, c.meta, p)
    if lid is None:
        return None
    lr = log_of(lb, p)
    tid = c.meta.topic_id if m.flags.fetch_topic_id else ZERO_ID
    pos = c.positions[p]
    err, recs = serve(lb, p, lr, lid, tid, c.meta.leaders[p][1], pos)
    hw = None if err else high_watermark(w.store, w.brokers, lr.inc, p)
    if hw is not None and m.flags.consumer_reads_committed:
        recs = recs[:max(0, hw - pos)]  # a consumer reads below the high watermark only
    # the high watermark the leader reads by also completes the acks below it (a
    # reassignment's smaller ISR moves it without a new append)
    ghost = acknowledge(w.store, w.brokers, w.ghost, lr.inc, p) if hw else w.ghost
    if lr is not None:
        ghost = ghost._replace(attempts=set_add(ghost.attempts, (c.meta.inc, lr.inc)))
    if err == "OFFSET_OUT_OF_RANGE":  # auto.offset.reset, the client library's
        c = c._replace(positions=replace_at(c.positions, p, cl.reset_position(RESET, 0)))
    elif not err and recs:
        ghost = _reads(ghost, 0, c.meta.inc, recs)
        if lr.inc == live_inc(w.store):
            ghost = ghost._replace(consumed=set_union(
                ghost.consumed, ((lr.inc, p, o) for o in range(pos, pos + len(recs)))))
        c = c._replace(positions=replace_at(c.positions, p, pos + len(recs)))
    if c == w.consumer and ghost == w.ghost:
        return None
    return w._replace(consumer=c, ghost=ghost)
