"""The broker (one broker leads every partition): its logs, the Produce and Fetch checks.

KIP-253 §4: the broker records undeleted_partition_count from each LeaderAndIsr, atomically
with the new leader epochs, and rejects a Produce (and, §8.6, a Fetch) that carries another
count with InvalidPartitionMetadataException.

The broker is the cluster's ZooKeeper-era broker record (``model.kafka.broker``): its
``count`` and ``meta`` fields are KIP-253's; it hosts each partition as its leader
(``Hosted``, with the leader epoch) on a ``Log`` whose records are (key class, producer,
seq, leader epoch).
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
    return put(w, bk.with_log(w.brokers[BROKER - 1], log))


def log_at(w, p: int):
    """The broker's log of partition ``p``, or None (the partition is not hosted: the
    one broker hosts every partition it has a log of)."""
    return bk.log_of(w.brokers[BROKER - 1], p)


def epoch_at(w, p: int) -> int:
    """The leader epoch the broker hosts partition ``p`` at."""
    return bk.hosted_of(w.brokers[BROKER - 1], p).leader_epoch


def new_partition(p: int, epoch: int) -> tuple:
    """An empty log of partition ``p`` and the partition hosted on it at leader
    ``epoch``, led by the one broker (KIP-253 predates topic IDs: ``ZERO_ID``)."""
    return (bk.Log(p, ZERO_ID, (), True, 0, INCARNATION),
            bk.Hosted(p, ZERO_ID, BROKER, epoch))


def produce_error(cfg, w, p: int, count: int):
    """The error a Produce to partition ``p`` carrying ``count`` gets, or None (§4 bullet 2)."""
    if log_at(w, p) is None:
        return UNKNOWN_PARTITION
    if cfg.flags.produce_fencing and count != the_broker(w).count:
        return INVALID_PARTITION_METADATA
    return None


def fetch_allowed(cfg, w, count: int) -> bool:
    """§8.6: a Fetch carrying another undeleted_partition_count is rejected; the consumer
    then refreshes metadata and rejoins (the Rebalance action)."""
    return not cfg.flags.fetch_fencing or count == the_broker(w).count
