"""The public API: what the CLI does, callable from Python and tests.

    >>> from kmc.api import check
    >>> r = check("twophase", params={"rm": 3})
    >>> r.unique_states, r.verdict("TCConsistent")
    (288, 'holds')
"""
from __future__ import annotations

from kmc.explorers import ENGINES, engine
from kmc.explorers.errors import ExplorerError
from kmc import catalog
from kmc.errors import UsageError
from kmc.model.contract import ModelError, validate_model


def build(scenario: str, variant: str | None = None, params: dict | None = None):
    """The model of a scenario: ``build("twophase", params={"rm": 4})``."""
    info = catalog.load(scenario, variant, dict(params or {}))
    return info["scenario"].build(info["variant"], info["params"])


def check(scenario: str, variant: str | None = None, params: dict | None = None, *,
          explorer: str = "bfs", max_states=None, max_depth=None, time_limit=None,
          seed: int = 0, walks: int = 1000, walk_length: int = 50,
          stop_on_violation: bool = False, symmetry: bool = False, deadlock=None,
          progress=None, z3: bool = False, **engine_options):
    """Explore a scenario and return its CheckResult (with ``extra`` naming the run)."""
    info = catalog.load(scenario, variant, dict(params or {}))
    sc = info["scenario"]
    if explorer not in ENGINES:
        raise UsageError(f"unknown explorer {explorer!r}: use one of {', '.join(ENGINES)}")
    bounds = info["bounds"]
    max_states = max_states if max_states is not None else bounds.get("max_states")
    max_depth = max_depth if max_depth is not None else bounds.get("max_depth")
    time_limit = time_limit if time_limit is not None else bounds.get("time_limit")
    try:
        model = sc.build(info["variant"], info["params"])
        validate_model(model)
    except ModelError as e:
        raise UsageError(str(e)) from None
    properties = None
    if z3:  # the same declarations, decided by z3 instead of the compiled evaluator
        from kmc.invariants.z3mode import z3_properties
        properties = z3_properties(model.properties())
    opts = dict(properties=properties, max_states=max_states, max_depth=max_depth, time_limit=time_limit,
                stop_on_violation=stop_on_violation, symmetry=symmetry,
                deadlock=sc.options.get("deadlock", False) if deadlock is None else deadlock,
                progress=progress, **engine_options)
    if explorer == "simulate":
        opts.update(seed=seed, walks=walks, walk_length=walk_length)
    try:
        result = engine(explorer)(model, **opts)
    except ExplorerError as e:
        raise UsageError(str(e)) from None
    result.extra.update(scenario=sc.name, variant=info["variant"], params=info["params"],
                        model=model, z3=z3)
    if z3:  # which properties z3 decided, the memo hit rate, solver calls (driver side)
        from kmc.invariants.z3mode import z3_stats
        result.extra["z3_stats"] = z3_stats(properties)
    return result
