"""The public API: what the CLI does, callable from Python and tests.

    >>> from kmc import check
    >>> r = check("twophase", params={"rm": 3})
    >>> r.unique_states, r.verdict("TCConsistent")
    (288, 'holds')

``check`` takes a scenario reference (a registered name, ``file.py:factory``,
``package.module:factory`` or a scenario ``.toml`` file) or a ``Model`` instance, and
always validates the model before exploring it.
"""
from __future__ import annotations

import sys

from kmc import catalog
from kmc.errors import UsageError
from kmc.explorers import ENGINES, engine
from kmc.explorers.errors import ExplorerError
from kmc.explorers.progress import Progress
from kmc.explorers.symcheck import SymmetryError
from kmc.model.contract import Model, ModelError, validate_model
from kmc.model.trace import ReplayError
from kmc.user_models import blamed


def build(scenario: str, variant: str | None = None, params: dict | None = None):
    """The model of a scenario: ``build("twophase", params={"rm": 4})``. Raises
    ``kmc.UsageError`` for bad input, as ``check`` does."""
    _check_reference(scenario, variant, params, model_ok=False)
    info = catalog.load(scenario, variant, dict(params or {}))
    return build_model(info["scenario"], info["variant"], info["params"])


def check(scenario, variant: str | None = None, params: dict | None = None, *,
          explorer: str = "bfs", max_states=None, max_depth=None, time_limit=None,
          seed: int | None = None, walks: int | None = None,
          walk_length: int | None = None, stop_on_violation: bool = False,
          symmetry: bool = False, deadlock=None, progress=None, z3: bool = False,
          check_symmetry: bool = False, **engine_options):
    """Explore a scenario (or a Model) and return its CheckResult (``extra`` names the run).

    ``check_symmetry``: reduce by the model's symmetry, as ``symmetry`` does, and check on
    every expanded state that the reduction is sound (``explorers.symcheck``).
    ``seed``, ``walks`` and ``walk_length`` (defaults 0, 1000 and 50) are the simulation's
    own: with another explorer they are refused, as ``kmc check`` refuses ``--seed``.

    Raises ``kmc.UsageError`` for bad input: an unknown scenario, variant or parameter, a
    model that fails validation (the message says what to fix), an unknown explorer."""
    _check_arguments(scenario, variant, params, explorer, engine_options,
                     max_states=max_states, max_depth=max_depth, time_limit=time_limit,
                     seed=seed, walks=walks, walk_length=walk_length)
    _check_flags(progress=progress, stop_on_violation=stop_on_violation,
                 symmetry=symmetry, check_symmetry=check_symmetry, z3=z3,
                 deadlock=deadlock)
    if isinstance(scenario, Model):
        if variant is not None or params:
            raise UsageError("variant and params belong to a scenario: build the Model "
                             "with them instead")
        name, v, p, model, options, bounds = scenario.name, "default", {}, scenario, {}, {}
        user_model = None  # a caller's own exception reaches the caller as it is
    else:
        info = catalog.load(scenario, variant, dict(params or {}))
        sc = info["scenario"]
        name, v, p, options, bounds = sc.name, info["variant"], info["params"], \
            sc.options, info["bounds"]
        user_model = sc.name if sc.family == "user" else None
        model = build_model(sc, v, p)
    validated(model, user_model)
    with blamed(user_model):
        if check_symmetry:
            _can_check_symmetry(model, name)
            symmetry = "check"
    max_states = max_states if max_states is not None else bounds.get("max_states")
    max_depth = max_depth if max_depth is not None else bounds.get("max_depth")
    time_limit = time_limit if time_limit is not None else bounds.get("time_limit")
    if isinstance(progress, Progress):  # percent and ETA towards the run's bound
        progress.bounds(max_states, max_depth, time_limit)
    properties = None
    if z3:  # the same declarations, decided by z3 instead of the compiled evaluator
        from kmc.invariants.z3mode import z3_properties
        properties = z3_properties(model.properties())
    skipped = []
    opts = dict(properties=properties, max_states=max_states, max_depth=max_depth,
                time_limit=time_limit, stop_on_violation=stop_on_violation,
                symmetry=symmetry,
                deadlock=options.get("deadlock", False) if deadlock is None else deadlock,
                progress=progress, **engine_options)
    if explorer == "simulate":
        opts.update(seed=0 if seed is None else seed, walks=1000 if walks is None else walks,
                    walk_length=50 if walk_length is None else walk_length)
    if explorer == "spark":
        opts.setdefault("app_name", f"kmc {name}")
    with blamed(user_model):  # the user's own model code failing: their bug, named
        try:
            result = engine(explorer)(model, **opts)
        except ExplorerError as e:
            raise UsageError(str(e)) from None
        except ModelError as e:  # found while exploring (a fault declared fair)
            raise UsageError(f"{user_model}: {e}" if user_model else str(e)) from None
        except (ReplayError, SymmetryError) as e:  # kmc's finding, not the model raising
            if user_model is None:
                raise
            raise UsageError(f"{user_model}: {e}") from e
    result.extra.update(scenario=name, variant=v, params=p, model=model, z3=z3,
                        user_model=user_model)
    with blamed(user_model):
        warnings = list(model.caveats()) + [w for w in [_fairness_warning(model, result),
                                                        _boundary_warning(model, result)]
                                            if w]
    if warnings:
        result.extra.setdefault("warnings", []).extend(warnings)
    if symmetry:  # what the reduction asked for did, said in the summary
        result.extra["symmetry"] = ("reduced and checked" if symmetry == "check" else
                                    "reduced") if model.has_symmetry else \
            "none declared by the model (not reduced)"
    if skipped:
        result.extra["not_checked"] = skipped
    if z3:  # which properties z3 decided, the memo hit rate, solver calls (driver side)
        from kmc.invariants.z3mode import z3_stats
        result.extra["z3_stats"] = z3_stats(properties)
    return result


