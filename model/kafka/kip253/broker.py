"""The broker (one broker leads every partition): its logs, the Produce and Fetch checks.

KIP-253 §4: the broker records undeleted_partition_count from each LeaderAndIsr, atomically
with the new leader epochs, and rejects a Produce (and, §8.6, a Fetch) that carries another
count with InvalidPartitionMetadataException.

The broker is the cluster's ZooKeeper-era broker record (``model.kafka.broker``): its
``count`` and ``meta`` fields are KIP-253's, each partition's log a ``Replica`` that the
one broker leads, whose records are (key class, producer, seq, leader epoch).
"""
from __future__ import annotations

from kmc.model.kafka import broker as bk
from kmc.model.kafka.kip253.channels import BROKER, INCARNATION
from kmc.model.kafka.store import ZERO_ID

INVALID_PARTITION_METADATA = "InvalidPartitionMetadataException"
UNKNOWN_PARTITION = "UnknownTopicOrPartition"


def the_broker(w):
    """The record of broker ``BROKER``, which leads every partition (the scenarios' one
    broker)."""
    return w.brokers[BROKER - 1]


def put(w, br):
    """``w`` with the one broker's record ``br``."""
    return w._replace(brokers=bk.put(w.brokers, BROKER, br))


def put_log(w, log):
    """``w`` with the one broker's log ``log`` in place of its partition's."""
    return put(w, bk.with_replica(w.brokers[BROKER - 1], log))


def hosted(w, p: int):
    """The broker's replica of partition ``p`` (its log), or None."""
    return bk.replica(w.brokers[BROKER - 1], p)


def new_log(p: int, epoch: int):
    """An empty log of partition ``p`` at leader ``epoch``, led by the one broker
    (KIP-253 predates topic IDs: ``ZERO_ID``)."""
    return bk.Replica(p, ZERO_ID, INCARNATION, BROKER, epoch, (), True, "")


def produce_error(cfg, w, p: int, count: int):
    """The error a Produce to partition ``p`` carrying ``count`` gets, or None (§4 bullet 2)."""
    if hosted(w, p) is None:
        return UNKNOWN_PARTITION
    if cfg.flags.produce_fencing and count != the_broker(w).count:
        return INVALID_PARTITION_METADATA
    return None


def fetch_allowed(cfg, w, count: int) -> bool:
    """§8.6: a Fetch carrying another undeleted_partition_count is rejected; the consumer
    then refreshes metadata and rejoins (the Rebalance action)."""
    return not cfg.flags.fetch_fencing or count == the_broker(w).count
