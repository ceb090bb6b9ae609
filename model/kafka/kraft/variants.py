"""KRaft variants as data: one ``Flags`` value per variant.

``kraft`` is the behaviour of Kafka 3.9 / 4.x (KAFKA-14616's fix included: stray logs
are detected while LogManager starts, before ReplicaManager creates replicas). Each
mutant is ``kraft`` with exactly one safeguard removed; the regression suite shows each
one caught by a property.
"""
from __future__ import annotations

from typing import NamedTuple


class Flags(NamedTuple):
    #: brokers replay only committed metadata (MetadataLoader gets handleCommit batches)
    committed_only: bool
    #: LogManager.startup moves stray logs aside (LogManager.isStrayKraftReplica)
    stray_detection: bool
    #: stray detection runs before ReplicaManager applies the first delta (KAFKA-14616)
    strays_before_replicas: bool
    #: brokers compare partitions by topic ID (getOrCreateLog, stray check, Fetch)
    topic_ids: bool
    #: fencing a broker moves its leaderships away (handleBrokerFenced)
    fence_moves_leaders: bool


KRAFT = Flags(committed_only=True, stray_detection=True, strays_before_replicas=True,
              topic_ids=True, fence_moves_leaders=True)

#: variant name -> (flags, one-line description)
VARIANTS: dict[str, tuple[Flags, str]] = {
    "kraft": (KRAFT, "Kafka 3.9 / 4.x: committed metadata only, stray logs moved aside "
                     "before replicas are created, topic IDs compared"),
    "uncommitted-reads": (KRAFT._replace(committed_only=False),
                          "mutant: brokers act on metadata records not yet committed"),
    "no-stray-detection": (KRAFT._replace(stray_detection=False),
                           "mutant: no stray-log detection at startup"),
    "stray-after-replicas": (KRAFT._replace(strays_before_replicas=False),
                             "mutant: stray logs are removed after replicas are created "
                             "(before KAFKA-14616)"),
    "compare-by-name": (KRAFT._replace(topic_ids=False),
                        "mutant: brokers compare topics by name, not ID"),
    "fenced-keeps-leadership": (KRAFT._replace(fence_moves_leaders=False),
                                "mutant: a fenced broker keeps serving as leader"),
}

VARIANT_NAMES = tuple(VARIANTS)
MUTANTS = VARIANT_NAMES[1:]


def flags(variant: str) -> Flags:
    return VARIANTS[variant][0]
