"""Replay a trace document against the current model and say what happened.

The outcome is either "reproduced: P violated at step k" or the first step that diverges
and why: the model changed (initial state or property gone), the recorded action is no
longer enabled (or its index now names another action), or the action leads to a
different successor (the fields that differ are listed).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kmc.invariants.properties import ALWAYS, DEADLOCK, QUIESCENT, SOMETIMES
from kmc.model.trace import Trace, state_changes, state_key

REPRODUCED = "reproduced"
MODEL_CHANGED = "model changed"
NOT_ENABLED = "action no longer enabled"
OTHER_ACTION = "action index names another action"
OTHER_SUCCESSOR = "different successor"
PROPERTY_HOLDS = "property no longer violated"


@dataclass
class ReplayOutcome:
    reproduced: bool
    step: int  # the violating (or witness) step, else the first diverging step
    reason: str  # REPRODUCED or one of the divergence reasons above
    message: str
    trace: Trace | None = None
    differences: list = field(default_factory=list)  # state_changes() at a divergence

    @property
    def exit_code(self) -> int:
        return 0 if self.reproduced else 1


def replay_document(model, doc: dict) -> ReplayOutcome:
    """Re-execute ``doc`` (a validated trace document) step by step on ``model``."""
    steps = doc["steps"]
    inits = list(model.init_states())
    idx = doc["init_index"]
    if idx >= len(inits):
        return _diverged(0, MODEL_CHANGED, f"initial state #{idx} does not exist (the model "
                         f"has {len(inits)}): the model or its parameters changed")
    s = inits[idx]
    diff = _state_differs(model, s, steps[0])
    if diff is not None:
        return _diverged(0, MODEL_CHANGED, "the initial state differs from the recorded one "
                         f"({_fields(diff)}): the model or its parameters changed", diff)
    t = Trace(idx, [], [s], [])
    for k, ai in enumerate(doc["action_indices"], start=1):
        rec = steps[k]
        label = rec.get("action")
        acts = list(model.actions(s))
        labels = [model.format_action(a) for a in acts]
        where = _elsewhere(labels, label)
        if ai >= len(acts):
            return _diverged(k, NOT_ENABLED, f"{label or f'action #{ai}'} is not enabled: "
                             f"only {len(acts)} actions are{where}", trace=t)
        a = acts[ai]
        if label is not None and labels[ai] != label:
            return _diverged(k, OTHER_ACTION, f"action #{ai} is now {labels[ai]}, the trace "
                             f"recorded {label}{where}: actions() changed", trace=t)
        nxt = model.next_state(s, a)
        if nxt is None:
            return _diverged(k, NOT_ENABLED, f"{labels[ai]} no longer has an effect: "
                             "next_state() returns None", trace=t)
        if not model.within_boundary(nxt):  # the explorers drop such a state
            return _diverged(k, MODEL_CHANGED, f"{labels[ai]} now leads out of the model's "
                             "boundary (within_boundary() is False there)", trace=t)
        diff = _state_differs(model, nxt, rec)
        if diff is not None:
            why = "next_state() changed"
            if rec.get("fingerprint") == state_key(nxt):  # the state is the recorded one
                why = ("the fingerprint is the recorded one, so the file's state was "
                       "edited or the model's state_to_json() changed")
            return _diverged(k, OTHER_SUCCESSOR, f"{labels[ai]} now leads to a different "
                             f"state ({_fields(diff)}): {why}", diff, t)
        t.action_indices.append(ai)
        t.actions.append(a)
        t.states.append(nxt)
        s = nxt
    return _judge(model, doc, t)


def _judge(model, doc, t: Trace) -> ReplayOutcome:
    name, last = doc["property"], len(t.states) - 1
    if name == DEADLOCK:
        if not _inside(model, t.last):
            return _reproduced(t, last, f"reproduced: {name} at step {last} (no action "
                                        "is enabled)")
        return _diverged(last, PROPERTY_HOLDS, "the last state is no longer a deadlock: "
                         "some action is enabled there now", trace=t)
    prop = next((p for p in model.properties() if p.name == name), None)
    if prop is None:
        names = ", ".join(p.name for p in model.properties()) or "none"
        return _diverged(last, MODEL_CHANGED, f"the model has no property {name!r} any more "
                         f"(it has {names})", trace=t)
    if doc.get("kind") not in (None, prop.kind):
        return _diverged(last, MODEL_CHANGED, f"the trace holds {name} as a "
                         f"{doc['kind']} property, the model's is {prop.kind}: the "
                         "property or the file changed", trace=t)
    if prop.kind in ("eventually", "leads_to"):
        from kmc.reports.lasso import judge_lasso
        ok, k, words = judge_lasso(model, prop, t, doc.get("loop_start"))
        if ok:
            return _reproduced(t, k, f"reproduced: {name} violated: the behaviour {words}")
        return _diverged(k, PROPERTY_HOLDS, f"every step replays, but the lasso no longer "
                         f"violates {name}: {words}", trace=t)
    for k, s in enumerate(t.states):
        if prop.kind == ALWAYS and not prop.check(s):
            return _reproduced(t, k, f"reproduced: {name} violated at step {k}")
        if prop.kind == SOMETIMES and prop.check(s):
            return _reproduced(t, k, f"reproduced: witness for {name} found at step {k}")
        if prop.kind == QUIESCENT and _quiescent(model, s) and not prop.check(s):
            return _reproduced(t, k, f"reproduced: {name} violated at step {k} "
                                     "(a quiescent state)")
    what = "is never satisfied" if prop.kind == SOMETIMES else "holds at every step"
    return _diverged(last, PROPERTY_HOLDS, f"every step replays, but {name} {what}: the "
                     "property or the model changed", trace=t)


def _inside(model, s) -> list:
    """The successors the explorers see: those within the model's boundary."""
    return [(a, t) for a, t in model.successors(s) if model.within_boundary(t)]


def _quiescent(model, s) -> bool:
    return all(model.is_fault(a) for a, _t in _inside(model, s))


def _state_differs(model, state, rec: dict):
    """None when ``state`` is the recorded one, else the list of changed fields."""
    fp = rec.get("fingerprint")
    diff = state_changes(rec.get("state"), _plain(model.state_to_json(state)))
    if diff or fp is None or fp == state_key(state):
        return diff or None
    # same JSON view but another fingerprint: a change the view does not show
    return [{"path": "(fingerprint)", "old": fp, "new": state_key(state)}]


def _plain(js):
    import json
    return json.loads(json.dumps(js, default=str))  # tuples -> lists, as in the file


def _fields(diff, limit=3) -> str:
    parts = [f"{d['path'] or 'state'}: recorded {_short(d['old'])}, now {_short(d['new'])}"
             for d in diff[:limit]]
    more = f", and {len(diff) - limit} more" if len(diff) > limit else ""
    return "; ".join(parts) + more


def _short(v, width=40) -> str:
    import json
    text = json.dumps(v, default=str, separators=(",", ":"))
    return text if len(text) <= width else text[: width - 3] + "..."


def _elsewhere(labels, label) -> str:
    if label is not None and label in labels:
        return f" ({label} is enabled as #{labels.index(label)} now)"
    return ""


def _reproduced(t, k, message) -> ReplayOutcome:
    return ReplayOutcome(True, k, REPRODUCED, message, t)


def _diverged(k, reason, why, diff=None, trace=None) -> ReplayOutcome:
    return ReplayOutcome(False, k, reason, f"diverged at step {k}: {reason}: {why}",
                         trace, list(diff or []))
