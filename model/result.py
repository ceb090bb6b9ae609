"""CheckResult: what every explorer returns and every report reads, whatever engine produced it
(here, not in explorers/, so reports depend on the result and not on the engines)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from kmc.invariants.properties import SOMETIMES

HOLDS = "holds"
VIOLATED = "violated"
WITNESS_FOUND = "witness_found"
WITNESS_MISSING = "witness_missing"
UNKNOWN = "unknown"

#: what each exit code of a check means (the CLI, the summary and the report say the same)
EXIT_MEANINGS = {
    0: "every property holds and every witness was found",
    1: "a property is violated or a witness is missing",
    4: "stopped at a bound: nothing violated, some property undecided",
}


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
        if name not in self.properties:
            raise KeyError(f"no property {name!r} was checked: this result has "
                           f"{', '.join(self.properties) or 'none'}")
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
        """0 every property decided (holds, witness found); 1 a property violated or a
        witness missing (whether or not a bound stopped the run); 4 the run stopped at a
        bound (states, depth, time, a simulation's walks) with nothing violated and some
        property undecided: a CI job must not read "nothing found yet" as "all good"."""
        verdicts = self.verdicts().values()
        if any(v in (VIOLATED, WITNESS_MISSING) for v in verdicts):
            return 1
        return 4 if UNKNOWN in verdicts else 0

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

