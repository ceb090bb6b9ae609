"""Build Properties from formula declarations: the one place an invariant is written.

    prop = declare("always", "NoStaleRead", NO_STALE_READ, view=topic_view)

The Property's ``check`` is the compiled fast evaluator; ``formula`` and ``view`` stay on
the Property so z3 mode (``invariants.z3mode``) derives its decider from the same AST.
"""
from __future__ import annotations

from kmc.invariants.compile import compile_counterexample, compile_python
from kmc.invariants.properties import Property


def declare(kind: str, name: str, formula, view, description: str = "",
            sentence=None) -> Property:
    fast = compile_python(formula)
    find = compile_counterexample(formula)

    def check(state, _fast=fast, _view=view):
        return _fast(_view(state))

    def explain(state, _find=find, _view=view):
        return _find(_view(state))

    return Property(kind, name, check, explain, description or repr(formula),
                    formula=formula, view=view, sentence=sentence)
