"""Backing the process that forks the workers with huge pages, so each fork is cheap.

The process that forks a worker per mutant holds every recorded graph (a gigabyte or
more). A fork copies the page table of all of it, 512 entries per 2 MiB in 4 KiB pages,
and the worker's exit tears them down again: on this kind of process about 50 ms a
mutant, thousands of times a run. In 2 MiB pages a fork copies one entry per 2 MiB.
``collapse`` asks Linux (6.1 and later: ``MADV_COLLAPSE``) to move the process's
anonymous memory into huge pages where it can; a worker that writes to a shared huge
page (a reference count) gets its own copy of the 4 KiB it wrote to, as before
(measured on Linux 6.18: a fork and an exit 2 ms instead of 48 ms each for 1.2 GiB,
and a worker that touches every object no slower). Elsewhere, or where the kernel
declines, nothing changes.
"""
from __future__ import annotations

import sys

_HUGE = 2 << 20
MADV_HUGEPAGE, MADV_COLLAPSE = 14, 25


def collapse(smallest: int = 4 << 20) -> int:
    """Ask for huge pages behind every anonymous read-write mapping of this process of
    at least ``smallest`` bytes; returns the bytes the kernel accepted (0 where it
    cannot)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        madvise = libc.madvise
        madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        with open("/proc/self/maps") as f:
            regions = [line.split() for line in f]
    except (OSError, AttributeError):
        return 0
    done = 0
    for parts in regions:
        if len(parts) > 5 and parts[5] != "[heap]":
            continue  # a file or a special mapping
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        lo, hi = (lo + _HUGE - 1) & ~(_HUGE - 1), hi & ~(_HUGE - 1)
        if not parts[1].startswith("rw") or hi - lo < smallest:
            continue
        if madvise(lo, hi - lo, MADV_HUGEPAGE) == 0 and \
                madvise(lo, hi - lo, MADV_COLLAPSE) == 0:
            done += hi - lo
    return done
