"""--checkpoint-dir / --resume: every completed level is persisted, so an interrupted run
(SIGINT, a killed driver) continues from the last completed level.

Layout under DIR (any Hadoop filesystem URL: a local path, file://, hdfs://, s3a://; on a
multi-machine cluster it must be storage every executor and the driver can reach):

    identity.pkl          which scenario wrote this directory (checked on --resume)
    blocks/L/             the owner-partitioned blocks after level L (saveAsPickleFile)
    levels/L.pkl          level L's trace rows (key, parent key) and the run's counters;
                          written last, so its presence marks level L complete
    lineage/              Spark's own RDD checkpoints (lineage cuts)

Only the two newest block sets are kept; level files are small (16 bytes per state) and are
all kept, because traces are rebuilt from them.
"""
from __future__ import annotations

import os
import pickle
from urllib.parse import urlparse

from kmc.explorers.errors import ExplorerError
from kmc.model.encoding import fingerprint

FORMAT = 1


def to_url(path: str) -> str:
    """A Hadoop URL for a user path; a plain path is made absolute (file://)."""
    if urlparse(path).scheme and len(urlparse(path).scheme) > 1:
        return path.rstrip("/")
    return "file://" + os.path.abspath(path)


class CheckpointStore:
    def __init__(self, sc, path: str):
        self.sc = sc
        self.url = to_url(path)
        jvm = sc._jvm
        self._Path = jvm.org.apache.hadoop.fs.Path
        self._io = jvm.org.apache.commons.io.IOUtils
        try:
            self.fs = self._Path(self.url).getFileSystem(sc._jsc.hadoopConfiguration())
        except Exception as e:
            raise ExplorerError(f"cannot use checkpoint dir {path} ({str(e).splitlines()[0]}): "
                                "give a local path or a reachable hdfs:// / s3a:// URL") \
                from None

    # ---- files ------------------------------------------------------------------------
    def _p(self, rel: str):
        return self._Path(f"{self.url}/{rel}")

    def exists(self, rel: str) -> bool:
        return bool(self.fs.exists(self._p(rel)))

    def write(self, rel: str, obj) -> None:
        """Pickle ``obj`` to ``rel`` atomically (write aside, then rename)."""
        tmp = self._p(rel + ".tmp")
        out = self.fs.create(tmp, True)
        try:
            out.write(bytearray(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)))
        finally:
            out.close()
        self.fs.delete(self._p(rel), False)
        if not self.fs.rename(tmp, self._p(rel)):
            raise ExplorerError(f"cannot write {self.url}/{rel}: check the checkpoint dir's "
                                "permissions and free space")

    def read(self, rel: str):
        stream = self.fs.open(self._p(rel))
        try:
            return pickle.loads(bytes(self._io.toByteArray(stream)))
        finally:
            stream.close()

    def delete(self, rel: str) -> None:
        self.fs.delete(self._p(rel), True)

    def names(self, rel: str) -> list[str]:
        if not self.exists(rel):
            return []
        return [st.getPath().getName() for st in self.fs.listStatus(self._p(rel))]

    # ---- levels -----------------------------------------------------------------------
    def completed_levels(self) -> list[int]:
        return sorted(int(n[:-4]) for n in self.names("levels")
                      if n.endswith(".pkl") and n[:-4].isdigit())

    def blocks_url(self, depth: int) -> str:
        return f"{self.url}/blocks/{depth}"

    def save_level(self, depth: int, frontier, nparts: int, meta: dict) -> None:
        """Blocks first, then the level file that marks the level complete."""
        self.delete(f"blocks/{depth}")  # a half-written set from an interrupted attempt
        frontier.save(self.sc, self.blocks_url(depth), nparts)
        self.write(f"levels/{depth}.pkl", meta)
        for old in self.completed_levels():
            if old < depth - 1:
                self.delete(f"blocks/{old}")

    def load_blocks(self, depth: int):
        return self.sc.pickleFile(self.blocks_url(depth))


