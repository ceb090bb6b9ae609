"""The protocol variants, as data: one flags object per variant, chosen in one place.

A variant is never a fork of the model: every action reads the flags it depends on. The
named variants are those of docs/model-partition-changes.md's "Variants" table, each in
the regression suite; ``Flags`` fields that are not varied by a named variant exist so
tests can build one-guard-off models for findings (see the same file, "Findings").
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from kmc.model.scenario import ScenarioError

MODULO, LINEAR = "modulo", "linear"


@dataclass(frozen=True)
class Flags:
    name: str
    #: producer partitioner: "modulo" (today's Kafka) or "linear" (KIP-253 §5)
    hashing: str
    #: broker rejects a Produce whose undeleted_partition_count differs (KIP-253 §4)
    produce_fencing: bool
    #: broker rejects a Fetch whose undeleted_partition_count differs (KIP-253 §8.6)
    fetch_fencing: bool
    #: consumers block on the parent / on marked partitions (KIP-253 §8.4, §8.5)
    consumer_blocking: bool
    #: AlterTopic may shrink (KIP-253 §3); False is KIP-4's legacy rule: fewer -> error
    allow_shrink: bool
    #: a new controller re-drives an unfinished deletion from the epoch bump even when
    #: leaderEpochBeforeDeletion is already written (our reading of KIP-253 §3's
    #: "fault tolerant" note; the literal "if ... empty" guard skips the bump)
    recovery_rebump: bool = True
    #: members always have a Fetch parked at the broker (long poll), and a LeaderAndIsr that
    #: changes the count completes it with InvalidPartitionMetadataException, so the group
    #: sees every count change (without it a paused group can miss a whole
    #: shrink-remove-expand cycle: see the docs, "Findings")
    parked_fetch_fenced: bool = True
    #: a metadata refresh clears the producer's retriable error, so it retries the message
    retry_after_refresh: bool = True
    #: the group coordinator deletes a removed partition's committed offsets
    #: (GroupCoordinator.handleDeletedPartitions), so a partition id created again is read
    #: from its start
    reset_offsets_on_delete: bool = True
    #: ... when the StopReplica(delete=true) arrives (False), or as Kafka's broker does it
    #: (True): when an UpdateMetadata no longer advertises the partition
    #: (KafkaApis.handleUpdateMetadataRequest; ``model.kafka.zk.coordinator``)
    offsets_by_metadata: bool = False
    #: an expansion increments the existing partitions' leader epochs before it creates
    #: the new partitions (KIP-253 §2 bullet 3)
    bump_before_split: bool = True
    #: a deletion increments the undeleted partitions' leader epochs only once every
    #: partition it removes has its leaderEpochBeforeDeletion written (KIP-253 §3 bullet 2:
    #: the maps of "those partitions P1", then "also increments")
    bump_after_marks: bool = True
    #: the controller asks for a LeaderAndIsrResponse only when it waits for one (not for
    #: the LeaderAndIsr that brings an expansion's new partitions online)
    ack_only_awaited: bool = True
    #: the controller sends UpdateMetadata after removing a partition znode (the KIP leaves
    #: how clients learn of the removal implicit)
    um_after_removal: bool = True
    #: a new controller that finds a partition znode beyond the assignment finishes its
    #: removal (KIP-253 §3's "fault tolerant" note applied to the last step)
    recovery_removes_orphans: bool = True
    #: the group leader range-assigns the undeleted and the marked partitions as two
    #: separate lists (KIP-253 §6), not as one
    separate_lists: bool = True
    #: a deletion waits for the LeaderAndIsrResponse of its epoch bump before it sends
    #: UpdateMetadata and goes back to idle (where the drained check runs), as §2 says
    #: for an expansion; §3's text does not say so for a deletion ("Then controller sends
    #: LeaderAndIsrRequest ...", then UpdateMetadata, then the periodic task)
    shrink_awaits_lair: bool = True


VARIANTS = {
    "modulo": Flags("modulo", MODULO, produce_fencing=False, fetch_fencing=False,
                    consumer_blocking=False, allow_shrink=False),
    "linear-no-blocking": Flags("linear-no-blocking", LINEAR, produce_fencing=True,
                                fetch_fencing=True, consumer_blocking=False,
                                allow_shrink=True),
    "linear-no-fencing": Flags("linear-no-fencing", LINEAR, produce_fencing=False,
                               fetch_fencing=True, consumer_blocking=True, allow_shrink=True),
    "kip253": Flags("kip253", LINEAR, produce_fencing=True, fetch_fencing=True,
                    consumer_blocking=True, allow_shrink=True),
}

#: mutants: kip253 with one guard removed (name -> the flag switched off)
MUTANTS = {
    "kip253-no-retry": "retry_after_refresh",
    "kip253-keeps-offsets": "reset_offsets_on_delete",
    "kip253-no-split-bump": "bump_before_split",
    "kip253-early-bump": "bump_after_marks",
    "kip253-silent-removal": "um_after_removal",
    "kip253-orphan-znode": "recovery_removes_orphans",
    "kip253-one-list": "separate_lists",
    "kip253-unawaited-ack": "ack_only_awaited",
    "kip253-unfenced-park": "parked_fetch_fenced",
    "kip253-shrink-unawaited": "shrink_awaits_lair",
}
VARIANTS.update({name: replace(VARIANTS["kip253"], name=name, **{flag: False})
                 for name, flag in MUTANTS.items()})
#: kip253 on Kafka's own offset cleanup: a removed partition's offsets go when an
#: UpdateMetadata stops advertising it, not with its StopReplica
VARIANTS["kip253-offsets-by-metadata"] = replace(
    VARIANTS["kip253"], name="kip253-offsets-by-metadata", offsets_by_metadata=True)

NAMES = tuple(VARIANTS)


def flags_for(variant: str, **overrides) -> Flags:
    """The flags of a named variant; ``overrides`` switch single guards (tests only)."""
    if variant not in VARIANTS:
        raise ScenarioError(f"unknown partition-model variant {variant!r}: use one of "
                            f"{', '.join(NAMES)}")
    f = VARIANTS[variant]
    return replace(f, **overrides) if overrides else f
