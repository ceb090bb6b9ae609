"""Progress while exploring: a live bar on a terminal, a plain line every few seconds
otherwise (CI logs). Every explorer calls progress(distinct, generated, depth, queue, s).

With a bound (``bounds(max_states=..., max_depth=..., time_limit=...)``) the display
also shows how far the run is towards the nearest one, in percent, and an ETA at the
current rate; without one an exhaustive run's end is unknown, so neither is shown."""
from __future__ import annotations

import os
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
        self.max_states = self.max_depth = self.time_limit = None

    def bounds(self, max_states=None, max_depth=None, time_limit=None) -> "Progress":
        self.max_states, self.max_depth, self.time_limit = max_states, max_depth, time_limit
        return self

    def towards_bound(self, distinct, depth, elapsed):
        """(fraction done, seconds left) towards the bound nearest to stopping the run,
        or None without a bound. States and time extrapolate at the rate so far; a
        depth bound gives a fraction only (levels grow unevenly)."""
        best = None
        if self.max_states:
            frac = min(1.0, distinct / self.max_states)
            rate = distinct / elapsed if elapsed > 0 else 0.0
            left = (self.max_states - distinct) / rate if rate > 0 else None
            best = (frac, left)
        if self.time_limit:
            frac = min(1.0, elapsed / self.time_limit)
            if best is None or frac > best[0]:
                best = (frac, max(0.0, self.time_limit - elapsed))
        if self.max_depth:
            frac = min(1.0, depth / self.max_depth)
            if best is None or frac > best[0]:
                best = (frac, None)
        return best

    def __call__(self, distinct, generated, depth, queue, elapsed):
        rate = distinct / elapsed if elapsed > 0 else 0.0
        towards = self.towards_bound(distinct, depth, elapsed)
        extra = ""
        if towards is not None:
            frac, left = towards
            extra = f", {100 * frac:.0f}% of the bound" + (
                "" if left is None else f", ETA {_clock(left)}")
        if self.tty:
            if self._bar is None:
                from tqdm import tqdm
                # a terminal that says it is 0 x 0 (a pseudo-terminal nobody sized, as
                # some CI runners and `script` make) is taken as 100 x 24: tqdm would
                # hide its bar below a screen of no rows
                sized = min(_size(self.stream)) > 0
                self._bar = tqdm(total=None, unit=" states", file=self.stream,
                                 desc=self.label, dynamic_ncols=sized,
                                 ncols=None if sized else 100,
                                 nrows=None if sized else 24, leave=False)
            self._bar.n = distinct
            post = dict(generated=generated, depth=depth, queue=queue)
            if towards is not None:
                post["bound"] = f"{100 * towards[0]:.0f}%"
                if towards[1] is not None:
                    post["eta"] = _clock(towards[1])
            self._bar.set_postfix(refresh=False, **post)
            self._bar.refresh()
            return
        now = time.monotonic()
        if now - self._last >= self.interval:
            self._last = now
            print(f"{self.label}: {distinct:,} distinct, {generated:,} generated, depth "
                  f"{depth}, queue {queue:,}, {rate:,.0f} states/s, {elapsed:.1f}s{extra}",
                  file=self.stream, flush=True)

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _size(stream) -> tuple:
    """(columns, lines) of the terminal ``stream`` writes to ((0, 0): cannot be told)."""
    try:
        return tuple(os.get_terminal_size(stream.fileno()))
    except (AttributeError, OSError, ValueError):
        return (0, 0)


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else \
        f"{s // 60}:{s % 60:02d}"
