"""Getting kmc's code to Spark executors.

Local mode: executors are Python processes on this machine; they import the packages from
``source_root()`` (the directory holding the running ``explorers`` package).
A cluster: ``package_zip()`` builds a zip of kmc's packages from that same source (only
``.py`` files), cached by content, which the driver ships with ``SparkContext.addPyFile``.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from pathlib import Path

#: the distribution's top-level packages (pyproject's packages.find include list)
PACKAGES = ("kmc", "model", "invariants", "explorers", "reports")


def source_root() -> str:
    import explorers

    return str(Path(explorers.__file__).resolve().parent.parent)


def _sources(root: Path):
    for pkg in PACKAGES:
        base = root / pkg
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            if "__pycache__" not in path.parts:
                yield path


def package_zip(out_dir: str | None = None) -> str:
    """Path of a zip holding kmc's packages; rebuilt only when a source file changed."""
    root = Path(source_root())
    files = list(_sources(root))
    h = hashlib.sha256()
    for f in files:
        st = f.stat()
        h.update(f"{f.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}".encode())
    out = Path(out_dir or tempfile.gettempdir()) / f"kmc-{h.hexdigest()[:16]}.zip"
    if not out.exists():
        tmp = out.with_suffix(f".{os.getpid()}.tmp")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            for f in files:
                z.write(f, f.relative_to(root).as_posix())
        os.replace(tmp, out)  # atomic: a concurrent run never ships a half-written zip
    return str(out)