def _fairness_warning(model, result) -> str | None:
    """A declared fair class no action of the run was named by (a misspelt name, or one
    that ``action_name`` spells otherwise), when the run decided liveness: such a class
    is never enabled and silently constrains nothing (``model.fairness``)."""
    from kmc.invariants.liveness import LIVENESS_KINDS
    from kmc.model.fairness import unmatched_warning

    if result.explorer == "simulate" or not any(
            k in LIVENESS_KINDS for k in result.properties.values()):
        return None
    return unmatched_warning(model, (n for n, c in result.coverage.items() if c))


def _boundary_warning(model, result) -> str | None:
    """Liveness properties that hold on a model with a boundary (``within_boundary``):
    they hold for the behaviours that stay inside it, and a behaviour that leaves it
    was not examined (docs/invariants.md, "Bounds"), which no verdict line shows."""
    from kmc.invariants.liveness import LIVENESS_KINDS

    if type(model).within_boundary is Model.within_boundary:
        return None
    held = [n for n, k in result.properties.items()
            if k in LIVENESS_KINDS and result.verdict(n) == "holds"]
    if not held:
        return None
    return (f"{', '.join(held)} {'holds' if len(held) == 1 else 'hold'} for the "
            "behaviours that stay inside the model's within_boundary; a behaviour that "
            "leaves it was not examined (a boundary every behaviour leaves makes a "
            "liveness property hold vacuously): widen the boundary until the loops the "
            "property is about lie inside it")


def stop_engines(wait_s: float = 10.0) -> None:
    """Stop what ``check`` keeps running between runs of this process for the next one
    (the JVM a Spark run launched, which a later Spark run reuses) and wait for it to
    exit: a program about to exit calls it so that nothing it started outlives it."""
    if "pyspark" in sys.modules:
        from kmc.explorers.spark.session import shutdown_gateway
        shutdown_gateway(wait_s=wait_s)


def _check_reference(scenario, variant, params, model_ok: bool = True) -> None:
    """What names the run: a scenario reference (or, for ``check``, a Model), a variant
    name and a parameter dict, each of its type, so a mistake names the argument."""
    if not isinstance(scenario, str) and not (model_ok and isinstance(scenario, Model)):
        what = "a name or a file path (a str)" + (" or a kmc.Model instance" if model_ok
                                                   else "")
        raise UsageError(f"scenario must be {what}, got {type(scenario).__name__}")
    if variant is not None and not isinstance(variant, str):
        raise UsageError(f"variant must be a variant name (a str) or None, got "
                         f"{type(variant).__name__}")
    if params is not None and not isinstance(params, dict):
        raise UsageError(f"params must be a dict such as {{'rm': 3}}, got "
                         f"{type(params).__name__}")


