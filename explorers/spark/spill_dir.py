"""Where a Spark run's spilled visited keys and trace rows live (``spill``): a directory
that every task of the run reads and writes at the same path, since Spark may run a
partition's next task — or a task retried after an executor loss — on any executor.

- ``KMC_SPARK_SPILL_DIR`` set: a directory on storage the driver and every executor
  share (NFS, a path mounted on every machine), at the same path on each and writable by
  the user they run as. The run makes a private subdirectory in it
  (``kmc-spill-XXXXXXXX``, mode 0700) before Spark starts and removes it at the end of
  the run, on Ctrl-C and on an error; spill is then on for any master. Without
  ``--checkpoint-dir``, a cluster of several machines cuts its lineage there too
  (``lineage_url``), so a lost executor's work is not replayed from the start and the
  runs that merges replaced can be deleted.
- unset: the driver's private temporary directory (``ship.private_dir``) when every
  executor runs on this machine; on a cluster of several machines visited keys and trace
  rows stay in memory, and the summary says so (``SpillSpace.summary``).

The setting is read once, at import, and checked before Spark starts: a URL, a path that
does not exist or is not a directory, or one kmc cannot write, stops the check with one
line naming the variable (exit 2), with nothing left behind.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import weakref

from kmc.explorers.errors import ExplorerError

#: a directory the driver and every executor share, at the same path (None: unset)
SPILL_DIR = os.environ.get("KMC_SPARK_SPILL_DIR", "").strip() or None
#: for tests only: treat every executor as running on another machine (what a loopback
#: cluster cannot show otherwise), so only KMC_SPARK_SPILL_DIR turns spill on
ASSUME_REMOTE = bool(os.environ.get("KMC_SPARK_ASSUME_REMOTE", "").strip())
#: the summary's line when visited sets stay in the executors' memory
IN_MEMORY_NOTE = ("visited sets: held in the executors' memory (they run on other "
                  "machines): set KMC_SPARK_SPILL_DIR to a directory every machine shares "
                  "to spill them to disk")


def local_disks(master: str | None) -> bool:
    """Whether every executor runs on this machine, so that the driver's temporary
    directory is theirs too (``ASSUME_REMOTE`` says no, for tests)."""
    from kmc.explorers.spark.session import loopback

    return loopback(master) and not ASSUME_REMOTE


def reach(directory: str) -> str | None:
    """On an executor: None when it sees ``directory`` (the driver made it) and can
    write a file there, else what is wrong."""
    import socket

    host = socket.gethostname()
    if not os.path.isdir(directory):
        return f"an executor on {host} does not see {directory}"
    try:
        fd, path = tempfile.mkstemp(prefix="probe-", dir=directory)
        os.close(fd)
        os.remove(path)
    except OSError as e:
        return f"an executor on {host} cannot write in {directory} ({e.strerror or e})"
    return None


def shared_path(raw: str) -> str:
    """``KMC_SPARK_SPILL_DIR``'s value as an absolute path, or an ExplorerError that
    says what to fix."""
    name = f"KMC_SPARK_SPILL_DIR={raw!r}"
    if "://" in raw:
        raise ExplorerError(f"{name} is a URL: name a directory path mounted at the same "
                            "place on the driver and every executor (NFS, a shared disk)")
    path = os.path.abspath(os.path.expanduser(raw))
    if not os.path.exists(path):
        raise ExplorerError(f"{name}: no such directory: create it (on storage every "
                            "executor shares) or unset the variable")
    if not os.path.isdir(path):
        raise ExplorerError(f"{name} is not a directory: name a directory every executor "
                            "shares, or unset the variable")
    if not os.access(path, os.W_OK | os.X_OK):
        raise ExplorerError(f"{name} is not writable by this user: name a directory you "
                            "can write, or unset the variable")
    return path


class SpillSpace:
    """The run's place for spilled runs, made before Spark starts and removed with the
    run (a context manager): with ``KMC_SPARK_SPILL_DIR`` (``setting``), a private
    subdirectory of it; without, nothing until a frontier asks (``runs_base``)."""

    def __init__(self, setting: str | None = None):
        setting = SPILL_DIR if setting is None else setting
        self.base = self.dir = None
        self._finalizer = None
        if setting:
            self.base = shared_path(setting)
            try:
                self.dir = tempfile.mkdtemp(prefix="kmc-spill-", dir=self.base)
            except OSError as e:
                raise ExplorerError(f"KMC_SPARK_SPILL_DIR={setting!r}: cannot make a "
                                    f"directory in it ({e.strerror or e}): name a directory "
                                    "you can write, or unset the variable") from None
            self._finalizer = weakref.finalize(self, shutil.rmtree, self.dir, True)

    def runs_base(self, master: str | None) -> str | None:
        """Where the frontiers' run directories go (None: spill is off): the private
        subdirectory of ``KMC_SPARK_SPILL_DIR``, else the driver's private temporary
        directory when every executor runs on this machine."""
        if self.dir is not None:
            return self.dir
        if local_disks(master):
            from kmc.explorers.spark.ship import private_dir

            return private_dir()
        return None

    def lineage_url(self) -> str | None:
        """Where Spark's lineage cuts may go when nothing better is given: a directory
        of the private subdirectory, as a ``file://`` URL (a cluster's default
        filesystem may be HDFS)."""
        if self.dir is None:
            return None
        path = os.path.join(self.dir, "lineage")
        os.makedirs(path, mode=0o700, exist_ok=True)
        return "file://" + path

    def summary(self, runs_base: str | None, bound: int | None) -> dict:
        """The run summary's part (``--json``'s ``spark`` object), given where the runs
        went (``runs_base``) and the bytes a partition keeps in memory (``bound``):
        ``spill`` — the directory (``KMC_SPARK_SPILL_DIR``, or the driver's temporary
        one) and the bound, or None — and ``visited_note``, the summary's line when
        visited sets stay in memory."""
        if runs_base is None or bound is None:
            return {"spill": None, "visited_note": IN_MEMORY_NOTE}
        return {"spill": {"dir": self.base or runs_base, "bound": bound},
                "visited_note": None}

    def probe_target(self) -> str | None:
        """The directory the executors must see and write before any work (the probe
        job, ``reach``): the private subdirectory, whose fresh random name no other
        machine's own disk holds."""
        return self.dir

    def check_reached(self, problems) -> None:
        """Raise the first of the probe's answers (``reach``, one per task) that is a
        problem as a one-line ExplorerError."""
        for problem in problems:
            if problem:
                raise ExplorerError(f"KMC_SPARK_SPILL_DIR={self.base!r}: {problem}: mount "
                                    "it at the same path on the driver and every "
                                    "executor, writable by the user they run as, or "
                                    "unset the variable")

    def close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        self.close()
