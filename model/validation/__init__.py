"""Validation models with published state counts (TLC, Spin, Stateright agree on them).

They pin the engine's correctness: if a count drifts, the engine is wrong, not the model.
"""
from kmc.model.validation.scenarios import SCENARIOS  # noqa: F401
