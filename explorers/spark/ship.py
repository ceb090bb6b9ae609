"""Getting kmc's code to Spark executors.

Local mode: executors are Python processes on this machine; they import ``kmc`` from
``source_root()`` (the directory holding the running ``kmc`` package) with the driver's
interpreter, so its installation (editable or not) resolves ``kmc.model`` and the rest.
A cluster: ``package_zip()`` builds a zip of the ``kmc`` package and its subpackages as
they are laid out once installed (``kmc/model/...``), from the running source (only ``.py``
files), cached by content, which the driver ships with ``SparkContext.addPyFile``.
"""
from __future__ import annotations

import hashlib
import os
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


def package_zip(out_dir: str | None = None) -> str:
    """Path of a zip holding kmc's packages; rebuilt only when a source file changed."""
    files = _sources()
    h = hashlib.sha256()
    for f, name in files:
        st = f.stat()
        h.update(f"{name}:{st.st_size}:{st.st_mtime_ns}".encode())
    out = Path(out_dir or tempfile.gettempdir()) / f"kmc-{h.hexdigest()[:16]}.zip"
    if not out.exists():
        tmp = out.with_suffix(f".{os.getpid()}.tmp")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            for f, name in files:
                z.write(f, name)
        os.replace(tmp, out)  # atomic: a concurrent run never ships a half-written zip
    return str(out)
