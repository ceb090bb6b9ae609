"""--checkpoint-dir / --resume: every completed level is persisted, so an interrupted run
(SIGINT, a killed driver) continues from the last completed level.

Layout under DIR (any Hadoop filesystem URL: a local path, file://, hdfs://, s3a://; on a
multi-machine cluster it must be storage every executor and the driver can reach):

    identity.json         which scenario wrote this directory (checked on --resume)
    blocks/L/part-*       the owner-partitioned blocks after level L: text, one sealed
                          record per line (``sealing``: HMAC, then the base64 pickle)
    levels/L.npy          level L's trace rows: a 2 x n array of keys (uint64, or 128-bit
                          (hi, lo) pairs), its keys (ascending) and their parents' keys
                          (loaded with allow_pickle=False)
    levels/L.json         level L's counters, the digest of L.npy, the name and size of
                          each of blocks/L's part files, and its coverage and discoveries
                          (Python objects: a base64 pickle); written last, so its presence
                          marks level L complete
    lineage/              Spark's own RDD checkpoints (lineage cuts)

Nothing read from DIR executes code before its HMAC verifies. Each JSON file carries an
HMAC with a key kept outside DIR (``sealing``), verified before anything it covers is used
(it covers the digest of L.npy and the list of block files, so a block file lost, added,
renamed or cut short is refused before the blocks are read); pickles (block records, a
level's objects) are loaded only after their HMAC verifies. A local directory's small
files are read and written by the driver directly (``ckptfiles``); blocks always go
through Spark.

Only the two newest block sets are kept; level files are small (16 bytes per state, 32
with 128-bit keys) and are all kept, because traces are rebuilt from them.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import io
import json
import os
import pickle

import numpy as np

from kmc.explorers.errors import ExplorerError
from kmc.explorers.spark import ckptfiles, sealing
from kmc.explorers.spark.ckptfiles import to_url
from kmc.model.encoding import fingerprint

FORMAT = 5  # 3: levels/L.json lists the block files; 4: 128-bit keys; 5: blocks hold
# their levels' trace rows
IDENTITY = "identity.json"
OLD_IDENTITY = "identity.pkl"  # format 1 (pickles): refused unread
#: a level's counters, kept as JSON as they are
COUNTERS = ("depth", "unique", "generated", "mode", "frontier", "elapsed", "levels")


class CheckpointStore:
    def __init__(self, sc, path: str):
        self.sc = sc
        self.path = path  # as the user gave it (messages)
        self.url = to_url(path)
        self.files = ckptfiles.open_files(sc, self.url, path)
        self.key: bytes | None = None  # set by open_store
        self.identity: dict | None = None  # the identity the directory holds

    def exists(self, rel: str) -> bool:
        return self.files.exists(rel)

    def read(self, rel: str) -> bytes:
        return self.files.read(rel)

    # ---- levels -----------------------------------------------------------------------
    def completed_levels(self) -> list[int]:
        return level_numbers(self.files.names("levels"))

    def blocks_url(self, depth: int) -> str:
        return f"{self.url}/blocks/{depth}"

    def save_level(self, depth: int, frontier, nparts: int, meta: dict) -> None:
        """Blocks first, then the level's files; its JSON file, which marks the level
        complete, last."""
        self.files.delete(f"blocks/{depth}")  # half-written by an interrupted attempt
        records = _records(self.sc, frontier, nparts)
        records.map(sealing.sealer(self.key, f"blocks/{depth}")) \
            .saveAsTextFile(self.blocks_url(depth))
        (npy_rel, npy), (json_rel, doc) = encode_level(self.key, depth, meta,
                                                       self.block_files(depth))
        self.files.write(npy_rel, npy, atomic=False)  # complete once the JSON file is
        self.files.write(json_rel, doc)
        for old in self.completed_levels():
            if old < depth - 1:
                self.files.delete(f"blocks/{old}")

    def load_level(self, depth: int, rows: bool = True) -> dict:
        """Level ``depth``'s metadata, as ``Run.meta`` made it; its HMAC verified. With
        ``rows`` False its trace rows are not read (``keys`` and ``parents`` None)."""
        files = {rel: self.read(rel) for rel in level_files(depth)[not rows:]}
        return decode_level(self.key, depth, files, self.path)

    def block_files(self, depth: int) -> dict:
        """The part files of blocks/``depth`` as they are now: {name: size in bytes}."""
        return {name: size for name, size in self.files.sizes(f"blocks/{depth}").items()
                if name.startswith("part-")}

    def check_blocks(self, depth: int, meta: dict) -> None:
        """Refuse blocks/``depth`` unless it holds exactly the part files, of the very
        sizes, that level ``depth``'s (verified) metadata lists: a file lost, added,
        renamed or cut short would otherwise resume with a wrong set of states."""
        want, have = meta["blocks"], self.block_files(depth)
        for name in sorted(want.keys() | have.keys()):
            if name not in have:
                why = "is missing"
            elif name not in want:
                why = f"is not one of the files levels/{depth}.json lists"
            elif have[name] != want[name]:
                why = f"has {have[name]:,} bytes, not the {want[name]:,} written"
            else:
                continue
            raise tampered(self.path, f"blocks/{depth}/{name}", why)

    def load_blocks(self, depth: int):
        """The blocks after level ``depth``: an RDD of (partition, record). Each line is
        verified on its executor before its record is unpickled; one that does not verify
        fails the job with ``sealing.UNVERIFIED`` (``unverified_error`` explains it)."""
        return self.sc.textFile(self.blocks_url(depth)) \
            .map(sealing.opener(self.key, f"blocks/{depth}"))

    def unverified_error(self, e: BaseException) -> ExplorerError | None:
        """The one-line error for a Spark job that failed on a tampered block line (or on
        a file whose Hadoop checksum, the ``.crc`` file beside it, no longer matches)."""
        text = str(e)
        if sealing.UNVERIFIED in text:
            return tampered(self.path, "a block record")
        if "ChecksumException" in text:
            return tampered(self.path, "a file", "no longer matches its Hadoop checksum")
        return None


def _records(sc, frontier, nparts):
    """The frontier's blocks as an RDD of (partition, record): what a checkpoint saves."""
    if frontier.mode == "driver":
        return sc.parallelize(frontier.blocks(nparts), nparts)
    from kmc.explorers.spark import spill, spool
    from kmc.explorers.spark.driver import is_block

    # a block's runs and row files are read back into it: a checkpoint keeps the keys
    # and rows themselves, never the paths of files the run removes (``spill``)
    return frontier.state.filter(is_block).map(spool.opened_record) \
        .map(spill.inlined_record)


