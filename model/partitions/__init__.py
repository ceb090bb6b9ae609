"""KIP-253: partition expansion and deletion with in-order keyed delivery.

See docs/model-partition-changes.md for the model, its simplifications and its figures.
"""
from kmc.model.partitions.scenarios import SCENARIOS  # noqa: F401
