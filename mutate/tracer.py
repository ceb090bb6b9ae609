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
  may be handed out later where its lines do not run (those are also ``cached``). A
  mutant reaching code a cached function calls is explored in full; one reaching other
  code called outside is explored reusing the recorded successors of the states whose
  successors did not call it (``decide.SUCCESSORS``).

Hooks compiled into the served modules tell it. A trace function (``sys.settrace``)
would tell the same, but on CPython 3.11 it slows every frame of the process, the
explorer's and the property checker's included (each instruction then runs
unspecialised): a baseline run took 2.5 times as long. The served modules load from a
syntax tree (``isolation.install_unmutated``) in which

- the module's code and every class body, function and lambda first calls
  ``__kmc_call__(key)``, ``key`` being (file, the first line of its code: its first
  decorator's, else its own), and a generator calls it again after each ``yield`` (a
  trace function sees each resumption as a call);
- a comprehension calls it with its own key as its first iterable is evaluated, just
  before its code runs (a comprehension's code is a function of its own);
- a function with a decorator that may hold its result back (``decorated_lines``: a
  cache) counts as outside, and so does every call made while its body runs
  (``__kmc_cached__`` / ``__kmc_done__`` around the body);
- in a mutated file, each statement first adds its first line to the file's executed
  lines (a decorated one its decorators' lines too), and a function its own first line
  when it is called: ``lines.reaches`` asks for a mutant's statement's first line or
  its own line.

The hooks record only while the tracer is open; what runs before or after is not kept.
"""
from __future__ import annotations

import ast
import contextlib
import os

from kmc.mutate.outside_reads import MODEL

CALL, CACHED, DONE, HITS = "__kmc_call__", "__kmc_cached__", "__kmc_done__", "__kmc_hits__"


class Tracer:
    """The lines of ``files`` executed while it is open, and the functions of ``files``
    and ``followed`` called, by kind (the module docstring), as (file, first line):
    ``lines``, ``outside``, ``at_setup``, and while the Recorder asks the successors of
    one state, ``called``. The served files load with its hooks (``transform``; the
    names they call: ``names``)."""

    def __init__(self, files, followed=(), decorated=None):
        self.wanted = tracked(files, followed)
        self._given = {os.path.realpath(p): v for p, v in (decorated or {}).items()}
        self.lines: dict[str, set] = {f: set() for f in files}
        names = list(self.wanted.values())
        self.outside: dict[str, set] = {f: set() for f in [*names, MODEL]}
        self.at_setup: dict[str, set] = {f: set() for f in [*names, MODEL]}
        #: the part of ``outside`` called by or inside a decorated (cached) function
        self.cached: dict[str, set] = {f: set() for f in [*names, MODEL]}
        self.inside = False  # set by the Recorder while the model computes successors
        self.setup = False   # set while the run's set-up builds the model
        #: while the Recorder asks the successors of one state: the functions called
        self.called: set | None = None
        self.on = False
        self._cached_depth = 0
        self._live: dict[str, set] = {f: set() for f in files}  # what the hooks add to
        self._kept: dict[str, set] = {f: set() for f in files}  # ``keep_lines``

    def configuration(self, path: str):
        """What ``transform`` does to the module at ``path``: equal for two tracers
        that add the same hooks to it (None: it adds none)."""
        f = self.wanted.get(os.path.realpath(path))
        if f is None:
            return None
        return f, self._given.get(os.path.realpath(path)), f in self._live

    def transform(self, tree: ast.Module, path: str, text: str) -> ast.Module:
        """``tree`` (the module at ``path``, parsed from ``text``) with its hooks, in
        place; unchanged for a file the tracer does not follow."""
        f = self.wanted.get(os.path.realpath(path))
        if f is None:
            return tree
        cached = self._given.get(os.path.realpath(path))
        if cached is None:
            cached = decorated_lines(text)
        _Hooks(f, cached, f in self._live).visit(tree)
        return ast.fix_missing_locations(tree)

    def names(self, path: str) -> dict:
        """The names the hooks of the module at ``path`` call, bound to this tracer
        (none for a file it does not follow)."""
        f = self.wanted.get(os.path.realpath(path))
        if f is None:
            return {}
        names = {CALL: self._call, CACHED: self._cached, DONE: self._done}
        if f in self._live:
            names[HITS] = self._live[f]
        return names

    def _call(self, key) -> None:
        if not self.on:
            return
        if self._cached_depth:
            self.outside[key[0]].add(key[1])
            self.cached[key[0]].add(key[1])
        elif self.inside:
            if self.called is not None:
                self.called.add(key)
        elif self.setup:
            self.at_setup[key[0]].add(key[1])
        else:
            self.outside[key[0]].add(key[1])

    def note_read(self, name: str) -> None:
        """Code the tracer does not follow read the model object's attribute ``name``
        (``outside_reads.Watch``): it counts as a call, where it happens, of a function
        ``(outside_reads.MODEL, name)``."""
        self._call((MODEL, name))

    def _cached(self, key) -> None:
        if self.on:
            self.outside[key[0]].add(key[1])
            self.cached[key[0]].add(key[1])
            self._cached_depth += 1

    def _done(self) -> None:
        if self.on and self._cached_depth:
            self._cached_depth -= 1

    def keep_lines(self) -> None:
        """The lines marked executed so far are the run's (``drop_lines``)."""
        for f, v in self._live.items():
            if len(v) != len(self._kept[f]):
                self._kept[f] = set(v)

    def drop_lines(self) -> None:
        """Forget the lines marked since ``keep_lines``: code the recorder runs to learn
        more about an expansion (``recorder.Recorder``'s steps of one state), which
        the run itself did not run."""
        for f, v in self._live.items():
            if len(v) != len(self._kept[f]):
                v.intersection_update(self._kept[f])

    def __enter__(self):
        for v in self._live.values():
            v.clear()
        for v in self._kept.values():
            v.clear()
        self.on = True
        return self

    def __exit__(self, *exc):
        self.on = False
        for f, v in self._live.items():
            self.lines[f] = set(v)

    def phase(self, setup: bool):
        """A context in which calls count as set-up (``True``) or not."""
        return _Phase(self, setup)

    @contextlib.contextmanager
    def collecting(self):
        """Switched on for the block, which then counts as one expansion: yields the set
        its calls are added to (``called``)."""
        self.on, self.inside, self.called = True, True, set()
        try:
            yield self.called
        finally:
            self.on, self.inside, self.called = False, False, None


def _hook(name: str, args, at) -> ast.Expr:
    call = ast.Call(ast.Name(name, ast.Load()), list(args), [])
    return ast.copy_location(ast.Expr(call), at)


def _before(first, value, at):
    """``(first, value)[1]``: ``value``, after ``first`` ran."""
    pair = ast.Tuple([first, value], ast.Load())
    return ast.copy_location(ast.Subscript(pair, ast.Constant(1), ast.Load()), at)


def _first_line(node) -> int:
    """The first line of a definition's code: its first decorator's, else its own."""
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


def _docstring(node) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and \
        isinstance(node.value.value, str)


def _own_yield(node) -> bool:
    """Does ``node`` (a simple statement) yield?"""
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(node))


def _is_generator(fn) -> bool:
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                              ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(n))
    return False


