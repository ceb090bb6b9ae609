"""Standard output into a pipe that its reader closes (``kmc check ... | head -1``): the
command goes on to its end, writing nowhere, and exits with its own code. Stopping at
the first failed write would leave the exit code to whatever the stop returned, and a
violation must never read as a pass in a pipeline run with ``pipefail``."""
from __future__ import annotations

import os


class ClosablePipe:
    """A text stream that turns a write or flush failing with EPIPE into silence: the
    descriptor is pointed at the null device, so later writes (and the interpreter's
    flush at exit) succeed without output."""

    def __init__(self, stream):
        self._stream = stream
        self.closed_by_reader = False

    def write(self, text):
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._silence()
            return len(text)

    def flush(self):
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._silence()

    def _silence(self):
        self.closed_by_reader = True
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, self._stream.fileno())
        finally:
            os.close(null)

    def __getattr__(self, name):
        return getattr(self._stream, name)
