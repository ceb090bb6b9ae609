"""User models: ``kmc check path/to/file.py:factory`` or ``kmc check package.module:factory``.

The factory is any callable returning a ``kmc.Model``; each ``-p KEY=VALUE`` becomes one
keyword argument (VALUE read as a TOML literal: 3 is an int, true a bool; a string
otherwise). A model file is imported as a module named after the file, with its folder put
last on ``sys.path`` (the file may import its neighbours, which never stand in for a module
kmc imports), and Spark executors on this machine (which get the driver's ``sys.path``)
import it the same way. VALUE is converted to the type of the factory parameter's default
or annotation (bool, int, float, str); otherwise it is read as a TOML literal.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import os
import re
import sys

from kmc.errors import UsageError
from kmc.model.contract import Model
from kmc.model.scenario import Scenario, did_you_mean, literal

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
                    source=ref, free_params=True, convert=_converter(ref, factory))


def _signature(factory):
    try:
        return inspect.signature(factory)
    except (TypeError, ValueError):  # no signature to check (a builtin): the call says it
        return None


def _converter(ref, factory):
    """Check raw ``-p`` values against the factory's signature and convert each to what
    the factory takes (``coerce``)."""
    def convert(params: dict) -> dict:
        sig = _signature(factory)
        if sig is not None:
            try:
                sig.bind(**params)
            except TypeError as e:
                raise UsageError(f"{ref}: the factory does not take these parameters "
                                 f"({e}): its signature is {attr_signature(factory)}") \
                    from None
        return {k: coerce(ref, sig.parameters.get(k) if sig else None, v)
                for k, v in params.items()}
    return convert


def _builder(ref, factory):
    def build(_variant, params):  # params: already converted by _converter
        with blamed(ref):
            model = factory(**params)
        if not isinstance(model, Model):
            raise UsageError(f"{ref} returned {type(model).__name__}, not a kmc.Model: "
                             "subclass kmc.Model (init_states, actions, next_state, "
                             "properties)")
        return model
    return build


@contextlib.contextmanager
def blamed(ref: str | None, raised_in_model: bool = False):
    """Run code that calls the user model ``ref``'s own code (None: one of kmc's models,
    whose errors stay internal errors): an exception in it, or a ``sys.exit``, is the
    model's bug, one line naming the model and the line of its code where it happened
    (``UsageError``, exit 2; the original is its ``__cause__``, which ``KMC_DEBUG=1``
    prints). ``raised_in_model``: only an exception raised from within the model's code
    is its bug; any other stays kmc's own (reports call a model's display hooks amid
    much code of kmc's)."""
    if ref is None:
        yield
        return
    try:
        yield
    except (UsageError, KeyboardInterrupt):
        raise
    except SystemExit as e:
        raise UsageError(f"{ref} called sys.exit({e.code!r}){_where(e, ref)}: a model "
                         "returns its answers; raise an exception to report a "
                         "problem") from e
    except (Exception, GeneratorExit) as e:  # the user's own code: one line, no traceback
        where = _where(e, ref)
        if raised_in_model and not where:
            raise
        if isinstance(e, TypeError) and "unhashable type" in str(e):
            raise UsageError(f"{ref} reached a state or action that is not a value "
                             f"({e}){where}: build them of tuples, NamedTuples and sorted "
                             "tuples (a set's order is not canonical), not lists, dicts or "
                             "sets") from e
        raise UsageError(f"{ref} raised {type(e).__name__}{where}: {e}") from e


def _where(e: BaseException, ref: str) -> str:
    """`` at FILE:LINE in FUNCTION``: the innermost frame of the traceback in the user's
    code (the model file's folder, or the model module's top-level package), if any."""
    target = ref.rpartition(":")[0]
    if target.endswith(".py"):
        roots = [os.path.dirname(os.path.abspath(target))]
    else:
        top = sys.modules.get(target.split(".")[0])
        roots = [os.path.dirname(p) for p in [getattr(top, "__file__", None)] if p]
    found, tb = None, e.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        module = str(tb.tb_frame.f_globals.get("__name__", ""))
        path = os.path.abspath(name)
        if not name.startswith("<") and module.partition(".")[0] != "kmc" and \
                any(path.startswith(r + os.sep) for r in roots):
            found = tb
        tb = tb.tb_next
    if found is None:
        return ""
    code = found.tb_frame.f_code
    return f" at {os.path.basename(code.co_filename)}:{found.tb_lineno} in {code.co_name}"


def coerce(ref: str, param: inspect.Parameter | None, value):
    """A ``-p`` value as the factory's parameter wants it: the type of its default (or
    its annotation) when that is bool, int, float or str, else a TOML literal (3 an int,
    true a bool, [1, 2] a list), else the string itself. A value that does not fit is
    one line naming the parameter."""
    want = None if param is None else _wanted_type(param)
    if want is None:
        return literal(value)
    if isinstance(value, want) and not (want is int and isinstance(value, bool)):
        return value
    if isinstance(value, str):
        text = value.strip()
        if want is bool and text.lower() in _BOOLS:
            return _BOOLS[text.lower()]
        if want is int and _INT.fullmatch(text):
            return int(text)
        if want is float and _FLOAT.fullmatch(text):
            return float(text)
        if want is str:
            return value
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    noun = {bool: "true or false", int: "a whole number", float: "a number",
            str: "a string"}[want]
    raise UsageError(f"{ref}: parameter {param.name} takes {noun}, got {value!r}")


_BOOLS = {"true": True, "yes": True, "on": True, "1": True,
          "false": False, "no": False, "off": False, "0": False}
_INT = re.compile(r"[+-]?[0-9]{1,4000}")  # int() refuses over 4300 digits
_FLOAT = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")


def _wanted_type(param: inspect.Parameter):
    """The type of the parameter's default, else its annotation (a type, or its name
    when annotations are strings); None when neither is bool, int, float or str."""
    if type(param.default) in _SIMPLE.values():  # a default "int" is a str
        return type(param.default)
    hint = param.annotation
    kind = _SIMPLE.get(hint) if isinstance(hint, str) else hint
    return kind if kind in _SIMPLE.values() else None


_SIMPLE = {"bool": bool, "int": int, "float": float, "str": str}


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
    except (Exception, SystemExit) as e:
        raise _import_failed(name, e) from e


def _load_file(path: str):
    full = os.path.abspath(path)
    if os.path.isdir(full):
        raise UsageError(f"model file {path} is a directory: name a Python file")
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
    other = importlib.util.find_spec(stem)
    if other is not None and os.path.abspath(other.origin or "") != full:
        raise UsageError(f"model file {path}: a module named {stem!r} is already importable "
                         f"from {other.origin or 'elsewhere'}: rename the file")
    if folder not in sys.path:
        # last on the path: the model's neighbours never stand in for a module kmc or
        # the standard library imports (Spark executors get the same path)
        sys.path.append(folder)
    try:
        return importlib.import_module(stem)
    except (Exception, SystemExit) as e:
        raise _import_failed(path, e) from e


def _import_failed(what: str, e: BaseException) -> UsageError:
    if isinstance(e, SystemExit):
        return UsageError(f"{what} called sys.exit({e.code!r}) while it was imported: a "
                          "model file defines its model; move that call under "
                          "`if __name__ == \"__main__\":`")
    where = f" (line {e.lineno})" if isinstance(e, SyntaxError) and e.lineno and \
        f"line {e.lineno})" not in str(e) else ""
    return UsageError(f"{what} failed to import: {type(e).__name__}: {e}{where}")
