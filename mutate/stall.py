"""A mutant stuck inside one expansion: a loop that never ends (``n += 1`` dropped from
a ``while``) keeps its worker busy until the mutant's whole time limit has passed,
which is several times the baseline's time on every entry it reaches (minutes on a
large model). No explorer guard sees it: the explorer gets control back only when the
model's successor function returns.

``Watch`` ends such a run instead: a timer looks twice a second at the expansion in
progress, and one that has run longer than the run's limit raises ``Stalled`` inside
it. The limit is relative to the unmutated model: ``STALL_FACTOR`` times the slowest
expansion of the baseline's run of the same entry (timed while it records the run,
slower than a mutant's run), plus ``STALL_SLACK`` seconds. The run then counts as out
of time (``killed_by: ["timeout"]``), the outcome the whole time limit would give,
reached in seconds. Linux and macOS (``signal.setitimer``), in the main thread (a mutant's worker
runs there); elsewhere nothing is watched.
"""
from __future__ import annotations

import signal
import threading
import time

#: an expansion may take STALL_FACTOR times the baseline's slowest on the same entry,
#: plus STALL_SLACK seconds, before its run counts as out of time
STALL_FACTOR, STALL_SLACK = 20.0, 5.0
#: how often the timer looks (seconds)
TICK = 0.5


class Stalled(BaseException):
    """One expansion ran over its limit. A ``BaseException``, like ``KeyboardInterrupt``:
    a model's own ``except Exception`` does not swallow it."""


def stall_limit(slowest: float | None) -> float | None:
    """The limit of a run whose baseline's slowest expansion took ``slowest`` seconds
    (None: not timed, nothing is watched)."""
    return None if slowest is None else STALL_FACTOR * slowest + STALL_SLACK


class Watch:
    """While open, ``limit`` seconds is the most one expansion may take: the expansion
    calls ``begin()`` and ``end()``; nested expansions count as the outer one."""

    def __init__(self, limit: float | None):
        self.limit = limit
        self.started: float | None = None
        self._depth = 0
        self._armed = False
        self._old = None  # the SIGALRM handler before (None: not set from Python)

    def begin(self) -> None:
        if not self._depth:
            self.started = time.monotonic()
        self._depth += 1

    def end(self) -> None:
        self._depth -= 1
        if not self._depth:
            self.started = None

    def wrap(self, model):
        """``model`` with its successors and its answers to a replay's questions
        (``actions``, ``next_state``) each watched as one expansion; for a model built
        for one replay, which keeps the change."""
        for name in ("successors", "actions", "next_state"):
            setattr(model, name, self._watched(getattr(model, name)))
        return model

    def _watched(self, fn):
        def watched(*args):
            self.begin()
            try:
                return fn(*args)
            finally:
                self.end()
        return watched

    def _tick(self, _signum, _frame) -> None:
        started = self.started
        if started is not None and time.monotonic() - started > self.limit:
            self.started = None  # raised once; the run ends with it
            raise Stalled(f"one expansion ran over {self.limit:.1f} s")

    def __enter__(self):
        # a timer's signal reaches the main thread only: elsewhere nothing is watched
        if self.limit is not None and hasattr(signal, "setitimer") and \
                threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGALRM, self._tick)
            self._armed = True
            signal.setitimer(signal.ITIMER_REAL, TICK, TICK)
        return self

    def __exit__(self, *exc) -> None:
        if self._armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM,
                          signal.SIG_DFL if self._old is None else self._old)
            self._armed = False