def _check_flags(progress, **flags) -> None:
    """Switches are True or False (``z3="no"`` would otherwise turn z3 on), ``deadlock``
    may be None (the scenario's own choice), and ``progress`` is called with the counts."""
    for name, v in flags.items():
        if not isinstance(v, bool) and not (name == "deadlock" and v is None):
            raise UsageError(f"{name} must be True or False"
                             f"{' (or None)' if name == 'deadlock' else ''}, got {v!r}")
    if progress is not None and not callable(progress):
        raise UsageError(f"progress must be a callable (a kmc.explorers.progress.Progress, "
                         f"or a function of the counts) or None, got "
                         f"{type(progress).__name__}")


#: the simulation's own options (``--seed``, ``--walks``, ``--walk-length``)
_WALK = ("seed", "walks", "walk_length")


def _check_arguments(scenario, variant, params, explorer, engine_options,
                     **numbers) -> None:
    """The API's arguments, each of the type it must have: a mistake is a one-line
    UsageError naming the argument, not an error from deep inside an explorer."""
    _check_reference(scenario, variant, params)
    if not isinstance(explorer, str) or explorer not in ENGINES:
        raise UsageError(f"unknown explorer {explorer!r}: use one of {', '.join(ENGINES)}")
    walk = [n for n in _WALK if numbers[n] is not None]
    if walk and explorer != "simulate":
        raise UsageError(f"{walk[0]} is a simulation option: pass explorer='simulate' "
                         f"or leave it out (explorer {explorer!r} takes no "
                         f"{'/'.join(_WALK)})")
    for name, v in numbers.items():
        if v is None:  # the bounds' None: no bound; the simulation's: its default
            continue
        whole = name != "time_limit"
        least = 0 if name == "seed" else 1
        ok = not isinstance(v, bool) and (
            isinstance(v, int) and v >= least if whole else
            isinstance(v, (int, float)) and 0 < v < float("inf"))
        if not ok:
            kind = "a whole number" if whole else "a number of seconds"
            raise UsageError(f"{name} must be {kind} {'>= 0' if least == 0 else '> 0'}"
                             f"{'' if whole else ' (finite)'}, got {v!r}")
    inner = sorted(set(engine_options) & {"model", "core", "properties"})
    if inner:
        raise UsageError(f"{inner[0]} is check's own to set: leave it out (the model's "
                         "properties() declare what is checked; z3=True decides them with "
                         "z3)")
    import inspect

    takes = inspect.signature(engine(explorer)).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in takes.values()):
        unknown = sorted(set(engine_options) - set(takes))
        if unknown:
            own = set(inspect.signature(check).parameters) | {"model", "core", "properties"}
            more = [n for n in takes if n not in own]
            raise UsageError(f"the {explorer} explorer takes no option "
                             f"{', '.join(map(repr, unknown))}: it takes check's own"
                             f"{' and ' + ', '.join(more) if more else ''}")
    limit = engine_options.get("max_memory")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                              or limit <= 0):
        raise UsageError(f"max_memory must be a whole number of bytes > 0 (or None for no "
                         f"guard), got {limit!r}")


def _can_check_symmetry(model, name: str) -> None:
    if not model.has_symmetry:
        raise UsageError(f"{name} has no symmetry to check (its model reduces by none: "
                         f"has_symmetry is false): drop --check-symmetry")
    init = next(iter(model.init_states()), None)
    if init is not None and model.symmetric_images(init) is None:
        raise UsageError(f"{name} does not list its symmetry's mappings: define "
                         f"symmetric_images(state) in its model to use --check-symmetry")


def validated(model, user_model: str | None = None):
    """``validate_model``, its complaint as bad input; ``user_model`` (the reference the
    user named it by, or None for kmc's own) is named in it, and an exception its own
    code raises is its mistake (``blamed``)."""
    with blamed(user_model):
        try:
            validate_model(model)
        except ModelError as e:
            raise UsageError(f"{user_model}: {e}" if user_model else str(e)) from None
    return model


def build_model(sc, variant: str, params: dict):
    """``sc.build``, with a ModelError (a bad parameter combination) as bad input."""
    try:
        return sc.build(variant, params)
    except ModelError as e:
        raise UsageError(str(e)) from None
