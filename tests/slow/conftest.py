"""Fixtures of the slow tests: one embedded local[2] SparkContext per module that asks for
``sc``, and checkpoint keys kept in a directory of the test's own (``key_dir``)."""
import pytest


@pytest.fixture(scope="module")
def sc():
    from kmc.explorers.spark.session import shutdown_gateway, spark_context

    with spark_context(None, 2) as context:
        yield context
    shutdown_gateway()  # leave no JVM running behind this module


@pytest.fixture
def key_dir(tmp_path_factory, monkeypatch):
    """Checkpoint keys in a directory of the test's own (child processes inherit it)."""
    d = tmp_path_factory.mktemp("keys") / "kmc-keys"
    monkeypatch.setenv("KMC_KEY_DIR", str(d))
    return d
