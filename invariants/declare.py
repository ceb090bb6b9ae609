"""Build Properties from formula declarations: the one place an invariant is written.

    prop = declare("always", "NoStaleRead", NO_STALE_READ, view=topic_view)

The Property's ``check`` is the compiled fast evaluator; ``formula`` and ``view`` stay on
the Property so z3 mode (``invariants.z3mode``) derives its decider from the same AST.
``check.declared`` (the compiled function over a view, the view, the relations the
formula reads, whether it ranges over the active domain) lets ``invariants.fused``
check many declared properties on one view, and memoise their verdicts.
"""
from __future__ import annotations

from typing import NamedTuple

from kmc.invariants.compile import compile_counterexample, compile_python
from kmc.invariants.logic import relations_of
from kmc.invariants.properties import Property


class Declared(NamedTuple):
    fast: object         # view -> bool
    view: object         # state -> view
    relations: frozenset  # relation names the formula reads
    uses_domain: bool    # some variable ranges over the view's active domain


def declare(kind: str, name: str, formula, view, description: str = "",
            sentence=None) -> Property:
    fast = compile_python(formula)
    find = compile_counterexample(formula)

    def check(state, _fast=fast, _view=view):
        return _fast(_view(state))
    check.declared = Declared(fast, view, frozenset(relations_of(formula)),
                              fast.uses_domain)

    def explain(state, _find=find, _view=view):
        return _find(_view(state))

    return Property(kind, name, check, explain, description or repr(formula),
                    formula=formula, view=view, sentence=sentence)
