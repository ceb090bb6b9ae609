"""On an embedded master (``local[N]``), each partition's visited keys wait for the next
level in a file on this machine instead of going through the shuffle.

A block's visited keys are the bulk of what a level sends to itself: on TwoPhase rm=8
with 2 partitions, 34 of the ~100 MB its levels shuffle. Through the shuffle they cross
the JVM four times (Python -> JVM -> shuffle file -> JVM -> Python), and on local[2] the
JVM's work takes CPU from the tasks of both cores. All of an embedded master's tasks run
on this machine, so the task writes them to a file (still keycodec-packed) and its block
carries the file's path; the next level's task reads it back.

A file is needed until the level that reads it has ended: the driver removes the files of
the jobs before the last one it waited for (``prune``), and the whole directory with the
frontier (``close``). Nothing else reads one: a checkpoint takes the keys out of the
files first (``resolved``), and a frontier moving back to the driver takes the driver's
own keys. A cluster's executors share no files, and Spark may recompute a lost
executor's partitions from older levels there: on a cluster the keys stay in the
shuffle. A driver killed outright (SIGKILL) leaves its directory behind, as Spark leaves
its own temporary directories.
"""
from __future__ import annotations

import os
import pickle
import shutil
import tempfile
import weakref


def embedded(master: str) -> bool:
    """``local`` or ``local[N]``: every task in this process's JVM (``local-cluster``
    has executors of its own, which Spark may lose and recompute)."""
    return master == "local" or master.startswith("local[")


class VisitedStore:
    """The directory of one Spark frontier's visited files (the driver's side)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="kmc-visited-")
        # removed by close(); failing that, when the store goes or the driver exits
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.dir, True)

    def prune(self, job: int) -> None:
        """Remove the files of the jobs before ``job``, which the driver has just waited
        for: the jobs after it read only its files and their own."""
        for name in os.listdir(self.dir):
            if int(name.split("-", 1)[0]) < job:
                os.remove(os.path.join(self.dir, name))

    def close(self) -> None:
        self._finalizer()


def write(directory: str, job: int, pid: int, packed) -> str:
    """Executor side: keep partition ``pid``'s packed visited keys of job ``job`` in a
    file; returns its path, which the block carries instead."""
    path = os.path.join(directory, f"{job}-{pid}")
    with open(path, "wb") as f:
        pickle.dump(packed, f, pickle.HIGHEST_PROTOCOL)
    return path


def read(visited):
    """A block's packed visited keys, from its file when it carries a path."""
    if not isinstance(visited, str):
        return visited
    with open(visited, "rb") as f:
        return pickle.load(f)


def resolved(record):
    """A (partition, block) record with its visited keys in it (what a checkpoint
    saves); other records as they are."""
    pid, rec = record
    if rec[0] != "B" or not isinstance(rec[1], str):
        return record
    return pid, (rec[0], read(rec[1]), *rec[2:])
