"""The memory guard: stop a local run cleanly before the operating system kills it.

A BFS of a Kafka model holds every frontier state as Python objects (several hundred bytes
each, bench/memory_bench.py) and grows without a cap on a large scenario. With
``max_memory`` (bytes) the local engines read the process's resident set size now and
then (``/proc/self/statm``: one small read, at most every ``INTERVAL`` seconds within a
level and once at each level boundary) and stop with ``stopped_by = "max_memory"``: BFS at
the last level boundary it completed, DFS at once. The run then ends like any bounded run
(verdicts ``unknown`` unless something was found, exit code 4).

Where the resident size cannot be read (no ``/proc``), the peak resident size from
``resource.getrusage`` stands in: it never decreases, so the guard may only stop earlier.
"""
from __future__ import annotations

import os
import sys

#: the default guard's share of the memory available to the process
DEFAULT_SHARE = 0.8
#: seconds between two reads of the resident size within a level
INTERVAL = 0.05

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int | None:
    """The process's resident set size in bytes, or None where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # macOS: bytes; else KiB


def total_memory() -> int | None:
    """The memory this process may use: the machine's (MemTotal in /proc/meminfo, else
    the physical page count), capped by a cgroup limit when one is set; None if unknown."""
    total = _meminfo_total()
    if total is None:
        try:
            total = os.sysconf("SC_PHYS_PAGES") * _PAGE
        except (ValueError, OSError, AttributeError):
            total = None
    limit = _cgroup_limit()
    if limit is not None and (total is None or limit < total):
        return limit
    return total


def default_max_memory() -> int | None:
    """The default guard: DEFAULT_SHARE of ``total_memory()`` (None where it is unknown)."""
    total = total_memory()
    return None if not total else int(total * DEFAULT_SHARE)


def _meminfo_total() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024  # reported in kB
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_limit() -> int | None:
    """A container's memory limit (cgroup v2, then v1), None when there is none."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 1 << 60:  # v1 reports "no limit" as ~2^63
            return int(text)
    return None


class MemoryGuard:
    """``exceeded()`` is True once the resident size passes ``limit`` bytes. It reads
    the size at most every INTERVAL seconds, except when ``now=None`` (a level boundary),
    and costs one comparison when there is no limit."""

    def __init__(self, limit: int | None):
        if limit is not None and limit <= 0:
            raise ValueError(f"max_memory must be a positive number of bytes, not {limit}")
        self.limit = limit
        self.tripped_at: int | None = None  # the resident size that stopped the run
        self._last = float("-inf")

    def exceeded(self, now: float | None = None) -> bool:
        if self.limit is None:
            return False
        if self.tripped_at is not None:
            return True
        if now is not None:
            if now - self._last < INTERVAL:
                return False
            self._last = now
        rss = resident_bytes()
        if rss is not None and rss > self.limit:
            self.tripped_at = rss
            return True
        return False

    def report(self, r) -> None:
        """Record the limit (and, when it stopped the run, the size that crossed it)."""
        if self.limit is not None:
            r.extra["max_memory"] = self.limit
            if self.tripped_at is not None:
                r.extra["resident_bytes_at_stop"] = self.tripped_at
