"""Named scenarios of the topic-lifecycle model; every one runs with every variant.

Each is a set of bounds (``state.Bounds``) chosen to make one KIP-516 story reachable in
few states; ``-p`` overrides any bound. ``-p plane=kraft`` runs the same story on the
KRaft plane with the KRaft variants (``model.kafka.planes``).
"""
from __future__ import annotations

from kmc.model.kafka.planes import two_plane_scenario
from kmc.model.kafka.zk.lifecycle import topic_lifecycle
from kmc.model.kafka.zk.state import Bounds
from kmc.model.kafka.zk.variants import VARIANT_NAMES

PARAM_HELP = {
    "brokers": ("brokers", 1, 4),
    "partitions": ("partitions of the topic", 1, 3),
    "rf": ("replication factor", 1, 4),
    "incarnations": ("creations of the name, the initial topic included", 1, 4),
    "deletes": ("DeleteTopics requests the admin issues", 0, 3),
    "records": ("records the producer may write (0: no producer)", 0, 3),
    "consumer": ("a consumer reads the topic", None, None),
    "initial_records": ("records already in the first incarnation", 0, 3),
    "crashes": ("broker crashes (each may be followed by a restart)", 0, 3),
    "failovers": ("controller failovers", 0, 3),
    "reassign": ("reassignments away from a down broker", 0, 2),
    "loss": ("StopReplica requests may be lost", None, None),
    "reorder": ("messages between two endpoints may be reordered", None, None),
    "purge_delay": ("deleting/ is purged by a later step (else at once)", None, None),
    "liveness": ("also check the liveness properties, under fairness", None, None),
    "adds": ("CreatePartitions requests the admin sends (0: none)", 0, 2),
    "target": ("the partition count a CreatePartitions request asks for", 1, 3),
}


def _scenario(name, description, bounds):
    return two_plane_scenario(name, description, bounds, PARAM_HELP, zk_model=topic_lifecycle,
                              variants=VARIANT_NAMES)


SCENARIOS = [
    _scenario(
        "stale-read",
        "KIP-516 'Stale reads': a follower of the recreated topic fetches from a broker "
        "that still holds the deleted one",
        Bounds(brokers=2, rf=2, incarnations=2, crashes=1, reassign=1)),
    _scenario(
        "stale-state",
        "KIP-516 'Stale state': a broker misses its StopReplica and later gets a "
        "LeaderAndIsr for the recreated topic",
        Bounds(brokers=2, rf=2, incarnations=2, crashes=1, reassign=1, loss=True)),
    _scenario(
        "offline-delete",
        "KIP-516 'Motivation': delete while a replica's broker is down, then recreate",
        Bounds(brokers=2, rf=1, incarnations=2, crashes=1)),
    _scenario(
        "failover-mid-delete",
        "the controller fails over and a broker dies in the middle of a deletion",
        Bounds(brokers=2, rf=2, incarnations=1, crashes=1, failovers=1)),
    _scenario(
        "recreate-race",
        "KAFKA-6098: delete and immediately recreate while a producer writes and a "
        "consumer reads",
        Bounds(brokers=2, rf=1, incarnations=2, records=1, consumer=True, initial_records=0)),
    _scenario(
        "lifecycle-large",
        "3 brokers, 2 incarnations, a broker crash and a controller failover (325k states "
        "in kip516: worth a Spark run)",
        Bounds(brokers=3, rf=2, incarnations=2, crashes=1, failovers=1)),
]
