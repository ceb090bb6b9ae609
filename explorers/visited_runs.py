"""Sorted runs of state keys on disk: the part of a visited set that does not fit in
memory (``explorers.spark.spill``), in the manner of TLC's disk fingerprint set: new keys
gather in memory, a full buffer is written out as an immutable sorted run, a lookup
checks the sorted candidates against the buffer and against every run, and runs are
merged a few at a time so their number stays bounded.

A run file is a 32-byte header and then its columns, each ``count`` little-endian uint64
words, one after the other:

    b"KMCRUN1\\n"  ncols (uint64)  count (uint64)  wide (uint64: 0 or 1)
    column 0 ... column ncols-1

A key column set is one column for a packed model's keys (``keyarrays.NARROW``) and two
for 128-bit keys (the high words, then the low words: ``keyarrays.WIDE``), so the high
words are one contiguous array that ``numpy.searchsorted`` reads memory-mapped, without a
copy. A run of visited keys holds one key set, ascending and distinct; a file of trace
rows holds two (the keys, then their parents' keys). Files are written under a temporary
name and renamed into place, so a reader never sees half a run, and never change after.
"""
from __future__ import annotations

import os
import struct
import uuid

import numpy as np

from kmc.explorers import keyarrays

MAGIC = b"KMCRUN1\n"
HEADER = struct.Struct("<8sQQQ")
#: keys read per run and per step while merging or filtering (16 bytes each when wide)
CHUNK = 1 << 18


class RunFileError(Exception):
    """A run file that is not one (a wrong header or size)."""


def write(path: str, *arrays: np.ndarray) -> None:
    """Write key arrays of one kind and one length (``keyarrays``) as a run file at
    ``path``: to a temporary name in the same directory, then renamed."""
    with RunWriter(path, arrays[0].dtype, arrays[0].size, len(arrays)) as w:
        w.append(*arrays)


class RunWriter:
    """Writes a run file of ``count`` keys per key set (known beforehand) chunk by
    chunk; the file appears at ``path`` only when every key is written (``close``)."""

    def __init__(self, path: str, dtype, count: int, sets: int = 1):
        self.path, self.count, self.done = path, int(count), 0
        self.wide = np.dtype(dtype) == keyarrays.WIDE
        self.words = 2 if self.wide else 1
        self.ncols = sets * self.words
        self.tmp = f"{path}.{uuid.uuid4().hex}.tmp"
        self._f = open(self.tmp, "wb")
        self._f.write(HEADER.pack(MAGIC, self.ncols, self.count, int(self.wide)))
        self._f.truncate(HEADER.size + 8 * self.ncols * self.count)

    def append(self, *arrays: np.ndarray) -> None:
        n = arrays[0].size
        if self.done + n > self.count:
            raise ValueError("more keys than the run file was made for")
        for s, arr in enumerate(arrays):
            for w, col in enumerate(_words(arr)):
                self._f.seek(HEADER.size + 8 * ((s * self.words + w) * self.count
                                                + self.done))
                self._f.write(np.ascontiguousarray(col, dtype="<u8").tobytes())
        self.done += n

    def close(self) -> None:
        if self._f is None:
            return
        f, self._f = self._f, None
        f.close()
        if self.done != self.count:
            os.remove(self.tmp)
            raise ValueError(f"run file {self.path}: {self.done} keys written of "
                             f"{self.count}")
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None
            os.remove(self.tmp)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, _exc, _tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()


def _words(arr: np.ndarray):
    return (arr["hi"], arr["lo"]) if keyarrays.is_wide(arr) else (arr,)


