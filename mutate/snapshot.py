"""Comparing what two processes built, by value: a mutant's modules and set-up against
the baseline's.

A mutant's worker loads its module, and every module importing it, afresh: each of
their objects is a new object, equal or not to the baseline's. ``value(x)`` turns an
object into a plain, picklable structure (tuples, strings, numbers) that two processes
can compare: containers and records by their contents, functions by their code, their
defaults and the values they close over, classes by their bodies; a module, or a class
or function of a module ``value`` is not told to look into, by its name. An object it
cannot describe is different from everything (``OPAQUE``), so a comparison errs
towards "changed".

Two uses (``replay``):

- ``namespace(module)``: every global of a module after import. A mutant outside any
  function (a constant, a class body, a default argument) changes the globals it
  assigns, and the globals computed from them; ``changed`` names them, and ``readers``
  finds the code that mentions one of those names;
- ``setup_image(...)``: what a run's set-up built: the model object with everything it
  holds, its initial states, its fair actions, the scenario's options and resolved
  parameters. A mutant whose set-up builds an equal image can change the run only
  through the code the exploration calls afterwards.
"""
from __future__ import annotations

import dataclasses
import dis
import enum
import functools
import hashlib
import os
import re
import types

#: the most objects one ``value`` call describes before giving up (``OPAQUE``)
MAX_NODES = 500_000


class _Opaque:
    """Equal to nothing. (Inside a tuple Python takes an object as equal to itself, but
    what one process describes reaches another pickled, as another object.)"""

    def __eq__(self, other):
        return False

    def __ne__(self, other):
        return True

    def __hash__(self):
        return 0

    def __repr__(self):
        return "OPAQUE"


OPAQUE = _Opaque()
_ATOMS = (type(None), bool, int, float, complex, str, bytes)


class _TooLarge(Exception):
    pass


def value(x, own=None, code=True):
    """``x`` as a comparable structure. A function of a module named in ``own`` (None:
    of any module) is described by its defaults, the values it closes over and (with
    ``code``) a digest of its code; a class of such a module, with ``code`` and a named
    ``own``, by its body too; every other class or function by its name."""
    try:
        return _Describer(own, code)(x)
    except _TooLarge:
        return OPAQUE


class _Describer:
    def __init__(self, own, code):
        self.own, self.code = own, code
        self.stack: dict = {}  # id -> depth, of the objects being described
        self.nodes = 0

    def __call__(self, x):
        t = type(x)
        if t in _ATOMS:
            return x
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _TooLarge
        depth = self.stack.get(id(x))
        if depth is not None:  # a cycle: where on the path it closes
            return ("cycle", len(self.stack) - depth)
        self.stack[id(x)] = len(self.stack)
        try:
            return self._describe(x, t)
        finally:
            del self.stack[id(x)]

    def _own(self, x) -> bool:
        return self.own is None or x.__module__ in self.own

    def _name(self, x):
        return (getattr(x, "__module__", None), getattr(x, "__qualname__", None))

    def _describe(self, x, t):
        if isinstance(x, tuple):
            items = tuple(self(v) for v in x)
            return items if t is tuple else ("record", *self._name(t), items)
        if t is list:
            return ("list", tuple(self(v) for v in x))
        if isinstance(x, (set, frozenset)):
            return ("set", frozenset(self(v) for v in x))
        if isinstance(x, dict):
            items = frozenset((self(k), self(v)) for k, v in x.items())
            return ("dict", items) if t is dict else ("dict", *self._name(t), items)
        if isinstance(x, types.ModuleType):
            return ("module", x.__name__)
        if isinstance(x, enum.Enum):
            return ("enum", *self._name(t), x.name)
        if isinstance(x, type):
            return self._class(x)
        if isinstance(x, types.FunctionType):
            return self._function(x)
        if isinstance(x, types.CodeType):
            return ("code", code_key(x))
        if isinstance(x, types.MethodType):
            return ("method", self(x.__self__), self(x.__func__))
        if isinstance(x, (staticmethod, classmethod)):
            return (t.__name__, self(x.__func__))
        if isinstance(x, property):
            return ("property", self(x.fget), self(x.fset), self(x.fdel))
        if isinstance(x, functools.partial):
            return ("partial", self(x.func), self(x.args), self(x.keywords))
        if hasattr(x, "__wrapped__") and callable(x):  # functools.lru_cache and kin
            params = x.cache_parameters() if hasattr(x, "cache_parameters") else None
            return ("wrapped", self(x.__wrapped__), self(params))
        if isinstance(x, (types.WrapperDescriptorType, types.MethodDescriptorType,
                          types.MethodWrapperType)):
            return ("builtin", x.__qualname__, None)
        if t is object:  # a sentinel: no content, no name
            return ("sentinel",)
        if isinstance(x, re.Pattern):
            return ("pattern", x.pattern, x.flags)
        if isinstance(x, (types.BuiltinFunctionType, types.BuiltinMethodType)):
            owner = getattr(x, "__self__", None)
            return ("builtin", x.__qualname__,
                    None if owner is None or isinstance(owner, types.ModuleType)
                    else self(owner))
        if dataclasses.is_dataclass(x):
            return ("object", *self._name(t), tuple(
                (f.name, self(getattr(x, f.name))) for f in dataclasses.fields(x)))
        if hasattr(x, "__dict__") or hasattr(t, "__slots__"):
            attrs = dict(vars(x)) if hasattr(x, "__dict__") else {}
            for cls in t.__mro__:
                for s in getattr(cls, "__slots__", ()):
                    if isinstance(s, str) and s not in attrs and hasattr(x, s):
                        attrs[s] = getattr(x, s)
            return ("object", *self._name(t), self(attrs))
        return self._reduced(x, t)

    def _reduced(self, x, t):
        """An object of a C type by what pickling it would keep (``__reduce__``), e.g. a
        NamedTuple's field accessor; ``OPAQUE`` when that says nothing."""
        try:
            r = x.__reduce__()
        except Exception:
            return OPAQUE
        if not isinstance(r, tuple) or len(r) < 2 or r[0] is getattr(
                __import__("copyreg"), "_reconstructor", None):
            return OPAQUE
        return ("reduced", *self._name(t), self(r[0]), self(r[1:]))

    def _class(self, c):
        if not self.code or self.own is None or c.__module__ not in self.own:
            return ("class", *self._name(c))
        body = {k: v for k, v in vars(c).items()
                if k not in ("__dict__", "__weakref__", "__doc__", "__module__")}
        fields = getattr(c, "__dataclass_fields__", None)
        if fields:  # a dataclass's defaults live in its Field objects
            body["__dataclass_fields__"] = {
                n: (None if f.default is dataclasses.MISSING else f.default,
                    None if f.default_factory is dataclasses.MISSING else f.default_factory)
                for n, f in fields.items()}
        return ("class", *self._name(c), tuple(self(b) for b in c.__bases__),
                self(body))

    def _function(self, f):
        if not self._own(f):
            return ("function", *self._name(f))
        cells = tuple(self(c.cell_contents) if _filled(c) else None
                      for c in f.__closure__ or ())
        return ("function", *self._name(f), code_key(f.__code__) if self.code else None,
                self(f.__defaults__), self(f.__kwdefaults__), cells)


