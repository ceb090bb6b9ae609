"""The bench scripts (``bench/``) as modules, for the tests that run them: each loaded
once, under its own name, so that the scripts import each other as they do when run."""
from __future__ import annotations

import importlib.util
import pathlib
import sys

BENCH = pathlib.Path(__file__).resolve().parents[1] / "bench"


def load(name: str):
    """The module ``bench/<name>.py`` (loaded at its first request)."""
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == \
            str(BENCH / f"{name}.py"):
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
