"""Where two set-ups differ, and the code that can read what differs.

A mutant of the set-up (a flag of a variant, a default of a configuration record, an
attribute ``__init__`` assigns) builds another model than the baseline's. Mostly the
difference is one field of a record the model holds (``model.flags.fetch_topic_id``)
that only some expansions read, or none: a release line never reads the flag of a
message type it does not send. ``differences`` names the differing values by their
paths of attribute and field names from the model object; ``readers`` finds the code
that can read them. Re-asking the expansions that called such code (``replay``) then
decides the run, as it does for a mutant of a function.

What can read the value at ``model.a.b.c``:

- code that reads an attribute named ``c`` of any object, or holds the string ``"c"``
  (``getattr``): the value itself;
- code that reads ``a`` or ``b`` and lets that container escape: anything but reading
  one of its data fields at once (``m.flags.topic_ids``), or through a local variable
  that is only ever used so (``f = m.flags`` ... ``f.topic_ids``). A container passed
  on, compared, printed, indexed or asked a method (even one kept for later) reaches
  all of its fields.

The framework (the explorers, the property checker) reads a model through its
contract; a name it reads anywhere outside its own objects' attributes (``self.name``
in a method of a class that is not a model) cannot be told apart from the model's, so
a difference at such a name is not decided here (``readers`` gives None). Names are
compared as the code spells them: a model that reads its attributes by computed names
(``getattr(m, prefix + "x")``) is outside what this can see.
"""
from __future__ import annotations

import dis
import importlib
import os
import sys
import types
from typing import NamedTuple

from kmc.mutate import snapshot as sn
from kmc.mutate.outside_reads import MODEL

_MISSING = object()


class Differences(NamedTuple):
    """Where two set-ups differ: ``paths`` of attribute and field names from the model
    object; ``fields``: the name of each object or record on the way (a container) ->
    the names of its data fields (in both set-ups), which code may read one by one."""
    paths: list
    fields: dict


def differences(image, baseline, fairness_read: bool = True) -> Differences | None:
    """Where two ``snapshot.setup_image``s differ; None when they differ anywhere but
    in the model object (the initial states, the options, the variant or the bounds,
    the fair actions where a liveness check reads them) or at a value no name reaches."""
    if not (isinstance(image, tuple) and isinstance(baseline, tuple)
            and len(image) == len(baseline) == 5):
        return None
    rest, base_rest = image[1:], baseline[1:]
    if not fairness_read:  # the fair actions count only through their check
        a, b = sn._unfair(image), sn._unfair(baseline)
        if a is sn.OPAQUE or b is sn.OPAQUE:
            return None
        rest, base_rest = a[1:], b[1:]
    if rest != base_rest:
        return None
    out = Differences([], {})
    return out if _paths(image[0], baseline[0], (), out) else None


def _paths(a, b, path: tuple, out: Differences) -> bool:
    if a == b:
        return True
    fa, fb = _fields(a), _fields(b)
    if fa is not None and fb is not None and a[:3] == b[:3]:
        if path:  # a container: the fields both have are its data
            both = frozenset(fa) & frozenset(fb)
            out.fields[path[-1]] = out.fields.get(path[-1], both) & both
        for k in sorted(set(fa) | set(fb)):
            va, vb = fa.get(k, _MISSING), fb.get(k, _MISSING)
            if va is _MISSING or vb is _MISSING:
                out.paths.append(path + (k,))  # an attribute one of them lacks
            elif not _paths(va, vb, path + (k,), out):
                return False
        return True
    if not path:  # the model object itself is not one object of one class
        return False
    out.paths.append(path)
    return True


def _fields(d) -> dict | None:
    """name -> value of an object's or a record's description (``snapshot.value``);
    None for any other description, or one whose names cannot be told."""
    if not (isinstance(d, tuple) and len(d) == 4 and d[0] in ("object", "record")):
        return None
    _kind, module, qualname, body = d
    if d[0] == "record":
        names = _record_fields(module, qualname)
        if names is None or len(names) != len(body):
            return None
        return dict(zip(names, body))
    if isinstance(body, tuple) and len(body) == 2 and body[0] == "dict":
        items = body[1]  # vars() and slots
    else:
        items = body  # a dataclass: (name, value) pairs
    try:
        out = dict(items)
    except (TypeError, ValueError):
        return None
    return out if all(isinstance(k, str) for k in out) else None


def _record_fields(module, qualname):
    obj = sys.modules.get(module) if isinstance(module, str) else None
    for part in (qualname or "").split("."):
        obj = getattr(obj, part, None)
    names = getattr(obj, "_fields", None)
    return tuple(names) if isinstance(obj, type) and isinstance(names, tuple) else None