def _filled(cell) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def code_key(code) -> str:
    """A digest of what a code object does: its instructions, names, constants (nested
    code by its own digest) and lines; equal for the same source compiled twice."""
    def parts(c):
        consts = tuple(parts(k) if isinstance(k, types.CodeType) else repr(k)
                       for k in c.co_consts)
        return (c.co_code, c.co_names, c.co_varnames, c.co_freevars, c.co_cellvars,
                c.co_flags, c.co_argcount, c.co_kwonlyargcount, c.co_firstlineno,
                c.co_qualname, c.co_linetable, c.co_exceptiontable, consts)
    return hashlib.sha256(repr(parts(code)).encode()).hexdigest()[:32]


def namespace(module, own) -> dict:
    """Every global of ``module`` (its dunder names left out) -> ``value``."""
    return {k: value(v, own) for k, v in vars(module).items()
            if not (k.startswith("__") and k.endswith("__"))}


def changed(before: dict, after: dict) -> tuple[set, set]:
    """Between two ``namespace``s of one module: the globals whose value differs (added,
    removed or changed), and the attributes that differ of the classes among them."""
    names, attributes = set(), set()
    for k in set(before) | set(after):
        a, b = before.get(k, OPAQUE), after.get(k, OPAQUE)
        if k not in before or k not in after:
            if _is_module(a) or _is_module(b):  # a package's submodule: bound once
                continue                       # it is imported, in any order
        if a != b:
            names.add(k)
            attributes |= _class_attributes(a, b)
    return names, attributes


def _is_module(v) -> bool:
    return isinstance(v, tuple) and len(v) == 2 and v[0] == "module"


def _class_attributes(a, b) -> set:
    """The attributes that differ between two class descriptions (``_class``)."""
    if not (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) == 5
            and a[0] == b[0] == "class"):
        return set()
    x, y = dict(a[4][1]), dict(b[4][1])
    return {k for k in set(x) | set(y) if isinstance(k, str)
            and x.get(k, OPAQUE) != y.get(k, OPAQUE)}


_LOAD_GLOBAL = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_LOAD_ATTR = frozenset({"LOAD_ATTR", "LOAD_METHOD"})


