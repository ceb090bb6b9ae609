"""The ZooKeeper-era control plane, beside the KRaft plane in model/kafka/kraft: one
cluster model (``cluster``) whose features a scenario chooses, the topic lifecycle
(``lifecycle``: KIP-516 topic IDs, KIP-4 admin operations, KIP-195 CreatePartitions) and
KIP-253's partition procedure (model/kafka/kip253).

Modules: ``cluster`` (the one Model class), ``failover`` (the controller's failover, for
every feature), ``lifecycle`` (the topic lifecycle's actions),
``state`` (the one World), ``variants`` (legacy, kip516, release lines, mutants as data),
``control`` (controller and admin requests), ``expansion`` (CreatePartitions),
``brokers`` (broker-side handling, crash/restart: a broker deletes a removed topic's
replica on StopReplica; the delivery of every controller request, KIP-253's too),
``coordinator`` (the group coordinator's reaction to them), ``datapath`` (replication,
producer, consumer),
``views`` + ``properties`` (the invariants, declared once as formulas), ``pictures``
(trace text and sequence-picture lanes), ``symmetry`` (broker renaming), ``scenarios``.
See docs/model-topic-lifecycle.md.
"""
from kmc.model.kafka.zk.scenarios import SCENARIOS  # noqa: F401
