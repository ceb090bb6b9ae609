"""Where a baseline run read the model object's attributes outside the traced files.

A mutant of the set-up can build a model that differs in an attribute that code the
tracer does not follow also names (the explorers' ``has_symmetry``, a shared module's
``flags``). Whether a run reads it there is a question of the run, not of the code:
the explorer reads ``has_symmetry`` only when the run asks for symmetry, and a shared
helper reads ``m.flags`` only in the steps that call it. So the baseline's run watches
the model object: each of its attributes becomes a property of a subclass the object
is moved to, which notes a read from a frame of no traced file. The tracer counts such
a read as a call of a function ``(MODEL, name)`` where it happens: in an expansion
(that expansion may be asked again), in the set-up, or outside (a replay is then not
tried). What code reads through ``vars()`` or ``__dict__`` is not seen; the framework
reads a model through its contract.

The watched run and a mutant's replay read alike up to the first value that differs,
so a replay that asks again every expansion that read a differing attribute, and finds
every answer the baseline's (``replay.same_graph``), is the baseline's run; a run
explored with the recorded successors (``reuse.reusing``) takes them only for states
whose expansion read no differing attribute.
"""
from __future__ import annotations

import os
import sys


#: the file name a read outside the traced files counts under, as if the attribute
#: were a function of that name (``tracer.Tracer.note_read``)
MODEL = "<the model object>"


class Watch:
    """Notes, in ``reads``, the names of ``model``'s own attributes that code of no
    file in ``traced`` (real paths) reads while the watch is on; with ``note``, hands
    each such read to it instead (``note(name)``: a tracer then counts it where it
    happens, in an expansion or outside). ``watched``: the names it could watch;
    None when the object cannot be watched (no ``__dict__``, or a class whose objects
    cannot change class)."""

    def __init__(self, model, traced, note=None):
        self.model, self.reads = model, set()
        self.watched = None
        own = getattr(model, "__dict__", None)
        if own is None:
            return
        names = frozenset(own)
        cls = type(model)
        known: dict = {}  # a frame's file name -> is it traced
        note = note or self.reads.add

        def prop(name):
            def get(obj):
                f = sys._getframe(1).f_code.co_filename
                mine = known.get(f)
                if mine is None:
                    mine = known[f] = os.path.realpath(f) in traced
                if not mine:
                    note(name)
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
        """(the names read outside and not handed to ``note``, the names watched),
        sorted; None: not watched."""
        if self.watched is None:
            return None
        return sorted(self.reads), sorted(self.watched)

    def close(self) -> None:
        """The model object gets its own class back."""
        if self.watched is not None:
            self.model.__class__ = self._cls
