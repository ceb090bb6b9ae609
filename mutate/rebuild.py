"""Recorded objects as the mutant's process would have built them: a replay hands the
mutant's model recorded states and actions, and a class the mutant loaded again
(a mutant of the module defining it, or of a module it imports) must be the class its
objects have. A NamedTuple is rebuilt as the class of the same name in the module now
loaded (its fields are its value); an object of any other reloaded class cannot be, and
a run holding one is explored in full (``class_modules``).
"""
from __future__ import annotations

import sys

from kmc.mutate.steps import by_step


def objects(graph):
    """Every object inside the recorded states, actions and questions, once each."""
    states, _expanded, successors, calls, _touched = graph[:5]
    seen = set()
    todo = list(states)
    todo.extend(a for succ in successors for a, _i in succ)
    todo.extend(a for st in by_step(graph) if st is not None
                for a in st[1] + st[4][0])  # listed actions, probed ones
    todo.extend(c[2] for c in calls)
    while todo:
        x = todo.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        yield x
        if isinstance(x, (tuple, list, frozenset, set)):
            todo.extend(x)
        elif isinstance(x, dict):
            todo.extend(x.keys())
            todo.extend(x.values())


def rebuildable(cls) -> bool:
    """Can a replay rebuild an object of ``cls`` as the class of the same name in a
    module loaded again (``Rebuild``)? A NamedTuple can: its fields are its value."""
    return issubclass(cls, tuple) and hasattr(cls, "_make") and hasattr(cls, "_fields")


def class_modules(graph) -> tuple[set, set]:
    """Modules that define a class of some object inside the recorded states or actions
    (builtins left out): those of classes a replay cannot rebuild as a reloaded
    module's class (a mutant that reloads one of them explores the run in full), and
    those of NamedTuples (a mutant that reloads one of them has the replay rebuild its
    objects)."""
    fixed, rebuilt = set(), set()
    for x in objects(graph):
        t = type(x)
        if t.__module__ != "builtins":
            (rebuilt if rebuildable(t) else fixed).add(t.__module__)
    return fixed, rebuilt


class CannotRebuild(Exception):
    """A recorded object's class was loaded again and cannot be rebuilt."""


class Rebuild:
    """Recorded objects as the mutant's process would have built them: every NamedTuple
    whose class comes from one of ``modules`` (loaded again by the mutant) is rebuilt as
    the class of the same name in the module now loaded, recursively; everything else is
    kept (shared parts stay shared). Raises ``CannotRebuild`` for an object of a
    reloaded class that is not a NamedTuple."""

    def __init__(self, modules):
        self.modules = frozenset(modules)
        self._memo: dict = {}  # id -> (original, rebuilt): the original keeps its id

    def __call__(self, x):
        t = type(x)
        if t in _ATOMS:
            return x
        hit = self._memo.get(id(x))
        if hit is not None:
            return hit[1]
        out = self._rebuild(x, t)
        self._memo[id(x)] = (x, out)
        return out

    def _rebuild(self, x, t):
        if t.__module__ in self.modules:
            if not rebuildable(t):
                raise CannotRebuild(f"{t.__module__}.{t.__qualname__}")
            return _class_named(t)._make([self(v) for v in x])
        if isinstance(x, (tuple, list, frozenset, set)):
            items = [self(v) for v in x]
            if all(a is b for a, b in zip(items, x)):
                return x
            return t._make(items) if rebuildable(t) else t(items)
        if isinstance(x, dict):
            return {self(k): self(v) for k, v in x.items()}
        return x


_ATOMS = frozenset({int, str, bool, float, bytes, type(None)})


def _class_named(t):
    """The class named like ``t`` in the module of that name loaded now."""
    obj = sys.modules.get(t.__module__)
    for part in t.__qualname__.split("."):
        obj = getattr(obj, part, None)
    if not isinstance(obj, type) or not rebuildable(obj):
        raise CannotRebuild(f"{t.__module__}.{t.__qualname__}")
    return obj
