"""Getting kmc's code to Spark executors.

Local mode: executors are Python processes on this machine; they import ``kmc`` from
``source_root()`` (the directory holding the running ``kmc`` package) with the driver's
interpreter, so its installation (editable or not) resolves ``kmc.model`` and the rest.
A cluster: ``package_zip()`` builds a zip of the ``kmc`` package and its subpackages as
they are laid out once installed (``kmc/model/...``), from the running source (only ``.py``
files), which the driver ships with ``SparkContext.addPyFile``.

Files handed to Spark (that zip, the JVM's log4j configuration) live in ``private_dir()``:
a directory this process makes fresh (``tempfile.mkdtemp``: mode 0700, a random name), so
no other user can plant, read or swap them, and a file is never taken over by its name
from an earlier run. The directory goes at the end of a run and at interpreter exit.
"""
from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

#: the subpackages that the distribution maps from the repository's top-level folders
SUBPACKAGES = ("model", "invariants", "explorers", "reports")


def source_root() -> str:
    """The directory that holds the running ``kmc`` package."""
    import kmc

    return str(Path(kmc.__file__).resolve().parent.parent)


def _sources():
    """(path on disk, path in the zip) of every ``.py`` file of kmc, wherever each
    subpackage lives (in a checkout they are sibling folders; installed, nested)."""
    import importlib

    seen = {}
    roots = [("kmc", importlib.import_module("kmc"))]
    roots += [(f"kmc/{name}", importlib.import_module(f"kmc.{name}")) for name in SUBPACKAGES]
    for arc, mod in roots:
        base = Path(mod.__file__).resolve().parent
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base)
            if "__pycache__" in rel.parts:
                continue
            if arc == "kmc" and rel.parts[0] in SUBPACKAGES:
                continue  # installed layout: added from the subpackage's own entry
            seen.setdefault(f"{arc}/{rel.as_posix()}", path)
    return sorted((path, name) for name, path in seen.items())


_private: tuple | None = None  # (path, the PID that made it)
_made: set = set()  # files this process wrote into its private directory


def private_dir() -> str:
    """This process's private directory for files handed to Spark, made on first use."""
    global _private
    if _private is None or _private[1] != os.getpid() or not os.path.isdir(_private[0]):
        _private = (tempfile.mkdtemp(prefix="kmc-"), os.getpid())
        _made.clear()
    return _private[0]


def remove_private_dir() -> None:
    """Remove the private directory with everything in it (in the process that made it
    only: a forked child exiting leaves its parent's files alone)."""
    global _private
    if _private is None or _private[1] != os.getpid():
        return
    path, _private = _private[0], None
    _made.clear()
    shutil.rmtree(path, ignore_errors=True)


atexit.register(remove_private_dir)


def private_file(name: str, write) -> str:
    """``private_dir()/name``, written by ``write(binary file)`` unless this process
    already wrote it; created exclusively, so a file it did not write is never used."""
    path = os.path.join(private_dir(), name)
    if path not in _made:
        with open(path, "xb") as f:
            try:
                write(f)
            except BaseException:
                os.remove(path)  # half written: never handed out
                raise
        _made.add(path)
    return path


def package_zip() -> str:
    """Path of a zip holding kmc's packages as they are now (named by the sources' sizes
    and modification times, so an edited source gets a new zip)."""
    files = _sources()
    h = hashlib.sha256()
    for f, name in files:
        st = f.stat()
        h.update(f"{name}:{st.st_size}:{st.st_mtime_ns}".encode())

    def write(out):
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            for f, name in files:
                z.write(f, name)
    return private_file(f"kmc-{h.hexdigest()[:16]}.zip", write)
