"""Reading and writing the user's files safely, before any work starts.

Inputs (scenario and suite TOML, trace JSON): regular files only (a FIFO or a device would
block or never end), at most ``MAX_BYTES``, nested at most ``MAX_DEPTH`` levels (trace
files: ``tracefile.TRACE_DEPTH``; a parser would otherwise recurse until Python's stack
runs out). Outputs (``--out DIR``, ``--junit
FILE``, ...): checked to be a writable directory or a file in one, so a run never finishes
only to fail at writing. Every problem is one ``InputError`` line: what is wrong, the fix.
"""
from __future__ import annotations

import contextlib
import os
import stat

MAX_BYTES = 64 * 1024 * 1024
UMASK = os.umask(0o022)  # read once, at import, before any thread runs
os.umask(UMASK)
MAX_DEPTH = 100


class InputError(ValueError):
    """A user file or path that cannot be used. One line: what is wrong and the fix."""


def read_text(path: str, what: str, max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes``."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{what} {path} does not exist: check the path") from None
    except OSError as e:
        raise InputError(f"cannot read {what} {path}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise InputError(f"{what} {path} is {kind}: pass a regular file")
    if st.st_size > max_bytes:
        raise InputError(f"{what} {path} is {st.st_size:,} bytes, over the "
                         f"{max_bytes:,}-byte limit: is it the right file?")
    try:
        with open(path, "rb") as f:
            raw = f.read(max_bytes + 1)
    except OSError as e:
        raise InputError(f"cannot read {what} {path}: {e.strerror}") from None
    if len(raw) > max_bytes:
        raise InputError(f"{what} {path} is over the {max_bytes:,}-byte limit")
    try:
        return raw.decode("utf-8-sig")  # a byte-order mark some editors write is dropped
    except UnicodeDecodeError as e:
        raise InputError(f"{what} {path} is not UTF-8 text (byte {e.start}): save it as "
                         "UTF-8") from None


def check_depth(text: str, what: str, limit: int = MAX_DEPTH) -> None:
    """Refuse text whose brackets (``[``/``{`` outside strings) nest deeper than
    ``limit``: TOML and JSON documents kmc reads are a few levels deep."""
    depth = deepest = 0
    quote = None
    escaped = False
    for ch in text:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote or ch == "\n" and quote == "#":
                quote = None
            continue
        if ch in "\"'#":
            quote = ch
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    raise InputError(f"{what} nests deeper than {limit} levels: kmc's files "
                                     "are a few levels deep; is it the right file?")
        elif ch in "]}":
            depth = max(0, depth - 1)


def output_dir(path: str, flag: str) -> str:
    """Check that ``path`` is, or can be made, a writable directory; returns it."""
    if not path or not path.strip():
        raise InputError(f"{flag} needs a directory path, got an empty one")
    if os.path.islink(path) and not os.path.exists(path):
        raise InputError(f"{flag} {path} is a symbolic link to nothing (dangling, or a "
                         "loop): remove it or name a directory")
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise InputError(f"{flag} {path} is a file, not a directory: name a directory "
                             "(it is created if missing)")
        if not os.access(path, os.W_OK | os.X_OK) or _refuses_files(path):
            raise InputError(f"{flag} {path} is not writable: choose a directory you can "
                             "write to")
        return path
    parent = _existing_ancestor(path)
    if not os.path.isdir(parent):
        raise InputError(f"{flag} {path}: {parent} is a file, so the directory cannot be "
                         "created there")
    if not os.access(parent, os.W_OK | os.X_OK) or _refuses_files(parent):
        raise InputError(f"{flag} {path} cannot be created: {parent} is not writable")
    return path


def _refuses_files(directory: str) -> bool:
    """Whether creating a file in ``directory`` fails: ``os.access`` answers yes for
    root in a read-only or virtual file system (/proc, /sys), so a probe file is made
    (exclusively, under a fresh name) and removed at once."""
    import tempfile
    try:
        fd, probe = tempfile.mkstemp(prefix=".kmc-probe-", dir=directory)
    except OSError:
        return True
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)
    return False


