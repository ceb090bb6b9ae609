"""Fixtures of the slow tests: checkpoint keys kept in a directory of the test's own
(``key_dir``). The embedded SparkContext ``sc`` is tests/conftest.py's."""
import pytest


@pytest.fixture
def key_dir(tmp_path_factory, monkeypatch):
    """Checkpoint keys in a directory of the test's own (child processes inherit it)."""
    d = tmp_path_factory.mktemp("keys") / "kmc-keys"
    monkeypatch.setenv("KMC_KEY_DIR", str(d))
    return d
