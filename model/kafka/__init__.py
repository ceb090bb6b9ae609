"""The Kafka cluster models: the control planes side by side, and what they share.

- ``zk/``: the ZooKeeper-era control plane's topic lifecycle (KIP-516, CreatePartitions).
- ``kraft/``: the KRaft control plane (controller quorum, metadata log, broker images).
- ``kip253/``: KIP-253's partition split and merge, proposed for the ZooKeeper controller.
- ``planes``: ``-p plane=zk|kraft`` for the scenarios that run on both planes;
  ``lifecycle_properties``: the topic-lifecycle properties both planes share.

Every module is pure: functions take immutable values and return new ones, so states stay
canonical (``model.encoding``) and successors rebuild only what changes.

- ``canon``: sorted-tuple sets and maps, tuple index update (the canonical collections).
- ``network``: in-flight messages as a canonical multiset (unordered: reordering) or as
  FIFO channels per (src, dst); send, deliver, lose, drop.
- ``controller``: controller candidates, the controller epoch, failover/election, and the
  broker-side epoch fence.
- ``store``: metadata-store (ZooKeeper znode) record types and pure update helpers:
  topic znodes with topic IDs, partition state (replicas, leader, leader epoch, ISR), the
  legacy ``/admin/delete_topics`` markers, leader election.
- ``broker``: what a broker keeps on both planes, its logs on disk (``Log``: LogManager)
  and the partitions it hosts (``Hosted``: ReplicaManager); the ZooKeeper-era broker
  record; broker liveness (up / down / restarting) and helpers over a broker tuple.
- ``scenarios``: the lifecycle scenarios' shared parts (``-p`` parameters from bounds,
  the replication-factor check).
- ``symmetry``: canonical representative of a state under renaming of identities
  (brokers), for ``Model.representative``.

Conventions shared by the models: broker ids are 1..n; ``NO_LEADER`` is -1; topic ID 0 is
the KIP-516 ZERO (null) UUID, 1 the reserved sentinel, real IDs start at 2.
"""
