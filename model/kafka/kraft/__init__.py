"""The topic lifecycle on KRaft's control plane (KIP-500, KIP-595, KIP-631; KIP-516
"Compatibility with KIP-500"), beside the ZooKeeper-era model in model/topics.

Components, one module each: ``records`` (metadata records), ``quorum`` (the controller
quorum and its metadata log), ``controller`` (the active controller's records),
``admin`` (CreateTopics, DeleteTopics), ``heartbeat`` (registration, fencing,
unfencing), ``image`` (metadata images and deltas), ``publisher`` (brokers following
the log), ``replicas`` (ReplicaManager.applyDelta), ``logmanager`` (logs on disk, stray
detection), ``startup`` (broker restart, step by step), ``clients`` (fetches and
Metadata requests), ``state``, ``variants``, ``views`` + ``properties``, ``model``,
``scenarios``. See docs/model-kraft.md.
"""
from kmc.model.kafka.kraft.scenarios import SCENARIOS  # noqa: F401