def readers(diff: Differences, files, roots=None, outside=None) -> set | None:
    """(file, first line) of every code object of the traced modules (``files``: the
    real path of each file the tracer follows -> its name there) that can read a value
    where the set-ups differ (``diff``; module docstring); None when code the tracer
    does not follow
    reads one of the names (``framework_names``; ``roots``: the modules of the model's
    code). A method a dataclass generated for a class that is not a model reads only
    its own object's fields. ``outside``: (the model object's attributes its
    invariants' answers read outside the traced files, those the run watched:
    ``outside_reads``), or None. A watched attribute that differs is then judged by
    the run rather than by its name: code outside the traced files that read it
    counted as a call of ``(outside_reads.MODEL, name)`` where it ran, which is then
    among the readers."""
    from kmc.model.contract import Model

    modules = [m for m in list(sys.modules.values())
               if os.path.realpath(getattr(m, "__file__", None) or "/") in files]
    leaves = frozenset(p[-1] for p in diff.paths)
    containers = {n: diff.fields.get(n, frozenset()) for p in diff.paths for n in p[:-1]}
    names = leaves | frozenset(containers)
    out = set()
    if outside is not None:
        read, watched = outside
        top = {p[0] for p in diff.paths}
        if not top.isdisjoint(read):
            return None
        judged = (top & watched) - {n for p in diff.paths for n in p[1:]}
        names -= judged
        out |= {(MODEL, n) for n in judged}
    if not names.isdisjoint(framework_names(modules, roots)):
        return None
    for mod in modules:
        for code, owner in _owned_codes(mod):
            if not _reads(code, leaves, containers):
                continue
            f = files.get(os.path.realpath(code.co_filename))
            if f is not None:
                out.add((f, code.co_firstlineno))
            elif not (owner is not None and not issubclass(owner, Model) and
                      names.isdisjoint(_read_names(code, True))):
                return None
    return out


def _reads(code, leaves, containers) -> bool:
    """Can ``code`` read an attribute named in ``leaves``, or let a container named in
    ``containers`` (name -> its data fields) escape?"""
    names = set(code.co_names)
    strings = {k for k in code.co_consts if isinstance(k, str)}
    if not leaves.isdisjoint(names) or not strings.isdisjoint(leaves | containers.keys()):
        return True
    if names.isdisjoint(containers):
        return False
    ins = [i for i in dis.get_instructions(code) if i.opname != "EXTENDED_ARG"]
    aliases: dict = {}  # local variable -> the data fields of the container it holds
    for j, i in enumerate(ins):
        fields = containers.get(_attr(i))
        if fields is not None:
            nxt = ins[j + 1] if j + 1 < len(ins) else None
            if nxt is not None and nxt.opname == "STORE_FAST":
                aliases[nxt.argval] = aliases.get(nxt.argval, fields) & fields
            elif not _harmless(ins, j + 1, fields):
                return True
        elif i.opname in ("STORE_ATTR", "DELETE_ATTR") and i.argval in containers:
            return True
    for j, i in enumerate(ins):
        if i.opname.startswith("LOAD_FAST") and i.argval in aliases and \
                not _harmless(ins, j + 1, aliases[i.argval]):
            return True
    return False


def _harmless(ins, j, fields) -> bool:
    """Does the value just loaded (``ins[j]`` next) go only to a read of one of its
    data ``fields``, or to a test of whether it is None, which reads none of them?"""
    i = ins[j] if j < len(ins) else None
    if _field_read(i, fields):
        return True
    if i is not None and i.opname.startswith("POP_JUMP") and i.opname.endswith("NONE"):
        return True
    k = ins[j + 1] if j + 1 < len(ins) else None
    return i is not None and i.opname == "LOAD_CONST" and i.argval is None and \
        k is not None and k.opname == "IS_OP"


def _attr(i):
    """The attribute name an instruction reads, or None."""
    return i.argval if i.opname in ("LOAD_ATTR", "LOAD_METHOD") else None


def _field_read(i, fields) -> bool:
    """Does ``i`` read one of the data ``fields`` of the value below it (not a method,
    whose code may read every field)?"""
    return i is not None and i.opname == "LOAD_ATTR" and i.argval in fields and \
        "NULL" not in (i.argrepr or "")


#: module name -> (the module, the names it reads): ``framework_names``, per module
_NAMES: dict = {}
_LOADED: list = []  # not empty once ``_load_framework`` ran in this process


