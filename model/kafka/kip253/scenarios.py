"""Named scenarios of the partition model; every one runs with every variant.

Scripts rely on the names ``expand``, ``shrink``, ``expand-failover`` and
``shrink-then-expand``; ``split-merge-spark`` is the larger one, worth a Spark run.

Every scenario starts from a settled topic with initial_partition_count N = 2 and uses one
key class by default, hash 2 (mod 12 = lcm(N*2^(Lmax+1) = 4, the counts 2 and 3)): it lives
in partition 0 with 2 partitions and in partition 2 with 3, under both partitioners, so it
is the key that moves on every split and merge. ``-p keys=2`` adds a second class, hash 3:
partition 1 with 2 or 3 partitions under linear hashing (partition 0 with 3 under modulo)
and partition 3 with 4. Each producer sends ``messages`` messages, cycling through the
key classes. ``shrink-two`` (4 -> 2) runs both classes by default: partitions 2 and 3 are
marked together and each feeds another survivor.
"""
from __future__ import annotations

from kmc.model.kafka.kip253.config import Config
from kmc.model.kafka.kip253.procedure import partition_procedure
from kmc.model.kafka.kip253.variants import NAMES, flags_for
from kmc.model.scenario import Param, Scenario

SPLIT = ("KeyMovedOnSplit", "ChildDeliveredAfterParent")
MERGE = ("KeyMovedOnMerge", "MarkedPartitionRemoved")
AFTER_REMOVAL = ("ExpansionRefusedWhileMarked", "ExpandedAfterRemoval")


#: key classes a scenario's messages cycle through (``keys`` takes the first 1 or 2)
KEY_CLASSES = (2, 3)


def _params(producers=1, messages=2, members=2, failovers=0, keys=1):
    return (
        Param("producers", producers, "producers, each sending its own keyed messages", 1, 3),
        Param("messages", messages, "messages per producer (keys cycle through the "
              "scenario's key classes)", 1, 6),
        Param("members", members, "consumer group members", 2, 4),
        Param("failovers", failovers, "controller failovers allowed", 0, 3),
        Param("keys", keys, "key classes the messages cycle through (hash 2, then 3)", 1, 2),
        Param("liveness", False, "also check the liveness properties, under fairness"),
        Param("bookkeeping", False, "also check the bookkeeping invariants (metadata, "
              "replicas, epochs, positions, assignment)"),
    )


def _builder(N, start, ops, witnesses, legacy_witnesses=None):
    """build(variant, params) for a scenario. ``legacy_witnesses`` replace ``witnesses`` for
    variants that refuse to shrink (KIP-4's rule), where the merge witnesses cannot exist."""
    def build(variant, params):
        flags = flags_for(variant)
        wit = witnesses
        if legacy_witnesses is not None and not flags.allow_shrink:
            wit = legacy_witnesses
        grows, shrinks = _changes(start, ops, flags.allow_shrink)
        if params["failovers"] > 0 and grows:
            wit = wit + ("FailoverMidExpansion",)
        if params["failovers"] > 0 and shrinks:
            wit = wit + ("FailoverMidShrink",)
        keys = KEY_CLASSES[:params["keys"]]
        scripts = tuple(tuple(keys[(j + i) % len(keys)] for j in range(params["messages"]))
                        for i in range(params["producers"]))
        return partition_procedure(Config(flags, N, start, tuple(ops), scripts, params["members"],
                                     params["failovers"], tuple(wit)),
                              liveness=params["liveness"],
                              bookkeeping=params["bookkeeping"])
    return build


def _changes(start, ops, allow_shrink) -> tuple:
    """(some AlterTopic grows the topic, some AlterTopic shrinks it) for a variant."""
    grows = shrinks = False
    n = start
    for target in ops:
        if target > n:
            grows, n = True, target
        elif target < n and allow_shrink:
            shrinks, n = True, target
    return grows, shrinks


SCENARIOS = [
    Scenario(
        name="expand",
        description="KIP-253 expansion 2 -> 3 partitions while a producer sends one key "
                    "across the split and a 2-member group consumes",
        build=_builder(2, 2, (3,), SPLIT), params=_params(producers=2),
        variants=NAMES, default_variant="kip253", family="partitions"),
    Scenario(
        name="expand-failover",
        description="expand, with one controller failover that may fall between any two "
                    "steps of the expansion procedure",
        build=_builder(2, 2, (3,), SPLIT), params=_params(messages=3, failovers=1),
        variants=NAMES, default_variant="kip253", family="partitions"),
    Scenario(
        name="shrink",
        description="KIP-253 deletion 3 -> 2 partitions: partition 2 is marked, drained, "
                    "removed; its keys merge back into partition 0; one controller failover",
        build=_builder(2, 3, (2,), MERGE, legacy_witnesses=("ShrinkRejected",)),
        params=_params(failovers=1), variants=NAMES, default_variant="kip253", family="partitions"),
    Scenario(
        name="shrink-then-expand",
        description="deletion 3 -> 2 then expansion back to 3: the expansion is refused "
                    "while partition 2 is marked, and re-creates it once removed",
        build=_builder(2, 3, (2, 3), MERGE + AFTER_REMOVAL + SPLIT,
                       legacy_witnesses=("ShrinkRejected",)),
        params=_params(messages=3), variants=NAMES, default_variant="kip253",
        family="partitions"),
    Scenario(
        name="shrink-two",
        description="KIP-253 deletion 4 -> 2 partitions with two key classes: partitions 3 "
                    "and 2 are marked together, drained and removed highest first; each "
                    "class merges into its own survivor",
        build=_builder(2, 4, (2,), MERGE, legacy_witnesses=("ShrinkRejected",)),
        params=_params(messages=3, keys=2), variants=NAMES, default_variant="kip253",
        family="partitions"),
    Scenario(
        name="split-merge-spark",
        description="shrink-then-expand with a controller failover anywhere: ~250k states "
                    "for kip253, worth a Spark run",
        build=_builder(2, 3, (2, 3), MERGE + AFTER_REMOVAL + SPLIT,
                       legacy_witnesses=("ShrinkRejected",)),
        params=_params(messages=3, failovers=1), variants=NAMES, default_variant="kip253",
        family="partitions"),
]
