"""KIP-253: partition expansion and deletion with in-order keyed delivery, the procedure
KIP-253 proposes for the ZooKeeper-era controller (one broker; the topic lifecycle of the
same plane is model/kafka/zk).

See docs/model-partition-changes.md for the model, its simplifications and its figures.
"""
from kmc.model.kafka.kip253.scenarios import SCENARIOS  # noqa: F401
