"""`kmc regress --update`: record what the models do now as the suite's expectations.

The suite text is edited in place, entry by entry: only the expectation keys (expect,
length, states, witnesses) are replaced, so comments, ordering and the run keys the
author wrote stay as they are. The result is parsed again and must read back exactly the
expectations that were recorded, or nothing is written.
"""
from __future__ import annotations

import json
import os
import re

from kmc.invariants.properties import DEADLOCK
from kmc.reports.regress.expect import Expectation
from kmc.reports.regress.stored import stage, trace_path
from kmc.reports.regress.suite import EXPECT_KEYS, LineMap, Suite, parse_suite

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'')
_KEY = re.compile(r"^\s*[\"']?([A-Za-z0-9_-]+)[\"']?\s*[=.]")


def changes(old: Expectation | None, new: Expectation) -> list[str]:
    """What recording ``new`` over ``old`` changes, one line per field."""
    if old is None:
        return [f"recorded: {new.describe()}, {new.states:,} states" if
                isinstance(new.states, int) else f"recorded: {new.describe()}"]
    out = []
    if old.violated != new.violated:
        out.append(f"expect: {old.describe()} -> {new.describe()}")
    if old.states != new.states:
        out.append(f"states: {_states(old.states)} -> {_states(new.states)}")
    if old.witnesses is not None and old.witnesses != new.witnesses:
        out.append(f"witnesses: {list(old.witnesses)} -> {list(new.witnesses)}")
    elif old.witnesses is None and new.witnesses:
        out.append(f"witnesses: now pinned {list(new.witnesses)}")
    if new.counts_reason != old.counts_reason and new.counts_reason is not None:
        out.append(f"counts_reason: {new.counts_reason}")
    return out


def drifted_counts(outcomes) -> list[str]:
    """The entries whose recorded state count a run changed, as "id: old -> new". A
    count is not a verdict: ``--update`` records such changes only when told why
    (``--accept-counts REASON``). Entries without a recorded count, and counts still
    inside a recorded range, are not drift."""
    from kmc.reports.regress.runner import ERROR

    out = []
    for o in outcomes:
        old = o.entry.expect
        if o.status == ERROR or o.got is None or old is None or old.states is None:
            continue
        new = o.got.expectation(old).states
        if new != old.states:
            out.append(f"{o.entry.id}: {_states(old.states)} -> {_states(new)}")
    return out


def reason_problem(update: bool, reason: str | None) -> str | None:
    """What is wrong with an ``--accept-counts`` REASON, if anything."""
    if reason is None:
        return None
    if not update:
        return "--accept-counts records changed state counts: use it with --update"
    if not reason.strip() or "\n" in reason or "\r" in reason:
        return ("--accept-counts needs a reason on one line, e.g. --accept-counts \"the "
                "producer now retries\"")
    return None


def drift_refusal(outcomes, reason: str | None) -> list[str]:
    """What ``--update`` prints instead of recording when counts changed and no reason
    was given (empty: go ahead)."""
    drift = drifted_counts(outcomes)
    if not drift or reason is not None:
        return []
    return [f"\nnot updated: {len(drift)} state count{'s' if len(drift) > 1 else ''} "
            "changed, and a changed count is not a verdict: say why with --accept-counts "
            "\"REASON\" (written next to each entry whose count changed), or find what "
            "changed them:"] + [f"  {line}" for line in drift]


def with_reason(new: Expectation, old: Expectation | None, reason: str | None) \
        -> Expectation:
    """``new`` with its ``counts_reason``: ``reason`` when the count changed, else the
    reason recorded before (it still explains the count)."""
    if old is not None and old.states is not None and new.states != old.states:
        new.counts_reason = reason
    elif old is not None:
        new.counts_reason = old.counts_reason
    return new


def documented_mismatch(note: str, obs) -> str | None:
    """Compare a run with the verdict its scenario documents for the variant (the
    ``expectations`` note `kmc list` shows, e.g. "violates P (why)" or "holds ...").
    --update records what the model does; this says when that is not what the model's
    authors meant, so a model bug is not silently baked into the suite."""
    if not note or obs.stopped_by not in ("", "all properties decided", "violation"):
        return None  # a bounded or sampled run proves no absence
    words = note.strip().split()
    violated = {p for p in obs.violated if p != DEADLOCK}
    if words[0].lower().rstrip(":,") == "holds" and violated:
        return (f"the scenario documents {note!r}, but the run violates "
                f"{', '.join(sorted(violated))}")
    if words[0].lower() == "violates" and len(words) > 1:
        prop = re.split(r"[^A-Za-z0-9_-]", words[1])[0]
        if prop and prop not in violated:
            return f"the scenario documents {note!r}, but {prop} is not violated"
    return None


