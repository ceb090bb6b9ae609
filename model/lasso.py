"""Lassos: the counterexamples of liveness properties.

A lasso is a trace whose behaviour goes on forever: after its last state it continues
from ``states[loop_start]``. The last state equals ``states[loop_start]`` (the last
action closes the loop), or ``loop_start`` is the last index: the behaviour stutters in
its last state forever, where no fair action is enabled. The behaviour is therefore
``states[:loop_start]`` followed by ``states[loop_start + 1:]`` repeated, the last
state being ``states[loop_start]`` again.

Trace files of lassos are format version 3 (docs/trace-format.md): version 2 plus
``loop_start``; files of other traces stay version 2.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from kmc.model.trace import Trace

#: the trace format version that adds ``loop_start``
LASSO_VERSION = 3


@dataclass
class Lasso(Trace):
    loop_start: Optional[int] = None

    @property
    def stutters(self) -> bool:
        """True when the loop is the last state alone (a fair stop)."""
        return self.loop_start == len(self.states) - 1

    def to_dict(self, model, **meta) -> dict:
        doc = super().to_dict(model, **meta)
        doc["version"] = LASSO_VERSION
        doc["loop_start"] = self.loop_start
        return doc

    @classmethod
    def from_dict(cls, model, data: dict) -> "Lasso":
        t = Trace.from_dict(model, data)
        return cls(t.init_index, t.action_indices, t.states, t.actions,
                   data.get("loop_start"))
