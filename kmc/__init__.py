"""kmc: the Kafka topic-lifecycle model checker.

The public API::

    from kmc import Model, always, sometimes, quiescent, eventually, leads_to, check

    class Counter(Model): ...          # init_states, actions, next_state, properties
    result = check(Counter(), explorer="bfs")
    result.assert_properties()

``check`` also takes a scenario reference (``"stale-read"``, ``"models.py:factory"``);
docs/tutorial.md writes a model end to end.
"""
from kmc.errors import UsageError
from kmc.invariants.properties import Property, always, quiescent, sometimes
from kmc.invariants.liveness import eventually, leads_to
from kmc.model.contract import Model, ModelError
from kmc.model.result import CheckResult
from kmc.model.scenario import Param, Scenario
from kmc.api import build, check

__all__ = ["Model", "ModelError", "Property", "always", "sometimes", "quiescent",
           "eventually", "leads_to", "check", "build", "CheckResult", "Scenario", "Param",
           "UsageError"]
