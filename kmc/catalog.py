"""The scenario catalogue: every model package's SCENARIOS, plus scenario TOML files."""
from __future__ import annotations

import importlib
import os

from kmc.errors import UsageError
from kmc.model.scenario import Scenario, ScenarioError

#: model packages that export SCENARIOS; a package that is not there yet is skipped
PACKAGES = ("kmc.model.validation", "kmc.model.topics", "kmc.model.partitions")


def scenarios() -> dict[str, Scenario]:
    out: dict[str, Scenario] = {}
    for pkg in PACKAGES:
        try:
            mod = importlib.import_module(pkg)
        except ModuleNotFoundError as e:
            if e.name and pkg.startswith(e.name):
                continue
            raise
        for sc in getattr(mod, "SCENARIOS", ()):
            if sc.name in out:
                raise RuntimeError(f"scenario {sc.name!r} is registered twice ({pkg})")
            out[sc.name] = sc
    return out


def get(name: str) -> Scenario:
    table = scenarios()
    if name not in table:
        raise UsageError(f"unknown scenario {name!r}: run `kmc list` to see the "
                         f"{len(table)} scenarios ({', '.join(sorted(table))})")
    return table[name]


def load(ref: str, variant: str | None, raw_params: dict) -> dict:
    """Resolve a scenario reference (a registered name or a path to a .toml file) plus
    command-line overrides into {scenario, variant, params, bounds, model}."""
    bounds: dict = {}
    if ref.endswith(".toml") or os.sep in ref:
        spec = _read_toml(ref)
        base = spec.get("scenario")
        if not isinstance(base, str):
            raise UsageError(f"{ref}: missing `scenario = \"NAME\"` (one of the names that "
                             "`kmc list` shows)")
        file_params = spec.get("params", {})
        if not isinstance(file_params, dict):
            raise UsageError(f"{ref}: [params] must be a table of KEY = VALUE")
        bounds = spec.get("bounds", {})
        if not isinstance(bounds, dict):
            raise UsageError(f"{ref}: [bounds] must be a table (max_states, max_depth, "
                             "time_limit)")
        unknown = set(bounds) - {"max_states", "max_depth", "time_limit"}
        if unknown:
            raise UsageError(f"{ref}: unknown bound {sorted(unknown)[0]!r}: use max_states, "
                             "max_depth or time_limit")
        for k, v in bounds.items():
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise UsageError(f"{ref}: bound {k} must be a positive integer, got {v!r}")
        fv = spec.get("variant")
        if fv is not None and not isinstance(fv, str):
            raise UsageError(f"{ref}: variant must be a string")
        variant = variant or fv
        raw_params = {**file_params, **raw_params}
        extra = set(spec) - {"scenario", "variant", "params", "bounds", "description"}
        if extra:
            raise UsageError(f"{ref}: unknown key {sorted(extra)[0]!r}: a scenario file has "
                             "scenario, variant, description, [params] and [bounds]")
        sc = get(base)
    else:
        sc = get(ref)
    try:
        v, params = sc.resolve(variant, raw_params)
    except ScenarioError as e:
        raise UsageError(str(e)) from None
    return {"scenario": sc, "variant": v, "params": params, "bounds": bounds}


def _read_toml(path: str) -> dict:
    import tomllib

    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise UsageError(f"scenario file {path} does not exist: check the path") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read scenario file {path}: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{path} is not valid TOML: {e}") from None
