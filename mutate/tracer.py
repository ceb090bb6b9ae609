"""What the baseline's runs execute: the lines of the mutated files, and where each
function of the files a mutant can reload is called from.

A call is one of three kinds, and ``replay`` treats each its own way:

- **set-up** (``at_setup``): while the scenario and the model are built, and when the
  explorer asks the model's initial states or action names. Its effect on a run is
  what it builds, which a mutant's worker compares by value (``snapshot.setup_image``);
- **inside** (``called``): while the model computes the successors of one state. A
  mutant's worker asks the successors of those states again;
- **outside** (``outside``): anything else (a property, the symmetry reduction, a
  report), and every call made from inside a decorated (cached) function, whose result
  may be handed out later where its lines do not run. A mutant reaching such code is
  explored in full.
"""
from __future__ import annotations

import dis
import os
import sys


class LineTracer:
    """The lines of ``files`` executed while it is on, and the functions of ``files``
    and ``followed`` called, by kind (the module docstring), as (file, first line). A
    function whose every line has run is no longer traced line by line, so the cost
    falls to one callback per call once the hot code is covered; a function of
    ``followed`` only is never traced line by line."""

    def __init__(self, files, followed=(), decorated=None):
        self.wanted = tracked(files, followed)
        #: real path -> first lines of its decorated functions (``decorated_lines``);
        #: a file not in it is read
        self._given = {os.path.realpath(p): v for p, v in (decorated or {}).items()}
        self.lines: dict[str, set] = {f: set() for f in files}
        names = list(self.wanted.values())
        self.outside: dict[str, set] = {f: set() for f in names}
        self.at_setup: dict[str, set] = {f: set() for f in names}
        self.inside = False  # set by the Recorder while the model computes successors
        self.setup = False   # set while the run's set-up builds the model
        #: while the Recorder asks the successors of one state: the functions called
        self.called: set | None = None
        self._cached_depth = 0  # decorated frames on the stack
        self._files: dict[str, str | None] = {}
        self._decorated: dict[str, frozenset] = {}  # file -> first lines of decorated defs
        #: code object -> lines of it not run yet (None: not a line-traced file)
        self._todo: dict = {}

    def _file(self, code):
        name = code.co_filename
        f = self._files.get(name, 0)
        if f == 0:
            f = self._files[name] = self.wanted.get(os.path.realpath(name))
            if f is not None:
                given = self._given.get(os.path.realpath(f))
                self._decorated[f] = given if given is not None else \
                    decorated_lines(_read(f))
        return f

    def _remaining(self, code, f):
        todo = self._todo.get(code, 0)
        if todo == 0:
            todo = None if f not in self.lines else \
                {n for _o, n in dis.findlinestarts(code) if n is not None}
            self._todo[code] = todo
        return todo

    def __enter__(self):
        def call(frame, event, arg):
            code = frame.f_code
            f = self._file(code)
            if f is None:
                return None
            where = code.co_firstlineno
            cached = where in self._decorated[f]
            if cached or self._cached_depth:
                self.outside[f].add(where)
            elif self.inside:
                if self.called is not None:
                    self.called.add((f, where))
            elif self.setup:
                self.at_setup[f].add(where)
            else:
                self.outside[f].add(where)
            todo = self._remaining(code, f)
            hits = self.lines.get(f)
            if hits is not None:
                hits.add(frame.f_lineno)
            if cached:
                self._cached_depth += 1
            elif not todo:
                return None

            def local(frame, event, arg):
                if event == "line":
                    if hits is not None:
                        hits.add(frame.f_lineno)
                        todo.discard(frame.f_lineno)
                elif event == "return" and cached:
                    self._cached_depth -= 1
                return local
            return local
        sys.settrace(call)
        return self

    def __exit__(self, *exc):
        sys.settrace(None)

    def phase(self, setup: bool):
        """A context in which calls count as set-up (``True``) or not."""
        return _Phase(self, setup)


class _Phase:
    def __init__(self, tracer, setup):
        self.tracer, self.setup = tracer, setup

    def __enter__(self):
        self.was, self.tracer.setup = self.tracer.setup, self.setup

    def __exit__(self, *exc):
        self.tracer.setup = self.was


def tracked(files, followed=()) -> dict:
    """Real path -> the name a tracer gives the file: as listed, ``files`` first."""
    out = {os.path.realpath(f): f for f in followed}
    out.update((os.path.realpath(f), f) for f in files)
    return out


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


#: decorators that only say how a function is looked up: they never hold a result back
PLAIN_DECORATORS = frozenset({"property", "setter", "getter", "deleter", "staticmethod",
                              "classmethod", "abstractmethod", "override"})


def decorated_lines(source: str) -> frozenset:
    """The first lines (decorator and ``def``) of every function of ``source`` with a
    decorator that may hold its result back: a cache such as ``lru_cache`` runs the
    body once and hands its result out later. ``PLAIN_DECORATORS`` do not count."""
    import ast

    def name(d):
        d = d.func if isinstance(d, ast.Call) else d
        return d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", None)

    tree = ast.parse(source)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                name(d) not in PLAIN_DECORATORS for d in node.decorator_list):
            out.add(node.lineno)
            out.update(d.lineno for d in node.decorator_list)
    return frozenset(out)
