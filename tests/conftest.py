"""Shared test set-up: make tests/ importable (toymodels) and the repo root first on path;
one embedded local[2] SparkContext shared by the modules that ask for ``sc``."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for p in (HERE, ROOT):
    if p not in sys.path:
        sys.path.insert(0, p)


@pytest.fixture
def user_model_file(tmp_path, monkeypatch):
    """``write(source, stem) -> module name``: a user's model file in a fresh working
    directory, named uniquely (test processes import it by name); the module is
    forgotten afterwards."""
    names = []

    def write(source: str, stem: str) -> str:
        name = f"{stem}_{os.getpid()}_{abs(hash(str(tmp_path))) % 10**6}"
        (tmp_path / f"{name}.py").write_text(source)
        monkeypatch.chdir(tmp_path)
        names.append(name)
        return name
    yield write
    for name in names:
        sys.modules.pop(name, None)

# Starting an embedded context costs about 11 s of CPU (the JVM, then the first job's
# Python workers). The modules that run Spark in-process therefore share one: they run
# first, one after another (with -n N each worker takes whole files and starts its own
# context once), and the context is stopped, with its JVM, before the first module that
# does not ask for it. A process that forks (kmc mutate's workers, kmc regress -j N) or
# starts a context on another master never runs beside it.
_SHARED: list = []  # [(the context manager, the context)] while one runs


def _uses_spark(items) -> dict:
    """module path -> whether one of its tests asks for ``sc``"""
    out: dict = {}
    for item in items:
        path = str(item.path)
        out[path] = out.get(path, False) or "sc" in getattr(item, "fixturenames", ())
    return out


def pytest_collection_modifyitems(session, config, items):
    uses = _uses_spark(items)
    config._kmc_uses_spark = uses
    items.sort(key=lambda item: not uses[str(item.path)])  # stable: files stay whole


def _stop_shared() -> None:
    if _SHARED:
        from kmc.explorers.spark.session import shutdown_gateway

        manager, _ = _SHARED.pop()
        manager.__exit__(None, None, None)
        shutdown_gateway()  # leave no JVM running behind the Spark modules


@pytest.fixture(scope="module", autouse=True)
def _spark_context_only_where_asked(request):
    if not getattr(request.config, "_kmc_uses_spark", {}).get(str(request.path), False):
        _stop_shared()
    yield


@pytest.fixture(scope="module")
def sc():
    """The embedded local[2] SparkContext the Spark modules share. The explorers leave it
    as they found it: an embedded master sets no checkpoint directory."""
    pytest.importorskip("pyspark")
    if not _SHARED:
        from kmc.explorers.spark.session import spark_context

        manager = spark_context(None, 2)
        _SHARED.append((manager, manager.__enter__()))
    return _SHARED[0][1]


def pytest_sessionfinish(session, exitstatus):
    _stop_shared()
