"""A counterexample as a short runnable Python program (as Hypothesis prints failures):
it rebuilds the model through the public API, takes each recorded action by index,
checks that the index still names the recorded action, and asserts the verdict."""
from __future__ import annotations

import os

from kmc.invariants.properties import DEADLOCK
from kmc.reports.tracefile import describe


def python_snippet(doc: dict) -> str:
    prop, kind = doc["property"], doc.get("kind", "always")
    steps = doc["steps"]
    rows = []
    for st, ai in zip(steps[1:], doc["action_indices"]):
        who = f", {st['actor']}" if st.get("actor") else ""
        who = " ".join(who.split())
        rows.append(f"    ({ai}, {st.get('action')!r}),  # step {st['index']}{who}")
    if prop == DEADLOCK:
        verdict = ["assert not model.successors(state), \"an action is enabled: the model "
                   "changed\""]
    else:
        want = "" if kind == "sometimes" else "not "
        holds = "does not hold" if kind == "sometimes" else "holds"
        verdict = [f"prop = next(p for p in model.properties() if p.name == {prop!r})",
                   f"assert {want}prop.check(state), "
                   f"{prop + ' ' + holds + ' here: the model changed'!r}"]
    what = "witness for" if kind == "sometimes" else "counterexample to"
    # every value taken from the trace file enters the program as a repr() or a comment
    # without line breaks: a crafted file cannot inject code into it
    title = " ".join(f"Rebuilds the {what} {prop} in {describe(doc)}.".split())
    lines = [
        f"# {title}",
        "# Needs kmc importable: pip install kmc, or pip install -e . in a checkout.",
        "from kmc.api import build",
        "",
        f"model = build({_ref(doc['scenario'])!r}, {doc['variant']!r}, "
        f"{dict(doc['params'])!r})",
        f"state = model.init_states()[{doc['init_index']}]",
        "for index, expected in [",
        *rows,
        "]:",
        "    action = list(model.actions(state))[index]",
        "    assert model.format_action(action) == expected, "
        "(model.format_action(action), expected)",
        "    state = model.next_state(state, action)",
        "",
        "print(model.format_state(state))",
        *verdict,
        "",
    ]
    return "\n".join(lines)


def _ref(scenario: str) -> str:
    """A user model's file (``FILE.py:factory``) found from here as an absolute path, so
    that the program runs from any directory."""
    target, sep, attr = scenario.rpartition(":")
    if sep and target.endswith(".py") and not os.path.isabs(target) and \
            os.path.isfile(target):
        return f"{os.path.abspath(target)}:{attr}"
    return scenario
