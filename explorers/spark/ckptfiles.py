"""The small files of a checkpoint directory (identity, level files): read and written by
the driver, through Python's own file functions when the directory is local (file://),
else through the Hadoop filesystem of its URL (hdfs://, s3a://, ...). The local path
matters: each Hadoop call is a round trip to the JVM (a level file took ~15 ms to read
back that way, ~0.1 ms directly). Blocks are Spark's business (``checkpoint``).
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from urllib.parse import urlparse

from kmc.explorers.errors import ExplorerError


def to_url(path: str) -> str:
    """A Hadoop URL for a user path; a local one (a plain path, file:/p, file:///p) is
    ``file://`` and its real path, so that one directory has one URL (its key's name)."""
    u = urlparse(path)
    if u.scheme == "file":
        if u.netloc not in ("", "localhost"):
            raise ExplorerError(f"--checkpoint-dir {path}: a file URL names an absolute "
                                f"path (file:///dir); or give the directory as a path")
        return "file://" + os.path.realpath(u.path or "/")
    if u.scheme and len(u.scheme) > 1:
        return path.rstrip("/")
    return "file://" + os.path.realpath(path)


#: in a local checkpoint dir, the file a run holds locked (fcntl) while it runs
LOCK = ".lock"


@contextlib.contextmanager
def locked(path: str | None):
    """Hold checkpoint dir ``path`` for this run when it is local: a second run into it
    at the same time would overwrite the first's identity and key (neither could then be
    resumed). A directory on a Hadoop filesystem is not locked."""
    url = to_url(path) if path else ""
    if not url.startswith("file://"):
        yield
        return
    local = url[len("file://"):]
    created = not os.path.exists(local)
    try:
        os.makedirs(local, exist_ok=True)
        fd = os.open(os.path.join(local, LOCK), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise ExplorerError(f"--checkpoint-dir {path} cannot be written ({e.strerror or e}): "
                            "choose a directory you can write to") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise ExplorerError(f"checkpoint dir {path} is in use by another run: wait "
                                "for it to end, or choose another --checkpoint-dir") from None
        yield
    finally:
        os.close(fd)  # closing releases the lock
        if created and os.path.isdir(local) and set(os.listdir(local)) <= {LOCK}:
            # the run wrote nothing there
            shutil.rmtree(local, ignore_errors=True)


def open_files(sc, url: str, path: str):
    """The backend for checkpoint ``url`` (``path``: as the user gave it)."""
    if url.startswith("file://"):
        return LocalFiles(url[len("file://"):])
    return HadoopFiles(sc, url, path)


def read_local(root: str, rel: str) -> bytes:
    """File ``rel`` of the checkpoint dir ``root``; one that cannot be read (lost, a
    directory in its place) is a damaged checkpoint, said in one line."""
    try:
        with open(os.path.join(root, rel), "rb") as f:
            return f.read()
    except OSError as e:
        raise ExplorerError(f"checkpoint dir {root}: {rel} cannot be read "
                            f"({e.strerror or e}): the checkpoint is damaged; start "
                            "afresh without --resume in an empty directory") from None


class LocalFiles:
    def __init__(self, root: str):
        self.root = root

    def _p(self, rel: str) -> str:
        return os.path.join(self.root, rel)

    def exists(self, rel: str) -> bool:
        return os.path.exists(self._p(rel))

    def write(self, rel: str, data: bytes, atomic: bool = True) -> None:
        """Write ``data`` to ``rel`` (atomic: write aside, then rename)."""
        target = self._p(rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        tmp = target + ".tmp" if atomic else target
        try:
            if os.path.lexists(tmp):
                os.remove(tmp)  # and never write through a link left in its place
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL |
                         getattr(os, "O_NOFOLLOW", 0), 0o644)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            if atomic:
                os.replace(tmp, target)
        except OSError as e:
            raise ExplorerError(f"cannot write {target} ({e.strerror}): check the "
                                "checkpoint dir's permissions and free space") from None

    def read(self, rel: str) -> bytes:
        return read_local(self.root, rel)

    def delete(self, rel: str) -> None:
        p = self._p(rel)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=True)
        elif os.path.lexists(p):
            os.remove(p)

    def names(self, rel: str) -> list[str]:
        p = self._p(rel)
        return os.listdir(p) if os.path.isdir(p) else []

    def sizes(self, rel: str) -> dict[str, int]:
        """{name: size in bytes} of the files in directory ``rel``."""
        p = self._p(rel)
        if not os.path.isdir(p):
            return {}
        return {e.name: e.stat().st_size for e in os.scandir(p) if e.is_file()}


class HadoopFiles:
    def __init__(self, sc, url: str, path: str):
        self.url = url
        jvm = sc._jvm
        self._Path = jvm.org.apache.hadoop.fs.Path
        self._io = jvm.org.apache.commons.io.IOUtils
        try:
            self.fs = self._Path(url).getFileSystem(sc._jsc.hadoopConfiguration())
        except Exception as e:
            raise ExplorerError(f"cannot use checkpoint dir {path} ({str(e).splitlines()[0]}): "
                                "give a local path or a reachable hdfs:// / s3a:// URL") \
                from None

    def _p(self, rel: str):
        return self._Path(f"{self.url}/{rel}")

    def exists(self, rel: str) -> bool:
        return bool(self.fs.exists(self._p(rel)))

    def write(self, rel: str, data: bytes, atomic: bool = True) -> None:
        tmp = self._p(rel + ".tmp") if atomic else self._p(rel)
        out = self.fs.create(tmp, True)
        try:
            out.write(bytearray(data))
        finally:
            out.close()
        if not atomic:
            return
        self.fs.delete(self._p(rel), False)
        if not self.fs.rename(tmp, self._p(rel)):
            raise ExplorerError(f"cannot write {self.url}/{rel}: check the checkpoint dir's "
                                "permissions and free space")

    def read(self, rel: str) -> bytes:
        stream = self.fs.open(self._p(rel))
        try:
            return bytes(self._io.toByteArray(stream))
        finally:
            stream.close()

    def delete(self, rel: str) -> None:
        self.fs.delete(self._p(rel), True)

    def names(self, rel: str) -> list[str]:
        if not self.exists(rel):
            return []
        return [st.getPath().getName() for st in self.fs.listStatus(self._p(rel))]

    def sizes(self, rel: str) -> dict[str, int]:
        if not self.exists(rel):
            return {}
        return {st.getPath().getName(): int(st.getLen())
                for st in self.fs.listStatus(self._p(rel)) if st.isFile()}
