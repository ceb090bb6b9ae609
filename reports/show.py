"""`kmc show`: a trace document as text, step by step, showing only what changed.

    3  rm1  RMRcvCommitMsg(r=1)                               <- TCConsistent violated
         rmState[1]: "working" -> "committed"

Nested values are diffed down to their leaves (``brokers[1].hosted[0].leader_epoch: 2 -> 3``);
collections that grow or shrink show the elements added (+) and removed (-).

Values print as JSON with their own characters (``"é"``, not ``"\\u00e9"``). Every string
comes from the trace file, which anyone may have written: a character that is not
printable (a line break, an escape sequence, a bidi override) is printed as its escape, so
the text is one line per item and a file cannot drive the terminal or forge lines.
"""
from __future__ import annotations

import json

from kmc.model.trace import state_changes
from kmc.reports.inputs import printable  # noqa: F401  (its callers import it here)
from kmc.reports.tracefile import describe, loop_words, verdict_word


def render(doc: dict, *, full: bool = False, width: int = 100) -> str:
    """The whole trace; ``full`` also prints every state in full."""
    steps = doc["steps"]
    last = len(steps) - 1
    prop, kind = doc.get("property"), doc.get("kind", "always")
    lines = [f"{describe(doc)}",
             f"{prop} ({kind}) {verdict_word(doc)} at step {last} "
             f"({_n(len(steps), 'state')}, {_n(last, 'action')})", ""]
    actor_w = max([len(st.get("actor") or "") for st in steps] + [4])
    prev = None
    for st in steps:
        i = st.get("index", steps.index(st))
        if i == 0:
            lines.append(f"{0:>4}  {'':<{actor_w}}  initial state"
                         + ("   <- the loop starts here" if doc.get("loop_start") == 0
                            and last else ""))
            body = [f"{p} = {_v(v, width)}" for p, v in flatten(st["state"])]
        else:
            head = f"{i:>4}  {st.get('actor') or '':<{actor_w}}  {st.get('action')}"
            kind = st.get("kind") or ("fault" if st.get("fault") else "step")
            if kind != "step":
                head += f"   [{kind}]"
            if i == last:
                head += f"   <- {prop} {verdict_word(doc)}"
                if doc.get("loop_start") is not None:
                    head += f": the behaviour {loop_words(doc)}"
            elif i == doc.get("loop_start"):
                head += "   <- the loop starts here"
            lines.append(head)
            msg = st.get("message")
            body = []
            if msg:
                body.append(f"message {msg['from']} -> {msg['to']}: {msg['label']}")
            changes = st.get("changed")
            if changes is None:  # version 1 files: compute them
                changes = state_changes(prev, st["state"])
            body += change_lines(changes, width) or ["(no field changed)"]
            if full:
                body += ["state:"] + [f"  {p} = {_v(v, width)}" for p, v in
                                      flatten(st["state"])]
        lines += [f"{'':>6}{'':<{actor_w}}  {b}" for b in body]
        prev = st["state"]
    if doc.get("loop_start") is not None:
        lines += ["", f"lasso: the behaviour {loop_words(doc)}"]
    if doc.get("loop_start") is not None and doc.get("explanation"):
        lines += ["", f"why: {doc['explanation']}"]
    elif doc.get("detail") is not None:
        by = " (from z3's model)" if doc.get("decided_by") == "z3" else ""
        lines += ["", f"offending{by}: {_v(doc['detail'], width * 2)}"]
    return "\n".join(printable(line) for line in lines)




def change_lines(changes: list, width: int = 100) -> list[str]:
    out = []
    for c in changes:
        path = c["path"] or "state"
        if "added" in c:
            out += [f"{path}: + {_v(x, width)}" for x in c["added"]]
            out += [f"{path}: - {_v(x, width)}" for x in c["removed"]]
        elif c["old"] is None or c["new"] is None:  # created or removed: show it whole
            out.append(f"{path}: {_v(c['old'], width)} -> {_v(c['new'], width)}")
        else:
            out.append(f"{path}: {_v(c['old'], width // 2)} -> {_v(c['new'], width // 2)}")
    return out


def flatten(value, path: str = ""):
    """(path, leaf) pairs; lists of plain values stay whole (they read best inline)."""
    if isinstance(value, dict) and value:
        for k, v in value.items():
            yield from flatten(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list) and value and any(isinstance(v, (dict, list)) for v in value):
        for i, v in enumerate(value):
            yield from flatten(v, f"{path}[{i}]")
    else:
        yield path or "state", value


def _v(value, width: int) -> str:
    text = json.dumps(value, default=str, separators=(", ", ": "), ensure_ascii=False)
    return text if len(text) <= width else text[: max(8, width - 3)] + "..."


def _n(k: int, noun: str) -> str:
    return f"{k} {noun}{'' if k == 1 else 's'}"
