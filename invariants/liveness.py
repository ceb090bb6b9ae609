"""Liveness properties: ``eventually`` and ``leads_to``, checked on fair behaviours.

- ``eventually(name, P)``: every fair behaviour from an initial state reaches a P state.
- ``leads_to(name, P, Q)`` (P ~> Q): in every fair behaviour, each P state is followed
  (in it or later) by a Q state.

``P`` and ``Q`` are state predicates: a callable ``state -> bool``, or a formula of
``invariants.logic`` with ``view=`` (the model's view function), declared once as the
invariants are: fast mode compiles each formula, z3 mode decides each with z3.

A violation is a **lasso**: a finite stem from an initial state, then a loop that repeats
forever and satisfies the model's fairness (``Model.weakly_fair``/``strongly_fair``); a
behaviour that reaches a state where no fair action is enabled may stop there, and its
lasso's loop is that one state. The local explorers (bfs, dfs) decide liveness on the
state graph they explored (``explorers.liveness``).

A ``LivenessProperty`` is a ``Property`` whose ``check`` is the awaited predicate (``P``
of eventually, ``Q`` of leads_to) and whose ``trigger`` is ``P`` of leads_to (None for
eventually: the initial states trigger it). The safety engines skip these kinds.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional

from kmc.invariants.properties import ALWAYS, Property

EVENTUALLY = "eventually"
LEADS_TO = "leads_to"
LIVENESS_KINDS = (EVENTUALLY, LEADS_TO)


@dataclass(frozen=True)
class LivenessProperty(Property):
    #: the awaited predicate as a Property value (kind always: a carrier of its check,
    #: formula and view, so z3 mode can decide it)
    target: Optional[Property] = field(default=None, compare=False)
    #: leads_to's P (None for eventually)
    trigger: Optional[Property] = field(default=None, compare=False)

    def __post_init__(self):
        if self.kind not in LIVENESS_KINDS:
            raise ValueError(f"liveness property kind {self.kind!r} is unknown: use one of "
                             f"{LIVENESS_KINDS}")
        if not self.name or not isinstance(self.name, str):
            raise ValueError("a property needs a non-empty string name")
        if self.target is None or (self.kind == LEADS_TO) != (self.trigger is not None):
            raise ValueError(f"property {self.name!r}: build it with eventually() or "
                             "leads_to()")

    def triggered(self, state) -> bool:
        """True where the property starts waiting (P of leads_to; eventually: always,
        the explorer applies it to the initial states only)."""
        return True if self.trigger is None else self.trigger.check(state)

    def awaited(self, state) -> bool:
        return self.target.check(state)

    def map_parts(self, fn) -> "LivenessProperty":
        """The same property with each state predicate (a Property) replaced by
        ``fn(part)``: how z3 mode swaps in its deciders."""
        target = fn(self.target)
        trigger = None if self.trigger is None else fn(self.trigger)
        return replace(self, check=target.check, explain=None, target=target,
                       trigger=trigger)


def _part(owner: str, role: str, pred, view) -> Property:
    """A state predicate as a Property value (a formula compiled like an invariant)."""
    name = owner if role == "awaited" else f"{owner}[{role}]"
    if callable(pred) and view is None:
        return Property(ALWAYS, name, pred)
    if view is None:
        raise ValueError(f"property {owner!r}: a formula needs view= (the model's view "
                         "function)")
    from kmc.invariants.declare import declare
    return declare(ALWAYS, name, pred, view)


def eventually(name: str, target, *, view=None, description: str = "",
               sentence=None) -> LivenessProperty:
    """Every fair behaviour from an initial state reaches a ``target`` state."""
    t = _part(name, "awaited", target, view)
    return LivenessProperty(EVENTUALLY, name, t.check, None, description or
                            _describe(t, "eventually"), formula=t.formula, view=view,
                            sentence=sentence or lasso_sentence, target=t)


def leads_to(name: str, trigger, target, *, view=None, description: str = "",
             sentence=None) -> LivenessProperty:
    """Every fair behaviour that reaches a ``trigger`` state reaches a ``target`` state
    then or later (trigger ~> target)."""
    p, q = _part(name, "trigger", trigger, view), _part(name, "awaited", target, view)
    if not description and p.formula is not None and q.formula is not None:
        description = f"{p.formula!r} ~> {q.formula!r}"
    return LivenessProperty(LEADS_TO, name, q.check, None, description,
                            formula=q.formula, view=view, sentence=sentence or
                            lasso_sentence, target=q, trigger=p)


def lasso_sentence(d: dict) -> str:
    """A lasso in words, from the explorer's detail (entered_at, loop_start, loop_end,
    loop, fair_taken, fair_enabled)."""
    start = f"from step {d['entered_at']} on, the awaited state never comes: "
    if d["loop"] == "stutter":
        enabled = d.get("fair_enabled") or []
        return start + (f"the behaviour stops at step {d['loop_start']}, where no fair "
                        "action is enabled" + (f" (enabled: {', '.join(enabled)})"
                                               if enabled else ""))
    taken = ", ".join(d.get("fair_taken") or []) or "none"
    return start + (f"steps {d['loop_start']} to {d['loop_end']} repeat forever, a fair "
                    f"loop (fair actions taken in it: {taken})")


def _describe(part: Property, word: str) -> str:
    return f"{word} {part.formula!r}" if part.formula is not None else ""


def is_liveness(p: Any) -> bool:
    return getattr(p, "kind", None) in LIVENESS_KINDS


def split(props) -> tuple[list, list]:
    """(safety properties, liveness properties), each in declaration order."""
    props = list(props)
    return [p for p in props if not is_liveness(p)], [p for p in props if is_liveness(p)]
