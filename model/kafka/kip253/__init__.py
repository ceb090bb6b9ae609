"""KIP-253: partition expansion and deletion with in-order keyed delivery, the procedure
KIP-253 proposes for the ZooKeeper-era controller, a feature of the ZooKeeper-era cluster
model (``procedure``; the cluster and the topic lifecycle are model/kafka/zk).

See docs/model-partition-changes.md for the model, its simplifications and its figures.
"""
from kmc.model.kafka.kip253.scenarios import SCENARIOS  # noqa: F401
