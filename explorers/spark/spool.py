"""On an embedded master (``local[N]``), a level's records wait for the next level in
files on this machine; the shuffle carries only where they are.

What a level sends to the next is its blocks (visited keys, frontier keys: "B"), the
visited keys that change owner ("V") and the next level's candidates ("C"): on TwoPhase
rm=8 with 2 partitions ~100 MB per run. Through the shuffle each byte crosses the JVM
four times (Python -> JVM -> shuffle file -> JVM -> Python), and on local[2] the JVM's
work takes CPU from the tasks of both cores, where on local[1] it runs on the idle one.
All of an embedded master's tasks run on this machine, so a task appends each record's
payload to one file of its own and sends (tag, ``Spooled(path, offset)``) through the
shuffle instead; the task that receives it reads the payload back (``opened``).

A file is needed until the level that reads it has ended: the driver removes the files of
the jobs before the last one it waited for (``prune``), and the whole directory with the
frontier (``close``). A checkpoint and a frontier moving back to the driver read the
blocks' payloads back first (``opened``). A cluster's executors share no files, and Spark
may recompute a lost executor's partitions from older levels there: on a cluster the
records stay in the shuffle. A driver killed outright (SIGKILL) leaves its directory
behind, as Spark leaves its own temporary directories. The directory lies in the
driver's private directory (``ship.private_dir``), which goes once Spark has stopped: a
task still writing when a Ctrl-C cancels its level cannot leave a file behind.
"""
from __future__ import annotations

import os
import pickle
import shutil
import tempfile
import weakref
from typing import NamedTuple

from kmc.explorers.spark.ship import private_dir


def embedded(master: str) -> bool:
    """``local`` or ``local[N]``: every task in this process's JVM (``local-cluster``
    has executors of its own, which Spark may lose and recompute)."""
    return master == "local" or master.startswith("local[")


class Spooled(NamedTuple):
    """Where a record's payload (the record without its tag) waits: a task's file and
    the payload's offset in it."""
    path: str
    offset: int


class Spool:
    """The directory of one Spark frontier's task files (the driver's side)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="spool-", dir=private_dir())
        # removed by close(); failing that, when the spool goes or the driver exits
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.dir, True)

    def prune(self, job: int) -> None:
        """Remove the files of the jobs before ``job``, which the driver has just waited
        for: the jobs after it read only its files and their own."""
        for name in os.listdir(self.dir):
            if int(name.split("-", 1)[0]) < job:
                os.remove(os.path.join(self.dir, name))

    def close(self) -> None:
        self._finalizer()


class TaskFile:
    """Executor side: the file of partition ``pid``'s task in job ``job``, which its
    records' payloads are appended to (``put``); with no directory, records pass as
    they are. A re-run task rewrites the same file: nothing reads it before the job
    has ended."""

    def __init__(self, directory: str | None, job: int, pid: int):
        self._file = None if directory is None else \
            open(os.path.join(directory, f"{job}-{pid}"), "wb")

    def put(self, rec: tuple) -> tuple:
        f = self._file
        if f is None:
            return rec
        where = Spooled(f.name, f.tell())
        pickle.dump(rec[1:], f, pickle.HIGHEST_PROTOCOL)
        return rec[0], where

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


def opened(rec: tuple) -> tuple:
    """A record with its payload in it (read back from its file if it was spooled)."""
    if len(rec) != 2 or not isinstance(rec[1], Spooled):
        return rec
    with open(rec[1].path, "rb") as f:
        f.seek(rec[1].offset)
        return (rec[0], *pickle.load(f))


def opened_record(record):
    """``opened`` on a (partition, record) pair (what a checkpoint saves)."""
    return record[0], opened(record[1])
