"""Named scenarios of the KRaft model; every one runs with every variant.

Each is a set of bounds (``state.Bounds``) that makes one KRaft story reachable in few
states; ``-p`` overrides any bound. recreate-during-expansion also runs on the ZooKeeper
plane (``-p plane=zk``, ``model.kafka.planes``).
"""
from __future__ import annotations

from kmc.model.kafka.kraft.model import KRaftModel
from kmc.model.kafka.kraft.params import CHOICES, PARAM_HELP
from kmc.model.kafka.kraft.state import Bounds
from kmc.model.kafka.kraft.variants import VARIANT_NAMES
from kmc.model.kafka.planes import KRAFT, two_plane_scenario
from kmc.model.kafka.scenarios import lifecycle_scenario
from kmc.model.kafka.zk import scenarios as zk_scenarios
from kmc.model.kafka.zk.lifecycle import topic_lifecycle
from kmc.model.kafka.zk.state import Bounds as ZkBounds
from kmc.model.kafka.zk.variants import VARIANT_NAMES as ZK_VARIANTS



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
    two_plane_scenario(
        "recreate-during-expansion",
        "KRaft: a CreatePartitions request is in flight while the topic is deleted and "
        "re-created; the controller resolves the name when it handles the request "
        "(-p plane=zk: the ZooKeeper-era controller's broker reads and writes the "
        "topic znode)",
        ZkBounds(brokers=2, rf=2, incarnations=2, adds=1, target=2),
        zk_scenarios.PARAM_HELP, zk_model=topic_lifecycle, variants=ZK_VARIANTS,
        family="kraft", default=KRAFT),
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
