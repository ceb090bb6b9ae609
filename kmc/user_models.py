"""User models: ``kmc check path/to/file.py:factory`` or ``kmc check package.module:factory``.

The factory is any callable returning a ``kmc.Model``; each ``-p KEY=VALUE`` becomes one
keyword argument (VALUE read as a TOML literal: 3 is an int, true a bool; a string
otherwise). A model file is imported as a module named after the file, with its folder put
first on ``sys.path``, so the file may import its neighbours, and Spark executors on this
machine (which get the driver's ``sys.path``) import it the same way.
"""
from __future__ import annotations

import importlib
import inspect
import os
import re
import sys

from kmc.errors import UsageError
from kmc.model.contract import Model
from kmc.model.scenario import Scenario, did_you_mean

_MODULE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def is_user_ref(ref: str) -> bool:
    """``something.py:name`` or ``dotted.module:name``."""
    target, sep, attr = ref.rpartition(":")
    if not sep or not attr.isidentifier() or not target:
        return False
    return target.endswith(".py") or bool(_MODULE.match(target))


def user_scenario(ref: str) -> Scenario:
    target, _, attr = ref.rpartition(":")
    module = _load_file(target) if target.endswith(".py") else _load_module(target)
    factory = getattr(module, attr, None)
    if not callable(factory):
        names = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")]
        raise UsageError(f"{ref}: {target} has no callable {attr!r}"
                         f"{did_you_mean(attr, names)}: name a function or class that "
                         "returns a kmc.Model")
    doc = (inspect.getdoc(factory) or "").strip().splitlines()
    return Scenario(name=ref, description=doc[0] if doc else f"user model {ref}",
                    build=_builder(ref, factory), variants=("default",), family="user",
                    source=ref, free_params=True)


def _builder(ref, factory):
    def build(_variant, params):
        try:
            inspect.signature(factory).bind(**params)
        except TypeError as e:
            raise UsageError(f"{ref}: the factory does not take these parameters ({e}): "
                             f"its signature is {attr_signature(factory)}") from None
        except ValueError:  # no signature to check (a builtin): let the call say it
            pass
        try:
            model = factory(**params)
        except UsageError:
            raise
        except Exception as e:  # the user's own code: one line, not a traceback
            raise UsageError(f"{ref} raised {type(e).__name__}: {e}") from None
        if not isinstance(model, Model):
            raise UsageError(f"{ref} returned {type(model).__name__}, not a kmc.Model: "
                             "subclass kmc.Model (init_states, actions, next_state, "
                             "properties)")
        return model
    return build


def attr_signature(factory) -> str:
    try:
        return f"{getattr(factory, '__name__', 'factory')}{inspect.signature(factory)}"
    except (TypeError, ValueError):
        return "unknown"


def _load_module(name: str):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name and name.startswith(e.name):
            raise UsageError(f"no module named {name!r}: install the package that "
                             "provides it, or name a file as path/to/file.py:factory") \
                from None
        raise _import_failed(name, e) from None
    except Exception as e:
        raise _import_failed(name, e) from None


def _load_file(path: str):
    full = os.path.abspath(path)
    if not os.path.isfile(full):
        raise UsageError(f"model file {path} does not exist: check the path")
    folder, stem = os.path.split(full[:-3])
    if not stem.isidentifier():
        raise UsageError(f"model file {path}: rename it to a Python module name (letters, "
                         "digits and _), it is imported as a module")
    loaded = sys.modules.get(stem)
    if loaded is not None:
        if os.path.abspath(getattr(loaded, "__file__", "") or "") == full:
            return loaded
        raise UsageError(f"model file {path}: a module named {stem!r} is already loaded "
                         f"from {getattr(loaded, '__file__', 'elsewhere')}: rename the file")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        return importlib.import_module(stem)
    except Exception as e:
        raise _import_failed(path, e) from None


def _import_failed(what: str, e: Exception) -> UsageError:
    where = f" (line {e.lineno})" if isinstance(e, SyntaxError) and e.lineno else ""
    return UsageError(f"{what} failed to import: {type(e).__name__}: {e}{where}")