def identity(core, nparts: int) -> dict:
    """What must match for a checkpoint to be resumed: the model (class, parameters,
    a sample of its reachable keys), the properties, the options that change the state
    space, and the partition count (the owner of a key depends on it)."""
    m = core.model
    # the model's scalar attributes are its parameters (generated source code is not)
    params = {k: v for k, v in sorted(vars(m).items())
              if not k.startswith("_") and isinstance(v, (int, bool, float, type(None)))
              or isinstance(v, str) and len(v) <= 80 and "\n" not in v}
    sample = []
    frontier = [s for _i, s in core.initial()]
    while frontier and len(sample) < 256:
        s = frontier.pop(0)
        sample.append(core.rkey(s))
        frontier.extend(t for _a, t in core.successors(s))
    return {
        "format": FORMAT,
        "model": f"{type(m).__module__}.{type(m).__qualname__}",
        "name": m.name,
        "params": params,
        "properties": [(p.kind, p.name) for p in core.properties],
        "symmetry": core.symmetry,
        "deadlock": core.deadlock,
        "sample": fingerprint(tuple(sample)),
        "partitions": nparts,
    }


def describe(ident: dict) -> str:
    params = " ".join(f"{k}={v}" for k, v in ident.get("params", {}).items())
    return f"{ident.get('name')}{' ' + params if params else ''}"


def open_store(sc, path: str, ident: dict, resume: bool) -> tuple[CheckpointStore, int | None]:
    """Check the directory against this run; returns (store, level to resume from)."""
    store = CheckpointStore(sc, path)
    levels = store.completed_levels()
    _validate(path, ident, resume, store.exists("identity.pkl"),
              lambda: store.read("identity.pkl"), levels)
    if not resume:
        store.write("identity.pkl", ident)
        return store, None
    return store, levels[-1]


def precheck(path: str, ident: dict, resume: bool) -> None:
    """The same checks before Spark starts, when the directory is a local path: a wrong
    directory is reported in a second, not after the JVM's start-up."""
    url = to_url(path)
    if not url.startswith("file://"):
        return
    local = url[len("file://"):]
    ident_file = os.path.join(local, "identity.pkl")
    names = os.listdir(os.path.join(local, "levels")) if \
        os.path.isdir(os.path.join(local, "levels")) else []
    levels = sorted(int(n[:-4]) for n in names if n.endswith(".pkl") and n[:-4].isdigit())

    def read():
        with open(ident_file, "rb") as f:
            return pickle.load(f)
    _validate(path, ident, resume, os.path.exists(ident_file), read, levels)


def _validate(path, ident, resume, has_identity, read_identity, levels) -> None:
    if not resume:
        if has_identity and levels:
            raise ExplorerError(f"checkpoint dir {path} already holds a run of "
                                f"{describe(read_identity())}: add --resume to continue it, "
                                "or choose an empty directory")
        return
    if not has_identity:
        raise ExplorerError(f"--resume: {path} holds no checkpoint: run once with "
                            f"--checkpoint-dir {path} (without --resume) first")
    saved = read_identity()
    if saved.get("format") != FORMAT:
        raise ExplorerError(f"checkpoint dir {path} has format {saved.get('format')}, this "
                            f"kmc writes {FORMAT}: start a new run in an empty directory")
    mine = {k: v for k, v in ident.items() if k != "partitions"}
    theirs = {k: v for k, v in saved.items() if k != "partitions"}
    if mine != theirs:
        diff = sorted(k for k in mine if mine.get(k) != theirs.get(k))
        raise ExplorerError(f"checkpoint dir {path} is from a different scenario "
                            f"({describe(saved)}, not {describe(ident)}; differs in "
                            f"{', '.join(diff)}): use another --checkpoint-dir or drop "
                            "--resume")
    if not levels:
        raise ExplorerError(f"--resume: {path} has no completed level yet: run again "
                            "without --resume")
