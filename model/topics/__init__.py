"""The topic-lifecycle model (KIP-516 topic IDs, KIP-4 admin operations).

Modules: ``state`` (types), ``variants`` (legacy, kip516, mutants as data), ``control``
(controller and admin requests), ``brokers`` (broker-side handling, crash/restart),
``datapath`` (replication, producer, consumer), ``model`` (the composed TopicsModel),
``views`` + ``properties`` (the invariants, declared once as formulas), ``pictures``
(trace text and sequence-picture lanes), ``symmetry`` (broker renaming), ``scenarios``.
See docs/model-topic-lifecycle.md.
"""
from kmc.model.topics.scenarios import SCENARIOS  # noqa: F401