_OWN_BODY = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)


class _Hooks(ast.NodeTransformer):
    """Adds the hooks (the module docstring) to one file's tree: ``f`` the file's name
    as the tracer gives it, ``cached`` the first lines of its decorated functions,
    ``lines``: mark statements (a mutated file)."""

    def __init__(self, f: str, cached: frozenset, lines: bool):
        self.f, self.cached, self.lines = f, cached, lines
        self.generator: list = []  # per enclosing function: its key if a generator

    def _key(self, line: int) -> ast.Constant:
        return ast.Constant((self.f, line))

    def _mark_line(self, line: int, at) -> list:
        hits = ast.Attribute(ast.Name(HITS, ast.Load()), "add", ast.Load())
        return [ast.copy_location(ast.Expr(ast.Call(hits, [ast.Constant(line)], [])), at)]

    def _mark(self, stmts: list) -> list:
        out = []
        gen = self.generator[-1] if self.generator else None
        for s in stmts:
            if self.lines:
                for d in getattr(s, "decorator_list", ()):  # run before the def
                    out.extend(self._mark_line(d.lineno, d))
                out.extend(self._mark_line(s.lineno, s))
            out.append(s)
            if gen is not None and isinstance(s, _SIMPLE) and _own_yield(s):
                out.append(_hook(CALL, [gen], s))  # resumed: a call, to a trace function
        return out

    def generic_visit(self, node):
        super().generic_visit(node)
        resumes = bool(self.generator) and self.generator[-1] is not None
        if (self.lines or resumes) and not isinstance(node, _OWN_BODY):
            for field in ("body", "orelse", "finalbody"):
                v = getattr(node, field, None)
                if isinstance(v, list) and v and isinstance(v[0], ast.stmt):
                    setattr(node, field, self._mark(v))
        return node

    def visit_FunctionDef(self, node):
        first = _first_line(node)
        key = self._key(first)
        self.generator.append(key if _is_generator(node) else None)
        super().generic_visit(node)
        body = node.body
        doc = body[:1] if _docstring(body[0]) else []
        rest = self._mark(body[len(doc):]) or [ast.copy_location(ast.Pass(), body[0])]
        self.generator.pop()
        # a trace function sees the call at the code's first line
        entry = self._mark_line(first, node) if self.lines else []
        if first in self.cached:
            guard = ast.copy_location(ast.Try(body=rest, handlers=[], orelse=[],
                                              finalbody=[_hook(DONE, [], node)]), node)
            node.body = doc + entry + [_hook(CACHED, [key], node), guard]
        else:
            node.body = doc + entry + [_hook(CALL, [key], node)] + rest
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Module(self, node):
        """The module's code is a call too (at its first line); its statements are
        marked after the docstring and the ``__future__`` imports, which must come
        first."""
        self.generator.append(None)
        super().generic_visit(node)
        self.generator.pop()
        body = node.body
        k = 0
        while k < len(body) and (_docstring(body[k]) and k == 0 or isinstance(
                body[k], ast.ImportFrom) and body[k].module == "__future__"):
            k += 1
        rest = self._mark(body[k:]) if self.lines else body[k:]
        at = body[0] if body else node
        node.body = body[:k] + [_hook(CALL, [self._key(1)], at)] + rest
        return node

    def visit_ClassDef(self, node):
        """A class body is a call too (at its first line)."""
        self.generator.append(None)
        super().generic_visit(node)
        self.generator.pop()
        first = _first_line(node)
        doc = node.body[:1] if _docstring(node.body[0]) else []
        rest = node.body[len(doc):]
        rest = (self._mark(rest) if self.lines else rest) or [
            ast.copy_location(ast.Pass(), node)]
        node.body = doc + [_hook(CALL, [self._key(first)], node)] + rest
        return node

    def _called_before(self, line: int, value):
        """``value``, after the call hook of the code at ``line`` ran."""
        call = ast.Call(ast.Name(CALL, ast.Load()), [self._key(line)], [])
        return _before(call, value, value)

    def visit_Lambda(self, node):
        self.generic_visit(node)
        if not getattr(node, "kmc_probe", False):  # a probe's own is not the model's code
            node.body = self._called_before(node.lineno, node.body)
        return node

    def _comprehension(self, node):
        self.generic_visit(node)
        gen = node.generators[0]
        gen.iter = self._called_before(node.lineno, gen.iter)
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension


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


#: decorators that only say how a function is looked up: they never hold a result back;
#: nor does ``memo.pure`` (``kmc.model.memo``) in a worker, which turns its tables off
PLAIN_DECORATORS = frozenset({"property", "setter", "getter", "deleter", "staticmethod",
                              "classmethod", "abstractmethod", "override", "memo.pure"})


def decorated_lines(source: str) -> frozenset:
    """The first lines (decorator and ``def``) of every function of ``source`` with a
    decorator that may hold its result back: a cache such as ``lru_cache`` runs the
    body once and hands its result out later. ``PLAIN_DECORATORS`` do not count."""
    def name(d):
        d = d.func if isinstance(d, ast.Call) else d
        if isinstance(d, ast.Attribute) and isinstance(d.value, ast.Name) and \
                (d.value.id, d.attr) == ("memo", "pure"):
            return "memo.pure"  # kmc's own memo: a worker turns its tables off
        return d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", None)

    tree = ast.parse(source)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                name(d) not in PLAIN_DECORATORS for d in node.decorator_list):
            out.add(node.lineno)
            out.update(d.lineno for d in node.decorator_list)
    return frozenset(out)
