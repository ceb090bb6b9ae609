"""kmc: the Kafka topic-lifecycle model checker.

The public API::

    from kmc import Model, always, sometimes, quiescent, eventually, leads_to, check

    class Counter(Model): ...          # init_states, actions, next_state, properties
    result = check(Counter(), explorer="bfs")
    result.assert_properties()

``check`` also takes a scenario reference (``"stale-read"``, ``"models.py:factory"``);
docs/tutorial.md writes a model end to end.
"""
from __future__ import annotations

import importlib

# name -> the module that defines it, imported on first use: `import kmc.cli` (the
# command) stays a few milliseconds, so a Ctrl-C at start-up lands in kmc's own handler
_API = {
    "UsageError": "kmc.errors",
    "Property": "kmc.invariants.properties", "always": "kmc.invariants.properties",
    "quiescent": "kmc.invariants.properties", "sometimes": "kmc.invariants.properties",
    "eventually": "kmc.invariants.liveness", "leads_to": "kmc.invariants.liveness",
    "Model": "kmc.model.contract", "ModelError": "kmc.model.contract",
    "CheckResult": "kmc.model.result",
    "Param": "kmc.model.scenario", "Scenario": "kmc.model.scenario",
    "build": "kmc.api", "check": "kmc.api",
}

__all__ = ["Model", "ModelError", "Property", "always", "sometimes", "quiescent",
           "eventually", "leads_to", "check", "build", "CheckResult", "Scenario", "Param",
           "UsageError"]


def __getattr__(name: str):
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'kmc' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
