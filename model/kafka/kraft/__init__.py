"""The topic lifecycle on KRaft's control plane (KIP-500, KIP-595, KIP-631; KIP-516
"Compatibility with KIP-500"), beside the ZooKeeper-era model in model/kafka/zk.

Components, one module each: ``records`` (metadata records), ``quorum`` (the controller
quorum and its metadata log), ``controller`` (the active controller's records),
``admin`` (CreateTopics, DeleteTopics), ``heartbeat`` (registration, fencing,
unfencing), ``image`` (metadata images and deltas), ``publisher`` (brokers following
the log), ``replicas`` (ReplicaManager.applyDelta), ``logmanager`` (logs on disk, stray
detection), ``startup`` (broker restart, step by step), ``clients`` (fetches and
Metadata requests), ``state``, ``variants``, ``views`` + ``properties``, ``model``,
``scenarios`` (their ``-p`` parameters in ``params``). See docs/model-kraft.md.

``SCENARIOS`` is loaded on first use: one of them also runs on the ZooKeeper plane, whose
scenario module imports this package's parameters.
"""


def __getattr__(name):
    if name == "SCENARIOS":
        from kmc.model.kafka.kraft.scenarios import SCENARIOS
        return SCENARIOS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
