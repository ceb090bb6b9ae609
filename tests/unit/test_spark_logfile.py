"""The Spark log file is opened without following a planted symbolic link and only when
it is this user's regular file; the one-line error says how to fix it."""
import os

import pytest

from kmc.explorers.errors import ExplorerError
from kmc.explorers.spark.logfile import open_log


def test_a_fresh_log_is_private_and_an_old_one_is_emptied(tmp_path):
    path = tmp_path / "spark.log"
    path.write_bytes(b"old run")
    with open_log(str(path)) as f:
        f.write(b"new")
    assert path.read_bytes() == b"new"
    fresh = tmp_path / "fresh.log"
    open_log(str(fresh)).close()
    assert oct(os.stat(fresh).st_mode & 0o777) == "0o600"


def test_a_symlink_at_the_log_path_is_refused(tmp_path):
    target = tmp_path / "victim"
    target.write_bytes(b"precious")
    link = tmp_path / "spark.log"
    link.symlink_to(target)
    with pytest.raises(ExplorerError, match="KMC_SPARK_LOG_FILE"):
        open_log(str(link))
    assert target.read_bytes() == b"precious"


def test_a_directory_at_the_log_path_is_refused(tmp_path):
    with pytest.raises(ExplorerError):
        open_log(str(tmp_path))
