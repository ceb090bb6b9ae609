"""The checkpoint's key, and records sealed with it: nothing read back from a checkpoint
directory is unpickled before its HMAC verifies.

A checkpoint's frontier holds Python objects (a model's states), which travel pickled; a
pickle executes code when loaded, so anyone able to write the directory could otherwise run
code as the user who resumes. Each pickled record is therefore written as one text line

    HMAC-SHA256-HEX BASE64-PAYLOAD

whose HMAC is over a context (what the record is, e.g. ``blocks/7``) and the payload, with
a random key made when a new run into the directory starts. The key is not in the
directory: it lives in ``~/.kmc/checkpoint-keys`` (or ``$KMC_KEY_DIR``), a 0700 directory,
in a 0600 file named by the SHA-256 of the checkpoint's URL. The driver
reads it and ships it to the executors inside the closures that seal and open records.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import pickle
import secrets
import stat

from kmc.explorers.errors import ExplorerError

KEY_DIR_ENV = "KMC_KEY_DIR"
#: the text that marks a record that failed its check, wherever Spark reports it
UNVERIFIED = "kmc-checkpoint-record-not-verified"


class Unverified(Exception):
    """A sealed record whose HMAC does not match (raised on the executors too)."""

    def __init__(self, context: str):
        super().__init__(f"{UNVERIFIED}: {context}")
        self.context = context


# ---- the key ---------------------------------------------------------------------------
def key_dir() -> str:
    return os.environ.get(KEY_DIR_ENV) or os.path.join(os.path.expanduser("~"), ".kmc",
                                                       "checkpoint-keys")


def key_path(url: str) -> str:
    return os.path.join(key_dir(), hashlib.sha256(url.encode()).hexdigest() + ".key")


def private_dir() -> str:
    """The key directory, created 0700 if missing; refused when another user owns it or
    (when set by KMC_KEY_DIR) others may read or write it."""
    d = key_dir()
    try:
        os.makedirs(d, mode=0o700, exist_ok=True)
        st = os.lstat(d)
    except OSError as e:
        raise ExplorerError(f"cannot create the checkpoint key directory {d} "
                            f"({e.strerror}): set {KEY_DIR_ENV} to a private directory "
                            "you can write") from None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise ExplorerError(f"the checkpoint key directory {d} is not a directory of your "
                            f"own: set {KEY_DIR_ENV} to a private directory")
    if stat.S_IMODE(st.st_mode) & 0o077:
        if os.environ.get(KEY_DIR_ENV):  # the user's own choice: not ours to change
            raise ExplorerError(f"{KEY_DIR_ENV}={d} is open to other users: chmod 700 "
                                "it, or choose a private directory")
        os.chmod(d, 0o700)
    return d


def new_key(url: str) -> bytes:
    """A fresh key for the checkpoint at ``url``, replacing any older one (atomically:
    written 0600 to a new file, then renamed over the old)."""
    d = private_dir()
    key = secrets.token_bytes(32)
    path = key_path(url)
    tmp = os.path.join(d, f".{os.path.basename(path)}.{secrets.token_hex(8)}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL |
                     getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(key.hex() + "\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        finally:
            if os.path.lexists(tmp):
                os.remove(tmp)
    except OSError as e:
        raise ExplorerError(f"cannot write the checkpoint key {path} ({e.strerror}): set "
                            f"{KEY_DIR_ENV} to a private directory you can write") from None
    return key


def read_key(url: str, shown: str) -> bytes:
    """The key of the checkpoint at ``url`` (``shown``: the path as the user gave it)."""
    path = key_path(url)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise ExplorerError(f"checkpoint dir {shown} was written by another user or "
                            f"machine, or at another path (its key is not in {key_dir()}): "
                            "start afresh in an empty directory, or resume it where it was "
                            "written") from None
    except OSError as e:
        raise ExplorerError(f"cannot read the checkpoint key {path} ({e.strerror}): "
                            "start afresh in an empty directory") from None
    with os.fdopen(fd) as f:
        st = os.fstat(f.fileno())
        if st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) & 0o077:
            raise ExplorerError(f"the checkpoint key {path} is not private (owned by "
                                "another user, or readable by others): start afresh in an "
                                "empty directory, which makes a new key")
        text = f.read().strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise ExplorerError(f"the checkpoint key {path} is damaged: start afresh in an "
                            "empty directory, which makes a new key")
    return key


# ---- sealed records --------------------------------------------------------------------
def mac(key: bytes, context: str, payload: bytes) -> str:
    return hmac.new(key, context.encode() + b"\n" + payload, hashlib.sha256).hexdigest()


def seal(key: bytes, context: str, obj) -> str:
    """``obj`` pickled, as one line ``HMAC BASE64``."""
    payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return f"{mac(key, context, payload)} {base64.b64encode(payload).decode('ascii')}"


def unseal(key: bytes, context: str, line: str):
    """The object of a sealed line; Unverified (nothing unpickled) when its HMAC does not
    match the key and context."""
    head, _sep, body = line.strip().partition(" ")
    try:
        payload = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        raise Unverified(context) from None
    if not hmac.compare_digest(head, mac(key, context, payload)):
        raise Unverified(context)
    return pickle.loads(payload)


def sealer(key: bytes, context: str):
    """A function for ``rdd.map``: record -> sealed line (the key travels in its closure)."""
    def seal_record(record):
        return seal(key, context, record)
    return seal_record


def opener(key: bytes, context: str):
    """A function for ``rdd.map``: sealed line -> record, verified first."""
    def open_record(line):
        return unseal(key, context, line)
    return open_record
