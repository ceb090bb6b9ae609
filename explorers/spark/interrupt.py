"""Ctrl-C (SIGINT) around Spark work: noted by a handler, acted on at safe points and
when the block ends, so that no py4j call is cut in the middle and no Ctrl-C is lost."""
from __future__ import annotations

import contextlib
import logging
import signal
import threading


class _Py4jInterruptNoise(logging.Filter):
    """py4j logs a traceback on the root logger when a KeyboardInterrupt cuts one of its
    calls short (``logging.exception("KeyboardInterrupt while sending command.")``);
    here that is the second Ctrl-C (or SIGTERM) doing what it should: the run ends with
    its one line (``kmc: interrupted``), and the traceback is noise."""

    def filter(self, record) -> bool:
        return not str(record.msg).startswith("KeyboardInterrupt while sending command")


_NOISE = _Py4jInterruptNoise()


class CtrlC:
    """Ctrl-C (SIGINT) around Spark work. The handler only notes it, and with a context
    ``sc`` cancels its running jobs from a helper thread (the main thread may be inside a
    py4j call); the code raises KeyboardInterrupt at safe points (``check``), and the
    block ends as one after a Ctrl-C, whether it ended normally or with an error (a
    cancelled job's). With ``sc`` (the JVM is up and goes when the driver exits), a
    second Ctrl-C interrupts at once. A CtrlC entered inside another one shares its
    state: one Ctrl-C, seen by both."""

    def __init__(self, sc=None):
        self.sc = sc
        self.event = threading.Event()
        self._old = None
        self._cancel = None

    def __enter__(self):
        if self.sc is not None and _NOISE not in logging.getLogger().filters:
            logging.getLogger().addFilter(_NOISE)  # py4j's own records only (root's)
        if threading.current_thread() is threading.main_thread():
            self._old = signal.getsignal(signal.SIGINT)
            if isinstance(getattr(self._old, "__self__", None), CtrlC):
                self.event = self._old.__self__.event
            signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, kind, *_):
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
        if self._cancel is not None:
            self._cancel.join(10)  # no py4j call of it left running into a stop
        if self.event.is_set() and kind is not KeyboardInterrupt:
            # a job failed because it was cancelled, or the block ended after the last
            # check (a run's final level, its counterexamples): the Ctrl-C still ends it
            raise KeyboardInterrupt() from None
        return False

    def _handler(self, _sig, _frame):
        if self.event.is_set() and self.sc is not None:
            raise KeyboardInterrupt()
        self.event.set()
        if self.sc is not None and self._cancel is None:
            self._cancel = threading.Thread(target=self._cancel_jobs, name="kmc-cancel",
                                            daemon=True)
            self._cancel.start()

    def _cancel_jobs(self) -> None:
        with contextlib.suppress(Exception):  # a context already stopped has no jobs
            self.sc.cancelAllJobs()

    def check(self) -> None:
        if self.event.is_set():
            raise KeyboardInterrupt()
