"""Loading one mutant in the current process, without touching the source tree.

``install(mutant)`` parses the file (in a worker, takes the tree ``warm`` parsed in the
process that forked it), applies the mutant's edit to the syntax tree, drops
the file's module and every project module that imports it from ``sys.modules``, and puts
an import hook first on ``sys.meta_path`` that serves the mutated code under the module's
own name and file name. The next import of any of those modules compiles them afresh, the
mutated one from the edited tree. Nothing is written to disk (no source, no bytecode).

It is meant for a fresh worker process that exits when its mutant is done: the process's
modules are changed for good.
"""
from __future__ import annotations

import ast
import importlib.abc
import importlib.util
import os
import sys
import types
from dataclasses import dataclass

from kmc.mutate.operators import sites


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str  # as shown (relative to the source root or the working directory)
    path: str  # absolute
    module: str  # the name the file is imported as
    line: int
    col: int
    operator: str
    n: int
    description: str
    function: str


def mutant_id(shown: str, line: int, col: int, operator: str, n: int) -> str:
    return f"{shown}:{line}:{col}:{operator}:{n}"


def read_source(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def mutants_of(path: str, shown: str, module: str, source: str) -> list[Mutant]:
    """Every mutant of one file (its text: ``source``), in source order; ids are unique
    within the file."""
    out, seen = [], {}
    for s in sites(ast.parse(source, path), source):
        mid = mutant_id(shown, s.line, s.col, s.operator, s.n)
        if mid in seen:  # two nodes at one position with one operator: number them
            seen[mid] += 1
            mid = f"{mid}#{seen[mid]}"
        else:
            seen[mid] = 1
        out.append(Mutant(mid, shown, path, module, s.line, s.col, s.operator, s.n,
                          s.description, s.function))
    return out


def mutated_tree(m: Mutant, source: str) -> ast.Module:
    """The syntax tree of ``source`` (the file's text when the mutants were listed) with
    ``m`` applied. In a process forked after ``warm``, the tree and sites it parsed,
    edited in this process's copy (once: a second call parses again)."""
    got = _TREES.pop((m.path, source), None) if os.getpid() != _TREES_PID[0] else None
    if got is None:
        tree = ast.parse(source, m.path)
        got = (tree, sites(tree, source))
    tree, found = got
    rank = int(m.id.rpartition("#")[2]) if "#" in m.id else 1
    for s in found:
        if s.key() == (m.line, m.col, m.operator, m.n):
            rank -= 1
            if rank == 0:
                s.edit()
                return ast.fix_missing_locations(tree)
    raise LookupError(f"mutant {m.id} does not match {m.file}")


class _Loader(importlib.abc.Loader):
    """Executes a module from a syntax tree or a source text held in memory, or from
    what ``code()`` builds when the module is imported: ``(code, names)``, the names
    going into the module's globals first."""

    def __init__(self, code, path: str, names=None):
        self.code, self.path, self.names = code, path, names or {}

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        code, names = self.code, self.names
        if callable(code):
            code, names = code()
        elif isinstance(code, str):
            code = _plain(self.path, code)
        if not isinstance(code, types.CodeType):
            code = compile(code, self.path, "exec", dont_inherit=True)
        module.__dict__.update(names)
        exec(code, module.__dict__)


class MutantFinder(importlib.abc.MetaPathFinder):
    """Serves the mutated module from its edited tree, and the modules that import it
    from the text they had when the mutants were listed (a file edited since then does
    not leak into the run); every other import goes on to the usual finders."""

    def __init__(self, module: str, path: str, tree: ast.Module, snapshot=None):
        #: module name -> (file path, loader)
        self.served = {name: (p, _Loader(text, p))
                       for name, (p, text) in (snapshot or {}).items()}
        self.served[module] = (path, _Loader(tree, path))

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.served:
            return None
        where, loader = self.served[fullname]
        package = os.path.basename(where) == "__init__.py"
        return importlib.util.spec_from_file_location(
            fullname, where, loader=loader,
            submodule_search_locations=[os.path.dirname(where)] if package else None)


def purge(modules) -> None:
    """Forget ``modules``: the next import loads them again. A module is also unbound
    from its package, which keeps it: ``from package import module`` takes the
    package's attribute when there is one, and would hand out the forgotten module."""
    for name in sorted(modules, reverse=True):
        gone = sys.modules.pop(name, None)
        parent, _, child = name.rpartition(".")
        package = sys.modules.get(parent)
        if gone is not None and package is not None \
                and getattr(package, child, None) is gone:
            delattr(package, child)
    importlib.invalidate_caches()


def install(m: Mutant, source: str, snapshot: dict) -> MutantFinder:
    """Make the next import of ``m.module`` load the mutant of ``source``, and the next
    import of each module of ``snapshot`` (name -> (path, text): the modules that import
    ``m.module``) load that text."""
    finder = MutantFinder(m.module, m.path, mutated_tree(m, source), snapshot)
    purge(set(snapshot) | {m.module})
    sys.meta_path.insert(0, finder)
    return finder


def install_unmutated(served: dict, probed=None, hooks=None) -> MutantFinder:
    """Make the next import of each module of ``served`` (name -> (path, text)) load that
    text afresh, as a mutant's worker loads its modules: the baseline of a run then
    executes the same import-time code and fills the same caches from cold. ``probed``:
    path -> the numbers of its mutants by site (``sites.instrument``): those files
    load with their probes. ``hooks`` (``tracer.Tracer``): every file it follows
    loads with its hooks."""
    def loader(p, text):
        numbers = (probed or {}).get(p)
        if not numbers and hooks is None:
            return _Loader(text, p)

        def build():  # when the module is first imported: a run imports only its own
            code, names = _built(p, text, numbers, hooks)
            return code, {**names, **({} if hooks is None else hooks.names(p))}
        return _Loader(build, p)

    finder = MutantFinder.__new__(MutantFinder)
    finder.served = {name: (p, loader(p, text)) for name, (p, text) in served.items()}
    purge(served)
    sys.meta_path.insert(0, finder)
    return finder


#: compiled code by what it was compiled from: (path, text) for a module served as it
#: is; (path, text, its probes' numbers, the hooks' configuration) for a baseline's
#: build. ``warm`` fills it in the process that forks the workers, so that each worker
#: (a baseline's, a mutant's) only executes them
_CODE: dict = {}


def _plain(path: str, text: str):
    key = (path, text)
    code = _CODE.get(key)
    if code is None:
        code = _CODE[key] = compile(text, path, "exec", dont_inherit=True)
    return code


def _built(path: str, text: str, numbers, hooks):
    """The code of a baseline's build of the module (its probes, ``hooks``' hooks) and
    the names its probes need."""
    from kmc.mutate import probes, sites

    key = (path, text, tuple(sorted((numbers or {}).items())),
           None if hooks is None else hooks.configuration(path))
    got = _CODE.get(key)
    if got is None:
        tree, names = ast.parse(text, path), {}
        if numbers:
            tree, _probed = sites.instrument(tree, numbers)
            names = {probes.NAME: probes}
        if hooks is not None:
            tree = hooks.transform(tree, path, text)
        got = _CODE[key] = (compile(tree, path, "exec", dont_inherit=True), names)
    return got


#: (path, text) -> (its syntax tree, the tree's sites), parsed by ``warm`` in the
#: process that forks the workers (``_TREES_PID``), which never edits them: a mutant's
#: worker edits its own copy of the tree it inherits (``mutated_tree``)
_TREES: dict = {}
_TREES_PID = [None]


def warm(served: dict, probed=None, hooks=None, mutated=()) -> None:
    """Compile every module of ``served`` now, as it is and, with ``probed`` or
    ``hooks``, as a baseline builds it (``install_unmutated``), and parse those whose
    path is in ``mutated`` with their mutation sites: workers forked after it find the
    code compiled and the trees parsed."""
    _TREES_PID[0] = os.getpid()
    for p, text in served.values():
        _plain(p, text)
        if p in mutated and (p, text) not in _TREES:
            tree = ast.parse(text, p)
            _TREES[(p, text)] = (tree, sites(tree, text))
        numbers = (probed or {}).get(p)
        if numbers or hooks is not None:
            _built(p, text, numbers, hooks)
