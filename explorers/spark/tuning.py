"""Tuning knobs of the Spark explorer, read from ``KMC_SPARK_*`` environment variables
once, at import (tests and docs/spark.md name them where they are used).

A value that is not a number (or not one of a setting's words) must not turn into a
traceback wherever the module happens to be imported: it is noted, the default stands
in, and ``check()`` — called before Spark starts — turns it into a one-line
ExplorerError (exit 2) that names the variable.
"""
from __future__ import annotations

import os
import re

from kmc.explorers.errors import ExplorerError

_BAD: dict = {}  # variable -> the message check() raises
#: the log4j2 levels KMC_SPARK_LOG takes
LOG_LEVELS = ("off", "fatal", "error", "warn", "info", "debug", "trace", "all")


def parse_number(name: str, raw: str, kind=float):
    """``raw``, the value of ``$name``, as a non-negative ``kind`` (float or int), or an
    ExplorerError that names the variable."""
    try:
        value = kind(raw)
    except ValueError:
        value = -1
    if not 0 <= value < float("inf"):  # also nan
        what = "a whole number" if kind is int else "a number"
        raise ExplorerError(f"{name}={raw!r} is not {what} >= 0: fix it or unset it")
    return value


def env_number(name: str, default, kind=float):
    """The non-negative number in ``$name``, or ``default`` when it is unset or empty
    (or bad: ``check()`` then raises)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return parse_number(name, raw, kind)
    except ExplorerError as e:
        _BAD[name] = str(e)
        return default


def env_choice(name: str, default: str, choices) -> str:
    """The value of ``$name``, lower-cased, when it is one of ``choices``; ``default`` when
    it is unset or empty (or another word: ``check()`` then raises)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if raw.lower() in choices:
        return raw.lower()
    _BAD[name] = f"{name}={raw!r} is not one of {', '.join(choices)}: fix it or unset it"
    return default


def env_spark_value(name: str, default: str, pattern: str, what: str) -> str:
    """The value of ``$name`` for a Spark setting, when it reads as ``pattern`` (a
    regular expression, case ignored); ``default`` when it is unset or empty (or does
    not match: ``check()`` then raises, saying it must be ``what``)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if re.fullmatch(pattern, raw, re.IGNORECASE):
        return raw
    _BAD[name] = f"{name}={raw!r} is not {what}: fix it or unset it"
    return default


def check() -> None:
    """Raise the first bad tuning variable (by name) as an ExplorerError."""
    # a module read lazily (by liveness runs only) reads its variable now, so that a bad
    # value is named before the run whichever properties it checks
    from kmc.explorers.spark import liveness_driver  # noqa: F401
    if _BAD:
        raise ExplorerError(_BAD[min(_BAD)])
