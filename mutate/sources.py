"""Which source files a run mutates, which module each one is, and who imports it.

A file is mutated as the module it is loaded as (found in ``sys.modules`` once the chosen
scenarios are resolved). The import graph is read from the sources (every ``import`` and
``from ... import`` anywhere in a module, functions included), restricted to the modules of
the project: kmc's own folders and the folders of user model files. A mutant must be
loaded together with every module that imports its module, directly or not, so that no
module keeps a reference to the unmutated code.
"""
from __future__ import annotations

import ast
import glob
import os
import sys

from kmc.errors import UsageError

#: modules that draw or describe states and never decide a verdict
DISPLAY_MODULES = frozenset({"pictures", "display", "statedraw", "draw"})
#: modules of a model package that a default run leaves alone: the package itself and
#: the scenario definitions (bounds of the runs, not model logic)
NOT_MODEL = frozenset({"__init__", "scenarios"})
#: the module-level flag a model package's property module sets (``PROPERTY_CODE =
#: True``): its code checks states and never makes one, so its mutants can only flip a
#: verdict or change nothing; a default run leaves it out (``--files`` still takes it)
PROPERTY_FLAG = "PROPERTY_CODE"


def kmc_root() -> str:
    """The folder that holds kmc's source folders (kmc/, model/, ...)."""
    import kmc

    return os.path.dirname(os.path.dirname(os.path.abspath(kmc.__file__)))


def display_path(path: str) -> str:
    """``path`` as mutant ids and reports show it: relative to kmc's source root for kmc's
    own files, relative to the working directory below it, absolute elsewhere."""
    full = os.path.abspath(path)
    for base in (kmc_root(), os.getcwd()):
        if os.path.commonpath([base, full]) == base:
            return os.path.relpath(full, base).replace(os.sep, "/")
    return full


class Graph:
    """The project's loaded modules: name <-> file, and the import edges between them."""

    def __init__(self, extra_folders=()):
        self.roots = _project_roots(extra_folders)
        self.file_of: dict[str, str] = {}
        for name, mod in sorted(sys.modules.items()):
            f = getattr(mod, "__file__", None)
            if not f or not f.endswith(".py") or name.startswith("kmc.mutate"):
                continue
            full = os.path.realpath(f)
            if any(os.path.commonpath([r, full]) == r for r in self.roots):
                self.file_of[name] = os.path.abspath(f)
        #: real path -> module name (a file loaded twice: the first name)
        self.module_of = {os.path.realpath(f): n
                          for n, f in sorted(self.file_of.items(), reverse=True)}
        known = set(self.file_of)
        self.imports = {n: _imports(n, f, n in _packages(), known) & known
                        for n, f in self.file_of.items()}

    def closure(self, name: str) -> set[str]:
        """``name`` and every project module it imports, directly or not."""
        seen, todo = set(), [name]
        while todo:
            m = todo.pop()
            if m in seen or m not in self.imports:
                continue
            seen.add(m)
            todo.extend(self.imports[m])
        return seen

    def dependents(self, name: str) -> set[str]:
        """``name`` and every project module that imports it, directly or not."""
        return {m for m in self.file_of if name in self.closure(m)}


def _packages() -> set[str]:
    return {n for n, m in sys.modules.items() if hasattr(m, "__path__")}


def _project_roots(extra) -> list[str]:
    import kmc

    roots = set()
    for name, mod in list(sys.modules.items()):
        if (name == "kmc" or name.startswith("kmc.")) and getattr(mod, "__path__", None):
            roots.update(os.path.realpath(p) for p in mod.__path__)
    roots.add(os.path.realpath(os.path.dirname(kmc.__file__)))
    roots.update(os.path.realpath(f) for f in extra)
    return sorted(roots)


def _imports(name: str, path: str, is_package: bool, known=frozenset()) -> set[str]:
    """Modules named by the import statements of one file. ``from P import a, b`` names
    P's submodules a and b, and P itself only if a name is not a ``known`` submodule:
    the file then holds a reference to something P's ``__init__`` defines (importing a
    submodule runs the package's ``__init__``, but keeps nothing of it)."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):
        return set()
    package = name if is_package else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parent = ".".join(parts[:len(parts) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
            subs = {f"{base}.{a.name}" for a in node.names}
            out.update(subs)
            if not subs <= known:
                out.add(base)
    return out


def scenario_module(sc) -> str:
    """The module of a scenario's builder. With the model's modules (``model_modules``) its
    import closure holds every module the runs use."""
    if sc.family == "user":
        return user_module(sc)
    return sc.build.__module__


def user_module(sc) -> str:
    target = sc.name.rpartition(":")[0]
    if target.endswith(".py"):
        return os.path.splitext(os.path.basename(target))[0]
    return target


def model_modules(sc, model) -> tuple[str, ...]:
    """The modules whose code a default run mutates: a user model's file; else those
    the model names (``Model.code_modules``: the ZooKeeper-era cluster names the modules
    of the features its scenario runs), or the module of the model's class."""
    if sc.family == "user":
        return (user_module(sc),)
    return tuple(model.code_modules() or (type(model).__module__,))


def default_files(graph: Graph, modules: set[str]) -> list[str]:
    """The files a run mutates when ``--files`` is not given. ``modules``: the model
    modules (``model_modules``) of the chosen runs. A user model: its file. A built-in
    model: its module and the modules of its package it imports, display modules and
    property modules (``is_property_code``) left out."""
    out = set()
    for m in modules:
        package = m.rpartition(".")[0]
        if not package or m not in graph.file_of:  # a user model's file
            if m in graph.file_of:
                out.add(graph.file_of[m])
            continue
        for dep in graph.closure(m):
            pkg, _, stem = dep.rpartition(".")
            if pkg == package and stem not in DISPLAY_MODULES | NOT_MODEL \
                    and not is_property_code(graph.file_of[dep]):
                out.add(graph.file_of[dep])
    return sorted(out)


def is_property_code(path: str) -> bool:
    """Does the file set ``PROPERTY_CODE = True`` at module level?"""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    return any(isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
               and node.value.value is True
               and any(isinstance(t, ast.Name) and t.id == PROPERTY_FLAG
                       for t in node.targets)
               for node in tree.body)


def chosen_files(graph: Graph, patterns: list[str]) -> list[str]:
    """The files named by ``--files`` (paths or glob patterns), each one a module the
    chosen scenarios load."""
    out = []
    for pat in patterns:
        found = sorted(glob.glob(pat)) if glob.has_magic(pat) else [pat]
        found = [f for f in found if f.endswith(".py")] or found
        if not found:
            raise UsageError(f"--files {pat}: no file matches")
        for f in found:
            if os.path.isdir(f):
                raise UsageError(f"--files {f} is a directory: name its .py files or a "
                                 f"pattern, e.g. --files '{os.path.join(f, '*.py')}'")
            if not os.path.isfile(f):
                raise UsageError(f"--files {f}: " + ("not a regular file: name a .py file "
                                                     "of the model" if os.path.exists(f)
                                                     else "no such file"))
            full = os.path.realpath(f)
            if full not in graph.module_of:
                raise UsageError(f"--files {f}: no chosen scenario uses this file: name "
                                 "a file of their model (e.g. model/kafka/zk/control.py "
                                 "for the topic scenarios) or choose other scenarios")
            path = graph.file_of[graph.module_of[full]]
            if path not in out:
                out.append(path)
    return sorted(out)
