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


_DECIMAL = re.compile(r"[+-]?[0-9]{1,4000}")  # int() refuses over 4300 digits


def did_you_mean(word: str, choices) -> str:
    """" (did you mean 'x'?)" for the closest of ``choices``, or ""."""
    import difflib

    word = str(word)
    # half the letters in common is close for a short name (rn: rm), not for a longer
    # one (nope: twophase)
    close = difflib.get_close_matches(word, [str(c) for c in choices], n=1,
                                      cutoff=0.5 if len(word) <= 3 else 0.6)
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
    except (tomllib.TOMLDecodeError, ValueError):  # ValueError: an int over 4300 digits
        return raw


@dataclass(frozen=True)
class Param:
    name: str
    default: Any
    help: str = ""
    minimum: int | None = 1
    maximum: int | None = None
    choices: tuple = ()

    def __post_init__(self):
        """A declaration ``parse`` cannot honour fails where the scenario is declared,
        not at a user's first ``-p``: a float default would read every value as a
        string, and a default outside its own range or choices is refused for every
        run that does not set it."""
        d, lo, hi = self.default, self.minimum, self.maximum
        if isinstance(d, bool):
            return
        if isinstance(d, int):
            if lo is not None and hi is not None and lo > hi:
                raise ValueError(f"parameter {self.name!r}: minimum {lo} is above "
                                 f"maximum {hi}")
            if (lo is not None and d < lo) or (hi is not None and d > hi):
                raise ValueError(f"parameter {self.name!r}: default {d} is outside its "
                                 f"range {lo if lo is not None else '-inf'}.."
                                 f"{hi if hi is not None else 'inf'}")
        elif isinstance(d, str):
            if self.choices and d not in self.choices:
                raise ValueError(f"parameter {self.name!r}: default {d!r} is not one of "
                                 f"its choices {', '.join(map(str, self.choices))}")
        else:
            raise ValueError(f"parameter {self.name!r}: default must be a bool, an int or "
                             f"a str, got {type(d).__name__}")

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
            raise ScenarioError(f"parameter {self.name} must be true or false, got "
                                f"{_shown(raw)}")
        if isinstance(d, int):
            if isinstance(raw, int) and not isinstance(raw, bool):
                value = raw
            elif isinstance(raw, str) and _DECIMAL.fullmatch(raw.strip()):
                value = int(raw.strip(), 10)
            else:  # "1_0", "٣", "0x10", 2.5 and true are not plain decimal numbers
                raise ScenarioError(f"parameter {self.name} must be a whole number written "
                                    f"in plain decimal digits, got {_shown(raw)}")
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
class VariantSet:
    """What one value of a scenario's selecting parameter (``Scenario.selector``) brings:
    the variants it runs and their default, the parameters that do not apply with it
    (an explicit value is refused; the default is left out of the resolved parameters),
    and parameters whose range differs from the scenario's (same name, own bounds)."""
    variants: tuple[str, ...]
    default_variant: str
    unused: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()


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
    #: a parameter whose value chooses the variants (``variant_sets``); "" for none.
    #: ``variants`` and ``default_variant`` are then those of the parameter's default.
    selector: str = ""
    #: selector value -> VariantSet
    variant_sets: Mapping[str, VariantSet] = field(default_factory=dict)

    def __post_init__(self):
        """A declaration mistake is a ValueError naming the scenario when it is made (a
        plugin's then fails to load with that message), not an IndexError or KeyError
        at a user's first run."""
        if not self.variants:
            raise ValueError(f"scenario {self.name!r}: variants is empty: name at least "
                             "one (\"default\")")
        if self.default_variant and self.default_variant not in self.variants:
            raise ValueError(f"scenario {self.name!r}: default_variant "
                             f"{self.default_variant!r} is not one of its variants "
                             f"{', '.join(self.variants)}")
        names = [p.name for p in self.params]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"scenario {self.name!r}: parameter {twice[0]!r} is declared "
                             "twice")
        if self.selector:
            known = {p.name: p for p in self.params}
            if self.selector not in known:
                raise ValueError(f"scenario {self.name!r}: selector {self.selector!r} is "
                                 "not one of its parameters")
            missing = [c for c in known[self.selector].choices or
                       (known[self.selector].default,) if c not in self.variant_sets]
            if missing:
                raise ValueError(f"scenario {self.name!r}: selector value "
                                 f"{self.selector}={missing[0]} has no VariantSet in "
                                 "variant_sets")
            first = self.variant_sets[known[self.selector].default]
            if (self.variants, self.variant_default) != (first.variants,
                                                         first.default_variant):
                raise ValueError(f"scenario {self.name!r}: variants and default_variant "
                                 "must be those of the selector's default value")

    @property
    def variant_default(self) -> str:
        return self.default_variant or self.variants[0]

    @property
    def every_variant(self) -> tuple[str, ...]:
        """The variants of every selector value (``variants`` without a selector)."""
        out = list(self.variants)
        for vs in self.variant_sets.values():
            out += [v for v in vs.variants if v not in out]
        return tuple(out)

    def resolve(self, variant: str | None, raw_params: Mapping[str, Any]) -> tuple[str, dict]:
        """Validate a variant name and raw parameter values; fill defaults. With a
        selector, its value (given or default) decides which variants and parameters
        apply and which variant is the default."""
        every = self.every_variant
        if variant is not None and variant not in every:
            raise ScenarioError(f"scenario {self.name!r} has no variant {variant!r}"
                                f"{did_you_mean(variant, every)}: use one of "
                                f"{self._variant_list()}")
        known = {p.name: p for p in self.params}
        chosen = None
        if self.selector:
            value = known[self.selector].parse(raw_params.get(
                self.selector, known[self.selector].default))
            chosen = self.variant_sets[value]
            self._check_variant(variant, value, chosen)
            known.update({p.name: p for p in chosen.params})
        v = (chosen.default_variant if chosen else self.variant_default) \
            if variant is None else variant
        unused = chosen.unused if chosen else ()
        params = {p.name: known[p.name].default for p in self.params
                  if p.name not in unused}
        for key, raw in raw_params.items():
            if self.free_params and key not in known:
                params[key] = raw  # converted below, as the factory wants it
                continue
            if key not in known:
                names = ", ".join(known) or "none"
                raise ScenarioError(f"scenario {self.name!r} has no parameter {key!r}"
                                    f"{did_you_mean(key, known)}: its parameters are {names}")
            if key in unused:
                value = params[self.selector]
                takers = [k for k, vs in self.variant_sets.items() if key not in vs.unused]
                raise ScenarioError(f"parameter {key} does not apply with "
                                    f"{self.selector}={value}: drop -p {key}, or use "
                                    + " or ".join(f"-p {self.selector}={k}" for k in takers))
            try:
                params[key] = known[key].parse(raw)
            except ScenarioError as e:
                if chosen is None or all(p.name != key for p in chosen.params):
                    raise
                raise ScenarioError(f"{e} with {self.selector}={params[self.selector]}") \
                    from None
        if self.convert is not None:
            params = self.convert(params)
        return v, params

    def _variant_list(self) -> str:
        """The variants, grouped by selector value when there is a selector."""
        if not self.selector:
            return ", ".join(self.variants)
        return "; ".join(f"{', '.join(vs.variants)} (with {self.selector}={k})"
                         for k, vs in self.variant_sets.items())

    def _check_variant(self, variant: str | None, value: str, chosen: VariantSet) -> None:
        """A variant of another selector value: say which value runs it."""
        if variant is None or variant in chosen.variants:
            return
        owner = next(k for k, vs in self.variant_sets.items() if variant in vs.variants)
        raise ScenarioError(f"variant {variant!r} of scenario {self.name!r} runs with "
                            f"{self.selector}={owner}, not {self.selector}={value}: add "
                            f"-p {self.selector}={owner}, or use one of "
                            f"{', '.join(chosen.variants)}")

    def make(self, variant: str | None = None, params: Mapping[str, Any] | None = None):
        v, p = self.resolve(variant, params or {})
        return self.build(v, p), v, p


def _shown(raw) -> str:
    """A parameter's value as the user wrote it: TOML's and the command line's
    ``true``, not Python's ``True``."""
    if isinstance(raw, bool):
        return "true" if raw else "false"
    return repr(raw)
