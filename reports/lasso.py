"""Judging a replayed lasso: does it still violate its liveness property, fairly?

A lasso (model/lasso.py) violates ``eventually(P)`` when P holds in none of its states,
and ``leads_to(P, Q)`` when some state satisfies P and Q holds neither there nor later
(the loop included). The loop must be a behaviour the model's fairness allows: it closes
(its last state is the state at ``loop_start``, up to symmetry for a model that has it),
every weakly fair class enabled in all of its states is taken in it, every strongly fair
class enabled in any of them is taken in it; a loop of one state without a step (a stop)
has no fair action enabled.
"""
from __future__ import annotations

from kmc.model.encoding import fingerprint
from kmc.model.fairness import FairnessClasses


def judge_lasso(model, prop, trace, loop_start) -> tuple[bool, int, str]:
    """(violated, step, words): ``step`` is the loop's first step when violated, else
    the step the judgement failed at."""
    states, last = trace.states, len(trace.states) - 1
    if not isinstance(loop_start, int) or not 0 <= loop_start <= last:
        return False, last, "the trace has no loop"
    key = (lambda s: fingerprint(model.representative(s))) if model.has_symmetry \
        else fingerprint
    if loop_start < last and key(states[last]) != key(states[loop_start]):
        return False, last, (f"the loop does not close: step {last} is not the state of "
                             f"step {loop_start}")
    awaited = [prop.awaited(s) for s in states]
    if prop.kind == "eventually":
        if any(awaited):
            k = awaited.index(True)
            return False, k, f"the awaited state is reached at step {k}"
    else:
        quiet_from = last + 1  # Q false at every step from here on
        while quiet_from > 0 and not awaited[quiet_from - 1]:
            quiet_from -= 1
        if quiet_from > loop_start:
            return False, last, "the awaited state is reached inside the loop"
        if not any(prop.triggered(s) for s in states[quiet_from:]):
            return False, last, "no step without the awaited state satisfies the trigger"
    fair = FairnessClasses(model)
    if loop_start == last:
        left = fair.enabled_mask(a for a, _t in model.successors(states[last]))
        if left:
            return False, last, (f"the behaviour cannot stop at step {last}: fair "
                                 f"{', '.join(fair.describe(left))} is enabled there")
        return True, loop_start, f"stops at step {last} forever"
    enabled = [fair.enabled_mask(a for a, _t in model.successors(s))
               for s in states[loop_start:last]]
    taken = fair.enabled_mask(trace.actions[loop_start:last])
    en_all, en_any = -1, 0
    for m in enabled:
        en_all &= m
        en_any |= m
    unfair = (en_all & fair.weak_mask | en_any & fair.strong_mask) & ~taken
    if unfair:
        return False, last, (f"the loop from step {loop_start} is not fair: "
                             f"{', '.join(fair.describe(unfair))} is enabled and never "
                             "taken in it")
    return True, loop_start, f"repeats from step {loop_start} forever"