def framework_names(served, roots=None) -> frozenset:
    """Every attribute name read or written where the tracer does not look, by code that
    can hold the model: kmc's framework (every module of kmc but its models, the
    mutation tester and the command line) and the modules the model's code (``roots``:
    ``model_modules``; default ``served``) imports, directly or not, but the
    ``served`` ones (whose code the tracer follows); an attribute of ``self`` in a
    method of a class that is not a model left out. A module that reads attributes by
    name (``getattr``) counts its strings as names too. (A scenario module that builds
    models of other kinds is not the model's code: it runs at set-up.)"""
    _load_framework()
    own = {m.__name__ for m in served}
    mods = [m for n, m in list(sys.modules.items()) if m is not None and n not in own
            and (n == "kmc" or n.startswith("kmc.")) and not n.startswith(_NOT_FRAMEWORK)]
    mods += [m for m in _imported(served if roots is None else roots)
             if m.__name__ not in own]
    out: set = set()
    for mod in mods:
        got = _NAMES.get(mod.__name__)
        if got is None or got[0] is not mod:
            got = _NAMES[mod.__name__] = (mod, _module_names(mod))
        out |= got[1]
    return frozenset(out)


#: kmc's models (a served module's imports among them count), the mutation tester and
#: the command line (no run executes them)
_NOT_FRAMEWORK = ("kmc.model.kafka", "kmc.model.validation", "kmc.mutate", "kmc.cli",
                  "kmc.commands")
_PREFIXES = tuple({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix,
                                                  sys.exec_prefix)})


def model_modules(model) -> list:
    """The modules of the model's code: of its class, and of the objects, classes and
    functions its attributes hold (its features, its step tables), one level into a
    tuple, list or dict."""
    names = {type(model).__module__}
    for v in list(vars(model).values()) if hasattr(model, "__dict__") else ():
        items = list(v.values()) if isinstance(v, dict) else \
            list(v) if isinstance(v, (tuple, list)) else [v]
        for x in [v, *items]:
            names.add(x.__module__ if isinstance(x, (type, types.FunctionType))
                      else type(x).__module__)
    return [m for m in map(sys.modules.get, sorted(n for n in names if n)) if m is not None
            and _ours(m)]


def _imported(served) -> list:
    """The modules the ``served`` ones import, directly or through each other: the
    models' and the user's, not the standard library's or an installed package's."""
    seen = {m.__name__: m for m in served}
    todo = list(served)
    while todo:
        mod = todo.pop()
        for v in list(vars(mod).values()):
            m = v if isinstance(v, types.ModuleType) else \
                sys.modules.get(getattr(v, "__module__", None) or "")
            if m is None or m.__name__ in seen or not _ours(m):
                continue
            seen[m.__name__] = m
            todo.append(m)
    return list(seen.values())


def _ours(mod) -> bool:
    if mod.__name__ == "kmc" or mod.__name__.startswith("kmc."):
        return True
    path = getattr(mod, "__file__", None)
    return path is not None and not os.path.realpath(path).startswith(_PREFIXES)


def _load_framework() -> None:
    """Import every module of the parts of kmc a run may execute (the explorers but the
    Spark ones, the property checker, the model core): one it imports only later in a
    run reads names too."""
    import pkgutil

    if _LOADED:
        return
    names = ["kmc.api"]
    for package in ("kmc.explorers", "kmc.invariants", "kmc.model"):
        mod = importlib.import_module(package)
        names += [f"{package}.{m.name}" for m in pkgutil.iter_modules(mod.__path__)
                  if not m.ispkg]
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:  # an optional part (a missing library): it cannot run
            pass
    _LOADED.append(True)


def _module_names(mod) -> frozenset:
    from kmc.model.contract import Model

    names: set = set()
    for code, owner in _owned_codes(mod):
        names |= _read_names(code, owner is not None and not issubclass(owner, Model))
    return frozenset(names)


def _owned_codes(mod):
    """(code, the class whose method it is, or None) for every code object of the
    functions and classes ``mod`` defines, nested ones included."""
    for v in list(vars(mod).values()):
        owner = v if isinstance(v, type) and v.__module__ == mod.__name__ else None
        for f in sn._functions([v], mod.__name__):  # a decorated one: its own code
            for code in _nested(f.__code__):
                yield code, owner


def _nested(code):
    todo = [code]
    while todo:
        c = todo.pop()
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        yield c


#: what turns a string into an attribute read
_BY_NAME = frozenset({"getattr", "hasattr", "setattr", "delattr", "attrgetter", "vars",
                      "__dict__", "__getattribute__"})
_ATTR_OPS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR"})


def _read_names(code, own_self: bool) -> set:
    """The attribute names ``code`` reads or writes, and its strings when it reads
    attributes by name (``getattr``); with ``own_self``, not those of ``self`` (nor of
    ``other`` in a dataclass's generated method: an object of the same class)."""
    names = {k for k in code.co_consts if isinstance(k, str)} \
        if not _BY_NAME.isdisjoint(code.co_names) else set()
    own = ("self", "other") if code.co_qualname.startswith("__create_fn__") else ("self",)
    prev = None
    for i in dis.get_instructions(code):
        if i.opname in _ATTR_OPS and not (
                own_self and prev is not None and prev.argval in own
                and prev.opname.startswith(("LOAD_FAST", "LOAD_DEREF"))):
            names.add(i.argval)
        prev = i
    return names
