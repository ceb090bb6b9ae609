"""A broker's LogManager: the partition logs on disk, each with the topic ID of its
partition.metadata file (KIP-516 "Partition Metadata file").

Logs survive a crash. With ``by_id=False`` (the compare-by-name mutant) every check
below compares topic names only, which with one topic name means "same partition".

Deletion, two steps as LogManager has them (core/src/main/scala/kafka/log/
LogManager.scala, 3.3.0 to 3.9 and trunk alike):

1. ``rename_for_deletion``: LogManager.asyncDelete takes the log out of currentLogs
   (removeLogAndMetrics: no longer served), renames its directory to
   ``<topic>-<partition>.<uniqueId>-delete`` (UnifiedLog.renameDir, which flushes
   partition.metadata first; LocalLog.renameDir moves the directory atomically) and
   queues it (addLogToBeDeleted, the ``logsToBeDeleted`` queue);
2. ``remove_deleted``: the kafka-delete-logs task (LogManager.deleteLogs, run once
   file.delete.delay.ms has passed) removes the directory (UnifiedLog.delete).

A crash between them leaves the ``-delete`` directory on disk; the next
LogManager.startup (loadLogs -> loadLog) recognises the suffix (UnifiedLog.
DeleteDirSuffix) and queues it again instead of loading it, before any stray check.
"""
from __future__ import annotations

from kmc.model.kafka.canon import keyed_del, keyed_get, keyed_put, set_add, set_remove
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft.state import Log

NO_ID = 0  # no partition.metadata on disk


def log_of(logs: tuple, partition: int):
    """The log of a partition name (LogManager.getLog: logs are keyed by
    TopicPartition, i.e. by name, never by ID)."""
    return keyed_get(logs, partition)


def get_or_create_log(logs: tuple, partition: int, topic_id: int, by_id: bool = True,
                      flushed: bool = True):
    """LogManager.getOrCreateLog: reuse the partition's log or create an empty one with
    the topic ID (LogManager.createLogDirectory, then UnifiedLog's
    initializeTopicId records partition.metadata and schedules its flush: ``flushed``
    False opens the crash window); a log without a topic ID is given this one
    (log.assignTopicId); a log whose partition.metadata holds another topic ID raises
    InconsistentTopicIdException. Returns ``(logs, ok)``. By name, the old log is taken
    over and its partition.metadata rewritten with the new ID."""
    log = log_of(logs, partition)
    if log is None:
        return keyed_put(logs, Log(partition, topic_id, (), flushed)), True
    if log.topic_id == topic_id:
        return logs, True
    if log.topic_id == NO_ID:
        return keyed_put(logs, log._replace(topic_id=topic_id, flushed=flushed)), True
    if by_id:
        return logs, False
    return keyed_put(logs, log._replace(topic_id=topic_id)), True


def delete_log(logs: tuple, partition: int) -> tuple:
    """Rename and removal in one: where no crash can fall between them (nothing reads
    a ``-delete`` directory but a restart), and for stray logs (``startup``)."""
    return keyed_del(logs, partition)


def rename_for_deletion(logs: tuple, deleting: tuple, partition: int):
    """LogManager.asyncDelete, step 1: the partition's log leaves ``logs`` and its
    ``-delete`` directory joins ``deleting``. Returns ``(logs, deleting)``."""
    log = log_of(logs, partition)
    if log is None:
        return logs, deleting
    return keyed_del(logs, partition), set_add(deleting, (partition, log.topic_id))


def remove_deleted(deleting: tuple, partition: int, topic_id: int) -> tuple:
    """LogManager.deleteLogs, step 2: the ``-delete`` directory is removed."""
    return set_remove(deleting, (partition, topic_id))


def flush(logs: tuple, partition: int) -> tuple:
    """PartitionMetadataFile.maybeFlush: partition.metadata reaches the disk (the
    scheduled "flush-metadata-file" task, or UnifiedLog.append before the first
    records)."""
    return keyed_put(logs, keyed_get(logs, partition)._replace(flushed=True))


def after_crash(logs: tuple) -> tuple:
    """What a crash leaves on disk: a log whose partition.metadata was not flushed has
    no topic ID (UnifiedLog loads ``topicId`` from that file only)."""
    return tuple(x if x.flushed else x._replace(topic_id=NO_ID, flushed=True)
                 for x in logs)


def is_stray(img, broker: int, log: Log, by_id: bool = True) -> bool:
    """LogManager.isStrayKraftReplica: stray when the image does not know the log's
    topic ID, or the partition's replicas do not list this broker; a log without a
    topic ID is stray (KAFKA-16814; before it, the check threw instead:
    ``startup.load_logs``). By name: the image is asked for the topic by name
    instead."""
    if log.topic_id == NO_ID:
        return True
    if by_id:
        t = im.topic_by_id(img, log.topic_id)
    else:
        t = img.topics[0] if img.topics else None
    if t is None or log.partition >= len(t.parts):
        return True
    return broker not in t.parts[log.partition].replicas


def strays(img, broker: int, logs: tuple, by_id: bool = True) -> tuple:
    return tuple(log for log in logs if is_stray(img, broker, log, by_id))
