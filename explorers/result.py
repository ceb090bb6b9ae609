"""CheckResult: what every explorer returns, whatever engine produced it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from kmc.invariants.properties import SOMETIMES

HOLDS = "holds"
VIOLATED = "violated"
WITNESS_FOUND = "witness_found"
WITNESS_MISSING = "witness_missing"
UNKNOWN = "unknown"


@dataclass
class Discovery:
    """A counterexample (always/quiescent/deadlock) or a witness (sometimes)."""
    property: str
    kind: str
    trace: Any  # model.trace.Trace
    detail: Any = None  # offending tuple / explanation, when the property gives one


@dataclass
class CheckResult:
    explorer: str
    unique_states: int = 0
    generated_states: int = 0
    max_depth: int = 0
    complete: bool = False
    stopped_by: str = ""  # "" when complete, else "max_states" | "max_depth" | "time_limit" | ...
    elapsed_s: float = 0.0
    coverage: dict = field(default_factory=dict)  # action name -> times fired
    never_fired: list = field(default_factory=list)
    properties: dict = field(default_factory=dict)  # name -> kind
    discoveries: dict = field(default_factory=dict)  # name -> Discovery
    collision_probability: float = 0.0
    visited_bytes: int = 0
    extra: dict = field(default_factory=dict)

    def verdict(self, name: str) -> str:
        kind = self.properties[name]
        found = name in self.discoveries
        if kind == SOMETIMES:
            if found:
                return WITNESS_FOUND
            return WITNESS_MISSING if self.complete else UNKNOWN
        if found:
            return VIOLATED
        return HOLDS if self.complete else UNKNOWN

    def verdicts(self) -> dict:
        return {n: self.verdict(n) for n in self.properties}

    @property
    def ok(self) -> bool:
        """True when every property holds and every witness was found."""
        return all(v in (HOLDS, WITNESS_FOUND) for v in self.verdicts().values())

    def exit_code(self) -> int:
        """0 nothing violated and no witness missing; 1 a violation or a missing witness.

        As in TLC, a bounded run (max depth/states, time limit, simulation) that found
        nothing wrong exits 0; its verdicts say "unknown" and the output says why."""
        bad = (VIOLATED, WITNESS_MISSING)
        return 1 if any(v in bad for v in self.verdicts().values()) else 0

    # ---- test helpers, as Stateright's assert_properties / assert_discovery -------------
    def assert_properties(self) -> None:
        bad = {n: v for n, v in self.verdicts().items() if v not in (HOLDS, WITNESS_FOUND)}
        if bad:
            raise AssertionError(f"properties not satisfied: {bad}")

    def assert_violated(self, name: str, length: Optional[int] = None) -> None:
        v = self.verdict(name)
        if v != VIOLATED:
            raise AssertionError(f"expected {name} violated, got {v}")
        if length is not None and len(self.discoveries[name].trace) != length:
            raise AssertionError(f"expected a {length}-state counterexample for {name}, got "
                                 f"{len(self.discoveries[name].trace)}")

