"""How a Ctrl-C ends kmc: the one line ``kmc: interrupted`` and exit code 130, whatever
the interrupt cut short. SIGTERM (a CI job's timeout, `kill`) and SIGHUP (the terminal
closed) end it the same way, through the same handlers and clean-up, with the line
``kmc: terminated`` (``kmc: hung up``) and exit code 128 + the signal's number."""
from __future__ import annotations

import logging
import os
import signal
import sys
import threading

#: SIGINTs this process received while ``watch``'s handler was installed
_SEEN: list = []
#: SIGTERMs and SIGHUPs received, each turned into a SIGINT (``_as_interrupt``)
_ENDED: list = []
#: what ``interrupted`` says for each of them
_WORDS = {signal.SIGTERM: "terminated", signal.SIGHUP: "hung up"}


def watch() -> None:
    """The command line's Ctrl-C handler: the usual KeyboardInterrupt, and a note of it.
    Python drops an exception raised inside a finalizer or a weak reference's callback
    (it only reports it as "ignored"): a Ctrl-C that lands there would let the command
    run on and end as if nothing happened. The note makes the command end as interrupted
    all the same (``seen``)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _noted)
        for sig in _WORDS:
            signal.signal(sig, _as_interrupt)
        os.register_at_fork(after_in_child=_default_in_child)


def _default_in_child() -> None:
    """A forked worker (regress, mutate, a Spark daemon) ends at SIGTERM as before: its
    pool stops it that way, and a worker has no run of its own to end cleanly."""
    for sig in _WORDS:
        signal.signal(sig, signal.SIG_DFL)


def _as_interrupt(signum, _frame):
    """SIGTERM or SIGHUP, sent on as a SIGINT to this process: whichever SIGINT handler
    is in place then (``_noted``, or the Spark explorer's, which lets no call to the JVM
    be cut in the middle) ends the run as it ends a Ctrl-C."""
    _ENDED.append(signum)
    os.kill(os.getpid(), signal.SIGINT)


def _noted(signum, _frame):
    _SEEN.append(signum)
    sys.unraisablehook = _quiet  # what a dropped interrupt leaves is noise now
    # and so are libraries' logs of it (py4j logs a traceback when a second Ctrl-C
    # cuts a call to the JVM short): the command is ending
    logging.disable(logging.CRITICAL)
    raise KeyboardInterrupt


def seen() -> bool:
    """Did a Ctrl-C reach ``watch``'s handler?"""
    return bool(_SEEN)


def interrupted() -> int:
    """Say so and return the exit code, from the handler that caught KeyboardInterrupt.

    Two things the interrupt may leave behind are cleared here:

    - an object it left half-built (a z3 context, say) fails in its finalizer once the
      traceback goes, and Python would print that error: finalizer errors are noise now;
    - if the interrupt left an ``exec`` of source text (dataclasses and namedtuple make
      their methods that way), CPython notes "unhandled KeyboardInterrupt" and at exit
      ends the process by SIGINT (status -2 instead of 130) even though it was handled.
      Each ``exec`` of source text starts by clearing that note, so one is run here.
    """
    sys.unraisablehook = _quiet
    exec("")  # clears the note (see above); compiled code would not
    if _ENDED:
        print(f"kmc: {_WORDS[_ENDED[0]]}", file=sys.stderr)
        return 128 + _ENDED[0]
    print("kmc: interrupted", file=sys.stderr)
    return 130


def _quiet(_unraisable) -> None:
    pass
