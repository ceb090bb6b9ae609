"""Properties are values (as in Stateright): a kind, a name and a predicate over a state.

- ``always(name, fn)``: ``fn`` must hold in every reachable state; a state where it is
  false is a counterexample.
- ``quiescent(name, fn)``: ``fn`` must hold in every reachable state where no non-fault
  action is enabled (the system has settled) — a sound, bounded stand-in for "eventually".
- ``sometimes(name, fn)``: some reachable state must satisfy ``fn``; the state found is a
  witness. A missing witness means the scenario is vacuous, and the verdict fails.

``explain(state)``, when given, returns the offending tuple shown in counterexamples
(the z3 layer fills it with z3's model).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

ALWAYS = "always"
QUIESCENT = "quiescent"
SOMETIMES = "sometimes"
KINDS = (ALWAYS, QUIESCENT, SOMETIMES)


@dataclass(frozen=True)
class Property:
    kind: str
    name: str
    check: Callable[[Any], bool]
    explain: Optional[Callable[[Any], Any]] = field(default=None, compare=False)
    description: str = ""
    #: when declared through ``invariants.declare``: the formula and the state -> view
    #: function, from which both deciders (fast and z3) are derived
    formula: Any = field(default=None, compare=False)
    view: Optional[Callable[[Any], dict]] = field(default=None, compare=False)
    #: turns the offending tuple (``explain``'s dict of the formula's variables) into a
    #: sentence in the protocol's terms, e.g. "broker-2, believing it reads incarnation 2
    #: of the topic, received a record of incarnation 1"
    sentence: Optional[Callable[[dict], str]] = field(default=None, compare=False)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"property kind {self.kind!r} is unknown: use one of {KINDS}")
        if not self.name or not isinstance(self.name, str):
            raise ValueError("a property needs a non-empty string name")
        if not callable(self.check):
            raise ValueError(f"property {self.name!r}: check must be callable(state) -> bool")

    def explain_sentence(self, detail) -> Optional[str]:
        """The violation in words, from an offending tuple; None when the property has
        no sentence or the tuple does not fit it."""
        if self.sentence is None or not isinstance(detail, dict):
            return None
        try:
            return self.sentence(detail)
        except (KeyError, TypeError, ValueError):
            return None


def always(name: str, check, explain=None, description: str = "") -> Property:
    return Property(ALWAYS, name, check, explain, description)


def quiescent(name: str, check, explain=None, description: str = "") -> Property:
    return Property(QUIESCENT, name, check, explain, description)


def sometimes(name: str, check, explain=None, description: str = "") -> Property:
    return Property(SOMETIMES, name, check, explain, description)


#: name of the built-in property reported when --deadlock is on and a state has no
#: enabled action at all
DEADLOCK = "Deadlock"
