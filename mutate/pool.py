"""Worker processes: one fresh process per task, at most ``jobs`` at a time, each with
its own time limit, and an overall time budget.

A task runs in a child forked from this process, so it starts with kmc already imported,
and whatever the task does to its modules (a mutant) dies with it. A child that runs out
of time is killed; a child that dies without answering is reported as such. Results are
delivered in the order the tasks start (task order, unless the caller gives another:
longest expected first keeps both workers busy to the end), whatever order the children
finish in.
"""
from __future__ import annotations

import multiprocessing
import os
import time
from multiprocessing.connection import wait

TIMEOUT = "timeout"
DIED = "died"
NOT_RUN = "not_run"


def _child(conn, fn, args):
    _die_with_parent()
    try:
        result = fn(*args)
    except BaseException as e:  # anything at all: the parent gets one line
        result = {"load_error": f"{type(e).__name__}: {e}"}
    try:
        conn.send(result)
    finally:
        conn.close()
        os._exit(0)  # no interpreter teardown: the parent owns every resource


def run_one(fn, args, timeout: float | None = None):
    """``fn(*args)`` in a child process (what ``run_tasks`` does for one task)."""
    return next(iter(run_tasks([(fn, args, timeout)], 1)))[1]


def run_tasks(tasks, jobs: int, budget: float | None = None, on_result=None,
              order=None):
    """Run ``tasks`` (``(fn, args, timeout)``) on up to ``jobs`` children, started in
    ``order`` (their indices; default: task order); yield ``(index, result)`` in that
    order. ``result`` is what ``fn`` returned, or ``{"status": TIMEOUT | DIED |
    NOT_RUN}``. Once ``budget`` seconds have passed, tasks not yet started are not
    run."""
    ctx = multiprocessing.get_context("fork")
    start = time.monotonic()
    order = list(range(len(tasks))) if order is None else list(order)
    if sorted(order) != list(range(len(tasks))):
        raise ValueError("order must list every task's index once")  # pragma: no mutate
    pending = [(i, tasks[i]) for i in reversed(order)]
    active: dict = {}  # reader -> (index, process, deadline)
    done: dict = {}
    nxt = 0
    try:
        while pending or active:
            while pending and len(active) < jobs:
                i, (fn, args, timeout) = pending.pop()
                if budget is not None and time.monotonic() - start > budget:
                    done[i] = {"status": NOT_RUN}
                    continue
                reader, writer = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_child, args=(writer, fn, args), daemon=True)
                proc.start()
                writer.close()
                deadline = time.monotonic() + timeout if timeout else None
                active[reader] = (i, proc, deadline)
            if active:
                _collect(active, done)
            while nxt < len(order) and order[nxt] in done:
                yield order[nxt], done.pop(order[nxt])
                nxt += 1
    finally:
        for reader, (_i, proc, _d) in active.items():
            _stop(proc)
            reader.close()


def longest_first(costs) -> list:
    """The indices of ``costs``, largest cost first (ties in index order): a start
    order for ``run_tasks``."""
    return sorted(range(len(costs)), key=lambda i: -costs[i])


def _collect(active, done) -> None:
    now = time.monotonic()
    deadlines = [d for (_i, _p, d) in active.values() if d is not None]
    wait_s = max(0.0, min(deadlines) - now) if deadlines else None
    ready = wait(list(active), timeout=min(wait_s, 1.0) if wait_s is not None else 1.0)
    for reader in ready:
        i, proc, _d = active.pop(reader)
        try:
            done[i] = reader.recv()
        except (EOFError, OSError):  # it ended without answering: its exit code
            proc.join(5)
            done[i] = {"status": DIED, "exitcode": proc.exitcode}
        reader.close()
        proc.join(5)
        if proc.is_alive():
            _stop(proc)
    now = time.monotonic()
    for reader, (i, proc, deadline) in list(active.items()):
        if deadline is not None and now > deadline:
            del active[reader]
            _stop(proc)
            reader.close()
            done[i] = {"status": TIMEOUT}


def _die_with_parent() -> None:
    """Linux: the kernel ends this worker if the process that started it dies (killed
    before it could end its workers); elsewhere nothing."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _stop(proc) -> None:
    """End a child this pool started."""
    if proc.is_alive():
        proc.kill()
    proc.join()
