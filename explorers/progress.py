"""Progress while exploring: a live bar on a terminal, a plain line every few seconds
otherwise (CI logs). Every explorer calls progress(distinct, generated, depth, queue, s)."""
from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, label: str = "kmc", stream=None, interval: float = 5.0):
        self.stream = stream or sys.stderr
        self.label = label
        self.interval = interval
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._bar = None
        self._last = time.monotonic()  # first line after one interval: tiny runs stay quiet

    def __call__(self, distinct, generated, depth, queue, elapsed):
        rate = distinct / elapsed if elapsed > 0 else 0.0
        if self.tty:
            if self._bar is None:
                from tqdm import tqdm
                self._bar = tqdm(total=None, unit=" states", file=self.stream,
                                 desc=self.label, dynamic_ncols=True, leave=False)
            self._bar.n = distinct
            self._bar.set_postfix(generated=generated, depth=depth, queue=queue,
                                  refresh=False)
            self._bar.refresh()
            return
        now = time.monotonic()
        if now - self._last >= self.interval:
            self._last = now
            print(f"{self.label}: {distinct:,} distinct, {generated:,} generated, depth "
                  f"{depth}, queue {queue:,}, {rate:,.0f} states/s, {elapsed:.1f}s",
                  file=self.stream, flush=True)

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None
