"""A scenario = a model family + a variant + bounded parameters, registered by name.

Model packages export ``SCENARIOS`` (a list of ``Scenario``); ``kmc.catalog`` collects
them, so the protocol code never imports the CLI. Parameters are validated here, with
errors that name the parameter and the fix.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping


class ScenarioError(ValueError):
    """Bad scenario input (unknown variant, bad parameter). One line, says the fix."""


_DECIMAL = re.compile(r"[+-]?[0-9]+")


def did_you_mean(word: str, choices) -> str:
    """" (did you mean 'x'?)" for the closest of ``choices``, or ""."""
    import difflib

    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def literal(raw):
    """A parameter value of a user model: a TOML literal (3 is an int, true a bool,
    "x" a string, [1, 2] a list), anything else the string itself. Values that are not
    strings (from a scenario file) pass through."""
    if not isinstance(raw, str):
        return raw
    import tomllib

    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


@dataclass(frozen=True)
class Param:
    name: str
    default: Any
    help: str = ""
    minimum: int | None = 1
    maximum: int | None = None
    choices: tuple = ()

    def parse(self, raw) -> Any:
        """Turn a raw value (str from the command line, or TOML value) into a checked one."""
        d = self.default
        if isinstance(d, bool):
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ScenarioError(f"parameter {self.name} must be true or false, got {raw!r}")
        if isinstance(d, int):
            if isinstance(raw, int) and not isinstance(raw, bool):
                value = raw
            elif isinstance(raw, str) and _DECIMAL.fullmatch(raw.strip()):
                value = int(raw.strip(), 10)
            else:  # "1_0", "٣", "0x10", 2.5 and true are not plain decimal numbers
                raise ScenarioError(f"parameter {self.name} must be a whole number written "
                                    f"in plain decimal digits, got {raw!r}")
            lo, hi = self.minimum, self.maximum
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                rng = f"{lo if lo is not None else '-inf'}..{hi if hi is not None else 'inf'}"
                raise ScenarioError(f"parameter {self.name}={value} is out of range: "
                                    f"use a value in {rng}")
            return value
        value = str(raw)
        if self.choices and value not in self.choices:
            raise ScenarioError(f"parameter {self.name}={value!r} is not one of "
                                f"{', '.join(map(str, self.choices))}")
        return value


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    #: build(variant, params) -> Model
    build: Callable[[str, Mapping[str, Any]], Any]
    params: tuple[Param, ...] = ()
    variants: tuple[str, ...] = ("default",)
    default_variant: str = ""
    family: str = ""
    #: scenario-level options passed to explorers (e.g. {"deadlock": True})
    options: Mapping[str, Any] = field(default_factory=dict)
    #: where the scenario comes from: "built-in", an entry point, or a user model reference
    source: str = "built-in"
    #: a user model's factory takes any keyword parameters, converted by ``convert``
    free_params: bool = False
    #: with free_params: raw values -> the values the factory takes (user_models.coerce)
    convert: Callable[[dict], dict] | None = field(default=None, compare=False)

    @property
    def variant_default(self) -> str:
        return self.default_variant or self.variants[0]

    def resolve(self, variant: str | None, raw_params: Mapping[str, Any]) -> tuple[str, dict]:
        """Validate a variant name and raw parameter values; fill defaults."""
        v = self.variant_default if variant is None else variant
        if v not in self.variants:
            raise ScenarioError(f"scenario {self.name!r} has no variant {v!r}"
                                f"{did_you_mean(v, self.variants)}: "
                                f"use one of {', '.join(self.variants)}")
        known = {p.name: p for p in self.params}
        params = {p.name: p.default for p in self.params}
        for key, raw in raw_params.items():
            if self.free_params and key not in known:
                params[key] = raw  # converted below, as the factory wants it
                continue
            if key not in known:
                names = ", ".join(known) or "none"
                raise ScenarioError(f"scenario {self.name!r} has no parameter {key!r}"
                                    f"{did_you_mean(key, known)}: its parameters are {names}")
            params[key] = known[key].parse(raw)
        if self.convert is not None:
            params = self.convert(params)
        return v, params

    def make(self, variant: str | None = None, params: Mapping[str, Any] | None = None):
        v, p = self.resolve(variant, params or {})
        return self.build(v, p), v, p