def readers(modules, globals_changed, attributes, files) -> set | None:
    """(file, first line) of every code object of ``modules`` (nested ones included)
    that can read a changed value: a global of its module that changed
    (``globals_changed``: (module, name) pairs), an attribute of a module that changed,
    an attribute of any other object named like a changed global or like one of the
    changed class ``attributes``, or a string constant of such a name (``getattr``).
    ``files``: real path -> the file as the tracer names it; None when a reader lies in
    a file not named there (the tracer did not follow its calls)."""
    out = set()
    anywhere = frozenset(n for _m, n in globals_changed) | frozenset(attributes)
    for mod in modules:
        todo = [v.__code__ for v in _functions(vars(mod).values(), mod.__name__)]
        while todo:
            code = todo.pop()
            todo.extend(k for k in code.co_consts if isinstance(k, types.CodeType))
            if anywhere.isdisjoint(code.co_names) and anywhere.isdisjoint(
                    k for k in code.co_consts if isinstance(k, str)):
                continue
            if not _reads(code, mod, globals_changed, anywhere):
                continue
            f = files.get(os.path.realpath(code.co_filename))
            if f is None:
                return None
            out.add((f, code.co_firstlineno))
    return out


def _reads(code, mod, globals_changed, anywhere) -> bool:
    """Does ``code`` (of ``mod``) read a changed value (``readers``)?"""
    if not anywhere.isdisjoint(k for k in code.co_consts if isinstance(k, str)):
        return True
    receiver = None  # the module a LOAD_GLOBAL just pushed, if it pushed one
    for ins in dis.get_instructions(code):
        name = ins.argval
        if ins.opname in _LOAD_GLOBAL:
            if (mod.__name__, name) in globals_changed:
                return True
            bound = vars(mod).get(name)
            receiver = bound.__name__ if isinstance(bound, types.ModuleType) else None
            continue
        if ins.opname in _LOAD_ATTR and name in anywhere:
            if receiver is None or (receiver, name) in globals_changed:
                return True
        elif ins.opname in ("STORE_ATTR", "DELETE_ATTR", "IMPORT_FROM") and \
                name in anywhere:
            return True
        receiver = None
    return False


def codes_of(obj, module: str) -> list:
    """The code of ``obj`` if it is a function of ``module`` (unwrapped), or of every
    function of it if it is a class of ``module``."""
    return [f.__code__ for f in _functions([obj], module)]


def _functions(values, module: str):
    """Every function defined in ``module`` among ``values``: the functions (unwrapped:
    a cache's, a static or class method's, a property's) and the classes' methods."""
    seen = set()
    todo = list(values)
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, (staticmethod, classmethod)):
            v = v.__func__
        elif isinstance(v, property):
            todo.extend(f for f in (v.fget, v.fset, v.fdel) if f is not None)
            continue
        while hasattr(v, "__wrapped__") and not isinstance(v, type):
            v = v.__wrapped__
        if isinstance(v, types.FunctionType) and v.__module__ == module:
            yield v
        elif isinstance(v, type) and v.__module__ == module:
            todo.extend(vars(v).values())


def setup_image(info: dict, scenario, model) -> tuple:
    """What a run's set-up built, by value: the model object (before anything wraps its
    methods), its initial states, its fair actions (``_fairness``), the scenario's
    options, and the variant and the explorer's bounds. The scenario's parameters reach
    a run only through what the set-up built from them."""
    params = {k: v for k, v in info.items() if k not in ("scenario", "params")}
    return tuple(value(x, code=False) for x in (
        model, list(model.init_states()), _fairness(model),
        getattr(scenario, "options", None), params))


def _fairness(model):
    """What a run observes of the model's action names: the actions its liveness
    checks take as weakly and strongly fair (often derived from the names) and what the
    check of the fairness declaration says (``model.fairness.check_declaration``, run
    on every model a run checks: a fair name the names leave out is its error). The
    rest only lists actions that never fired in a run's coverage, which no verdict or
    count depends on."""
    from kmc.model.fairness import check_declaration

    weak, strong = tuple(model.weakly_fair), tuple(model.strongly_fair)
    try:
        check_declaration(model)
        declared = None
    except Exception as e:
        declared = f"{type(e).__name__}: {e}"
    return weak, strong, declared


def same_set_up(image, baseline, fairness_read: bool = True) -> bool:
    """Did a mutant's set-up build what the baseline's did (``setup_image``s), as far as
    its run can tell? A run that checks no liveness property (``fairness_read`` False)
    reads the fair actions only through the declaration's check: the fair actions may
    then differ where the check says the same (a mutant of the action names, from which
    a model derives its fair actions)."""
    if image == baseline:
        return True
    if fairness_read:
        return False
    return _unfair(image) == _unfair(baseline)  # OPAQUE equals nothing


def _unfair(image):
    """``image`` without the fair actions (OPAQUE when it is not an image)."""
    if not (isinstance(image, tuple) and len(image) == 5 and isinstance(image[2], tuple)
            and len(image[2]) == 3):
        return OPAQUE
    model, inits, (_weak, _strong, declared), options, params = image
    return model, inits, declared, options, params
