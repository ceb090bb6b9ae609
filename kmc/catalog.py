"""The scenario catalogue: the built-in model packages' SCENARIOS, scenario packages
installed through the ``kmc.scenarios`` entry point group, user models named by
``path/to/file.py:factory`` or ``package.module:factory``, and scenario TOML files that
name any of these."""
from __future__ import annotations

import importlib
import os

from kmc.errors import UsageError
from kmc.model.scenario import Scenario, ScenarioError, did_you_mean
from kmc.user_models import is_user_ref, user_scenario

#: model packages that export SCENARIOS
PACKAGES = ("kmc.model.validation", "kmc.model.kafka.zk", "kmc.model.kafka.kip253",
            "kmc.model.kafka.kraft")
#: the entry point group through which other distributions add scenarios
ENTRY_POINT_GROUP = "kmc.scenarios"


def scenarios() -> dict[str, Scenario]:
    """Every registered scenario by name: the built-ins, then the entry points'. A
    package that fails to load, or reuses a name, is skipped with a warning: one broken
    plugin never stops the built-in scenarios (or the other plugins) from working."""
    out = builtins()
    for ep in _entry_points():
        try:
            found = _entry_point_scenarios(ep)
        except UsageError as e:
            _warn(f"{e}; skipped")
            continue
        for sc in found:
            if sc.name in out:
                _warn(f"scenario {sc.name!r} of {sc.source} is already registered by "
                      f"{out[sc.name].source}; skipped: rename it")
                continue
            out[sc.name] = sc
    return out


def builtins() -> dict[str, Scenario]:
    out: dict[str, Scenario] = {}
    for pkg in PACKAGES:
        for sc in importlib.import_module(pkg).SCENARIOS:
            out[sc.name] = sc
    return out


def _warn(text: str) -> None:
    import sys

    from kmc.cli import one_line
    print(f"kmc: warning: {one_line(text)}", file=sys.stderr)


def _entry_points():
    from importlib.metadata import entry_points

    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)


def _entry_point_scenarios(ep) -> list[Scenario]:
    """An entry point names a list of Scenario values, a module with SCENARIOS, or a
    callable returning such a list."""
    import dataclasses
    import types

    try:
        obj = ep.load()
        if isinstance(obj, types.ModuleType):
            obj = getattr(obj, "SCENARIOS", None)
        elif callable(obj):
            obj = obj()
    except Exception as e:  # a broken third-party package: say which one
        raise UsageError(f"entry point {ep.name!r} ({ep.value}) of group "
                         f"{ENTRY_POINT_GROUP} failed to load: {type(e).__name__}: {e}") \
            from None
    items = list(obj) if isinstance(obj, (list, tuple)) else None
    if not items or not all(isinstance(sc, Scenario) for sc in items):
        raise UsageError(f"entry point {ep.name!r} ({ep.value}) must name a list of "
                         "kmc.Scenario values, a module with SCENARIOS, or a function "
                         "returning that list")
    return [dataclasses.replace(sc, source=f"entry point {ep.name} ({ep.value})")
            for sc in items]


def beside(ref: str, folder: str) -> str:
    """A scenario reference read from a file in ``folder`` (a scenario or suite file):
    a relative model file or scenario file is found beside that file, not in the
    working directory."""
    path = ref.rpartition(":")[0] if is_user_ref(ref) else ref
    if (path.endswith(".py") or path.endswith(".toml")) and not os.path.isabs(path):
        return os.path.join(folder, ref)
    return ref


def get(name: str) -> Scenario:
    if is_user_ref(name):
        return user_scenario(name)
    table = builtins()
    if name in table:
        return table[name]
    table = scenarios()
    if name.endswith(".py") and name not in table:
        raise _no_factory(name)
    if name not in table:
        raise UsageError(f"unknown scenario {name!r}{did_you_mean(name, table)}: run "
                         f"`kmc list` to see the {len(table)} scenarios "
                         f"({', '.join(sorted(table))}), or name a model as "
                         "path/to/file.py:factory")
    return table[name]


def _no_factory(path: str) -> UsageError:
    return UsageError(f"{path} is a model file: name its factory too, as {path}:FACTORY "
                      "(a function that returns a kmc.Model)")


def load(ref: str, variant: str | None, raw_params: dict) -> dict:
    """Resolve a scenario reference (a registered name or a path to a .toml file) plus
    command-line overrides into {scenario, variant, params, bounds, model}."""
    bounds: dict = {}
    if ref.endswith(".py") and ref not in scenarios():
        raise _no_factory(ref)
    if ref.endswith(".toml") or (os.sep in ref and not is_user_ref(ref)):
        spec = _read_toml(ref)
        base = spec.get("scenario")
        if base is not None and not isinstance(base, str):
            raise UsageError(f"{ref}: `scenario` must be a string, e.g. scenario = "
                             "\"stale-read\" (a name that `kmc list` shows, or a model as "
                             "\"file.py:factory\")")
        if not isinstance(base, str):
            raise UsageError(f"{ref}: missing `scenario = \"NAME\"` (one of the names that "
                             "`kmc list` shows, or a model as \"file.py:factory\")")
        base = beside(base, os.path.dirname(os.path.abspath(ref)))
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
            whole = k != "time_limit"  # seconds may be fractional, as with --time-limit
            if isinstance(v, bool) or not isinstance(v, int if whole else (int, float)) or \
                    not v > 0 or v == float("inf"):
                raise UsageError(f"{ref}: bound {k} must be a positive "
                                 f"{'integer' if whole else 'number'}, got {v!r}")
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

    from kmc.reports.inputs import InputError, check_depth, read_text

    try:
        text = read_text(path, "scenario file", max_bytes=1024 * 1024)
        check_depth(text, f"scenario file {path}")
    except InputError as e:
        raise UsageError(str(e)) from None
    try:
        spec = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{path} is not valid TOML: {e}") from None
    except ValueError:  # tomllib's int() of a literal over 4300 digits
        raise UsageError(f"{path} holds a number too long to read: use a value in "
                         "the parameter's range") from None
    desc = spec.get("description")
    if desc is not None and not isinstance(desc, str):
        raise UsageError(f"{path}: description must be a string, got {desc!r}")
    return spec
