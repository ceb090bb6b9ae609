"""The process that forks the workers asks for huge pages (``mutate.hugepages``): where
the kernel gives them, its memory is in them, and a forked child reads and writes the
shared objects as before."""
import gc
import os

import pytest

from kmc.mutate.hugepages import collapse


def _huge_kib() -> int:
    with open("/proc/self/smaps_rollup") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("AnonHugePages"))


def test_collapse_moves_the_heap_into_huge_pages_and_a_child_still_works():
    if not os.path.exists("/proc/self/smaps_rollup"):
        pytest.skip("no /proc/self/smaps_rollup: not Linux")
    data = [tuple(range(i, i + 8)) for i in range(300_000)]  # about 40 MB of objects
    gc.collect()
    before = _huge_kib()
    done = collapse()
    if done == 0:
        pytest.skip("the kernel gives no huge pages here (THP off, or before Linux 6.1)")
    assert _huge_kib() - before >= 8 * 1024  # at least 8 MiB moved into huge pages
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child writes reference counts all over the shared objects
        total = sum(t[3] for t in data)
        os.write(w, str(total).encode())
        os._exit(0)
    os.close(w)
    got = int(os.read(r, 64))
    os.close(r)
    os.waitpid(pid, 0)
    assert got == sum(i + 3 for i in range(300_000))
    assert data[12345] == tuple(range(12345, 12353))  # the parent's copy is untouched
