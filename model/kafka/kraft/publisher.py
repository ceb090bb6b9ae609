"""A broker following the metadata log: fetching batches and publishing them
(BrokerServer's metadata loader and BrokerMetadataPublisher).

Brokers are observers of the metadata log (KIP-595 "Observers"; KIP-631 "Brokers" fetch
the log from the active controller). The MetadataLoader is handed committed batches only
(RaftClient.Listener.handleCommit); the model publishes an image after every batch (Kafka
once per commit it is handed, docs/model-kraft.md "Simplifications"); each broker does
so at its own pace, so images lag by different amounts.
"""
from __future__ import annotations

from kmc.model.kafka import broker as bk
from kmc.model.kafka.kraft import deletion, group
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft import logmanager as lm
from kmc.model.kafka.kraft import replicas
from kmc.model.kafka.kraft.state import CATCHING_UP, DOWN, HALTED, RUNNING


def fetch_limit(q, committed_only: bool) -> int:
    """How far a broker may read: the high watermark, or (mutant) the log end."""
    return q.hwm if committed_only else len(q.log)


def can_fetch(q, br, committed_only: bool) -> bool:
    return br.status in (CATCHING_UP, RUNNING) and len(br.fetched) < fetch_limit(
        q, committed_only)


def can_flush(br, p: int) -> bool:
    return br.status not in (DOWN, HALTED) and not bk.log_of(br, p).flushed


def flush_metadata(model, w, b: int, p: int):
    """The scheduled "flush-metadata-file" task writes partition ``p``'s
    partition.metadata to disk (KIP-516 "Partition Metadata file";
    UnifiedLog.maybeFlushMetadataFile -> PartitionMetadataFile.maybeFlush)."""
    br = w.brokers[b - 1]
    br = br._replace(logs=lm.flush(br.logs, p))
    return w._replace(brokers=w.brokers[:b - 1] + (br,) + w.brokers[b:])


def raise_high(ghost, b: int, offset: int):
    high = ghost.high
    if offset <= high[b - 1]:
        return ghost
    return ghost._replace(high=high[:b - 1] + (offset,) + high[b:])


def fetch_metadata(model, w, b: int):
    """One metadata batch reaches broker ``b`` (KafkaRaftClient fetch as an observer ->
    MetadataLoader.handleCommit -> BrokerMetadataPublisher.onMetadataUpdate ->
    ReplicaManager.applyDelta). KIP-516 "Compatibility with KIP-500". While the broker
    is still catching up after a restart, the batch is only loaded: nothing is
    published until the loader reaches the high watermark
    (MetadataLoader.stillNeedToCatchUp)."""
    q, br = w.quorum, w.brokers[b - 1]
    entry = q.log[len(br.fetched)]
    br = br._replace(fetched=br.fetched + (entry.epoch,))
    ghost = w.ghost
    if br.status == RUNNING:
        new = im.apply_batch(br.image, entry)
        br = replicas.apply_delta(br, br.image, new, b, model.flags.topic_ids,
                                  model.flushed or w.budget.crashes == 0,
                                  deletion.renames(model, w))
        old = br.image
        br = br._replace(image=new)
        ghost = raise_high(ghost, b, new.offset)
        w = w._replace(brokers=w.brokers[:b - 1] + (br,) + w.brokers[b:], ghost=ghost)
        return group.on_partitions_deleted(model, w, b, old, new) \
            if getattr(w, "group", None) is not None else w
    return w._replace(brokers=w.brokers[:b - 1] + (br,) + w.brokers[b:], ghost=ghost)