def output_file(path: str, flag: str) -> str:
    """Check that ``path`` can be written as a regular file; returns it."""
    if not path or not path.strip():
        raise InputError(f"{flag} needs a file path, got an empty one")
    if os.path.isdir(path):
        raise InputError(f"{flag} {path} is a directory: name a file")
    if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):
        raise InputError(f"{flag} {path} is not a regular file: name a file")
    output_dir(os.path.dirname(os.path.abspath(path)), f"{flag} {path}: its directory")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise InputError(f"{flag} {path} is not writable")
    return path


def write_atomic(path: str, data: str | bytes) -> str:
    """Write ``data`` to ``path`` through a fresh temporary file in the same directory
    (created exclusively: a link planted at a guessable name is never followed) and a
    rename: a reader never sees half a file, and a failure leaves nothing behind."""
    tmp = write_staged(path, data)
    with _gone_on_failure(tmp, path):
        os.replace(tmp, path)
    return path


def write_staged(path: str, data: str | bytes) -> str:
    """The first half of ``write_atomic``: ``data`` in a fresh temporary file beside
    ``path``, returned for the caller to rename onto ``path`` (or delete) once every
    file of a change is written. A failure leaves nothing behind."""
    import tempfile

    folder, name = os.path.split(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    except OSError as e:
        raise _about(e, path) from None
    with _gone_on_failure(tmp, path):
        with os.fdopen(fd, "wb") as f:  # a path that is not UTF-8 (``--out $'\xff'``)
            # is in the text as Python decoded it, and goes back as the same bytes
            f.write(data.encode("utf-8", "surrogateescape") if isinstance(data, str)
                    else data)
        os.chmod(tmp, 0o666 & ~UMASK)  # what open() would have given the file
    return tmp


@contextlib.contextmanager
def _gone_on_failure(tmp: str, path: str):
    """On any failure inside, the temporary file ``tmp`` goes, and an OSError is said
    in one line naming ``path``."""
    try:
        yield
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise _about(e, path) from None
        raise


def write_output(path: str, data: str | bytes, flag: str) -> str:
    """``write_atomic`` into ``path``'s folder, made if missing, for the report that
    ``flag`` names: a failure is one InputError line naming the flag and the cause."""
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        return write_atomic(path, data)
    except OSError as e:
        raise InputError(f"{flag} {path} could not be written ({e.strerror or e}): name a "
                         "file in a writable directory with free space") from None


def _about(e: OSError, path: str) -> OSError:
    """The same error, naming the file the user asked for (not the temporary one)."""
    return type(e)(e.errno, e.strerror, path) if e.errno else e


def file_slug(name: str, keep: str = "-_", limit: int = 100) -> str:
    """``name`` as a file name: itself when it is made of letters, digits and the
    characters ``keep`` (and is at most ``limit`` bytes in UTF-8); otherwise those
    characters, ``_`` for the others, cut at ``limit`` bytes, and a digest of the whole
    name, so two names never share a file (``a/b`` and ``a_b``, say)."""
    import hashlib

    safe = "".join(c if c.isalnum() or c in keep else "_" for c in name)
    if "." in keep:
        safe = safe.strip(".")
    size = len(safe.encode("utf-8", "surrogatepass"))  # a file system counts bytes
    if safe == name and 0 < size <= limit:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    safe = safe[:limit]  # at most ``limit`` characters, then bytes
    while len(safe.encode("utf-8", "surrogatepass")) > limit:
        safe = safe[:-1]
    return f"{safe}-{digest}" if safe else digest


def _existing_ancestor(path: str) -> str:
    p = os.path.abspath(path)
    while not os.path.exists(p):
        up = os.path.dirname(p)
        if up == p:
            break
        p = up
    return p


def printable(text: str, keep: str = "") -> str:
    """``text`` with each character that is not printable (space and ``keep`` aside) as
    its escape (``\\x1b``, ``\\u202e``): text a model makes is shown, never obeyed by a
    terminal, and stays valid in XML."""
    rest = text
    for c in keep:
        rest = rest.replace(c, "")
    if rest.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else
                   c.encode("unicode_escape").decode("ascii") for c in text)