def level_numbers(names) -> list[int]:
    return sorted(int(n[:-5]) for n in names if n.endswith(".json") and n[:-5].isdigit())


def level_files(depth: int) -> tuple[str, str]:
    return f"levels/{depth}.npy", f"levels/{depth}.json"


# ---- signed JSON -------------------------------------------------------------------------
def _canonical(body: dict) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), default=_plain).encode()


def _plain(v):
    if isinstance(v, np.generic):  # a numpy scalar in a counter
        return v.item()
    raise TypeError(f"{type(v).__name__} is not JSON")


def signed(key: bytes, context: str, body: dict) -> bytes:
    """``body`` as a JSON object with an extra "mac": the HMAC of its canonical form."""
    body = json.loads(_canonical(body))
    return json.dumps({**body, "mac": sealing.mac(key, context, _canonical(body))},
                      indent=1, sort_keys=True).encode()


def parse(data: bytes, what: str, path: str) -> dict:
    """A JSON object read from the checkpoint dir (not verified yet)."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):  # not JSON, or nested past what json reads
        doc = None
    if not isinstance(doc, dict):
        raise ExplorerError(f"checkpoint dir {path} has a damaged {what}: start afresh in an "
                            "empty directory")
    return doc


def verified(key: bytes, context: str, doc: dict, path: str, what: str) -> dict:
    body = {k: v for k, v in doc.items() if k != "mac"}
    mac = doc.get("mac")
    if not isinstance(mac, str) or \
            not hmac.compare_digest(mac, sealing.mac(key, context, _canonical(body))):
        raise tampered(path, what)
    return body


def tampered(path: str, what: str, why: str = "does not match its key") -> ExplorerError:
    return ExplorerError(f"checkpoint dir {path} was modified or written by another "
                         f"user/machine ({what} {why}): start afresh "
                         "without --resume in an empty directory, or resume it as the user "
                         "and on the machine that wrote it")


# ---- levels on disk ----------------------------------------------------------------------
def encode_level(key: bytes, depth: int, meta: dict, blocks: dict) -> list[tuple[str, bytes]]:
    """The files of level ``depth`` (``Run.meta``), in writing order: its trace rows
    (row 0 the keys, row 1 their parents' keys) and its JSON file, which lists the
    ``blocks`` files ({name: size}) saved with the level."""
    npy_rel, json_rel = level_files(depth)
    buf = io.BytesIO()
    np.save(buf, np.stack([meta["keys"], meta["parents"]]), allow_pickle=False)
    rows = buf.getvalue()
    objects = pickle.dumps({"coverage": dict(meta["coverage"]),
                            "discoveries": dict(meta["discoveries"])},
                           protocol=pickle.HIGHEST_PROTOCOL)
    init = meta["init_index"]
    body = {"format": FORMAT, **{k: meta[k] for k in COUNTERS},
            "init_index": None if init is None else [[int(k), int(i)]
                                                     for k, i in init.items()],
            "rows_sha256": hashlib.sha256(rows).hexdigest(), "blocks": dict(blocks),
            "objects": base64.b64encode(objects).decode("ascii")}
    return [(npy_rel, rows), (json_rel, signed(key, f"levels/{depth}", body))]


def decode_level(key: bytes, depth: int, files: dict, path: str) -> dict:
    """``encode_level``'s inverse: the metadata ``Run.restore`` takes. The JSON file's HMAC
    covers the .npy file's digest and the objects' pickle, checked before either is
    loaded."""
    npy_rel, json_rel = level_files(depth)
    body = level_body(key, depth, files[json_rel], path)
    keys = parents = None
    if npy_rel in files:  # else the caller does not need the level's trace rows
        if hashlib.sha256(files[npy_rel]).hexdigest() != body["rows_sha256"]:
            raise tampered(path, npy_rel)
        rows = np.load(io.BytesIO(files[npy_rel]), allow_pickle=False)
        keys, parents = rows[0].copy(), rows[1].copy()
    objects = pickle.loads(base64.b64decode(body["objects"]))
    init = body["init_index"]
    return {**{k: body[k] for k in COUNTERS}, "keys": keys,
            "parents": parents, **objects, "blocks": body["blocks"],
            "init_index": None if init is None else {k: i for k, i in init}}


def level_body(key: bytes, depth: int, data: bytes, path: str) -> dict:
    """Level ``depth``'s JSON file (``data``), its format and HMAC checked."""
    json_rel = level_files(depth)[1]
    doc = parse(data, json_rel, path)
    if doc.get("format") != FORMAT:
        raise format_error(path, doc.get("format"))
    return verified(key, f"levels/{depth}", doc, path, json_rel)


def check_bounds(meta: dict, max_states, max_depth, path: str) -> None:
    """Refuse to resume a checkpoint that is already past this run's bounds: the
    states it holds cannot be taken back, and a result counting them would not be what
    a run with these bounds reports."""
    unique, depth = meta["unique"], meta["depth"]
    if max_states is not None and unique > max_states:
        raise ExplorerError(f"the checkpoint in {path} already holds {unique:,} states, "
                            f"more than --max-states {max_states:,}: resume without it "
                            "or with a larger bound")
    if max_depth is not None and depth > max_depth:
        raise ExplorerError(f"the checkpoint in {path} is already {depth} levels deep, "
                            f"more than --max-depth {max_depth}: resume without it or "
                            "with a larger bound")


# ---- the directory's identity ------------------------------------------------------------
def identity(core, nparts: int) -> dict:
    """What must match for a checkpoint to be resumed: the model (class, parameters,
    a sample of its reachable keys), the properties, the options that change the state
    space, and the partition count (the owner of a key depends on it). Plain JSON
    values only (as read back from ``identity.json``)."""
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
    return json.loads(_canonical({
        "format": FORMAT,
        "model": f"{type(m).__module__}.{type(m).__qualname__}",
        "name": m.name,
        "params": params,
        "properties": [(p.kind, p.name) for p in core.properties],
        "symmetry": core.symmetry,
        "deadlock": core.deadlock,
        "sample": fingerprint(tuple(sample)),
        "partitions": nparts,
    }))


def describe(ident: dict) -> str:
    params = ident.get("params")
    params = " ".join(f"{k}={v}" for k, v in params.items()) if isinstance(params, dict) \
        else ""
    return f"{ident.get('name')}{' ' + params if params else ''}"


def format_error(path: str, fmt) -> ExplorerError:
    older = isinstance(fmt, int) and not isinstance(fmt, bool) and fmt < FORMAT
    why = "" if not older else \
        " (an older kmc's, whose state keys were 64-bit; this kmc's are 128-bit)" \
        if fmt < 4 else " (an older kmc's, whose blocks hold no trace rows)"
    return ExplorerError(f"checkpoint dir {path} has format {fmt}{why}, this kmc reads "
                         f"and writes format {FORMAT} only: start a new run in an empty "
                         "directory")


def old_format_error(path: str) -> ExplorerError:
    return ExplorerError(f"checkpoint dir {path} was written by an older kmc "
                         f"({OLD_IDENTITY}, a format this kmc does not read): start afresh "
                         "in an empty directory")


def open_store(sc, path: str, ident: dict, resume: bool) -> tuple[CheckpointStore, int | None]:
    """Check the directory against this run; returns (store, level to resume from). A
    new run makes the checkpoint's key; a resumed one reads it."""
    store = CheckpointStore(sc, path)
    if store.exists(OLD_IDENTITY):
        raise old_format_error(path)
    levels = store.completed_levels()
    checked = _validate(path, store.url, ident, resume, store.exists(IDENTITY),
                        lambda: store.read(IDENTITY), levels)
    if not resume:
        store.key = sealing.new_key(store.url)
        store.files.write(IDENTITY, signed(store.key, "identity", ident))
        store.identity = ident
        return store, None
    store.identity, store.key = checked
    return store, levels[-1]


def precheck(path: str, ident: dict, resume: bool, max_states=None, max_depth=None) -> None:
    """The same checks before Spark starts, when the directory is a local path, and
    ``check_bounds`` on the last level: a wrong directory or bound is reported in a
    second, not after the JVM's start-up. Returns the saved identity of a local resume
    (else None)."""
    url = to_url(path)
    if not resume:
        sealing.private_dir()  # where the new run's key will go
    if not url.startswith("file://"):
        return None
    local = url[len("file://"):]
    if os.path.exists(os.path.join(local, OLD_IDENTITY)):
        raise old_format_error(path)
    ident_file = os.path.join(local, IDENTITY)
    names = os.listdir(os.path.join(local, "levels")) if \
        os.path.isdir(os.path.join(local, "levels")) else []

    def read(name):
        return ckptfiles.read_local(local, name)
    levels = level_numbers(names)
    checked = _validate(path, url, ident, resume, os.path.exists(ident_file),
                        lambda: read(IDENTITY), levels)
    if checked is not None:
        json_rel = level_files(levels[-1])[1]
        check_bounds(level_body(checked[1], levels[-1], read(json_rel), path),
                     max_states, max_depth, path)
    return None if checked is None else checked[0]


def _validate(path, url, ident, resume, has_identity, read_identity, levels):
    """None for a new run; (the saved identity, the key) for a resume."""
    if not resume:
        if has_identity and levels:
            raise ExplorerError(f"checkpoint dir {path} already holds a run of "
                                f"{describe(parse(read_identity(), IDENTITY, path))}: add "
                                "--resume to continue it, or choose an empty directory")
        return None
    if not has_identity:
        raise ExplorerError(f"--resume: {path} holds no checkpoint: run once with "
                            f"--checkpoint-dir {path} (without --resume) first")
    doc = parse(read_identity(), IDENTITY, path)
    if doc.get("format") != FORMAT:
        raise format_error(path, doc.get("format"))
    key = sealing.read_key(url, path)
    saved = verified(key, "identity", doc, path, IDENTITY)
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
    return saved, key