def rewrite(suite: Suite, new: dict) -> str:
    """``suite.text`` with the expectations of the entries in ``new`` (index ->
    Expectation) replaced. Raises RuntimeError when the result does not read back."""
    lines = suite.text.splitlines(keepends=True)
    nl = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"  # the file's own
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += nl
    lm = LineMap(suite.text)
    # edit from the bottom up so the line numbers of earlier entries stay valid
    for i in sorted(new, reverse=True):
        start, end = lm.block(i)
        # the entry's own keys end at its first sub-table ([entry.params] and the like)
        own_end = next((n for n in range(start + 1, end) if lm.TABLE.match(lm.lines[n - 1])),
                       end)
        dropped, insert_after = set(), start
        for first, last, key in _statements(lm.lines, start + 1, own_end):
            if key in EXPECT_KEYS:
                dropped.update(range(first, last + 1))
            else:
                insert_after = last
        block = []
        for n in range(start, own_end):
            if n not in dropped:
                block.append(lines[n - 1])
            if n == insert_after:
                block += [line + nl for line in new[i].toml_lines()]
        lines[start - 1:own_end - 1] = block
    text = "".join(lines)
    _verify(text, suite, new)
    return text


def append_entries(text: str, skeletons: list[dict]) -> str:
    """Add entries without expectations (``--update`` then records them)."""
    out = text if text.endswith("\n") or not text else text + "\n"
    for sk in skeletons:
        out += "\n[[entry]]\n"
        for k, v in sk.items():
            out += f"{k} = {json.dumps(v)}\n"
    return out


def stage_traces(traces_dir: str, entry_id: str, docs: dict):
    """Stage the entry's counterexamples (``stored.stage``: nothing is in place until
    ``stored.commit``); returns the lines describing what changes, and the plan."""
    notes = []
    for p, doc in sorted(docs.items()):
        old = _load(trace_path(traces_dir, entry_id, p))
        if old is None:
            notes.append(f"stored counterexample for {p} recorded")
        elif (old.get("init_index"), old.get("action_indices")) != \
                (doc.get("init_index"), doc.get("action_indices")):
            notes.append(f"stored counterexample for {p} re-recorded (the steps changed)")
        elif old.get("steps") != doc.get("steps"):
            notes.append(f"stored counterexample for {p} re-recorded (the recorded states "
                         "changed)")
    plan = stage(traces_dir, entry_id, docs)
    notes += [f"stored counterexample {os.path.relpath(r)} removed (no longer expected)"
              for r in plan.removes]
    return notes, plan


def _statements(lines, start: int, end: int):
    """(first line, last line, key) of each key = value statement in [start, end);
    a multi-line array continues until its brackets balance."""
    n = start
    while n < end:
        t = lines[n - 1]
        if not _STRING.sub("", t).split("#", 1)[0].strip():
            n += 1  # blank or comment
            continue
        m = _KEY.match(t)
        first, depth = n, _depth(t)
        while depth > 0 and n + 1 < end:
            n += 1
            depth += _depth(lines[n - 1])
        yield first, n, (m.group(1) if m else None)
        n += 1


def _depth(line: str) -> int:
    s = _STRING.sub("", line).split("#", 1)[0]
    return s.count("[") + s.count("{") - s.count("]") - s.count("}")


def _verify(text: str, suite: Suite, new: dict) -> None:
    again = parse_suite(text, suite.path)
    ids = [e.id for e in suite.entries]
    if [e.id for e in again.entries] != ids or any(
            again.entries[i].expect != exp for i, exp in new.items()):
        raise RuntimeError("internal error: the rewritten suite does not read back the "
                           "recorded expectations; nothing was written")


def _states(v) -> str:
    if isinstance(v, tuple):
        return f"{v[0]:,}..{v[1]:,}"
    return "unpinned" if v is None else f"{v:,}"


def _load(path: str):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
