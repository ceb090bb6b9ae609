"""Traces: an initial-state index plus action indices, replayed through the Model contract.

The action index at each step is the position of the action in ``model.actions(state)``;
storing indices (not states) keeps traces small and makes a replay an honest check that
the model still behaves as it did when the trace was found.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from kmc.model.encoding import fingerprint

TRACE_FORMAT = "kmc-trace"
TRACE_VERSION = 2


class ReplayError(RuntimeError):
    """A trace did not reproduce. The message names the step and the likely cause."""

    def __init__(self, message: str, step: int):
        super().__init__(message)
        self.step = step


@dataclass
class Trace:
    init_index: int
    action_indices: list[int]
    states: list[Any] = field(default_factory=list)
    actions: list[Any] = field(default_factory=list)

    def __len__(self) -> int:
        """Number of states, initial state included (TLC's convention)."""
        return len(self.states)

    @property
    def last(self):
        return self.states[-1]

    @classmethod
    def replay(cls, model, init_index: int, action_indices, expect_keys=None,
               key: Callable | None = None) -> "Trace":
        """Re-execute a trace. With ``expect_keys`` (one per state) and ``key``, every
        state is checked against what the explorer saw."""
        inits = list(model.init_states())
        if not 0 <= init_index < len(inits):
            raise ReplayError(f"initial state {init_index} does not exist (the model has "
                              f"{len(inits)}): the model or its parameters changed", 0)
        s = inits[init_index]
        t = cls(init_index, [], [s], [])
        _expect(expect_keys, key, 0, s)
        for step, ai in enumerate(action_indices, start=1):
            acts = list(model.actions(s))
            if not 0 <= ai < len(acts):
                raise ReplayError(f"step {step}: action #{ai} is not enabled (only "
                                  f"{len(acts)} actions are): the model changed, or its "
                                  "actions() is not deterministic", step)
            a = acts[ai]
            nxt = model.next_state(s, a)
            if nxt is None:
                raise ReplayError(f"step {step}: action {model.format_action(a)} no longer "
                                  "has an effect: the model changed", step)
            _expect(expect_keys, key, step, nxt, model, a)
            t.action_indices.append(ai)
            t.actions.append(a)
            t.states.append(nxt)
            s = nxt
        return t

    @classmethod
    def from_keys(cls, model, init_index: int, keys: list, key: Callable,
                  accept: Callable | None = None) -> "Trace":
        """Rebuild a path known only by state keys (fingerprints) by regenerating
        successors at each step, as TLC rebuilds its traces. ``accept(step, action,
        successor)``, when given, must also hold for the action taken at ``step``."""
        inits = list(model.init_states())
        t = cls(init_index, [], [inits[init_index]], [])
        t.follow_keys(model, keys, key, accept)
        return t

    def follow_keys(self, model, keys: list, key: Callable,
                    accept: Callable | None = None) -> None:
        """Extend the trace along ``keys``, the keys of its last state (``keys[0]``) and
        of the states to reach from it, as ``from_keys`` does (``accept``'s steps count
        from 1 at the first new state; a ReplayError's from the trace's start)."""
        s, at = self.states[-1], len(self.states) - 1
        for step, want in enumerate(keys[1:], start=1):
            for ai, a in enumerate(model.actions(s)):
                nxt = model.next_state(s, a)
                if nxt is None or (accept is not None and not accept(step, a, nxt)):
                    continue
                if key(nxt) == want:
                    self.action_indices.append(ai)
                    self.actions.append(a)
                    self.states.append(nxt)
                    s = nxt
                    break
            else:
                raise ReplayError(f"step {at + step}: no enabled action leads to the state "
                                  "the explorer recorded: the model's actions() or "
                                  "next_state() is not deterministic, or its symmetry is "
                                  "not one of its steps (--check-symmetry tells)", at + step)

    def to_dict(self, model, **meta) -> dict:
        """The trace as a versioned, JSON-ready document (docs/trace-format.md).

        ``init_index`` and ``action_indices`` are the lossless part (``from_dict`` replays
        them); each step also carries what a reader needs without the model: the action
        label, its actor and message, its kind (``step``, ``input`` or ``fault``; ``fault``
        is kept as a flag), the full state, its fingerprint and the fields that changed."""
        steps = []
        prev_json = None
        for i, s in enumerate(self.states):
            a = self.actions[i - 1] if i else None
            js = model.state_to_json(s)
            kind = None if a is None else model.action_kind(a)
            step = {"index": i,
                    "action_index": self.action_indices[i - 1] if i else None,
                    "action": None if a is None else model.format_action(a),
                    "actor": None if a is None else model.action_actor(a),
                    "message": None if a is None else _message(model, a, self.states[i - 1]),
                    "kind": kind,
                    "fault": kind == "fault",
                    "state": js,
                    "fingerprint": state_key(s),
                    "changed": [] if prev_json is None else state_changes(prev_json, js)}
            steps.append(step)
            prev_json = js
        return {"format": TRACE_FORMAT, "version": TRACE_VERSION, "model": model.name,
                **meta, "lanes": list(model.lanes()), "init_index": self.init_index,
                "action_indices": list(self.action_indices), "steps": steps}

    @classmethod
    def from_dict(cls, model, data: dict) -> "Trace":
        """Rebuild a trace from its document by replaying it against ``model``; every
        recorded fingerprint is checked (ReplayError names the first step that differs)."""
        keys = [st.get("fingerprint") for st in data.get("steps", ())]
        expect = keys if keys and all(isinstance(k, str) for k in keys) else None
        return cls.replay(model, data["init_index"], data["action_indices"],
                          expect_keys=expect, key=state_key)


def state_key(state) -> str:
    """A state's fingerprint as 16 hex digits: stable across processes and machines."""
    return f"{fingerprint(state):016x}"


def state_changes(old, new, path: str = "") -> list[dict]:
    """The leaves that differ between two JSON views of a state, nested values diffed:
    ``[{"path": "brokers[1].epoch", "old": 3, "new": 4}, ...]``. Lists of different
    lengths (sorted-tuple collections) are reported as the elements added and removed."""
    if old == new and _same_types(old, new):
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in list(new) + [k for k in old if k not in new]:
            sub = f"{path}.{k}" if path else str(k)
            if k not in old:
                out.append({"path": sub, "old": None, "new": new[k]})
            elif k not in new:
                out.append({"path": sub, "old": old[k], "new": None})
            else:
                out.extend(state_changes(old[k], new[k], sub))
        return out
    if isinstance(old, list) and isinstance(new, list):
        if len(old) == len(new):
            out = []
            for i, (a, b) in enumerate(zip(old, new)):
                out.extend(state_changes(a, b, f"{path}[{i}]"))
            return out
        removed, added = _multiset_minus(old, new), _multiset_minus(new, old)
        return [{"path": path, "old": old, "new": new, "added": added, "removed": removed}]
    return [{"path": path, "old": old, "new": new}]


def _same_types(old, new) -> bool:
    """Whether two equal JSON values are also written alike: Python finds ``true == 1 ==
    1.0``, but a state whose field was an int is not the state whose field is a bool."""
    if isinstance(old, (dict, list)):  # str: as the trace file writes other values
        return json.dumps(old, default=str) == json.dumps(new, default=str)
    return type(old) is type(new)


def _multiset_minus(a: list, b: list) -> list:
    rest = list(b)
    out = []
    for x in a:
        if x in rest:
            rest.remove(x)
        else:
            out.append(x)
    return out


def _message(model, action, state):
    m = model.action_message(action, state)
    if m is None:
        return None
    src, dst, label = m
    return {"from": str(src), "to": str(dst), "label": str(label)}


def _expect(expect_keys, key, step, state, model=None, action=None):
    if not expect_keys:
        return
    got = key(state)
    if got != expect_keys[step]:
        what = "" if action is None else f" after {model.format_action(action)}"
        raise ReplayError(f"step {step}: the successor{what} differs from the recorded one "
                          "(fingerprint mismatch): the model's next_state() is not "
                          "deterministic, or the model changed", step)
