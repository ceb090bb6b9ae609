"""Named scenarios of the KRaft model; every one runs with every variant.

Each is a set of bounds (``state.Bounds``) that makes one KRaft story reachable in few
states; ``-p`` overrides any bound.
"""
from __future__ import annotations

from kmc.model.kafka.kraft.model import KRaftModel
from kmc.model.kafka.kraft.state import Bounds
from kmc.model.kafka.kraft.variants import VARIANT_NAMES
from kmc.model.kafka.scenarios import lifecycle_scenario

PARAM_HELP = {
    "brokers": ("brokers", 1, 3),
    "rf": ("replication factor", 1, 3),
    "partitions": ("partitions of the topic", 1, 2),
    "incarnations": ("creations of the name, the initial topic included", 1, 3),
    "deletes": ("DeleteTopics requests the admin issues", 0, 2),
    "initial_records": ("records already in the first incarnation", 0, 2),
    "crashes": ("broker crashes (each may be followed by a restart)", 0, 2),
    "failovers": ("controller failovers", 0, 2),
    "fences": ("times a running broker misses its heartbeats", 0, 2),
    "consumer": ("a consumer reads the topic", None, None),
    "records": ("records a producer may write (0: no producer)", 0, 2),
    "reset": ("the consumer's auto.offset.reset", None, None),
    "leader_epoch": ("leader epoch of the first incarnation when the story starts "
                     "(leader elections it went through before)", 0, 2),
    "liveness": ("also check the liveness property BrokerFinishesStartup, under fairness",
                 None, None),
    "adds": ("CreatePartitions requests the admin sends (0: none)", 0, 2),
    "target": ("the partition count a CreatePartitions request asks for", 1, 3),
    "members": ("members of a consumer group reading the topic (0: no group)", 0, 2),
    "recreate_partitions": ("partitions of a re-created topic (0: as partitions)", 0, 2),
}
CHOICES = {"reset": ("earliest", "latest", "none")}


def _scenario(name, description, bounds):
    return lifecycle_scenario(name, description, bounds, model_cls=KRaftModel,
                              help_table=PARAM_HELP, variants=VARIANT_NAMES,
                              default_variant="kraft", family="kraft", choices=CHOICES)


SCENARIOS = [
    _scenario(
        "kraft-stray",
        "KRaft: a broker is down while its topic is deleted and re-created with a "
        "replica on it, then restarts and finds the old log on disk",
        Bounds(brokers=2, rf=2, incarnations=2, crashes=1)),
    _scenario(
        "kraft-failover",
        "KRaft: the active controller fails over while a deletion's record is not yet "
        "committed",
        Bounds(brokers=2, rf=2, incarnations=2, failovers=1)),
    _scenario(
        "kraft-lagging-broker",
        "KRaft: a lagging broker's image serves stale metadata to a consumer across a "
        "re-creation",
        Bounds(brokers=2, rf=1, incarnations=2, consumer=True)),
    _scenario(
        "kraft-consumer-recreate",
        "KRaft: a consumer reads a topic whose leader changed once; the topic is "
        "deleted and re-created and a producer writes into the new one",
        Bounds(brokers=2, rf=1, incarnations=2, consumer=True, records=1,
               leader_epoch=1)),
    _scenario(
        "kraft-crash-window",
        "KRaft: the topic is deleted and re-created; a broker crashes after creating the "
        "new log's directory, before its partition.metadata is flushed, and restarts",
        Bounds(brokers=2, rf=1, incarnations=2, crashes=1, initial_records=0,
               liveness=True)),
    _scenario(
        "recreate-during-expansion",
        "KRaft: a CreatePartitions request is in flight while the topic is deleted and "
        "re-created; the controller resolves the name when it handles the request",
        Bounds(brokers=2, rf=2, incarnations=2, adds=1, target=2)),
    _scenario(
        "recreate-other-count",
        "KRaft: a consumer group reads the topic while it is deleted and re-created "
        "with two partitions instead of one; a producer writes into the new one",
        Bounds(brokers=2, rf=1, incarnations=2, members=1, recreate_partitions=2,
               records=1)),
    _scenario(
        "kraft-large",
        "KRaft: kraft-stray on 3 brokers (170,139 states in kraft: worth a Spark run)",
        Bounds(brokers=3, rf=2, incarnations=2, crashes=1)),
]
