"""The file the Spark JVM (and its Python workers) write their own output to: Spark's
banners and shutdown noise stay out of kmc's output, and error messages point here."""
from __future__ import annotations

import os
import stat
import tempfile

from kmc.explorers.errors import ExplorerError


def log_path() -> str:
    """Where the JVM's (and the Python workers') own output goes."""
    return os.environ.get("KMC_SPARK_LOG_FILE") or os.path.join(
        tempfile.gettempdir(), f"kmc-spark-{os.getuid()}.log")


def open_log(path: str):
    """The log file, opened for writing without following a symbolic link planted at its
    name and only when it is this user's regular file (a shared /tmp is writable by all)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as e:  # ELOOP: a symbolic link stands at that name
        raise ExplorerError(f"cannot open the Spark log file {path} ({e.strerror}): "
                            "remove it, or set KMC_SPARK_LOG_FILE to a path of yours") \
            from None
    st = os.fstat(fd)
    if st.st_uid != os.getuid() or not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise ExplorerError(f"the Spark log file {path} belongs to another user or is not a "
                            "regular file: remove it, or set KMC_SPARK_LOG_FILE to a path "
                            "of yours")
    os.ftruncate(fd, 0)
    return os.fdopen(fd, "wb")