class Run:
    """A run file opened read-only: its columns memory-mapped (``cols``)."""

    def __init__(self, path: str):
        self.path = path
        with open(path, "rb") as f:
            head = f.read(HEADER.size)
        if len(head) != HEADER.size:
            raise RunFileError(f"{path} is not a run file (too short)")
        magic, ncols, count, wide = HEADER.unpack(head)
        if magic != MAGIC or wide not in (0, 1) or \
                os.path.getsize(path) != HEADER.size + 8 * ncols * count:
            raise RunFileError(f"{path} is not a whole run file")
        self.count, self.wide, self.ncols = int(count), bool(wide), int(ncols)
        self.dtype = keyarrays.WIDE if wide else keyarrays.NARROW
        if count:
            mm = np.memmap(path, dtype="<u8", mode="r", offset=HEADER.size,
                           shape=(ncols, count))
            self.cols = [mm[i] for i in range(ncols)]
        else:
            self.cols = [np.empty(0, dtype=np.uint64)] * ncols

    def keys(self, s: int = 0, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Key set ``s`` (rows ``start:stop``) as an in-memory key array."""
        stop = self.count if stop is None else min(stop, self.count)
        if not self.wide:
            return np.array(self.cols[s][start:stop])
        out = np.empty(max(0, stop - start), dtype=keyarrays.WIDE)
        out["hi"] = self.cols[2 * s][start:stop]
        out["lo"] = self.cols[2 * s + 1][start:stop]
        return out

    def unseen(self, keys: np.ndarray) -> np.ndarray:
        """True where ``keys[i]`` (ascending) is not among the run's keys (key set 0).
        One ``searchsorted`` of the sorted candidates on the memory-mapped high words:
        ascending probes move forward through the file, as a merge would."""
        if self.count == 0 or keys.size == 0:
            return np.ones(keys.size, dtype=bool)
        hi = self.cols[0]
        qh = keyarrays.high_word(keys)
        left = np.searchsorted(hi, qh, side="left")
        if not self.wide:
            at = np.minimum(left, self.count - 1)
            return hi[at] != qh
        right = np.searchsorted(hi, qh, side="right")
        out = np.ones(keys.size, dtype=bool)
        lo, qlo = self.cols[1], keys["lo"]
        one = np.flatnonzero(right - left == 1)
        if one.size:
            out[one] = lo[left[one]] != qlo[one]
        for i in np.flatnonzero(right - left > 1).tolist():  # equal high words
            out[i] = not (lo[left[i]:right[i]] == qlo[i]).any()
        return out

    def chunks(self, size: int = CHUNK):
        """The run's keys (key set 0) in ascending chunks of at most ``size``."""
        for start in range(0, self.count, size):
            yield self.keys(0, start, start + size)


def merge(paths, out: str, chunk: int = CHUNK) -> int:
    """Merge the sorted, pairwise disjoint key runs ``paths`` into one run at ``out``,
    reading each sequentially, ``chunk`` keys of each at a time; returns its size."""
    runs = [Run(p) for p in paths]
    dtype = runs[0].dtype if runs else keyarrays.NARROW
    total = sum(r.count for r in runs)
    heads = [r.chunks(chunk) for r in runs]
    bufs = [next(h, None) for h in heads]
    with RunWriter(out, dtype, total) as w:
        while True:
            live = [i for i, b in enumerate(bufs) if b is not None and b.size]
            if not live:
                break
            # everything up to the least of the chunks' last keys can be written now:
            # no later chunk of any run holds a smaller key
            lasts = np.concatenate([bufs[i][-1:] for i in live])
            bound = lasts[keyarrays.sort_order(lasts)[:1]]
            taken = []
            for i in live:
                cut = int(keyarrays.search(bufs[i], bound)[0])
                cut += cut < bufs[i].size and keyarrays.key_at(bufs[i], cut) == \
                    keyarrays.key_at(bound, 0)
                taken.append(bufs[i][:cut])
                rest = bufs[i][cut:]
                bufs[i] = rest if rest.size else next(heads[i], None)
            w.append(keyarrays.sorted_keys(np.concatenate(taken)))
    return total


def split(path: str, keep_out: str, keep, chunk: int = CHUNK):
    """Copy the keys of run ``path`` for which ``keep(keys)`` (a boolean mask per chunk)
    is True into a new run at ``keep_out``; returns (its size, the other keys)."""
    run = Run(path)
    masks = [keep(c) for c in run.chunks(chunk)]
    kept = sum(int(m.sum()) for m in masks)
    gone = []
    with RunWriter(keep_out, run.dtype, kept) as w:
        for c, m in zip(run.chunks(chunk), masks):
            w.append(c[m])
            gone.append(c[~m])
    rest = np.concatenate(gone) if gone else keyarrays.empty(run.dtype)
    return kept, rest
