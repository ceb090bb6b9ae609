"""Which of the model object's attributes a baseline run read where the tracer does not
look.

A mutant of the set-up can build a model that differs in an attribute the framework
also names (``bounds``, ``has_symmetry``, ``partition_fields``). Whether a run reads it
there is a question of the run, not of the code: the explorer reads ``has_symmetry``
only when the run asks for symmetry. So the baseline's run watches the model object's
attributes whose names code outside the traced files spells (``setup_reads.
framework_names``): each becomes a property of a subclass the object is moved to, which
notes the name when the frame reading it is not of a traced file. What the run reads
through ``vars()`` or ``__dict__`` is not seen; the framework reads a model through its
contract.

The watched run and a mutant's run read alike up to the first value that differs: a
replay that finds every answer the baseline's (``replay.same_graph``) is that run, so
an attribute nothing outside read in the baseline's run is read nowhere outside in the
mutant's. A run explored with the recorded successors (``reuse.reusing``) takes a
recorded state's successors and invariants' answers only where the baseline computed
them without such a read.
"""
from __future__ import annotations

import os
import sys


def watch_outside(model, traced) -> "Watch":
    """A ``Watch`` of every attribute ``model`` holds itself."""
    return Watch(model, None, traced)


class Watch:
    """Notes, in ``reads``, the names among ``names`` (None: all) of ``model``'s own
    attributes that code of no file in ``traced`` (real paths) reads while the watch
    is on. ``watched``: the names it could watch; None when the object cannot be
    watched (no ``__dict__``, or a class whose objects cannot change class)."""

    def __init__(self, model, names, traced):
        self.model, self.reads = model, set()
        self.watched = None
        own = getattr(model, "__dict__", None)
        if own is None:
            return
        names = frozenset(n for n in own if names is None or n in names)
        cls = type(model)
        known: dict = {}  # a frame's file name -> is it traced
        reads = self.reads

        def prop(name):
            def get(obj):
                f = sys._getframe(1).f_code.co_filename
                mine = known.get(f)
                if mine is None:
                    mine = known[f] = os.path.realpath(f) in traced
                if not mine:
                    reads.add(name)
                try:
                    return obj.__dict__[name]
                except KeyError:
                    raise AttributeError(name) from None

            def put(obj, value):
                obj.__dict__[name] = value

            def drop(obj):
                del obj.__dict__[name]
            return property(get, put, drop)

        body = {n: prop(n) for n in names}
        body.update(__module__=cls.__module__, __qualname__=cls.__qualname__)
        try:
            sub = type(cls.__name__, (cls,), body)
            model.__class__ = sub
        except TypeError:
            return
        self._cls, self.watched = cls, names

    def read(self) -> tuple | None:
        """(the names read outside, the names watched), sorted; None: not watched."""
        if self.watched is None:
            return None
        return sorted(self.reads), sorted(self.watched)

    def close(self) -> None:
        """The model object gets its own class back."""
        if self.watched is not None:
            self.model.__class__ = self._cls
